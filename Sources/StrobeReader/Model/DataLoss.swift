/// What was lost before or while reading the trace.
public struct DataLoss: Sendable, Hashable {
    /// Loss counts of one writing thread, from the trace's statistics.
    public struct ThreadLoss: Sendable, Hashable {
        /// The thread's packet sequence.
        public var sequenceID: UInt64
        /// Events the thread recorded.
        public var recorded: UInt64
        /// Events discarded because the thread's buffer was full.
        public var discarded: UInt64
        /// Events overwritten in a ring buffer.
        public var overwritten: UInt64
        /// Ends the writer left out because their begin is not in the
        /// trace (overwritten in a ring, or recorded while its category
        /// was off).
        public var orphanEnds: UInt64 = 0
    }

    /// Per-thread counts from the trace's statistics.
    public var threads: [ThreadLoss] = []
    /// Packets that say packets before them were lost.
    public var droppedPacketMarks = 0
    /// Packets skipped because their sequence's state was unknown.
    public var skippedPackets = 0
    /// Ends without an open interval on their track.
    public var unmatchedEnds = 0

    /// Events the writers discarded.
    public var discardedEvents: UInt64 { threads.reduce(0) { $0 + $1.discarded } }
    /// Events overwritten in ring buffers.
    public var overwrittenEvents: UInt64 { threads.reduce(0) { $0 + $1.overwritten } }
    /// Ends the writers left out because their begin is not in the trace.
    public var orphanEnds: UInt64 { threads.reduce(0) { $0 + $1.orphanEnds } }
    /// Whether anything at all was lost.
    public var isEmpty: Bool {
        discardedEvents == 0 && overwrittenEvents == 0 && orphanEnds == 0 && droppedPacketMarks == 0
            && skippedPackets == 0
    }
}
