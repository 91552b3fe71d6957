/// A reading of a session's raw timestamp source beside CLOCK_BOOTTIME:
/// `raw` relative to the session's base.
package struct ClockPoint: Sendable {
    package var raw: UInt64
    package var boottime: UInt64
    /// CLOCK_REALTIME less CLOCK_BOOTTIME at the reading, in
    /// nanoseconds; 0 when unknown (a crash file's points).
    package var realtimeOffset: UInt64 = 0

    package init(raw: UInt64, boottime: UInt64, realtimeOffset: UInt64 = 0) {
        self.raw = raw
        self.boottime = boottime
        self.realtimeOffset = realtimeOffset
    }
}

/// Converts raw timestamps, mostly in ascending order, for one sequence.
///
/// Within a segment between two readings the conversion is a multiply by a
/// 32.32 fixed-point scale, computed once per segment; the rounding error is
/// under a nanosecond for segments shorter than four seconds of raw ticks,
/// and the writer takes a reading every flush interval.
package struct TimestampConverter {
    package typealias Point = ClockPoint

    private var points: [Point]
    private var segment = -1
    private var segmentStart: UInt64 = 0
    private var segmentEnd: UInt64 = 0
    private var segmentBoottime: UInt64 = 0
    private var scale: UInt64 = 0
    /// The realtime offset that holds over the current segment; 0 when the
    /// wall clock was set (stepped) within it, or is unknown.
    private var segmentRealtimeOffset: UInt64 = 0

    /// A wall clock stepped by more than this between two readings makes
    /// wall-clock instants in between unplaceable: they are taken as their
    /// record's own time. Slewing moves both clocks alike.
    static let realtimeStepLimit: UInt64 = 10_000

    package init(points: [Point]) {
        self.points = points
    }

    /// CLOCK_REALTIME less CLOCK_BOOTTIME at the latest reading; 0 when
    /// unknown.
    package var latestRealtimeOffset: UInt64 { points.last?.realtimeOffset ?? 0 }

    /// CLOCK_BOOTTIME at the latest reading.
    package var lastBoottime: UInt64 { points.last?.boottime ?? 0 }

    package mutating func update(points: [Point]) {
        if points.count != self.points.count { segment = -1 }
        self.points = points
    }

    /// CLOCK_BOOTTIME nanoseconds for a raw timestamp.
    @inline(__always)
    package mutating func boottime(raw: UInt64) -> UInt64 {
        if segment >= 0, raw >= segmentStart, raw < segmentEnd {
            let product = (raw - segmentStart).multipliedFullWidth(by: scale)
            return segmentBoottime &+ ((product.high << 32) | (product.low >> 32))
        }
        return locate(raw)
    }

    private mutating func locate(_ raw: UInt64) -> UInt64 {
        guard points.count > 1 else {
            // A single reading: the raw source is taken to tick in nanoseconds
            // (true of CLOCK_MONOTONIC; a TSC session always has two readings
            // by the time anything is encoded).
            segment = -1
            let first = points.first ?? Point(raw: 0, boottime: 0)
            segmentRealtimeOffset = first.realtimeOffset
            return raw >= first.raw ? first.boottime &+ (raw - first.raw) : first.boottime &- (first.raw - raw)
        }
        var index = 0
        var low = 0
        var high = points.count - 2
        while low <= high {
            let middle = (low + high) / 2
            if points[middle].raw <= raw {
                index = middle
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        let start = points[index]
        let end = points[index + 1]
        segmentRealtimeOffset = Self.steadyOffset(start.realtimeOffset, end.realtimeOffset)
        let span = end.raw - start.raw
        let elapsed = end.boottime - start.boottime
        if raw < start.raw {
            // Before the first reading (should not happen): extrapolate backwards.
            segment = -1
            return start.boottime &- Self.scale(start.raw - raw, by: elapsed, over: span)
        }
        segment = index
        segmentStart = start.raw
        // The last segment extends past its end reading.
        segmentEnd = index == points.count - 2 ? .max : end.raw
        segmentBoottime = start.boottime
        if elapsed < (1 << 32) {
            scale = (elapsed << 32) / span
        } else {
            scale = Self.scale(elapsed, by: 1 << 32, over: span)
        }
        let product = (raw - segmentStart).multipliedFullWidth(by: scale)
        return segmentBoottime &+ ((product.high << 32) | (product.low >> 32))
    }

    /// How many nanoseconds before its record's time `boottime` the
    /// instant in `word` lies: the word itself, or, for a wall-clock
    /// instant (``RecordLayout/wallClockInstant``), the wall-clock time of
    /// the record less the instant, 0 when within a microsecond or later.
    /// Call it right after ``boottime(raw:)`` of the record's own
    /// timestamp, whose segment tells the wall clock's offset.
    package func lead(of word: UInt64, at boottime: UInt64) -> UInt64 {
        guard word & RecordLayout.wallClockInstant != 0 else { return word }
        guard segmentRealtimeOffset != 0 else { return 0 }
        let instant = word & ~RecordLayout.wallClockInstant
        let now = boottime &+ segmentRealtimeOffset
        return now > instant &+ RecordLayout.wallClockTolerance ? now - instant : 0
    }

    /// The offset of a segment whose readings found `start` and `end`; 0
    /// when either is unknown or the wall clock was stepped in between.
    private static func steadyOffset(_ start: UInt64, _ end: UInt64) -> UInt64 {
        guard start != 0, end != 0 else { return 0 }
        return (start > end ? start - end : end - start) <= realtimeStepLimit ? end : 0
    }

    /// `value * numerator / denominator` without intermediate overflow.
    static func scale(_ value: UInt64, by numerator: UInt64, over denominator: UInt64) -> UInt64 {
        let product = value.multipliedFullWidth(by: numerator)
        guard product.high < denominator else { return .max }
        return denominator.dividingFullWidth(product).quotient
    }
}
