/// Tracks shared by all sequences of a trace: counters and async intervals.
struct SharedTracks {
    var processUUID: UInt64 = 0
    var counterTracks: [UInt64: UInt64] = [:]
    var counterTracksByName: [String: UInt64] = [:]
    /// Async intervals begun in the trace and not ended, with the time they
    /// began on CLOCK_BOOTTIME.
    var asyncTracks: [UInt64: UInt64] = [:]
    /// Async intervals whose end was encoded before their begin: they began
    /// on a thread drained after the one that ended them.
    var endedEarly: Set<UInt64> = []
    /// The first async identifier of the session (streaming encoders).
    var firstIdentifier: UInt64 = 0
    /// Async intervals that begin in a snapshot (snapshot encoders).
    var snapshotBegins: Set<UInt64>?
    /// Renamable async begins waiting for their end, which names them.
    var heldBegins: [UInt64: HeldAsyncBegin] = [:]
    /// Held begins beyond this many are written early, the oldest quarter at
    /// a time, under their first name: intervals that never end must not
    /// grow the writer's memory without bound.
    static let heldBeginLimit = 16_384
    /// New names from renaming ends encoded before their begin: a name
    /// word, or the text of a name written inline.
    var renames: [UInt64: EventName] = [:]
    var nextTrackUUID: UInt64 = 16
    var invalidRecords: UInt64 = 0

    /// Async tracks take odd ids, counters and other tracks even ones, so
    /// neither collides and both stay short on the wire.
    static func asyncTrackUUID(_ id: UInt64) -> UInt64 { id &* 2 &+ 1 }

    /// Whether the begin of async interval `id` is, or will be, in this trace.
    func beginIsInTrace(_ id: UInt64) -> Bool {
        if asyncTracks[id] != nil || heldBegins[id] != nil { return true }
        if let snapshotBegins { return snapshotBegins.contains(id) }
        return id >= firstIdentifier
    }

    mutating func allocateTrackUUID() -> UInt64 {
        let uuid = nextTrackUUID
        nextTrackUUID += 2
        return uuid
    }
}

/// A renamable async begin, copied out of its thread's buffer until its end.
struct HeldAsyncBegin {
    /// The record, word for word.
    var words: [UInt64]
    /// When it began, on CLOCK_BOOTTIME.
    var boottime: UInt64
    /// The sequence of the thread that began it.
    var sequenceID: UInt32
}
