import CStrobe
import StrobeEncoding
import Synchronization

/// Maps raw timestamps (TSC ticks or CLOCK_MONOTONIC nanoseconds, relative to
/// the session's base) to CLOCK_BOOTTIME nanoseconds.
///
/// The session reads the raw source and CLOCK_BOOTTIME together at its start,
/// at every drain and at its stop. Between two such readings a timestamp is
/// placed by linear interpolation, so the mapping is continuous and monotonic
/// and needs no frequency guess.
///
/// Each reading also notes how far CLOCK_REALTIME is ahead of CLOCK_BOOTTIME,
/// so that records holding a wall-clock instant (spans of tracing bridges,
/// whose instants are wall-clock times) can be placed without the recording
/// thread reading a second clock.
package final class ClockCalibration: Sendable {
    package typealias Point = ClockPoint

    let base: UInt64
    private let points: SanitizedMutex<[Point]>

    init() {
        let pair = cstrobe_read_clock_pair()
        base = pair.raw
        points = SanitizedMutex([Point(raw: 0, boottime: pair.boottime_ns, realtimeOffset: Self.realtimeOffset())])
    }

    /// Takes a new reading; every timestamp recorded before this call is
    /// covered by the mapping afterwards.
    func mark() {
        let pair = cstrobe_read_clock_pair()
        let raw = pair.raw &- base
        let offset = Self.realtimeOffset()
        points.withLock { points in
            guard let last = points.last, raw > last.raw, pair.boottime_ns >= last.boottime else { return }
            points.append(Point(raw: raw, boottime: pair.boottime_ns, realtimeOffset: offset))
        }
    }

    /// CLOCK_REALTIME less CLOCK_BOOTTIME now, read back to back.
    static func realtimeOffset() -> UInt64 {
        let boottime = cstrobe_boottime_ns()
        let realtime = cstrobe_realtime_ns()
        return realtime > boottime ? realtime - boottime : 0
    }

    /// The readings so far.
    func snapshot() -> [Point] { points.withLock { $0 } }
}
