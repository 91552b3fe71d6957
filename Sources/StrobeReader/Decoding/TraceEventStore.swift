/// Where a ``TraceBuilder`` puts the slices, instants and counter values it
/// decodes: kept whole for a ``ParsedTrace`` (``RecordStore``), handed on
/// as each interval closes (``IntervalStream``), or only measured
/// (``ScanStore``). The builder keeps what every store shares: sequences,
/// clocks, interned names, track descriptors and what was lost.
///
/// Names are indexes into the builder's name table.
protocol TraceEventStore {
    /// Whether the builder works out counter values for the store.
    static var keepsCounters: Bool { get }

    /// Whether begins and ends come with their arguments (instants always
    /// do).
    static var keepsSliceArguments: Bool { get }

    /// Whether the store can take no more interval (the builder then stops
    /// reading, as at a truncation).
    var isFull: Bool { get }

    /// Intervals whose end came with none open on their track.
    var unmatchedEnds: Int { get }

    /// A begin with a name and nothing else, on a sequence's default track:
    /// the densest event of all.
    mutating func openInterval(track: UInt64, time: UInt64, name: UInt32)

    /// An end with nothing else, on a sequence's default track.
    mutating func closeInterval(track: UInt64, time: UInt64)

    /// A begin on a sequence's default track, with what it carries.
    mutating func begin(
        track: UInt64, time: UInt64, name: UInt32, arguments: ArgumentList, flows: [UInt64],
        terminating: [UInt64], threadTime: Double?, categories: [String])

    /// An end on a sequence's default track, with what it carries.
    mutating func end(
        track: UInt64, time: UInt64, arguments: ArgumentList, flows: [UInt64], terminating: [UInt64],
        threadTime: Double?)

    /// A begin or end on a track other than its sequence's own, whose
    /// events may come from several sequences out of time order.
    mutating func deferSlice(_ slice: DeferredSlice)

    /// An instant event.
    mutating func instant(_ instant: Instant)

    /// A counter value, already scaled by its track's multiplier.
    mutating func counter(track: UInt64, time: UInt64, value: Double)
}

/// A slice event on an explicit track, kept until its track's events can be
/// put in time order across sequences.
struct DeferredSlice {
    var time: UInt64
    /// The order the reader met it in, which breaks ties of time.
    var order: Int
    var type: UInt64
    var track: UInt64
    var name: UInt32
    var arguments: ArgumentList
    var flowIDs: [UInt64]
    var terminatingFlowIDs: [UInt64]
    var categories: [String]
}
