import ArgumentParser
import Foundation
import StrobeReader

#if Server
import StrobeOTLP
#endif

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
            endpoint refuses a batch (any status but 2xx, 429, 502, 503, 504) and when it stays busy or \
            unreachable through every attempt: every failure to deliver is 2; the message names the trace, the batch and the answer. pprof, \
            otlp and otlp-json read the trace packet by packet and write as they go, in memory that does not \
            grow with the trace; otlp spans come in the order their intervals end.
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
        switch format {
        case .pprof:
            try exportPprof()
        case .otlp, .otlpJSON:
            try await exportOTLP()
        case .folded:
            let parsed = try readTrace(trace)
            let (profile, samples) = try cpuSamples(parsed, doing: "fold")
            try emit(profile.folded(samples), to: output)
        case .csv, .ndjson, .chromeJSON:
            try emit(TraceExport.render(try readTrace(trace), as: format.textFormat!), to: output)
        }
    }

    /// The CPU samples as pprof, read from the file packet by packet (with
    /// `--interval`, twice: the instances, then the samples).
    private func exportPprof() throws {
        let export = try PprofExport.encode(contentsOf: trace, within: interval)
        try checkStreamed(trace, notATrace: export.notATrace, truncation: export.truncation)
        if export.samples == 0 { throw CommandFailure.badInput("\(trace): no CPU samples to export") }
        if let interval, export.instances == 0 {
            throw CommandFailure.badInput(
                "--interval \"\(interval)\": no finished interval of that name on a thread in \(trace)")
        }
        do {
            try emit(bytes: try Gzip.compress(export.bytes), to: output)
        } catch let failure as Gzip.Failure {
            throw CommandFailure.measurementFailed("\(trace): \(failure)")
        }
    }

    /// The spans as OTLP, read from the file packet by packet and written
    /// (or sent) request by request as they are made.
    private func exportOTLP() async throws {
        var stream = try OTLPStream(
            contentsOf: trace, encoding: format == .otlpJSON ? .json : .protobuf, maxBytes: otlp.batchBytes)
        try checkStreamed(trace, notATrace: stream.scan.notATrace, truncation: stream.scan.truncation)
        #if Server
        if let sender = try otlp.sender() {
            try await send(&stream, to: sender)
            return
        }
        #endif
        let writer = try PartWriter(path: output)
        while let part = try stream.nextFilePart() { try writer.write(part) }
        try writer.finish()
    }

    #if Server
    /// Sends the requests of `stream` to `sender`'s endpoint, also writing
    /// them to `-o` when it is given.
    private func send(_ stream: inout OTLPStream, to sender: OTLPSender) async throws {
        let writer = try output.map { path throws(CommandFailure) in try PartWriter(path: path) }
        let report: OTLPSender.Report
        do {
            report = try await sender.send(&stream, from: trace) { try writer?.write($0) }
        } catch let error as OTLPSendError {
            throw CommandFailure.otlp(error)
        }
        if report.batches == 0 { try writer?.write(stream.emptyRequest) }
        try writer?.finish()
        print(
            "\(trace): sent \(report.spans) spans in \(report.batches) request\(report.batches == 1 ? "" : "s") "
                + "to \(sender.endpoint)\(report.retries > 0 ? " (\(report.retries) retried)" : "")")
    }
    #endif

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
