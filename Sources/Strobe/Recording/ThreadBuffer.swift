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
        var discarded: UInt64 = 0
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

    // Owner-only state: touched by the owning thread alone, so accesses can
    // never overlap and go without dynamic exclusivity checks.
    /// Nesting levels whose begin was discarded (their ends are discarded too).
    @exclusivity(unchecked) private var discardedLevels = NestingLevels()
    /// Nesting levels from 64 on whose begin captured rusage (the first 64
    /// are bits of the cursor's `rusage_levels`).
    @exclusivity(unchecked) private var deepResourceUsageLevels: Set<Int64> = []
    /// Events discarded since the last record that made it into the buffer.
    @exclusivity(unchecked) private var pendingDiscards: UInt64 = 0
    /// The drain count at the last failed attempt to get memory.
    @exclusivity(unchecked) private var drainsAtLastFailure: UInt64 = .max
    @exclusivity(unchecked) private var settings = RecorderSettings()
    /// Names of the open intervals, innermost last, kept only while the
    /// session has signposts: their ends announce the name again.
    @exclusivity(unchecked) private var signpostNames: [UInt64] = []

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
        let recorder = ThreadBuffer()
        let retained = Unmanaged.passRetained(recorder).toOpaque()
        recorder.cursor.pointee.owner = retained
        cstrobe_set_cursor(recorder.cursor)
        cstrobe_on_thread_exit(threadDidExit, retained)
        return recorder
    }

    /// The calling thread's recorder, ready to record for the running session
    /// and marked as writing, or nil when no session is running. Call
    /// ``leave()`` when the record is written: a stopping session waits for it.
    static func attached() -> ThreadBuffer? {
        let generation = cstrobe_load_generation()
        guard generation != 0 else { return nil }
        let recorder = current()
        if cstrobe_enter_write(recorder.cursor, generation) { return recorder }
        guard let session = SessionWriter.running(generation: generation), recorder.attach(to: session),
            cstrobe_enter_write(recorder.cursor, generation)
        else { return nil }
        return recorder
    }

    /// Ends the write that ``attached()`` began.
    @inline(__always)
    func leave() {
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
        let attached: Bool = shared.withLock { state in
            guard session.register(self, state: &state) else { return false }
            state.current = chunk
            state.sealed = []
            state.heldChunks = 1
            state.discarded = 0
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
        drainsAtLastFailure = .max
        let pointee = cursor
        pointee.pointee.limit = chunk.limit
        pointee.pointee.depth = 0
        cstrobe_set_recorded(pointee, 0)
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

    // MARK: - Signposts

    /// The session's signpost emitter, when it has one.
    var signposts: SignpostEmitter? {
        @inline(__always) get { settings.signposts }
    }

    /// Announces a begin at the thread's current depth.
    func announceBegin(_ name: Trace.Name, to signposts: SignpostEmitter) {
        signposts.begin(name.word, thread: threadID, depth: cursor.pointee.depth)
        signpostNames.append(name.word)
    }

    /// Announces the end of the innermost open interval, if there is one.
    func announceEnd(to signposts: SignpostEmitter) {
        let depth = cursor.pointee.depth
        guard depth > 0, let name = signpostNames.popLast() else { return }
        signposts.end(name, thread: threadID, depth: depth - 1)
    }

    // MARK: - Writing

    /// Whether an interval named `name` captures rusage under the session's
    /// policy.
    func sessionWantsResourceUsage(for name: Trace.Name) -> Bool {
        switch settings.resourceUsage {
        case .never: return false
        case .all: return true
        case .named(let words, let texts):
            if words.contains(name.word) { return true }
            return texts.contains(name.text)
        }
    }

    /// Appends a begin record built by `fill` (which receives the record's
    /// first word and returns nothing); `words` is the record's full length.
    /// With `category` (a prefix word, 0 for none), the begin is in that
    /// category, and so must be the end in a category that closes it.
    func appendBegin(
        words: Int, resourceUsage: Bool, category: UInt64 = 0, fill: (UnsafeMutablePointer<UInt64>) -> Void
    ) {
        let level = cursor.pointee.depth
        // Kept whether the begin is recorded or discarded: either way its
        // end in the category closes this level.
        if category != 0 { cstrobe_open_categorized_level(cursor, level, RecordLayout.timestamp(of: category)) }
        if let destination = reserve(words: words, forced: false) {
            fill(destination)
            commit(destination + words)
            if resourceUsage {
                if level < 64 {
                    cursor.pointee.rusage_levels |= 1 << UInt64(level)
                } else {
                    deepResourceUsageLevels.insert(level)
                    updateFlags()
                }
            }
        } else {
            discardedLevels.insert(level)
            cursor.pointee.flags |= UInt64(CSTROBE_FLAG_DROPPING)
        }
        cursor.pointee.depth = level + 1
    }

    /// Appends an end record, or discards it when its begin was discarded;
    /// with `category` (a prefix word, 0 for none) the end names the
    /// category of the begin it closes.
    func appendEnd(category: UInt64 = 0) {
        var depth = cursor.pointee.depth
        guard depth > 0 else {
            shared.withLock { $0.unmatchedEnds += 1 }
            return
        }
        if category != 0 {
            guard let closed = innermostLevel(in: category) else {
                // An end in a category whose begin was skipped while the
                // category was off: no open interval is in its category,
                // so it closes none here. It is recorded all the same; the
                // writer leaves it out and counts it in the trace.
                if let destination = reserve(words: 2, forced: false) {
                    destination[0] = category
                    destination[1] = RecordLayout.header(kind: RecordLayout.end, timestamp: timestamp())
                    commit(destination + 2)
                }
                return
            }
            // Intervals above it whose ends were skipped (their category
            // was turned off) end with it, as the writer ends them.
            while depth - 1 > closed {
                depth -= 1
                forget(level: depth)
            }
            cursor.pointee.depth = depth
        }
        let level = depth - 1
        if level < 64 { cursor.pointee.categorized_levels &= ~(1 << UInt64(level)) }
        cursor.pointee.depth = level
        if discardedLevels.remove(level) {
            noteDiscard()
            updateFlags()
            return
        }
        let withUsage: Bool
        if level < 64 {
            let bit: UInt64 = 1 << UInt64(level)
            withUsage = cursor.pointee.rusage_levels & bit != 0
            cursor.pointee.rusage_levels &= ~bit
        } else {
            withUsage = deepResourceUsageLevels.remove(level) != nil
            updateFlags()
        }
        var usage = cstrobe_rusage()
        if withUsage { cstrobe_thread_rusage(&usage) }
        let prefix = category != 0 ? 1 : 0
        let words = prefix + (withUsage ? 1 + RecordLayout.resourceUsageWords : 1)
        // The begin is in the buffer, so the end must be too: it may take a
        // chunk beyond the thread's limit.
        guard var destination = reserve(words: words, forced: true) else { return }
        let end = destination + words
        if prefix != 0 {
            destination[0] = category
            destination += 1
        }
        let kind = withUsage ? RecordLayout.end | RecordLayout.withResourceUsage : RecordLayout.end
        destination[0] = RecordLayout.header(kind: kind, timestamp: timestamp())
        if withUsage { RecordLayout.store(usage, at: destination + 1) }
        commit(end)
    }

    /// Whether an end in `category` (a prefix word) closes an open
    /// interval: one was opened in the same category (those above it end
    /// with it), or the innermost lies 64 levels deep or more, where
    /// nothing tells.
    func closesAnInterval(category: UInt64) -> Bool {
        cursor.pointee.depth == 0 || innermostLevel(in: category) != nil
    }

    /// The innermost open level whose interval is in `category` (a prefix
    /// word); past 64 levels, the innermost, where nothing tells.
    private func innermostLevel(in category: UInt64) -> Int64? {
        let payload = RecordLayout.timestamp(of: category)
        var level = cursor.pointee.depth - 1
        while level >= 0 {
            if cstrobe_level_is_in_category(cursor, level, payload) { return level }
            level -= 1
        }
        return nil
    }

    /// Forgets what the open interval at `level` captured: it ends with an
    /// interval around it.
    private func forget(level: Int64) {
        if level < 64 {
            let bit: UInt64 = 1 << UInt64(level)
            cursor.pointee.categorized_levels &= ~bit
            cursor.pointee.rusage_levels &= ~bit
        } else {
            deepResourceUsageLevels.remove(level)
        }
        _ = discardedLevels.remove(level)
        updateFlags()
    }

    /// Appends any other record; returns false when it was discarded.
    @discardableResult
    func append(words: Int, forced: Bool = false, fill: (UnsafeMutablePointer<UInt64>) -> Void) -> Bool {
        guard let destination = reserve(words: words, forced: forced) else {
            cursor.pointee.flags |= UInt64(CSTROBE_FLAG_DROPPING)
            return false
        }
        fill(destination)
        commit(destination + words)
        return true
    }

    /// A timestamp relative to the session's base.
    func timestamp() -> UInt64 {
        cstrobe_raw_timestamp() &- cursor.pointee.timestamp_base
    }

    private func commit(_ end: UnsafeMutablePointer<UInt64>) {
        cstrobe_count_recorded(cursor)
        cstrobe_publish(cursor, end)
    }

    private func noteDiscard() {
        pendingDiscards += 1
        shared.withLock { state in
            state.discarded += 1
            state.crashSlot?.pointee.discarded = state.discarded
        }
    }

    private func updateFlags() {
        var flags = settings.flags
        if !discardedLevels.isEmpty || pendingDiscards > 0 { flags |= UInt64(CSTROBE_FLAG_DROPPING) }
        if !deepResourceUsageLevels.isEmpty { flags |= UInt64(CSTROBE_FLAG_DEEP_RUSAGE) }
        cursor.pointee.flags = flags
    }

    /// Space for `words` words (plus a discard marker when one is owed), or nil
    /// when the event is discarded.
    private func reserve(words: Int, forced: Bool) -> UnsafeMutablePointer<UInt64>? {
        let marker = pendingDiscards > 0 ? 2 : 0
        let needed = words + marker
        var position = cursor.pointee.published!
        if position + needed > cursor.pointee.limit {
            guard let fresh = switchChunk(needed: needed, forced: forced) else {
                noteDiscard()
                return nil
            }
            position = fresh
        }
        if marker > 0 {
            position[0] = RecordLayout.header(kind: RecordLayout.dropMarker, timestamp: timestamp())
            position[1] = pendingDiscards
            position += 2
            cstrobe_publish(cursor, position)
            pendingDiscards = 0
            updateFlags()
        }
        return position
    }

    /// Seals the current chunk and takes another; nil when the thread is at
    /// its memory limit and the policy is to discard.
    private func switchChunk(needed: Int, forced: Bool) -> UnsafeMutablePointer<UInt64>? {
        guard let session = shared.withLock({ $0.session }) else { return nil }
        guard needed <= session.pool.chunkWords else { return nil }
        if !forced, settings.policy == .discardNewest,
            drainsAtLastFailure == session.drainCount.load(ordering: .acquiring)
        {
            return nil
        }
        let published = cursor.pointee.published!
        let recorded = cursor.pointee.recorded
        var spare: BufferChunk? = nil
        var reused: BufferChunk? = nil
        let outcome: BufferChunk? = shared.withLock { state in
            guard let current = state.current else { return nil }
            // An end whose begin is kept may take a chunk beyond the limit
            // when the writer will free it; a ring always has an oldest
            // chunk to overwrite instead, so it never grows.
            let canGrow =
                state.heldChunks < settings.maximumChunks
                || (forced && settings.policy == .discardNewest)
            if !canGrow, settings.policy == .discardNewest { return nil }
            current.usedWords = published - current.base
            current.endEvent = recorded
            state.sealed.append(current)
            if canGrow {
                spare = session.pool.take()
                state.heldChunks += 1
            } else {
                // A flight recorder: the oldest sealed chunk makes room.
                let oldest = state.sealed.removeFirst()
                state.overwritten &+= oldest.eventCount
                reused = oldest
            }
            let next = spare ?? reused!
            next.firstEvent = recorded
            next.usedWords = 0
            state.current = next
            mirrorForCrash(&state)
            return next
        }
        guard let next = outcome else {
            drainsAtLastFailure = session.drainCount.load(ordering: .acquiring)
            return nil
        }
        drainsAtLastFailure = .max
        cursor.pointee.limit = next.limit
        cstrobe_publish(cursor, next.base)
        if spare != nil { session.chunkSealed(by: self) }
        return next.base
    }

    // MARK: - Draining

    /// What a drain takes from the recorder.
    package typealias Harvest = RecordHarvest

    /// Takes the sealed chunks and notes how far the current chunk is valid.
    /// With `keep`, sealed chunks stay (a flight-recorder snapshot).
    func harvest(keep: Bool) -> Harvest {
        shared.withLock { state in
            let published = cstrobe_read_published(cursor)
            var current = state.current
            var end = 0
            if let chunk = current, let published, published >= chunk.base, published <= chunk.limit {
                end = published - chunk.base
            } else {
                current = nil
            }
            var chunks = state.sealed
            if keep {
                // The writer may reuse these chunks as soon as the lock is
                // released, so a snapshot works on copies.
                chunks = chunks.map { $0.copy(words: $0.usedWords) }
                if let chunk = current {
                    current = chunk.copy(words: end)
                }
            } else {
                state.sealed = []
                state.heldChunks -= chunks.count
                mirrorForCrash(&state)
            }
            return Harvest(
                chunks: chunks, current: current, currentEnd: end, name: state.name,
                recorded: cstrobe_recorded(cursor), discarded: state.discarded, overwritten: state.overwritten,
                unmatchedEnds: state.unmatchedEnds, exited: state.exited)
        }
    }

    /// Puts sealed chunks a dump took (oldest first, all older than what
    /// the ring holds) back in front of the ring, the newest of them first,
    /// as many as fit within `maximumChunks`; returns the others, whose
    /// events now count as overwritten.
    func restoreRing(_ chunks: [BufferChunk], maximumChunks: Int) -> [BufferChunk] {
        guard !chunks.isEmpty else { return [] }
        return shared.withLock { state in
            guard state.session != nil else { return chunks }
            let room = max(0, min(chunks.count, maximumChunks - state.heldChunks))
            let dropped = Array(chunks.dropLast(room))
            state.sealed.insert(contentsOf: chunks.suffix(room), at: 0)
            state.heldChunks += room
            for chunk in dropped { state.overwritten &+= chunk.eventCount }
            mirrorForCrash(&state)
            return dropped
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
    let recorder = Unmanaged<ThreadBuffer>.fromOpaque(context)
    let object = recorder.takeUnretainedValue()
    let published = cstrobe_read_published(object.cursor)
    let recorded = object.cursor.pointee.recorded
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

/// What a recorder copies from its session at attach time.
struct RecorderSettings {
    enum Policy { case discardNewest, overwriteOldest }
    enum ResourceUsage {
        case never
        case all
        case named(Set<UInt64>, Set<String>)
    }

    var policy: Policy = .discardNewest
    var maximumChunks = 1
    var resourceUsage: ResourceUsage = .never
    var flags: UInt64 = 0
    /// Where events are also announced; nil when the session has no signposts.
    var signposts: SignpostEmitter?
}
