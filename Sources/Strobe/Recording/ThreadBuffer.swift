import CStrobe
import StrobeEncoding
import Synchronization

/// One thread's recording state: its buffer chunks, its identity and its loss
/// accounting.
///
/// The owning thread writes records without a lock through `cursor`. The lock
/// guards only what changes hands: the list of sealed chunks, the loss counts
/// and the link to the session. Hence `@unchecked Sendable`: the cursor's
/// memory is synchronised by its own release and acquire operations
/// (`CStrobeRuntime.h`), the rest by the lock.
package final class ThreadBuffer: @unchecked Sendable {
    /// The hot cursor, at a stable address read by inlined code.
    let cursor: UnsafeMutablePointer<cstrobe_thread_cursor>
    /// The kernel thread id.
    let threadID: UInt64
    /// A number no other recorder of this process has, unlike its address,
    /// which a recorder made after this one is freed may take.
    let serial = ThreadBuffer.serials.wrappingAdd(1, ordering: .relaxed).oldValue
    private static let serials = Atomic<UInt64>(1)

    struct Shared {
        var session: SessionWriter?
        var sequenceID: UInt32 = 0
        var current: BufferChunk?
        var sealed: [BufferChunk] = []
        var name: String = ""
        var overwritten: UInt64 = 0
        var unmatchedEnds: UInt64 = 0
        var exited = false
        /// Chunks held by this thread, current one included.
        var heldChunks = 0
        /// The crash handler's view of the chunks, when the session has
        /// crash capture (`CrashCapture.swift`).
        var crashSlot: UnsafeMutablePointer<cstrobe_crash_thread>?
    }

    let shared = SanitizedMutex(Shared())

    /// How many times a drain or a dump took sealed chunks from the thread,
    /// giving it room; raised under the lock, read by the owner without it.
    let takes = Atomic<UInt64>(0)

    // Owner-only state: touched by the owning thread alone, so accesses can
    // never overlap and go without dynamic exclusivity checks. Internal for
    // the type's own extensions (`ThreadBuffer+*.swift`); nothing else
    // touches it.
    /// Nesting levels whose begin was discarded (their ends are discarded too).
    @exclusivity(unchecked) var discardedLevels = NestingLevels()
    /// Nesting levels from 64 on whose begin captured rusage (the first 64
    /// are bits of the cursor's `rusage_levels`).
    @exclusivity(unchecked) var deepResourceUsageLevels: Set<Int64> = []
    /// Events discarded since the last record that made it into the buffer.
    @exclusivity(unchecked) var pendingDiscards: UInt64 = 0
    /// ``takes`` at the last failed attempt to get memory: while it stays
    /// the same, the thread is still at its limit, and an event is
    /// discarded without the lock.
    @exclusivity(unchecked) var takesAtLastFailure: UInt64 = .max
    @exclusivity(unchecked) var settings = RecorderSettings()
    /// Names of the open intervals, innermost last, kept only while the
    /// session has signposts: their ends announce the name again.
    @exclusivity(unchecked) var signpostNames: [UInt64] = []

    private init() {
        // A cache line (two, for adjacent-line prefetch) of its own, so that
        // threads recording side by side never share one.
        cursor = UnsafeMutableRawPointer.allocate(byteCount: Self.cursorBytes, alignment: 128)
            .bindMemory(to: cstrobe_thread_cursor.self, capacity: 1)
        cursor.initialize(to: cstrobe_thread_cursor())
        threadID = cstrobe_thread_id()
        var buffer = [CChar](repeating: 0, count: 64)
        if cstrobe_thread_name(&buffer, buffer.count) == 0 {
            let name = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            shared.withLock { $0.name = name }
        }
    }

    deinit {
        UnsafeMutableRawPointer(cursor).deallocate()
    }

    private static let cursorBytes = max(256, (MemoryLayout<cstrobe_thread_cursor>.size + 127) & ~127)

    /// The calling thread's recorder, created on first use.
    static func current() -> ThreadBuffer {
        if let cursor = cstrobe_get_cursor(), let owner = cursor.pointee.owner {
            return Unmanaged<ThreadBuffer>.fromOpaque(owner).takeUnretainedValue()
        }
        return asOwnWork {
            let recorder = ThreadBuffer()
            let retained = Unmanaged.passRetained(recorder).toOpaque()
            recorder.cursor.pointee.owner = retained
            cstrobe_set_cursor(recorder.cursor)
            cstrobe_on_thread_exit(threadDidExit, retained)
            return recorder
        }
    }

    /// Runs `write` with the calling thread's recorder, ready to record for
    /// the running session and marked as writing, then ends the write (a
    /// stopping session waits for it); nil, without running `write`, when no
    /// session is running.
    ///
    /// The recorder is lent without a retain (a retain and a release cost a
    /// slow-path event a third of its time): the thread's own reference,
    /// released only when the thread exits, keeps it alive for the call.
    @discardableResult @inline(__always)
    static func withAttached<Result>(_ write: (ThreadBuffer) -> Result) -> Result? {
        guard let recorder = attached() else { return nil }
        return recorder._withUnsafeGuaranteedRef { recorder in
            defer { recorder.leave() }
            return write(recorder)
        }
    }

    /// The calling thread's recorder, unretained, attached and marked as
    /// writing; nil when no session is running.
    @inline(__always)
    private static func attached() -> Unmanaged<ThreadBuffer>? {
        let generation = cstrobe_load_generation()
        guard generation != 0 else { return nil }
        if let cursor = cstrobe_get_cursor(), let owner = cursor.pointee.owner, cstrobe_enter_write(cursor, generation)
        {
            return Unmanaged.fromOpaque(owner)
        }
        return attachingForSession(generation: generation)
    }

    /// The calling thread's recorder, attached to the session running under
    /// `generation` and marked as writing, or nil when that session is gone.
    @inline(never)
    private static func attachingForSession(generation: UInt64) -> Unmanaged<ThreadBuffer>? {
        asOwnWork { attachingForSessionUnmarked(generation: generation) }
    }

    /// ``attachingForSession(generation:)``'s work.
    private static func attachingForSessionUnmarked(generation: UInt64) -> Unmanaged<ThreadBuffer>? {
        let recorder = current()
        if cstrobe_enter_write(recorder.cursor, generation) { return Unmanaged.passUnretained(recorder) }
        guard let session = SessionWriter.running(generation: generation), recorder.attach(to: session),
            cstrobe_enter_write(recorder.cursor, generation)
        else { return nil }
        return Unmanaged.passUnretained(recorder)
    }

    /// Ends the write that ``attached()`` began.
    @inline(__always)
    private func leave() {
        cstrobe_leave_write(cursor)
    }

    /// Whether the owning thread is between its check that a session runs
    /// and the publication of its record.
    var isWriting: Bool { cstrobe_is_writing(cursor) }

    /// Binds the recorder to `session`, dropping what it held for an earlier one.
    private func attach(to session: SessionWriter) -> Bool {
        let kept = shared.withLock { state -> BufferChunk? in
            let current = state.current
            state.current = nil
            return current
        }
        let chunk = kept.flatMap { $0.capacity == session.pool.chunkWords ? $0 : nil } ?? session.pool.take()
        cstrobe_set_events(cursor, CSTROBE_EVENT_DISCARDED, 0)
        let attached: Bool = shared.withLock { state in
            guard session.register(self, state: &state) else { return false }
            state.current = chunk
            state.sealed = []
            state.heldChunks = 1
            state.overwritten = 0
            state.unmatchedEnds = 0
            chunk.firstEvent = 0
            if session.configuration.crashCapture != nil {
                state.crashSlot = cstrobe_crash_add_thread(
                    threadID, serial, UInt64(session.recorderSettings.maximumChunks + CrashHandler.spareChunks))
                mirrorForCrash(&state)
            }
            return true
        }
        guard attached else {
            shared.withLock { $0.current = chunk }
            return false
        }
        settings = session.recorderSettings
        discardedLevels.removeAll()
        deepResourceUsageLevels = []
        signpostNames.removeAll()
        pendingDiscards = 0
        takesAtLastFailure = .max
        let pointee = cursor
        pointee.pointee.limit = chunk.limit
        pointee.pointee.depth = 0
        cstrobe_set_events(pointee, CSTROBE_EVENT_RECORDED, 0)
        pointee.pointee.flags = settings.flags
        pointee.pointee.rusage_levels = 0
        pointee.pointee.categorized_levels = 0
        pointee.pointee.timestamp_base = session.timestampBase
        cstrobe_publish(pointee, chunk.base)
        pointee.pointee.generation = session.generation
        return true
    }

    /// Names the thread in traces.
    func rename(_ name: String) {
        shared.withLock { state in
            state.name = name
            mirrorForCrash(&state)
        }
    }

    /// Detaches the recorder from `session` when the session ends.
    ///
    /// Sealed chunks go back to the pool. The current chunk stays with the
    /// thread: a call that saw the session running may still be writing into
    /// it, and only the thread itself replaces it, at its next attach.
    func detach(from session: SessionWriter) {
        let sealed: [BufferChunk] = shared.withLock { state in
            guard state.session === session else { return [] }
            releaseCrashMirror(&state)
            state.session = nil
            let sealed = state.sealed
            state.sealed = []
            state.heldChunks = state.current == nil ? 0 : 1
            return sealed
        }
        session.pool.give(sealed)
    }
}

/// Runs on a thread that exits: its data stays for the drainer.
private func threadDidExit(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    cstrobe_own_work_begin()
    defer { cstrobe_own_work_end() }
    let recorder = Unmanaged<ThreadBuffer>.fromOpaque(context)
    let object = recorder.takeUnretainedValue()
    let published = cstrobe_read_published(object.cursor)
    let recorded = cstrobe_events(object.cursor, CSTROBE_EVENT_RECORDED)
    object.shared.withLock { state in
        state.exited = true
        if let current = state.current, let published, state.session != nil {
            current.usedWords = published - current.base
            current.endEvent = recorded
            state.sealed.append(current)
            state.current = nil
        }
        object.mirrorForCrash(&state)
    }
    cstrobe_crash_release_thread()
    object.cursor.pointee.generation = 0
    cstrobe_set_cursor(nil)
    recorder.release()
}
