import CStrobe

/// Samples process-wide resource usage (`getrusage(RUSAGE_SELF)`) into
/// counter tracks.
enum ProcessSampler {
    static func sample() {
        var usage = cstrobe_rusage()
        guard cstrobe_process_rusage(&usage) == 0 else { return }
        Trace.counter("process.cpu.user", Int64(usage.user_ns), unit: .nanoseconds)
        Trace.counter("process.cpu.system", Int64(usage.system_ns), unit: .nanoseconds)
        Trace.counter("process.max_rss", Int64(usage.max_rss_bytes), unit: .bytes)
        Trace.counter("process.minor_faults", Int64(usage.minor_faults))
        Trace.counter("process.major_faults", Int64(usage.major_faults))
        Trace.counter("process.context_switches.voluntary", Int64(usage.voluntary_switches))
        Trace.counter("process.context_switches.involuntary", Int64(usage.involuntary_switches))
    }
}
