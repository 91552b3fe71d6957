import Strobe
import StrobeTestSupport

/// The cost of signposts per event, beside the same events with signposts off
/// in the same run.
enum SignpostBenchmarks {
    static func run() {
        let off = costPerEvent(signposts: [], pairs: 200_000, runs: 5)
        let probes = costPerEvent(signposts: .probes, pairs: 200_000, runs: 5)
        figure("begin/end with USDT probes on (no tool attached)", probes, off)
        guard TraceConfiguration.Signposts.available.contains(.ftraceMarker) else {
            print("# ftrace marker figure skipped: no writable trace_marker under /sys/kernel/tracing")
            return
        }
        let marker = costPerEvent(signposts: .ftraceMarker, pairs: 20_000, runs: 3)
        figure("begin/end with the ftrace marker on", marker, off)
    }

    /// Nanoseconds per begin or end, the median of `runs` sessions.
    static func costPerEvent(signposts: TraceConfiguration.Signposts, pairs: Int, runs: Int) -> Double {
        var configuration = CoreBenchmarks.quietConfiguration()
        configuration.signposts = signposts
        return median(runs: runs) {
            CoreBenchmarks.withSession(configuration) { timePairs(pairs) / Double(pairs * 2) }
        }
    }

    static func figure(_ name: String, _ value: Double, _ off: Double) {
        Figure(
            name: name, value: value, unit: "ns/event",
            baselineName: "begin/end with signposts off, same run", baselineValue: off
        ).printLine()
    }
}
