/// One thread's records as a drain takes them from its recorder (or crash
/// recovery from a crash file): its sealed chunks, the written part of its
/// current chunk, and its counts.
package struct RecordHarvest {
    package var chunks: [BufferChunk]
    package var current: BufferChunk?
    package var currentEnd: Int
    package var name: String
    package var recorded: UInt64
    package var discarded: UInt64
    package var overwritten: UInt64
    package var unmatchedEnds: UInt64
    package var exited: Bool

    package init(
        chunks: [BufferChunk], current: BufferChunk?, currentEnd: Int, name: String, recorded: UInt64,
        discarded: UInt64, overwritten: UInt64, unmatchedEnds: UInt64, exited: Bool
    ) {
        self.chunks = chunks
        self.current = current
        self.currentEnd = currentEnd
        self.name = name
        self.recorded = recorded
        self.discarded = discarded
        self.overwritten = overwritten
        self.unmatchedEnds = unmatchedEnds
        self.exited = exited
    }
}
