import PerfettoWire

/// The hand decoder for the dense packets: TrackEvents with interned names,
/// timestamps and flags. It returns false as soon as it meets anything else,
/// and the packet then goes through protobuf-c (``ProtobufCPacketDecoder``).
///
/// The densest packets of all, a plain begin or end in the exact byte layout
/// Strobe writes, are first recognised by ``plainSlice(_:_:)`` without
/// filling any fields; any other layout, or the same fields in another
/// order, takes ``decode(_:_:into:)``.
enum FastPacketDecoder {
    /// A begin with an interned name, or an end, on the sequence's default
    /// track and clock.
    struct PlainSlice {
        var timestampDelta: UInt64
        var sequenceID: UInt32
        /// `TYPE_SLICE_BEGIN` or `TYPE_SLICE_END`.
        var type: UInt64
        /// The begin's interned name; nil for an end.
        var nameIID: UInt64?
    }

    /// The packet in `range` when it is a plain slice laid out as Strobe
    /// writes it, fields in field-number order: timestamp, sequence id, the
    /// event (type, then name), the needs-incremental-state flag. Nil for
    /// anything else.
    @inline(__always)
    static func plainSlice(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) -> PlainSlice? {
        typealias Packet = PerfettoWire.TracePacket
        typealias Event = PerfettoWire.TrackEvent
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        guard reader.take(Packet.timestampTag), let delta = reader.varint(),
            reader.take(Packet.sequenceIDTag), let sequence = reader.varint(),
            reader.take(Packet.trackEventTag), let payload = reader.lengthDelimited(),
            reader.take(Packet.sequenceFlagsTag),
            reader.take(UInt8(PerfettoWire.SequenceFlags.needsIncrementalState)), reader.isAtEnd
        else { return nil }
        var event = WireReader(base, from: payload.lowerBound, to: payload.upperBound)
        guard event.take(Event.typeTag), let type = event.varint() else { return nil }
        var nameIID: UInt64?
        if type == PerfettoWire.EventType.sliceBegin {
            guard event.take(Event.nameIIDTag), let iid = event.varint() else { return nil }
            nameIID = iid
        } else if type != PerfettoWire.EventType.sliceEnd {
            return nil
        }
        guard event.isAtEnd else { return nil }
        return PlainSlice(
            timestampDelta: delta, sequenceID: UInt32(truncatingIfNeeded: sequence), type: type, nameIID: nameIID)
    }

    /// Fills `fields` from a packet of TrackEvent, interned-data and
    /// timestamp fields, in any order; false as soon as it meets another
    /// field, leaving the packet to protobuf-c.
    static func decode(_ base: UnsafePointer<UInt8>, _ range: Range<Int>, into fields: inout PacketFields) -> Bool {
        typealias Packet = PerfettoWire.TracePacket
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            switch key {
            case WireType.tag(Packet.timestamp, WireType.varint):
                guard let value = reader.varint() else { return false }
                fields.timestamp = value
            case WireType.tag(Packet.trustedPacketSequenceID, WireType.varint):
                guard let value = reader.varint() else { return false }
                fields.sequenceID = UInt32(truncatingIfNeeded: value)
            case WireType.tag(Packet.sequenceFlags, WireType.varint):
                guard let value = reader.varint() else { return false }
                fields.sequenceFlags = UInt32(truncatingIfNeeded: value)
            case WireType.tag(Packet.timestampClockID, WireType.varint):
                guard let value = reader.varint() else { return false }
                fields.timestampClockID = UInt32(truncatingIfNeeded: value)
            case WireType.tag(Packet.previousPacketDropped, WireType.varint):
                guard let value = reader.varint() else { return false }
                fields.previousPacketDropped = value != 0
            case WireType.tag(Packet.trackEvent, WireType.lengthDelimited):
                guard let payload = reader.lengthDelimited(), !fields.hasEvent else { return false }
                fields.hasEvent = true
                guard decodeEvent(base, payload, into: &fields.event) else { return false }
            case WireType.tag(Packet.internedData, WireType.lengthDelimited):
                fields.hasInternedData = true
                guard let payload = reader.lengthDelimited(),
                    decodeInterned(base, payload, into: &fields)
                else { return false }
            default:
                return false
            }
        }
        return true
    }

    private typealias WireType = PerfettoWire.WireType

    private static func decodeEvent(
        _ base: UnsafePointer<UInt8>, _ range: Range<Int>, into event: inout PacketFields.EventFields
    ) -> Bool {
        typealias Event = PerfettoWire.TrackEvent
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            switch key {
            case WireType.tag(Event.type, WireType.varint):
                guard let value = reader.varint() else { return false }
                event.type = value
            case WireType.tag(Event.nameIID, WireType.varint):
                guard let value = reader.varint() else { return false }
                event.nameIID = value
                event.name = nil
            case WireType.tag(Event.name, WireType.lengthDelimited):
                guard let payload = reader.lengthDelimited() else { return false }
                event.name = reader.string(payload)
                event.nameIID = nil
            case WireType.tag(Event.trackUUID, WireType.varint):
                guard let value = reader.varint() else { return false }
                event.trackUUID = value
            case WireType.tag(Event.counterValue, WireType.varint):
                guard let value = reader.varint() else { return false }
                event.counterValue = Double(Int64(bitPattern: value))
            case WireType.tag(Event.doubleCounterValue, WireType.fixed64):
                guard let value = reader.fixed64() else { return false }
                event.counterValue = Double(bitPattern: value)
            case WireType.tag(Event.extraCounterTrackUUIDs, WireType.varint):
                guard let value = reader.varint() else { return false }
                event.extraCounterTracks.append(value)
            case WireType.tag(Event.extraCounterValues, WireType.varint):
                guard let value = reader.varint() else { return false }
                event.extraCounterValues.append(Double(Int64(bitPattern: value)))
            case WireType.tag(Event.flowIDs, WireType.fixed64):
                guard let value = reader.fixed64() else { return false }
                event.flowIDs.append(value)
            case WireType.tag(Event.terminatingFlowIDs, WireType.fixed64):
                guard let value = reader.fixed64() else { return false }
                event.terminatingFlowIDs.append(value)
            case WireType.tag(Event.debugAnnotations, WireType.lengthDelimited):
                guard let payload = reader.lengthDelimited(),
                    let annotation = decodeAnnotation(base, payload)
                else { return false }
                event.annotations.append(annotation)
            case WireType.tag(Event.categoryIIDs, WireType.varint):
                guard let value = reader.varint() else { return false }
                event.categoryIIDs.append(value)
            default:
                return false
            }
        }
        return true
    }

    private static func decodeAnnotation(
        _ base: UnsafePointer<UInt8>, _ range: Range<Int>
    ) -> (nameIID: UInt64?, name: String?, value: TraceArgument)? {
        typealias Annotation = PerfettoWire.DebugAnnotation
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        var nameIID: UInt64?
        var name: String?
        var value: TraceArgument?
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return nil }
            switch key {
            case WireType.tag(Annotation.nameIID, WireType.varint): nameIID = reader.varint()
            case WireType.tag(Annotation.name, WireType.lengthDelimited):
                guard let payload = reader.lengthDelimited() else { return nil }
                name = reader.string(payload)
            case WireType.tag(Annotation.boolValue, WireType.varint): value = reader.varint().map { .bool($0 != 0) }
            case WireType.tag(Annotation.uintValue, WireType.varint): value = reader.varint().map { .uint($0) }
            case WireType.tag(Annotation.intValue, WireType.varint):
                value = reader.varint().map { .int(Int64(bitPattern: $0)) }
            case WireType.tag(Annotation.doubleValue, WireType.fixed64):
                value = reader.fixed64().map { .double(Double(bitPattern: $0)) }
            case WireType.tag(Annotation.stringValue, WireType.lengthDelimited):
                guard let payload = reader.lengthDelimited() else { return nil }
                value = .string(reader.string(payload))
            default:
                return nil
            }
        }
        guard nameIID != nil || name != nil, let value else { return nil }
        return (nameIID, name, value)
    }

    private static func decodeInterned(
        _ base: UnsafePointer<UInt8>, _ range: Range<Int>, into fields: inout PacketFields
    ) -> Bool {
        typealias Interned = PerfettoWire.InternedData
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            let field = UInt32(truncatingIfNeeded: WireType.field(of: key))
            guard WireType.wireType(of: key) == UInt64(WireType.lengthDelimited),
                field == Interned.eventCategories || field == Interned.eventNames
                    || field == Interned.debugAnnotationNames,
                let payload = reader.lengthDelimited()
            else { return false }
            var entry = WireReader(base, from: payload.lowerBound, to: payload.upperBound)
            var iid: UInt64?
            var name: String?
            while !entry.isAtEnd {
                guard let entryKey = entry.varint() else { return false }
                switch entryKey {
                case WireType.tag(Interned.iid, WireType.varint): iid = entry.varint()
                case WireType.tag(Interned.name, WireType.lengthDelimited):
                    guard let text = entry.lengthDelimited() else { return false }
                    name = entry.string(text)
                default:
                    guard entry.skip(wireType: WireType.wireType(of: entryKey)) else { return false }
                }
            }
            guard let iid, let name else { return false }
            switch field {
            case Interned.eventCategories: fields.categoryNames.append((iid, name))
            case Interned.eventNames: fields.eventNames.append((iid, name))
            default: fields.annotationNames.append((iid, name))
            }
        }
        return true
    }
}
