import StrobeResults
import Testing

@testable import StrobePerf

/// The one table of metric kinds, over every metric the runner writes and
/// the shapes of a suite's own: what each is, what a counting process keeps.
@Suite struct MetricKindTests {
    @Test(arguments: [
        ("wall", "ns", MetricKind.wallTime),
        ("process.cpu", "ns", .cpuTime),
        ("process.cpu.user", "ns", .cpuTimePart),
        ("thread.cpu.system", "ns", .cpuTimePart),
        ("process.context_switches.voluntary", "count", .resourceReading),
        ("thread.faults.minor", "count", .resourceReading),
        ("process.max_rss", "bytes", .resourceReading),
        ("instructions", "count", .instructions),
        ("allocations", "count", .exactCount),
        ("allocations.bytes", "bytes", .exactCount),
        ("releases", "count", .exactCount),
        ("interval:lens apply:sum", "ns", .duration),
        ("interval:lens apply:cpu", "ns", .duration),
        ("decode time", "ms", .duration),
        ("items processed", "count", .reported),
        ("interval:lens apply:count", "count", .reported),
    ])
    func eachMetricHasOneKind(name: String, unit: String, kind: MetricKind) {
        let metric = PerfMetric(name: name, unit: unit, samples: [1])
        #expect(metric.kind == kind)
        // A counting process keeps the code's own: its counts and the
        // values it reports, never a time or a reading of the machine.
        #expect(metric.isSimulatorReading == !(kind.isCountedWork || kind == .reported), "\(name)")
    }

    @Test func theRunnersExactCountsAreTheTablesExactCounts() {
        #expect(ExactCounts.metricNames == MetricKind.exactCountNames)
        for name in ExactCounts.metricNames {
            #expect(MetricKind(metric: name, unit: "count").isCountedWork)
        }
    }
}
