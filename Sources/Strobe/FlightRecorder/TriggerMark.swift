import PerfettoWire
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
    var arguments: [(key: String, value: Trace.ArgumentValue)] = []
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

    /// Appends the mark as a packet of its own: an absolute CLOCK_BOOTTIME
    /// time, the name and annotation keys spelled out (no interning), on
    /// `track`. The fields go in field-number order.
    static func append(
        _ trigger: FiredTrigger, track: UInt64, sequenceID: UInt32, extra: [(key: String, value: Trace.ArgumentValue)],
        to buffer: inout ProtoBuffer
    ) {
        typealias Packet = PerfettoWire.TracePacket
        typealias Event = PerfettoWire.TrackEvent
        typealias Annotation = PerfettoWire.DebugAnnotation
        let packet = buffer.beginMessage(PerfettoWire.Trace.packet)
        buffer.appendVarintField(Packet.timestamp, trigger.boottime)
        buffer.appendVarintField(Packet.trustedPacketSequenceID, UInt64(sequenceID))
        let event = buffer.beginMessage(Packet.trackEvent)
        for (key, value) in [("reason", .string(trigger.reason))] + trigger.arguments + extra {
            let annotation = buffer.beginMessage(Event.debugAnnotations)
            switch value {
            case .int(let number): buffer.appendVarintField(Annotation.intValue, UInt64(bitPattern: number))
            case .double(let number): buffer.appendFixed64Field(Annotation.doubleValue, number.bitPattern)
            case .bool(let flag): buffer.appendVarintField(Annotation.boolValue, flag ? 1 : 0)
            case .string(let text): buffer.appendStringField(Annotation.stringValue, text)
            }
            buffer.appendStringField(Annotation.name, key)
            buffer.endMessage(annotation)
        }
        buffer.appendVarintField(Event.type, PerfettoWire.EventType.instant)
        buffer.appendVarintField(Event.trackUUID, track)
        buffer.appendStringField(Event.name, name)
        buffer.endMessage(event)
        buffer.appendVarintField(Packet.timestampClockID, UInt64(PerfettoWire.Clock.boottime))
        buffer.endMessage(packet)
    }
}
