import CStrobe
import StrobeEncoding

// The owning thread's slow path: begins and ends with their nesting
// levels, rusage and categories, discards, and taking a new chunk when one
// is full.
extension ThreadBuffer {
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
    /// first word and its timestamp); `words` is the record's full length.
    /// With `category` (a prefix word, 0 for none), the begin is in that
    /// category, and so must be the end in a category that closes it.
    func appendBegin(
        words: Int, resourceUsage: Bool, category: UInt64 = 0, fill: (UnsafeMutablePointer<UInt64>, UInt64) -> Void
    ) {
        let level = cursor.pointee.depth
        // Kept whether the begin is recorded or discarded: either way its
        // end in the category closes this level.
        if category != 0 { cstrobe_open_categorized_level(cursor, level, RecordLayout.timestamp(of: category)) }
        if let reserved = reserveStamped(words: words, forced: false) {
            fill(reserved.destination, reserved.timestamp)
            commit(reserved.destination + words)
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

    /// Appends any other record, built by `fill` (which receives the
    /// record's first word and its timestamp); returns false when it was
    /// discarded.
    @discardableResult
    func append(words: Int, forced: Bool = false, fill: (UnsafeMutablePointer<UInt64>, UInt64) -> Void) -> Bool {
        guard let reserved = reserveStamped(words: words, forced: forced) else {
            cursor.pointee.flags |= UInt64(CSTROBE_FLAG_DROPPING)
            return false
        }
        fill(reserved.destination, reserved.timestamp)
        commit(reserved.destination + words)
        return true
    }

    /// Space for a record of `words` words and the time it is recorded at,
    /// or nil when it is discarded. A record that would be discarded
    /// without a try (``isStillAtLimit``) is, before the clock is read.
    private func reserveStamped(
        words: Int, forced: Bool
    ) -> (destination: UnsafeMutablePointer<UInt64>, timestamp: UInt64)? {
        if !forced, !fitsInChunk(wordsNeeded(words)), isStillAtLimit {
            noteDiscard()
            return nil
        }
        let timestamp = timestamp()
        return reserve(words: words, forced: forced).map { (destination: $0, timestamp: timestamp) }
    }

    /// Whether the thread is at its memory limit with nothing taken from it
    /// since its last try: a record that does not fit is then discarded
    /// without the lock.
    private var isStillAtLimit: Bool {
        settings.policy == .discardNewest && takesAtLastFailure == takes.load(ordering: .acquiring)
    }

    /// A timestamp relative to the session's base.
    func timestamp() -> UInt64 {
        cstrobe_raw_timestamp() &- cursor.pointee.timestamp_base
    }

    private func commit(_ end: UnsafeMutablePointer<UInt64>) {
        cstrobe_count_event(cursor, CSTROBE_EVENT_RECORDED)
        cstrobe_publish(cursor, end)
    }

    /// Counts a discarded event, without a lock: the drop marker of the
    /// next record in the buffer tells where, the cursor's count how many.
    private func noteDiscard() {
        pendingDiscards += 1
        cstrobe_count_event(cursor, CSTROBE_EVENT_DISCARDED)
    }

    private func updateFlags() {
        var flags = settings.flags
        if !discardedLevels.isEmpty || pendingDiscards > 0 { flags |= UInt64(CSTROBE_FLAG_DROPPING) }
        if !deepResourceUsageLevels.isEmpty { flags |= UInt64(CSTROBE_FLAG_DEEP_RUSAGE) }
        cursor.pointee.flags = flags
    }

    /// The words a record of `words` words takes: itself, and before it the
    /// drop marker owed after a discard.
    private func wordsNeeded(_ words: Int) -> Int {
        words + (pendingDiscards > 0 ? 2 : 0)
    }

    /// Whether `words` words fit in the current chunk.
    private func fitsInChunk(_ words: Int) -> Bool {
        cursor.pointee.published! + words <= cursor.pointee.limit
    }

    /// Space for `words` words (plus a discard marker when one is owed), or nil
    /// when the event is discarded.
    private func reserve(words: Int, forced: Bool) -> UnsafeMutablePointer<UInt64>? {
        let needed = wordsNeeded(words)
        let marker = needed - words
        var position = cursor.pointee.published!
        if !fitsInChunk(needed) {
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
        // The pool's chunks and the list of sealed ones: Strobe's own work.
        cstrobe_own_work_begin()
        defer { cstrobe_own_work_end() }
        // Still at the limit with nothing taken since: discarded without the
        // lock, so that shedding events costs no more than keeping them.
        if !forced, isStillAtLimit { return nil }
        guard let session = shared.withLock({ $0.session }) else { return nil }
        guard needed <= session.pool.chunkWords else { return nil }
        let published = cursor.pointee.published!
        let recorded = cstrobe_events(cursor, CSTROBE_EVENT_RECORDED)
        var spare: BufferChunk? = nil
        var reused: BufferChunk? = nil
        var takesSeen: UInt64 = .max
        let outcome: BufferChunk? = shared.withLock { state in
            guard let current = state.current else { return nil }
            takesSeen = takes.load(ordering: .relaxed)
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
            takesAtLastFailure = takesSeen
            return nil
        }
        takesAtLastFailure = .max
        cursor.pointee.limit = next.limit
        cstrobe_publish(cursor, next.base)
        if spare != nil { session.chunkSealed(by: self) }
        return next.base
    }
}
