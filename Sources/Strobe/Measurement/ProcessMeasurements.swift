import CStrobe
import PerfettoWire

/// The clock and process readings of the SDK's C layer, for the perf-test
/// runner (`StrobePerf`), so that it reads them through the SDK's `package`
/// API rather than importing the C module.
package enum ProcessMeasurements {
    /// `CLOCK_MONOTONIC` in nanoseconds: the clock the runner times
    /// iterations with, the same one session timestamps convert to.
    package static func monotonicNanoseconds() -> UInt64 {
        cstrobe_monotonic_ns()
    }

    /// The calling thread's CPU time in nanoseconds.
    package static func threadCPUNanoseconds() -> UInt64 {
        cstrobe_thread_cpu_ns(pthread_self())
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

extension ResourceUsage {
    init(_ usage: cstrobe_rusage) {
        self.init(
            userNanoseconds: Int64(clamping: usage.user_ns), systemNanoseconds: Int64(clamping: usage.system_ns),
            voluntarySwitches: Int64(clamping: usage.voluntary_switches),
            involuntarySwitches: Int64(clamping: usage.involuntary_switches),
            minorFaults: Int64(clamping: usage.minor_faults), majorFaults: Int64(clamping: usage.major_faults))
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
