import Strobe

/// The cost of signposts per event, beside the same events with signposts off
/// in the same run.
enum SignpostBenchmarks {
    static func run() {
        let pairs = 200_000
        let off = median(runs: 5) {
            CoreBenchmarks.withSession { timePairs(pairs) / Double(pairs * 2) }
        }
        var probes = CoreBenchmarks.quietConfiguration()
        probes.signposts = .probes
        let probesOn = median(runs: 5) {
            CoreBenchmarks.withSession(probes) { timePairs(pairs) / Double(pairs * 2) }
        }
        Figure(
            name: "begin/end with USDT probes on (no tool attached)", value: probesOn, unit: "ns/event",
            baselineName: "begin/end with signposts off, same run", baselineValue: off
        ).printLine()

        guard TraceConfiguration.Signposts.available.contains(.ftraceMarker) else {
            print("# ftrace marker figure skipped: no writable trace_marker under /sys/kernel/tracing")
            return
        }
        var marker = CoreBenchmarks.quietConfiguration()
        marker.signposts = .ftraceMarker
        let markerPairs = 20_000
        let markerOn = median(runs: 3) {
            CoreBenchmarks.withSession(marker) { timePairs(markerPairs) / Double(markerPairs * 2) }
        }
        Figure(
            name: "begin/end with the ftrace marker on", value: markerOn, unit: "ns/event",
            baselineName: "begin/end with signposts off, same run", baselineValue: off
        ).printLine()
    }
}
