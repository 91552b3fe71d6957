extension PerfMetric {
    /// The units of time.
    public static let timeUnits: Set<String> = ["ns", "us", "µs", "ms", "s"]

    /// Whether this metric of a simulated run (`metadata.simulated`: the
    /// suite ran under callgrind or QEMU) says nothing of the code: a time
    /// (a unit of ``timeUnits``, the wall time, a CPU time), or the
    /// process's or thread's resource readings (context switches, faults),
    /// all of which the simulator sets. Its instructions and exact counts
    /// are the code's. The one rule by which `strobe diff` and `strobe
    /// compare` leave a simulated run's metrics out of a comparison and the
    /// run history leaves them out of its series.
    public var isSimulatorReading: Bool {
        Self.timeUnits.contains(unit) || name == "wall" || name.contains(".cpu") || name.hasPrefix("process.")
            || name.hasPrefix("thread.")
    }
}
