import Strobe

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A CPU-bound workload whose profile is known in advance, the truth the
/// CPU profiler is checked against: each thread spends 60% of its CPU time
/// in ``heavyShare(nanoseconds:)``, 30% in ``mediumShare(nanoseconds:)`` and
/// 10% in ``lightShare(nanoseconds:)``, in slices of 6, 3 and 1 ms on
/// average (each round's length varies, see ``rounds(_:recording:)``), each
/// slice inside an interval named after its function (`heavy share`,
/// `medium share`, `light share`). Each function spins until the thread's
/// own CPU clock has advanced by its slice, so the shares hold in CPU time
/// whatever else the machine runs.
public enum ProfileWorkload {
    /// The functions' shares of each thread's CPU time, by the name the
    /// profile gives them.
    public static let truth: [(function: String, share: Double)] = [
        ("ProfileWorkload.ProfileWorkload.heavyShare(nanoseconds:)", 0.6),
        ("ProfileWorkload.ProfileWorkload.mediumShare(nanoseconds:)", 0.3),
        ("ProfileWorkload.ProfileWorkload.lightShare(nanoseconds:)", 0.1),
    ]

    /// The interval around each slice, by function, in the order of ``truth``.
    public static let intervalNames = ["heavy share", "medium share", "light share"]

    /// Runs the workload on `threads` threads (the calling one and
    /// `threads - 1` more) for `milliseconds` of CPU time each, recording
    /// its intervals when `recording`.
    public static func run(threads: Int = 2, milliseconds: Int, recording: Bool = true) {
        let rounds = max(milliseconds / 10, 1)
        var others: [pthread_t] = []
        for _ in 1..<max(threads, 1) {
            var thread = pthread_t()
            let context = UnsafeMutableRawPointer(bitPattern: rounds << 1 | (recording ? 1 : 0))
            if pthread_create(
                &thread, nil,
                { context in
                    let value = Int(bitPattern: context)
                    ProfileWorkload.rounds(value >> 1, recording: value & 1 == 1)
                    return nil
                }, context) == 0
            {
                others.append(thread)
            }
        }
        Self.rounds(rounds, recording: recording)
        for thread in others { pthread_join(thread, nil) }
    }

    /// `count` rounds of 10 ms of CPU time on average: 60% heavy, 30% medium,
    /// 10% light. Each round's length is scaled by its own factor between 0.5
    /// and 1.5 (a golden-ratio sequence, averaging 1), so that the rounds do
    /// not keep step with the kernel's tick: a sampler that fires on the tick
    /// (the CPU timer) would otherwise see the same few phases of a fixed
    /// 10 ms round again and again, and its shares would follow the phases,
    /// not the time spent.
    @inline(never)
    static func rounds(_ count: Int, recording: Bool) {
        var sink: UInt64 = 0
        var phase = 0.5
        for _ in 0..<count {
            let round = UInt64((0.5 + phase) * 1_000_000)
            phase = (phase + 0.618_033_988_749_895).truncatingRemainder(dividingBy: 1)
            if recording { Trace.begin("heavy share") }
            sink &+= heavyShare(nanoseconds: 6 * round)
            if recording {
                Trace.end()
                Trace.begin("medium share")
            }
            sink &+= mediumShare(nanoseconds: 3 * round)
            if recording {
                Trace.end()
                Trace.begin("light share")
            }
            sink &+= lightShare(nanoseconds: round)
            if recording { Trace.end() }
        }
        // Used, so the work is not optimized away.
        if sink == 0 { print("0") }
    }

    // Each spins with shifts of its own, so that an optimizer cannot merge
    // the three into one function.

    /// Spins for `nanoseconds` of the thread's CPU time.
    @inline(never)
    public static func heavyShare(nanoseconds: UInt64) -> UInt64 { spin(nanoseconds, 13, 7, 17) }

    /// Spins for `nanoseconds` of the thread's CPU time.
    @inline(never)
    public static func mediumShare(nanoseconds: UInt64) -> UInt64 { spin(nanoseconds, 11, 5, 23) }

    /// Spins for `nanoseconds` of the thread's CPU time.
    @inline(never)
    public static func lightShare(nanoseconds: UInt64) -> UInt64 { spin(nanoseconds, 9, 3, 29) }

    /// The function that ``runLibmLeaf(threads:milliseconds:)`` calls libm's
    /// `sin` from, by the name the profile gives it: every sample inside
    /// libm belongs under it.
    public static let libmCaller = "ProfileWorkload.ProfileWorkload.libmShare(nanoseconds:)"

    /// Runs ``libmShare(nanoseconds:)`` on `threads` threads (the calling one
    /// and `threads - 1` more) for `milliseconds` of CPU time each, in
    /// slices of 5 ms: most of its time is in libm's `sin`, a leaf that
    /// keeps no frame pointer.
    public static func runLibmLeaf(threads: Int = 2, milliseconds: Int) {
        let slices = max(milliseconds / 5, 1)
        var others: [pthread_t] = []
        for _ in 1..<max(threads, 1) {
            var thread = pthread_t()
            if pthread_create(
                &thread, nil,
                { context in
                    var sink = 0.0
                    for _ in 0..<Int(bitPattern: context) { sink += ProfileWorkload.libmShare(nanoseconds: 5_000_000) }
                    if sink == 0 { print("0") }
                    return nil
                }, UnsafeMutableRawPointer(bitPattern: slices)) == 0
            {
                others.append(thread)
            }
        }
        var sink = 0.0
        for _ in 0..<slices { sink += libmShare(nanoseconds: 5_000_000) }
        if sink == 0 { print("0") }
        for thread in others { pthread_join(thread, nil) }
    }

    /// Calls libm's `sin` for `nanoseconds` of the thread's CPU time.
    @inline(never)
    public static func libmShare(nanoseconds: UInt64) -> Double {
        let deadline = threadCPUTime() + nanoseconds
        var x = 0.5
        while threadCPUTime() < deadline {
            for _ in 0..<500 { x = sin(x) + 0.75 }
        }
        return x
    }

    /// The thread's CPU time in nanoseconds.
    public static func threadCPUTime() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    @inline(__always)
    private static func spin(_ nanoseconds: UInt64, _ a: UInt64, _ b: UInt64, _ c: UInt64) -> UInt64 {
        let deadline = threadCPUTime() + nanoseconds
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        while threadCPUTime() < deadline {
            for _ in 0..<2000 {
                state ^= state << a
                state ^= state >> b
                state ^= state << c
            }
        }
        return state
    }
}
