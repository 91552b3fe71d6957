import Foundation
import Strobe

/// Traces written by the SDK, in this process, one session at a time.
enum SDKTraces {
    /// The recording lock: one session per process at a time.
    static let lock = NSLock()

    /// Records `intervals` intervals named `work` (each `duration` long,
    /// spinning on the monotonic clock until then) and `samples` samples of
    /// the counter `queue`, under `metadata`, into `path`.
    ///
    /// A spin to a deadline, not a number of loop turns: a neighbour that
    /// preempts the thread inside an interval lengthens it only when the
    /// preemption spans its end, so most intervals last what was asked on
    /// a loaded machine too. Not all: a preempted interval can still last
    /// milliseconds, so a test judges the medians of such a fleet, not its
    /// upper percentiles.
    static func write(
        _ path: String, metadata: TraceMetadata, intervals: Int = 50, duration: Duration = .microseconds(5),
        samples: Int = 5
    ) throws {
        lock.lock()
        defer { lock.unlock() }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.metadata = metadata
        try TraceSession.record(configuration) {
            let clock = ContinuousClock()
            for _ in 0..<intervals {
                Trace.interval("work") {
                    let deadline = clock.now.advanced(by: duration)
                    while clock.now < deadline {}
                }
            }
            for index in 0..<samples { Trace.counter("queue", Int64(index)) }
        }
    }
}
