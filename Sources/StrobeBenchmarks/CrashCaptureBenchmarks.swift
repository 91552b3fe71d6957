import Foundation
import Strobe
import StrobeTestSupport

/// The cost of crash capture on recording: begin+end pairs in a flight
/// recorder whose rings wrap many times (every chunk switch updates the
/// crash handler's view of the thread), against the same recorder without
/// crash capture, measured alternately in the same process.
enum CrashCaptureBenchmarks {
    static func run() {
        let pairs = CoreBenchmarks.eventsPerRun / 2
        let crashPath = NSTemporaryDirectory() + "strobe-bench-\(getpid()).strobe-crash"
        func configuration(capture: Bool) -> TraceConfiguration {
            var configuration = CoreBenchmarks.quietConfiguration()
            configuration.whenBufferFull = .overwriteOldest
            configuration.bufferSizePerThread = 8 << 20
            if capture { configuration.crashCapture = .init(path: crashPath) }
            return configuration
        }
        // Warm the pool for both.
        for capture in [false, true] {
            CoreBenchmarks.withSession(configuration(capture: capture)) { _ = timePairs(pairs) }
        }
        var without: [Double] = []
        var with: [Double] = []
        for _ in 0..<15 {
            without.append(
                CoreBenchmarks.withSession(configuration(capture: false)) { timePairs(pairs) / Double(pairs) })
            with.append(CoreBenchmarks.withSession(configuration(capture: true)) { timePairs(pairs) / Double(pairs) })
        }
        without.sort()
        with.sort()
        Figure(
            name: "begin+end pair, flight recorder with crash capture", value: with[with.count / 2], unit: "ns/pair",
            baselineName: "begin+end pair, flight recorder without crash capture",
            baselineValue: without[without.count / 2],
            target: "ratio <= 1.05",
            extra: [
                "with_min_ns": with.first!, "with_max_ns": with.last!, "without_min_ns": without.first!,
                "without_max_ns": without.last!,
            ]
        ).printLine()
    }
}
