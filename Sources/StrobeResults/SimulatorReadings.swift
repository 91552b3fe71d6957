extension PerfMetric {
    /// Whether this metric of a simulated run says nothing of the code
    /// (``MetricKind/isSimulatorReading``): the one rule by which `strobe
    /// diff` and `strobe compare` leave a simulated run's metrics out of a
    /// comparison, the run history leaves them out of its series, and a
    /// counting process leaves them out of its results.
    public var isSimulatorReading: Bool { kind.isSimulatorReading }
}
