import PerfettoWire

/// An instant that marks a moment in a trace rather than an event a thread
/// recorded: a flight-recorder dump's trigger (`strobe.trigger`), a
/// recovered crash (`crash`) and the session's metadata (`strobe.metadata`)
/// are all written as one.
///
/// It goes out as a packet of its own: an absolute CLOCK_BOOTTIME time, the
/// name and the annotation keys spelled out (nothing interned, so it needs
/// no sequence state and decodes wherever it lies in the file), on a track
/// the caller chooses: the thread's where the trace has it, else the
/// process's (``TraceEncoder/markTrack(thread:)``).
package struct TraceMark: Sendable {
    /// The value of one annotation.
    package enum Value: Sendable, Hashable {
        /// A signed integer.
        case int(Int64)
        /// A floating point number.
        case double(Double)
        /// A Boolean.
        case bool(Bool)
        /// A string.
        case string(String)
    }

    /// The instant's name.
    package var name: String
    /// When it happened, in CLOCK_BOOTTIME nanoseconds.
    package var boottime: UInt64
    /// The uuid of the track it goes on.
    package var track: UInt64
    /// Its debug annotations, in order.
    package var annotations: [(key: String, value: Value)]

    package init(name: String, boottime: UInt64, track: UInt64, annotations: [(key: String, value: Value)]) {
        self.name = name
        self.boottime = boottime
        self.track = track
        self.annotations = annotations
    }

    /// Appends the packet on sequence `sequenceID`. The fields go in
    /// field-number order, as protobuf-c writes them.
    package func append(sequenceID: UInt32, to buffer: inout ProtoBuffer) {
        typealias Packet = PerfettoWire.TracePacket
        typealias Event = PerfettoWire.TrackEvent
        typealias Annotation = PerfettoWire.DebugAnnotation
        let packet = buffer.beginMessage(PerfettoWire.Trace.packet)
        buffer.appendVarintField(Packet.timestamp, boottime)
        buffer.appendVarintField(Packet.trustedPacketSequenceID, UInt64(sequenceID))
        let event = buffer.beginMessage(Packet.trackEvent)
        for (key, value) in annotations {
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
