/// What an ``IntervalStream`` hands its intervals to: each as it begins
/// and as it ends, with the instants it holds, and the instants no
/// interval holds.
protocol IntervalSink {
    /// Whether instants are placed in the intervals that hold them. Then an
    /// interval's end is handed on only once its track has moved past the
    /// end's time (or the trace ended), since an instant at that same time
    /// may still come.
    static var placesInstants: Bool { get }

    /// Whether the intervals' arguments are wanted.
    static var keepsArguments: Bool { get }

    /// Whether `instant` is placed at all (when ``placesInstants``).
    func places(_ instant: Instant) -> Bool

    /// Whether an instant to place may come on `track`: when not (the
    /// trace's scan found none there), its intervals are handed on as soon
    /// as they end.
    func mayPlaceInstants(on track: UInt64) -> Bool

    /// An interval began on `track` (in slot `slot`, a small number the
    /// stream gives each track) with `depth` intervals open below it, the
    /// innermost of them `below`.
    mutating func began(
        slot: Int, track: UInt64, name: UInt32, start: UInt64, depth: Int, below: IntervalMark?
    ) -> IntervalMark

    /// An interval ended, or never did (``StreamedInterval/end`` is nil).
    mutating func ended(_ interval: StreamedInterval, slot: Int, track: UInt64)

    /// An instant that no interval of its track holds.
    mutating func alone(_ instant: Instant, slot: Int)
}

/// What a sink keeps with an open interval (a span's id), given back with
/// the interval's end and to the intervals that begin above it.
struct IntervalMark {
    var id: UInt64 = 0
    /// The parent's id; 0 for none.
    var parentID: UInt64 = 0
    /// The order of the begins.
    var serial: Int = 0
}

/// An interval of a streamed trace, open or ended. What most intervals
/// lack (flows, instants) is boxed, so that one without them is copied with
/// at most one reference count (its arguments').
struct StreamedInterval {
    var name: UInt32
    var start: UInt64
    /// When it ended; nil while open, and for an interval that never ended.
    var end: UInt64?
    var depth: Int
    /// The arguments of its begin, then those of its end (but the
    /// resource-usage ones): a later one of a key wins.
    var arguments: ArgumentList
    var details: StreamedDetails?
    var mark: IntervalMark

    var flowIDs: [UInt64] { details?.flowIDs ?? [] }
    var terminatingFlowIDs: [UInt64] { details?.terminatingFlowIDs ?? [] }
    /// The instants it holds, in the order they were placed.
    var events: [Instant] { details?.events ?? [] }

    /// The interval's details, boxed now if it had none.
    mutating func boxed() -> StreamedDetails {
        if let details { return details }
        let details = StreamedDetails()
        self.details = details
        return details
    }
}

/// The rarer parts of a streamed interval. Each interval has a box of its
/// own, changed in place.
final class StreamedDetails {
    var flowIDs: [UInt64] = []
    var terminatingFlowIDs: [UInt64] = []
    var events: [Instant] = []
}
