import CStrobe
import Foundation
import Strobe
import StrobeTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// What ending a session costs: a stop waits for the writes in flight on
/// every thread, exactly, rather than for a fixed time.
enum SessionBenchmarks {
    static func run() {
        let runs = 41
        // The fixed wait a stop used to pay, measured here as the baseline.
        let sleep = median(runs: runs) {
            let start = cstrobe_monotonic_ns()
            usleep(2000)
            return Double(cstrobe_monotonic_ns() - start)
        }
        let stop = median(runs: runs) { stopLatency() }
        let cycle = median(runs: runs) {
            let start = cstrobe_monotonic_ns()
            _ = stopLatency()
            return Double(cstrobe_monotonic_ns() - start)
        }
        Figure(
            name: "session stop, memory only, 1 thread recorded", value: stop / 1000, unit: "us",
            baselineName: "usleep(2000), the fixed wait a stop paid before", baselineValue: sleep / 1000,
            target: "ratio < 0.5"
        ).printLine()
        Figure(
            name: "session start, 1000 events, stop", value: cycle / 1000, unit: "us",
            baselineName: "usleep(2000), the fixed wait a stop paid before", baselineValue: sleep / 1000,
            target: "ratio < 1"
        ).printLine()
    }

    /// Nanoseconds `stop()` takes on a memory-only session in which this
    /// thread recorded 1000 events.
    static func stopLatency() -> Double {
        var configuration = TraceConfiguration()
        configuration.processSamplingInterval = .zero
        configuration.flushInterval = .seconds(1000)
        let session = try! TraceSession.start(configuration)
        for _ in 0..<500 {
            Trace.begin("stop benchmark")
            Trace.end()
        }
        let start = cstrobe_monotonic_ns()
        try! session.stop()
        return Double(cstrobe_monotonic_ns() - start)
    }
}
