import CStrobe
import StrobeEncoding

// What the writer takes from a recorder, and what a dump puts back.
extension ThreadBuffer {
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
                if !chunks.isEmpty { takes.wrappingAdd(1, ordering: .releasing) }
                mirrorForCrash(&state)
            }
            return Harvest(
                chunks: chunks, current: current, currentEnd: end, name: state.name,
                recorded: cstrobe_events(cursor, CSTROBE_EVENT_RECORDED),
                discarded: cstrobe_events(cursor, CSTROBE_EVENT_DISCARDED),
                overwritten: state.overwritten,
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
}
