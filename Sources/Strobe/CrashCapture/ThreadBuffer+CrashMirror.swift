import CStrobe

// The crash handler's view of a recorder: its chunks, counts and name,
// kept current under the recorder's lock.
extension ThreadBuffer {
    /// Mirrors the thread's chunks and counts for the crash handler; call
    /// under the recorder's lock whenever they change.
    func mirrorForCrash(_ state: inout Shared) {
        guard let slot = state.crashSlot else { return }
        cstrobe_crash_begin_update(slot)
        let capacity = Int(slot.pointee.capacity)
        let skipped = max(0, state.sealed.count - capacity)
        var lost: UInt64 = 0
        for (index, chunk) in state.sealed.enumerated() {
            if index < skipped {
                lost &+= chunk.eventCount
                continue
            }
            slot.pointee.sealed[index - skipped] = cstrobe_crash_chunk(
                base: chunk.base, used_words: UInt64(chunk.usedWords), first_event: chunk.firstEvent,
                end_event: chunk.endEvent)
        }
        slot.pointee.sealed_count = UInt64(state.sealed.count - skipped)
        slot.pointee.lost = lost
        if let current = state.current {
            slot.pointee.cursor = cursor
            slot.pointee.current_base = current.base
            slot.pointee.current_words = UInt64(current.capacity)
            slot.pointee.current_first_event = current.firstEvent
        } else {
            slot.pointee.cursor = nil
            slot.pointee.current_base = nil
            slot.pointee.current_words = 0
        }
        slot.pointee.discarded = cstrobe_events(cursor, CSTROBE_EVENT_DISCARDED)
        slot.pointee.overwritten = state.overwritten
        withUnsafeMutableBytes(of: &slot.pointee.name) { name in
            name.initializeMemory(as: UInt8.self, repeating: 0)
            let bytes = Array(state.name.utf8.prefix(name.count - 1))
            name.copyBytes(from: bytes)
        }
        cstrobe_crash_end_update(slot)
    }

    /// Empties the thread's mirror and lets go of it: its chunks go back to
    /// the pool.
    func releaseCrashMirror(_ state: inout Shared) {
        guard let slot = state.crashSlot else { return }
        cstrobe_crash_begin_update(slot)
        slot.pointee.sealed_count = 0
        slot.pointee.cursor = nil
        slot.pointee.current_base = nil
        slot.pointee.current_words = 0
        cstrobe_crash_end_update(slot)
        state.crashSlot = nil
    }
}
