import ArgumentParser
import Foundation
import StrobeReader

/// `strobe export TRACE --format csv|ndjson|chrome-json`.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a trace as CSV or NDJSON rows, or as Chrome trace-event JSON.",
        discussion: """
            csv and ndjson give one row per interval, instant and counter sample (kind, name, tid, \
            thread, track, ts_ns, dur_ns, depth, cpu_ns, value, args), for spreadsheets, DuckDB or \
            Spark. chrome-json opens in chrome://tracing and Speedscope.
            """
    )

    @Argument(help: "The trace file.")
    var trace: String

    @Option(help: "csv, ndjson, chrome-json, or folded (the CPU samples' stacks, for flamegraph.pl and speedscope).")
    var format: TraceExport.Format

    @Option(name: .shortAndLong, help: "Write here instead of standard output.")
    var output: String?

    func run() throws {
        let parsed = try readTrace(trace)
        let profile = format == .folded ? try CPUProfile.read(contentsOf: trace) : nil
        if let profile, profile.isEmpty { throw CommandFailure.badInput("\(trace): no CPU samples to fold") }
        try emit(TraceExport.render(parsed, as: format, profile: profile), to: output)
    }
}

// The command line names a format by its raw value.
// swift-format-ignore: AvoidRetroactiveConformances
extension TraceExport.Format: @retroactive ExpressibleByArgument {}
