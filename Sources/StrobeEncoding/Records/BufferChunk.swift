/// A block of buffer memory that one thread fills with records.
///
/// A chunk belongs to its thread while it is current; once sealed it belongs
/// to the drainer, which encodes it and hands it back to the pool.
/// `@unchecked Sendable`: its memory and counts change hands only through
/// the recorder's lock or the pool's, or, for the part of the current chunk
/// a drain reads, through the cursor's release store of its end.
package final class BufferChunk: @unchecked Sendable {
    /// The first word of the chunk.
    package let base: UnsafeMutablePointer<UInt64>
    /// Capacity in words.
    package let capacity: Int
    /// Words holding complete records; set when the chunk is sealed.
    package var usedWords = 0
    /// The thread's recorded-event count when the chunk became current.
    package var firstEvent: UInt64 = 0
    /// The thread's recorded-event count when the chunk was sealed.
    package var endEvent: UInt64 = 0

    package init(capacity: Int) {
        self.capacity = capacity
        // Page-aligned, so chunks of different threads share no cache line.
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity * 8, alignment: 4096)
            .bindMemory(to: UInt64.self, capacity: capacity)
    }

    deinit { UnsafeMutableRawPointer(base).deallocate() }

    /// One past the last usable word.
    package var limit: UnsafeMutablePointer<UInt64> { base + capacity }

    /// A sealed copy of the first `words` words.
    package func copy(words: Int) -> BufferChunk {
        let copy = BufferChunk(capacity: max(words, 1))
        copy.base.update(from: base, count: words)
        copy.usedWords = words
        copy.firstEvent = firstEvent
        copy.endEvent = endEvent
        return copy
    }

    /// Events in a sealed chunk.
    package var eventCount: UInt64 { endEvent &- firstEvent }
}
