import ArgumentParser
import Foundation
import StrobeReader

/// `strobe summarize TRACE`: statistics per interval name and per thread,
/// counters, data loss, and hitch risk.
struct SummarizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summarize",
        abstract: "Summarize a trace: intervals, counters, data loss and hitch risk.",
        discussion: """
            Per interval name: count, total, mean, p50, p90, p99 and max duration, and the share of \
            wall time the thread spent on the CPU (for intervals that captured rusage), overall and per \
            thread. With --frame-budget, intervals longer than the budget are flagged as "may hitch", \
            and longer than twice the budget as "hitch". Parents that hold unusually many children of \
            one name are flagged too.
            """
    )

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Argument(help: "The trace file.")
    var trace: String

    @Option(help: "text or json.")
    var format: OutputFormat = .text

    @Option(
        name: .customLong("frame-budget"), help: "Frame deadline, e.g. 16.67ms; flags longer intervals.",
        transform: DurationArgument.parse)
    var frameBudget: DurationArgument?

    @Option(
        name: .customLong("category"),
        help:
            "Only intervals and instants in these categories (a name or a glob with *, -PATTERN excludes); repeatable.")
    var categories: [String] = []

    @Flag(help: "Print the top functions of the trace's CPU samples instead of the interval summary.")
    var profile = false

    @Option(help: "With --profile, also the top functions within the instances of this interval name.")
    var interval: String?

    @Option(help: "With --profile, how many functions each table lists.")
    var top = 20

    func validate() throws {
        if interval != nil, !profile { throw ValidationError("--interval needs --profile") }
        if top < 1 { throw ValidationError("--top: expected a positive number, not \(top)") }
        for pattern in categories where pattern.isEmpty || pattern == "-" {
            throw ValidationError("--category: empty category pattern \"\(pattern)\"")
        }
    }

    func run() throws {
        var parsed = try readTrace(trace)
        if !categories.isEmpty { parsed = parsed.keepingCategories(categories) }
        if profile { return try printProfile(parsed) }
        let summary = TraceSummary(trace: parsed, frameBudget: frameBudget?.nanoseconds)
        switch format {
        case .text:
            var header = "\(trace): \(parsed.intervals.count) intervals, \(parsed.instants.count) instants, "
            header += "\(parsed.counters.count) counters on \(parsed.threads.count) threads"
            if let process = parsed.process { header += " of \(process.name) (pid \(process.pid))" }
            print(header + "\n")
            print(summary.renderText(), terminator: "")
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            let data = try encoder.encode(summary)
            print(String(decoding: data, as: UTF8.self))
        }
    }

    private func printProfile(_ parsed: ParsedTrace) throws {
        let report = try ProfileReport.make(
            path: trace, trace: parsed, profile: try CPUProfile.read(contentsOf: trace), interval: interval, top: top)
        switch format {
        case .text: print(report.renderText(), terminator: "")
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        }
    }
}
