#if StrobeTracing
import Tracing

/// Places the instants that swift-distributed-tracing passes (wall-clock
/// nanoseconds since the Unix epoch) relative to the moment of the call, so
/// a span that began or ended earlier than it was reported is recorded at
/// the time it names.
enum SpanClock {
    /// Instants this close to the call, in nanoseconds, are taken as the
    /// call's own time: a default instant is read just before the call.
    static let tolerance: UInt64 = 1_000

    /// The wall clock now, in nanoseconds since the Unix epoch.
    static func now() -> UInt64 { DefaultTracerClock.now.nanosecondsSinceEpoch }

    /// How many nanoseconds before `now` the instant lies: 0 when it is
    /// within the tolerance of `now` or after it.
    static func nanoseconds(from instant: UInt64, to now: UInt64) -> UInt64 {
        now > instant &+ tolerance ? now - instant : 0
    }
}
#endif
