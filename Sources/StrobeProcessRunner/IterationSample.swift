import StrobeResults

/// What one iteration measured: its wall time and every value it yielded.
package struct IterationSample {
    /// The iteration's wall time, in nanoseconds.
    package var wall: Double
    /// The values of the iteration, one sample each.
    package var values: [PerfMetric]
    /// What the critical path of each interval a `.criticalPath` metric
    /// measures crossed in the iteration, by interval name.
    package var criticalPaths: [(interval: String, iteration: CriticalPathRecord.Iteration)]

    /// A sample of these values.
    package init(
        wall: Double, values: [PerfMetric],
        criticalPaths: [(interval: String, iteration: CriticalPathRecord.Iteration)] = []
    ) {
        self.wall = wall
        self.values = values
        self.criticalPaths = criticalPaths
    }
}
