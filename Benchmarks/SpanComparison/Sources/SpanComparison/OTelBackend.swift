import Logging
import OTel
import ServiceLifecycle
import Tracing

/// swift-otel's tracing backend as a service would run it: the SDK tracer
/// with the default sampler (parent-based, always on), the batch span
/// processor with its default queue (2,048) and batch (512) sizes, and the
/// library's own "none" exporter, which drops every batch without I/O. Its
/// services (tracer, processor, exporter) run in a service group on a task
/// of their own; the diagnostic logger tallies what the processor exported.
///
/// One setting differs from the defaults: the processor exports every 20 ms
/// instead of every 5 s, so that each timed sample is exported and counted
/// before the next one starts (the tracer's `forceFlush()` is deprecated in
/// swift-distributed-tracing, and the project builds with no warnings).
struct OTelBackend<Tracer: Tracing.Tracer> {
    /// The SDK tracer.
    let tracer: Tracer
    /// What the batch span processor has exported so far.
    let tally: ExportTally
    /// The task running the backend's service group.
    let running: Task<Void, any Error>
    /// The service group, for the graceful shutdown at the end.
    let group: ServiceGroup
}

/// How often the batch span processor exports; see ``OTelBackend``.
let exportInterval = Duration.milliseconds(20)

/// The configuration described on ``OTelBackend``.
func productionTracingConfiguration(logger: Logger) -> OTel.Configuration {
    var configuration = OTel.Configuration.default
    configuration.serviceName = "span-comparison"
    configuration.traces.exporter = .none
    configuration.traces.batchSpanProcessor.scheduleDelay = exportInterval
    configuration.metrics.enabled = false
    configuration.logs.enabled = false
    configuration.diagnosticLogger = .custom(logger)
    configuration.diagnosticLogLevel = .debug
    return configuration
}

/// Starts swift-otel's tracing backend in a service group on a detached task.
func startOTelBackend() throws -> OTelBackend<some Tracer> {
    let tally = ExportTally()
    let configuration = productionTracingConfiguration(logger: tally.makeLogger())
    let backend = try OTel.makeTracingBackend(configuration: configuration)
    let quiet = Logger(label: "span-comparison") { _ in SwiftLogNoOpLogHandler() }
    let group = ServiceGroup(configuration: .init(services: [backend.service], logger: quiet))
    let running = Task.detached { try await group.run() }
    return OTelBackend(tracer: backend.factory, tally: tally, running: running, group: group)
}

extension OTelBackend {
    /// Shuts the backend down gracefully (the processor flushes what it
    /// holds) and returns what it exported in all.
    func shutDown() async throws -> ExportTally.Counts {
        await group.triggerGracefulShutdown()
        try await running.value
        return tally.current
    }

    /// Waits until the processor has exported (or dropped) `spans` in all,
    /// or throws after `timeout`; each tick of its timer exports a batch.
    func waitUntilExported(_ spans: Int, timeout: Duration = .seconds(30)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let counts = tally.current
            if counts.exportedSpans + counts.droppedSpans >= spans { return }
            guard clock.now < deadline else {
                throw ComparisonError.spansNotExported(
                    made: spans, exported: counts.exportedSpans, dropped: counts.droppedSpans)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

/// Why a comparison run stopped.
enum ComparisonError: Error, CustomStringConvertible {
    /// swift-otel did not account for every span made within the time allowed.
    case spansNotExported(made: Int, exported: Int, dropped: Int)
    /// The spans swift-otel accounted for differ from the spans made.
    case spanCountMismatch(made: Int, exported: Int, dropped: Int)

    var description: String {
        switch self {
        case .spansNotExported(let made, let exported, let dropped):
            "swift-otel exported \(exported) and dropped \(dropped) of \(made) spans made before the time allowed ran out"
        case .spanCountMismatch(let made, let exported, let dropped):
            "swift-otel exported \(exported) and dropped \(dropped) spans, but \(made) were made"
        }
    }
}
