import CStrobeLayout

/// One thread's encoding state.
struct SequenceState {
    let sequenceID: UInt32
    let threadUUID: UInt64
    let threadID: UInt64
    var converter = TimestampConverter(points: [])
    var threadName: String?
    var started = false
    var restartPending = false
    var lastTimestamp: UInt64 = 0
    var eventNames = InternTable()
    var annotationNames = InternTable()
    var categoryNames = InternTable()
    /// The category of the next record, from its prefix word: the
    /// category's index plus one; 0 for none.
    var pendingCategory: UInt64 = 0
    var stack: [OpenInterval] = []
    var counterCacheWord: UInt64 = .max
    var counterCacheUUID: UInt64 = 0
    var threadTimeTrack: UInt64?
    var lossTrack: UInt64?
    var reportedLoss: UInt64 = 0
    var recorded: UInt64 = 0
    var discarded: UInt64 = 0
    var overwritten: UInt64 = 0
    /// Ends left out because their begin is not in the trace: overwritten
    /// in a ring, or recorded while its category was off.
    var orphanEnds: UInt64 = 0
    /// A chunk partly encoded by an earlier drain, and how far.
    var partialChunk: BufferChunk?
    var partialWords = 0

    init(sequenceID: UInt32, threadID: UInt64) {
        self.sequenceID = sequenceID
        self.threadID = threadID
        threadUUID = Self.threadTrackUUID(threadID)
    }

    /// The uuid of the track of thread `threadID`.
    static func threadTrackUUID(_ threadID: UInt64) -> UInt64 { (1 << 61) | threadID }

    /// The sequence's loss counts, for the trace's statistics.
    var loss: PacketBuilder.ThreadLoss {
        PacketBuilder.ThreadLoss(
            sequenceID: sequenceID, recorded: recorded, discarded: discarded, overwritten: overwritten,
            orphanEnds: orphanEnds)
    }
}

struct OpenInterval {
    var usage: cstrobe_rusage?
    /// The begin's category (index plus one); 0 for none.
    var category: UInt64 = 0
}
