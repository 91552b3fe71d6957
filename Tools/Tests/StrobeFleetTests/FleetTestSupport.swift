import Foundation
import Strobe

/// Traces written by the SDK, in this process, one session at a time.
enum SDKTraces {
    /// The recording lock: one session per process at a time.
    static let lock = NSLock()

    /// Records `intervals` intervals named `work` (each spinning about
    /// `spin` iterations) and `samples` samples of the counter `queue`,
    /// under `metadata`, into `path`.
    static func write(
        _ path: String, metadata: TraceMetadata, intervals: Int = 50, spin: Int = 200, samples: Int = 5
    ) throws {
        lock.lock()
        defer { lock.unlock() }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.metadata = metadata
        try TraceSession.record(configuration) {
            var sink = 0
            for _ in 0..<intervals {
                Trace.interval("work") {
                    for index in 0..<spin { sink &+= index &* index }
                }
            }
            for index in 0..<samples { Trace.counter("queue", Int64(index)) }
            withExtendedLifetime(sink) {}
        }
    }
}
