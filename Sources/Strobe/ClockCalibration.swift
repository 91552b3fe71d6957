import CStrobe
import Synchronization

/// Maps raw timestamps (TSC ticks or CLOCK_MONOTONIC nanoseconds, relative to
/// the session's base) to CLOCK_BOOTTIME nanoseconds.
///
/// The session reads the raw source and CLOCK_BOOTTIME together at its start,
/// at every drain and at its stop. Between two such readings a timestamp is
/// placed by linear interpolation, so the mapping is continuous and monotonic
/// and needs no frequency guess.
final class ClockCalibration: Sendable {
    struct Point: Sendable {
        var raw: UInt64
        var boottime: UInt64
    }

    let base: UInt64
    private let points: Mutex<[Point]>

    init() {
        let pair = cstrobe_read_clock_pair()
        base = pair.raw
        points = Mutex([Point(raw: 0, boottime: pair.boottime_ns)])
    }

    /// Takes a new reading; every timestamp recorded before this call is
    /// covered by the mapping afterwards.
    func mark() {
        let pair = cstrobe_read_clock_pair()
        let raw = pair.raw &- base
        points.withLock { points in
            guard let last = points.last, raw > last.raw, pair.boottime_ns >= last.boottime else { return }
            points.append(Point(raw: raw, boottime: pair.boottime_ns))
        }
    }

    /// The readings so far.
    func snapshot() -> [Point] { points.withLock { $0 } }
}

/// Converts raw timestamps in ascending order, for one sequence.
struct TimestampConverter {
    private var points: [Point]
    private var segment = 0

    typealias Point = ClockCalibration.Point

    init(points: [Point]) {
        self.points = points
    }

    /// CLOCK_BOOTTIME at the latest reading.
    var lastBoottime: UInt64 { points.last?.boottime ?? 0 }

    mutating func update(points: [Point]) {
        self.points = points
        segment = min(segment, max(points.count - 2, 0))
    }

    /// CLOCK_BOOTTIME nanoseconds for a raw timestamp.
    mutating func boottime(raw: UInt64) -> UInt64 {
        guard points.count > 1 else {
            // A single reading: the raw source is taken to tick in nanoseconds
            // (true of CLOCK_MONOTONIC; a TSC session always has two readings
            // by the time anything is encoded).
            let first = points.first ?? Point(raw: 0, boottime: 0)
            return first.boottime &+ (raw &- first.raw)
        }
        while segment < points.count - 2, raw >= points[segment + 1].raw { segment += 1 }
        while segment > 0, raw < points[segment].raw { segment -= 1 }
        let start = points[segment]
        let end = points[segment + 1]
        let span = end.raw - start.raw
        let elapsed = end.boottime - start.boottime
        if raw >= start.raw {
            return start.boottime &+ Self.scale(raw - start.raw, by: elapsed, over: span)
        }
        // Before the first reading (should not happen): extrapolate backwards.
        return start.boottime &- Self.scale(start.raw - raw, by: elapsed, over: span)
    }

    /// `value * numerator / denominator` without intermediate overflow.
    static func scale(_ value: UInt64, by numerator: UInt64, over denominator: UInt64) -> UInt64 {
        let product = value.multipliedFullWidth(by: numerator)
        guard product.high < denominator else { return .max }
        return denominator.dividingFullWidth(product).quotient
    }
}
