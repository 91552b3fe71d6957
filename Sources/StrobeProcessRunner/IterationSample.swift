import StrobeResults

/// What one iteration measured: its wall time and every value it yielded.
package struct IterationSample {
    /// The iteration's wall time, in nanoseconds.
    package var wall: Double
    /// The values of the iteration, one sample each.
    package var values: [PerfMetric]

    /// A sample of these values.
    package init(wall: Double, values: [PerfMetric]) {
        self.wall = wall
        self.values = values
    }
}
