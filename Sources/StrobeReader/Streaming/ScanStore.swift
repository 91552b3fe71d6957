import PerfettoWire

/// The store of a scan (``TraceScan``): it keeps no event, only when the
/// first interval and instant came, how many there were, the session's
/// metadata, and which tracks carry slices and instants.
struct ScanStore: TraceEventStore {
    static var keepsCounters: Bool { false }
    static var keepsSliceArguments: Bool { false }
    var isFull: Bool { false }
    /// A scan matches no begin with its end.
    var unmatchedEnds: Int { 0 }

    var firstBegin = UInt64.max
    var firstInstant = UInt64.max
    var begins = 0
    var instants = 0
    /// The metadata instant with the earliest time (the first of those at
    /// that time), as ``ParsedTrace/origin`` finds it.
    var origin: (time: UInt64, origin: TraceOrigin)?
    /// Tracks with a begin on them.
    var sliceTracks: Set<UInt64> = []
    /// Tracks with an instant on them.
    var instantTracks: Set<UInt64> = []
    private var lastSliceTrack: UInt64?

    @inline(__always)
    mutating func openInterval(track: UInt64, time: UInt64, name: UInt32) {
        noteBegin(track: track, time: time)
    }

    @inline(__always)
    mutating func closeInterval(track: UInt64, time: UInt64) {}

    mutating func begin(
        track: UInt64, time: UInt64, name: UInt32, arguments: ArgumentList, flows: [UInt64],
        terminating: [UInt64], threadTime: Double?, categories: [String]
    ) {
        noteBegin(track: track, time: time)
    }

    mutating func end(
        track: UInt64, time: UInt64, arguments: ArgumentList, flows: [UInt64], terminating: [UInt64],
        threadTime: Double?
    ) {}

    mutating func deferSlice(_ slice: DeferredSlice) {
        if slice.type == PerfettoWire.EventType.sliceBegin { noteBegin(track: slice.track, time: slice.time) }
    }

    mutating func instant(_ instant: Instant) {
        instants += 1
        firstInstant = min(firstInstant, instant.time)
        instantTracks.insert(instant.track)
        if instant.name == TraceOrigin.eventName, origin == nil || instant.time < origin!.time,
            let found = TraceOrigin(instant)
        {
            origin = (instant.time, found)
        }
    }

    mutating func counter(track: UInt64, time: UInt64, value: Double) {}

    @inline(__always)
    private mutating func noteBegin(track: UInt64, time: UInt64) {
        begins += 1
        if time < firstBegin { firstBegin = time }
        if track != lastSliceTrack {
            sliceTracks.insert(track)
            lastSliceTrack = track
        }
    }
}
