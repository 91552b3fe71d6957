#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The calling thread's CPU time, in nanoseconds.
func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Keeps the calling thread busy in user code until it has used
/// `milliseconds` of CPU time (not wall time, so a loaded machine only
/// makes it slower).
public func burnThreadCPU(milliseconds: Double) {
    let start = threadCPUNanoseconds()
    var accumulator: UInt64 = 1
    while Double(threadCPUNanoseconds() - start) < milliseconds * 1e6 {
        for index in 0..<20_000 { accumulator = accumulator &* 6_364_136_223_846_793_005 &+ UInt64(index) }
    }
    withExtendedLifetime(accumulator) {}
}
