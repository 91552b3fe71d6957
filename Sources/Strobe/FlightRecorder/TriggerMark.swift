import StrobeEncoding

/// A trigger that fired: why, when, on which thread, and what it saw.
struct FiredTrigger: Sendable {
    /// The reason, as the dump's file name and the `reason` argument say it.
    var reason: String
    /// When the condition was met, in CLOCK_BOOTTIME nanoseconds.
    var boottime: UInt64
    /// The kernel thread that met it; nil when not known.
    var threadID: UInt64?
    /// More arguments for the mark: the interval or counter and its value.
    var arguments: [(key: String, value: TraceMark.Value)] = []
}

/// The mark a dump carries for its trigger: an instant named
/// `strobe.trigger` with the reason and what the trigger saw as debug
/// annotations, the window asked for (`before_ns`, `after_ns`) and when the
/// rings were last taken (`recorded_until_ns`, CLOCK_BOOTTIME): the dump
/// holds everything recorded up to then; `suppressed_triggers` counts the
/// triggers that fired meanwhile and were not dumped.
enum TriggerMark {
    /// The instant's name.
    static let name = "strobe.trigger"

    /// The mark of `trigger` at the time it fired, on `track`, with the
    /// dump's `extra` annotations after the trigger's own.
    static func mark(_ trigger: FiredTrigger, track: UInt64, extra: [(key: String, value: TraceMark.Value)])
        -> TraceMark
    {
        TraceMark(
            name: name, boottime: trigger.boottime, track: track,
            annotations: [("reason", .string(trigger.reason))] + trigger.arguments + extra)
    }
}
