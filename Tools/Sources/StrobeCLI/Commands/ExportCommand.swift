import ArgumentParser
import Foundation
import StrobeOTLP
import StrobeReader

/// `strobe export TRACE --format csv|ndjson|chrome-json|folded|pprof|otlp|otlp-json`.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a trace as CSV or NDJSON rows, Chrome trace-event JSON, or its CPU samples.",
        discussion: """
            csv and ndjson give one row per interval, instant and counter sample (kind, name, tid, \
            thread, track, ts_ns, dur_ns, depth, cpu_ns, value, args), for spreadsheets, DuckDB or \
            Spark. chrome-json opens in chrome://tracing and Speedscope. folded and pprof export the \
            CPU samples: folded stacks for flamegraph.pl, or a gzipped pprof profile for \
            `go tool pprof`; with --interval, only the samples inside that interval's instances. otlp \
            writes every interval as a span, instants as span events and flows as links, with the \
            trace's metadata as the resource; with --otlp-endpoint the same spans are posted to an \
            OTLP/HTTP endpoint in batches (and written to -o only when it is given). Exit status 2 when the \
            endpoint refuses a batch (any status but 2xx, 429, 502, 503, 504), 1 when it stays busy or \
            unreachable through every attempt; the message names the trace, the batch and the answer.
            """
    )

    @Argument(help: "The trace file.")
    var trace: String

    @Option(
        help: """
            csv, ndjson, chrome-json, folded (the CPU samples' stacks, for flamegraph.pl and speedscope), \
            pprof (the CPU samples, gzipped, for go tool pprof), or otlp (the intervals as OpenTelemetry \
            spans, an OTLP/protobuf ExportTraceServiceRequest; otlp-json in OTLP's JSON encoding).
            """)
    var format: ExportFormat

    @Option(name: .shortAndLong, help: "Write here instead of standard output.")
    var output: String?

    @Option(help: "With folded or pprof, only the CPU samples inside the instances of this interval name.")
    var interval: String?

    @OptionGroup var otlp: OTLPEndpointOptions

    func validate() throws {
        if otlp.url != nil, format != .otlp {
            throw ValidationError("--otlp-endpoint needs --format otlp")
        }
        if interval != nil, format != .folded, format != .pprof {
            throw ValidationError("--interval needs --format folded or pprof")
        }
    }

    func run() async throws {
        let parsed = try readTrace(trace)
        switch format {
        case .pprof:
            let (profile, samples) = try cpuSamples(parsed, doing: "export")
            let bytes = PprofExport.encode(profile, samples: samples, threads: parsed.threads)
            do {
                try emit(bytes: try Gzip.compress(bytes), to: output)
            } catch let failure as Gzip.Failure {
                throw CommandFailure.measurementFailed("\(trace): \(failure)")
            }
        case .otlp:
            if let sender = try otlp.sender() {
                if output != nil { try emit(bytes: OTLPExport.encode(parsed), to: output) }
                let report: OTLPSender.Report
                do throws(OTLPSendError) {
                    report = try await sender.send(parsed, from: trace, batchBytes: otlp.batchBytes)
                } catch {
                    throw CommandFailure.otlp(error)
                }
                print(
                    "\(trace): sent \(report.spans) spans in \(report.batches) request\(report.batches == 1 ? "" : "s") "
                        + "to \(sender.endpoint)\(report.retries > 0 ? " (\(report.retries) retried)" : "")")
            } else {
                try emit(bytes: OTLPExport.encode(parsed), to: output)
            }
        case .otlpJSON:
            try emit(OTLPExport.json(parsed), to: output)
        case .folded:
            let (profile, samples) = try cpuSamples(parsed, doing: "fold")
            try emit(profile.folded(samples), to: output)
        case .csv, .ndjson, .chromeJSON:
            try emit(TraceExport.render(parsed, as: format.textFormat!), to: output)
        }
    }

    /// The trace's CPU samples, those inside `--interval`'s instances when
    /// it is given (chosen as `strobe summarize --profile --interval` does).
    private func cpuSamples(_ parsed: ParsedTrace, doing verb: String) throws -> (CPUProfile, [CPUProfile.Sample]) {
        let profile = try CPUProfile.read(contentsOf: trace)
        if profile.isEmpty { throw CommandFailure.badInput("\(trace): no CPU samples to \(verb)") }
        guard let interval else { return (profile, profile.samples) }
        let instances = try ProfileReport.instances(of: interval, in: parsed, path: trace)
        return (profile, profile.samples(within: instances))
    }
}

/// The formats `strobe export` writes: the reader's text formats, pprof
/// and OTLP.
enum ExportFormat: String, CaseIterable, ExpressibleByArgument {
    case csv
    case ndjson
    case chromeJSON = "chrome-json"
    case folded
    case pprof
    case otlp
    case otlpJSON = "otlp-json"

    /// The reader's format of the same name, for the text formats.
    var textFormat: TraceExport.Format? { TraceExport.Format(rawValue: rawValue) }
}

/// Writes `bytes` to `path`, or to standard output when there is none.
func emit(bytes: [UInt8], to path: String?) throws(CommandFailure) {
    guard let path else {
        FileHandle.standardOutput.write(Data(bytes))
        return
    }
    if let problem = unwritable(path) { throw .badInput("cannot write \(path): \(problem)") }
    do {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    } catch {
        throw .badInput("cannot write \(path): \(unwritable(path) ?? error.localizedDescription)")
    }
}
