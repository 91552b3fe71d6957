import CStrobe

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The sampling side of a session's ``TraceConfiguration/CPUProfile``: one
/// C sampler per thread (`CStrobeProfiler.h`), opened when the session
/// starts and as threads appear, and drained by the background writer.
///
/// With perf events every thread of the process is sampled: the writer
/// lists `/proc/self/task` on each turn and opens an event for each thread
/// it has none for (the kernel allows that for the process's own threads).
/// A CPU-time timer must be created by the thread it samples, which learns
/// its stack's bounds for the frame-pointer walk; so with timers the
/// threads sampled are the one that starts the session and each thread as
/// it first records into it (``threadRegistered()``).
///
/// `@unchecked Sendable`: its state is behind a `SanitizedMutex`; the
/// scratch buffer is used by the writer alone.
final class CPUProfiler: @unchecked Sendable {
    /// The method that ran.
    enum Method: String {
        case perfEvent = "perf_event"
        case cpuTimer = "cpu_timer"
    }

    let profile: TraceConfiguration.CPUProfile
    let method: Method
    /// Why the kernel's method was not used, when the timer runs instead
    /// under ``TraceConfiguration/CPUProfile/Method-swift.enum/automatic``.
    let fallbackReason: String?

    /// A C sampler; `@unchecked Sendable` since only the lock's holder or
    /// the writer uses it, and the C side is safe across threads.
    private struct Sampler: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct State {
        var samplers: [Int32: Sampler] = [:]
        /// Threads no sampler could be opened for, and the first reason.
        var unsampledThreads: Set<Int32> = []
        var firstFailure: String?
        var stopped = false
    }

    private let state = SanitizedMutex(State())
    /// Where the writer drains rings into.
    private let scratch: UnsafeMutableBufferPointer<UInt64>

    /// Pages of each perf ring (a power of two, as the kernel asks).
    private let perfRingPages: Int
    /// Words of each timer ring, the same bytes.
    private let timerRingWords: Int

    /// The bytes of one thread's ring: half a second of its samples at the
    /// profile's frequency, each taken as 864 bytes (the 512 bytes of stack
    /// a sample copies, its registers and header, and 32 frames), between
    /// 128 KiB and 512 KiB. The writer drains every 100 ms but yields to
    /// the threads it serves, so on a loaded machine it can be late by
    /// several of its turns: a ring of 128 KiB, 150 ms at 1 kHz, then lost
    /// more than half of a busy thread's samples (an Intel Xeon, 2 cores,
    /// one other busy process, load average about 2.5). Where the kernel's limit
    /// on locked memory refuses a ring, its opening halves it.
    static func ringBytes(periodNanoseconds: UInt64) -> Int {
        let perSecond = 864 * 1_000_000_000 / max(periodNanoseconds, 1)
        var bytes = 128 << 10
        while bytes < 512 << 10, UInt64(bytes) < perSecond / 2 { bytes <<= 1 }
        return bytes
    }

    /// Starts sampling the calling thread, by the kernel's method if the
    /// profile allows it and the system does, else by the timer.
    init(_ profile: TraceConfiguration.CPUProfile) throws(TraceSessionError) {
        self.profile = profile
        scratch = .allocate(capacity: 1 << 16)
        let ringBytes = Self.ringBytes(periodNanoseconds: profile.periodNanoseconds)
        perfRingPages = max(ringBytes / max(Int(sysconf(Int32(_SC_PAGESIZE))), 1), 1)
        timerRingWords = ringBytes / 8
        let tid = Int32(truncatingIfNeeded: cstrobe_thread_id())
        var sampler: OpaquePointer?
        var reason: String?
        if profile.method == .automatic {
            let error = cstrobe_sampler_open_perf(tid, profile.periodNanoseconds, perfRingPages, &sampler)
            if error != 0 { reason = "perf_event_open: " + Self.describe(error) }
        } else {
            reason = "the cpuTimer method was asked for"
        }
        if let sampler {
            method = .perfEvent
            state.withLock { $0.samplers[tid] = Sampler(pointer: sampler) }
        } else {
            let error = cstrobe_sampler_open_timer(profile.periodNanoseconds, timerRingWords, &sampler)
            guard error == 0, let sampler else {
                scratch.deallocate()
                throw .invalidConfiguration(
                    "cpuProfile: neither sampling method is available (\(reason ?? "perf events not tried"); "
                        + "timer_create: \(Self.describe(error)))"
                )
            }
            method = .cpuTimer
            state.withLock { $0.samplers[tid] = Sampler(pointer: sampler) }
        }
        fallbackReason = method == .cpuTimer ? reason : nil
        if method == .perfEvent { openMissingThreads() }
    }

    deinit { scratch.deallocate() }

    private static func describe(_ error: Int32) -> String {
        "\(String(cString: strerror(error))) (errno \(error))"
    }

    /// Called on a thread as it registers with the session: samples it if
    /// it is not sampled yet.
    func threadRegistered() {
        let tid = Int32(truncatingIfNeeded: cstrobe_thread_id())
        state.withLock { state in
            guard !state.stopped, state.samplers[tid] == nil else { return }
            var sampler: OpaquePointer?
            let error =
                method == .perfEvent
                ? cstrobe_sampler_open_perf(tid, profile.periodNanoseconds, perfRingPages, &sampler)
                : cstrobe_sampler_open_timer(profile.periodNanoseconds, timerRingWords, &sampler)
            Self.note(error, sampler, tid: tid, in: &state)
        }
    }

    /// Keeps an opened sampler, or counts the thread as unsampled.
    private static func note(_ error: Int32, _ sampler: OpaquePointer?, tid: Int32, in state: inout State) {
        if error == 0, let sampler {
            state.samplers[tid] = Sampler(pointer: sampler)
        } else if state.unsampledThreads.insert(tid).inserted, state.firstFailure == nil {
            state.firstFailure = "thread \(tid): \(describe(error))"
        }
    }

    /// Threads of the process no sampler could be opened for (the
    /// locked-memory limit, a thread gone before it was opened), and why the
    /// first one failed.
    var unsampled: (threads: Int, firstFailure: String?) {
        state.withLock { ($0.unsampledThreads.count, $0.firstFailure) }
    }

    /// Opens a perf sampler for every thread of the process that has none.
    private func openMissingThreads() {
        let threads = Self.processThreads()
        state.withLock { state in
            guard !state.stopped else { return }
            for tid in threads where state.samplers[tid] == nil && !state.unsampledThreads.contains(tid) {
                var sampler: OpaquePointer?
                let error = cstrobe_sampler_open_perf(tid, profile.periodNanoseconds, perfRingPages, &sampler)
                // A thread that exited since the listing is not one missed.
                if error == ESRCH { continue }
                Self.note(error, sampler, tid: tid, in: &state)
            }
        }
    }

    /// The ids of the process's threads, from `/proc/self/task`.
    static func processThreads() -> [Int32] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var threads: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if let tid = Int32(name) { threads.append(tid) }
        }
        return threads
    }

    private static func threadExists(_ tid: Int32) -> Bool {
        access("/proc/self/task/\(tid)", F_OK) == 0
    }

    /// The writer's turn: opens samplers for new threads (perf events),
    /// drains every ring into `body` a buffer at a time, and closes the
    /// samplers of threads that exited once their rings are empty. Returns
    /// the samples lost since the last turn.
    func drain(_ body: (UnsafeBufferPointer<UInt64>) -> Void) -> UInt64 {
        if method == .perfEvent { openMissingThreads() }
        let samplers = state.withLock { $0.samplers }
        var lost: UInt64 = 0
        var gone: [Int32] = []
        for (tid, sampler) in samplers {
            let exited = !Self.threadExists(tid)
            drainRing(sampler.pointer, lost: &lost, body)
            if exited { gone.append(tid) }
        }
        if !gone.isEmpty {
            state.withLock { state in
                for tid in gone {
                    if let sampler = state.samplers.removeValue(forKey: tid) { cstrobe_sampler_close(sampler.pointer) }
                }
            }
        }
        return lost
    }

    private func drainRing(_ sampler: OpaquePointer, lost: inout UInt64, _ body: (UnsafeBufferPointer<UInt64>) -> Void)
    {
        while true {
            let words = cstrobe_sampler_drain(sampler, scratch.baseAddress, scratch.count, &lost)
            guard words > 0 else { return }
            body(UnsafeBufferPointer(rebasing: scratch[0..<words]))
        }
    }

    /// Stops every sampler; the final ``drain(_:)`` then closes them.
    func stop() {
        let samplers = state.withLock { state in
            state.stopped = true
            return state.samplers
        }
        for sampler in samplers.values { cstrobe_sampler_stop(sampler.pointer) }
    }

    /// Drains what is left and closes every sampler.
    func finish(_ body: (UnsafeBufferPointer<UInt64>) -> Void) -> UInt64 {
        let samplers = state.withLock { state in
            let samplers = state.samplers
            state.samplers = [:]
            return samplers
        }
        var lost: UInt64 = 0
        for sampler in samplers.values {
            drainRing(sampler.pointer, lost: &lost, body)
            cstrobe_sampler_close(sampler.pointer)
        }
        return lost
    }
}
