import CStrobe

/// The clock and process readings of the SDK's C layer, for the perf-test
/// runner (`StrobePerf`), so that it reads them through the SDK's `package`
/// API rather than importing the C module.
package enum ProcessMeasurements {
    /// `CLOCK_MONOTONIC` in nanoseconds: the clock the runner times
    /// iterations with, the same one session timestamps convert to.
    package static func monotonicNanoseconds() -> UInt64 {
        cstrobe_monotonic_ns()
    }

    /// `CLOCK_BOOTTIME` in nanoseconds: the clock of a trace's CPU samples,
    /// for the runner to tell which of them fell inside a measure block.
    package static func boottimeNanoseconds() -> UInt64 {
        cstrobe_boottime_ns()
    }

    /// Whether the system measures a thread's own rusage (Linux); elsewhere
    /// ``ResourceUsage/thread()`` reads the whole process.
    package static var threadUsageIsPerThread: Bool {
        cstrobe_thread_rusage_is_per_thread() != 0
    }
}

/// One reading of rusage: CPU time, context switches and page faults.
package struct ResourceUsage: Sendable, Hashable {
    /// User CPU time, in nanoseconds.
    package var userNanoseconds: UInt64 = 0
    /// System CPU time, in nanoseconds.
    package var systemNanoseconds: UInt64 = 0
    /// Context switches the reader asked for (it waited).
    package var voluntarySwitches: UInt64 = 0
    /// Context switches the scheduler imposed.
    package var involuntarySwitches: UInt64 = 0
    /// Page faults served without I/O.
    package var minorFaults: UInt64 = 0
    /// Page faults that read from storage.
    package var majorFaults: UInt64 = 0

    /// A reading of zeros, or of the values given.
    package init(
        userNanoseconds: UInt64 = 0, systemNanoseconds: UInt64 = 0, voluntarySwitches: UInt64 = 0,
        involuntarySwitches: UInt64 = 0, minorFaults: UInt64 = 0, majorFaults: UInt64 = 0
    ) {
        self.userNanoseconds = userNanoseconds
        self.systemNanoseconds = systemNanoseconds
        self.voluntarySwitches = voluntarySwitches
        self.involuntarySwitches = involuntarySwitches
        self.minorFaults = minorFaults
        self.majorFaults = majorFaults
    }

    init(_ usage: cstrobe_rusage) {
        self.init(
            userNanoseconds: usage.user_ns, systemNanoseconds: usage.system_ns,
            voluntarySwitches: usage.voluntary_switches, involuntarySwitches: usage.involuntary_switches,
            minorFaults: usage.minor_faults, majorFaults: usage.major_faults)
    }

    /// The whole process's usage so far.
    package static func process() -> ResourceUsage {
        var usage = cstrobe_rusage()
        cstrobe_process_rusage(&usage)
        return ResourceUsage(usage)
    }

    /// The calling thread's usage so far (the process's where the system has
    /// no per-thread figures; see ``ProcessMeasurements/threadUsageIsPerThread``).
    package static func thread() -> ResourceUsage {
        var usage = cstrobe_rusage()
        cstrobe_thread_rusage(&usage)
        return ResourceUsage(usage)
    }
}
