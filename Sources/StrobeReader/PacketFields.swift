/// The fields of one TracePacket that the reader uses, filled either by the
/// hand decoder (dense event packets) or from protobuf-c (everything else).
/// One value is reused for every packet to keep allocations off the loop.
struct PacketFields {
    var timestamp: UInt64?
    var timestampClockID: UInt32?
    var sequenceID: UInt32?
    var sequenceFlags: UInt32 = 0
    var incrementalStateCleared = false
    var previousPacketDropped = false
    var firstPacketOnSequence = false

    var hasInternedData = false
    var eventNames: [(iid: UInt64, name: String)] = []
    var annotationNames: [(iid: UInt64, name: String)] = []
    var categoryNames: [(iid: UInt64, name: String)] = []

    var defaults: Defaults?
    var clocks: [Clock] = []
    var hasClockSnapshot = false
    var track: TrackFields?
    var statistics: StatisticsFields?

    var hasEvent = false
    var event = EventFields()

    struct Defaults {
        var timestampClockID: UInt32?
        var trackUUID: UInt64?
        var extraCounterTracks: [UInt64] = []
        var extraDoubleCounterTracks: [UInt64] = []
    }

    struct Clock {
        var id: UInt32
        var timestamp: UInt64
        var isIncremental: Bool
        var unitMultiplier: UInt64
    }

    struct TrackFields {
        var uuid: UInt64
        var parent: UInt64?
        var name: String?
        var process: (pid: Int32?, name: String?)?
        var thread: (pid: Int32?, tid: Int64?, name: String?)?
        var counter: (unit: String?, isThreadTime: Bool, multiplier: Int64, isIncremental: Bool)?
    }

    struct StatisticsFields {
        var buffers: [(recorded: UInt64, discarded: UInt64, overwritten: UInt64)] = []
        var writers: [(sequenceID: UInt64, buffer: Int)] = []
    }

    struct EventFields {
        var type: UInt64 = 0
        var nameIID: UInt64?
        var name: String?
        var trackUUID: UInt64?
        var counterValue: Double?
        var extraCounterTracks: [UInt64] = []
        var extraCounterValues: [Double] = []
        var extraDoubleCounterTracks: [UInt64] = []
        var extraDoubleCounterValues: [Double] = []
        var flowIDs: [UInt64] = []
        var terminatingFlowIDs: [UInt64] = []
        var annotations: [(nameIID: UInt64?, name: String?, value: TraceArgument)] = []
        var categoryIIDs: [UInt64] = []
        var categories: [String] = []

        mutating func reset() {
            type = 0
            nameIID = nil
            name = nil
            trackUUID = nil
            counterValue = nil
            if !extraCounterTracks.isEmpty { extraCounterTracks.removeAll(keepingCapacity: true) }
            if !extraCounterValues.isEmpty { extraCounterValues.removeAll(keepingCapacity: true) }
            if !extraDoubleCounterTracks.isEmpty { extraDoubleCounterTracks.removeAll(keepingCapacity: true) }
            if !extraDoubleCounterValues.isEmpty { extraDoubleCounterValues.removeAll(keepingCapacity: true) }
            if !flowIDs.isEmpty { flowIDs.removeAll(keepingCapacity: true) }
            if !terminatingFlowIDs.isEmpty { terminatingFlowIDs.removeAll(keepingCapacity: true) }
            if !annotations.isEmpty { annotations.removeAll(keepingCapacity: true) }
            if !categoryIIDs.isEmpty { categoryIIDs.removeAll(keepingCapacity: true) }
            if !categories.isEmpty { categories.removeAll(keepingCapacity: true) }
        }
    }

    mutating func reset() {
        timestamp = nil
        timestampClockID = nil
        sequenceID = nil
        sequenceFlags = 0
        incrementalStateCleared = false
        previousPacketDropped = false
        firstPacketOnSequence = false
        hasInternedData = false
        if !eventNames.isEmpty { eventNames.removeAll(keepingCapacity: true) }
        if !annotationNames.isEmpty { annotationNames.removeAll(keepingCapacity: true) }
        if !categoryNames.isEmpty { categoryNames.removeAll(keepingCapacity: true) }
        defaults = nil
        if !clocks.isEmpty { clocks.removeAll(keepingCapacity: true) }
        hasClockSnapshot = false
        track = nil
        statistics = nil
        if hasEvent {
            hasEvent = false
            event.reset()
        }
    }
}

/// The hand decoder for the dense packets: TrackEvents with interned names,
/// timestamps and flags. It returns false as soon as it meets anything else,
/// and the packet then goes through protobuf-c.
enum FastPacketDecoder {
    static func decode(_ base: UnsafePointer<UInt8>, _ range: Range<Int>, into fields: inout PacketFields) -> Bool {
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            let field = key >> 3
            let wireType = key & 7
            switch (field, wireType) {
            case (8, 0):
                guard let value = reader.varint() else { return false }
                fields.timestamp = value
            case (10, 0):
                guard let value = reader.varint() else { return false }
                fields.sequenceID = UInt32(truncatingIfNeeded: value)
            case (13, 0):
                guard let value = reader.varint() else { return false }
                fields.sequenceFlags = UInt32(truncatingIfNeeded: value)
            case (58, 0):
                guard let value = reader.varint() else { return false }
                fields.timestampClockID = UInt32(truncatingIfNeeded: value)
            case (42, 0):
                guard let value = reader.varint() else { return false }
                fields.previousPacketDropped = value != 0
            case (11, 2):
                guard let payload = reader.lengthDelimited(), !fields.hasEvent else { return false }
                fields.hasEvent = true
                guard decodeEvent(base, payload, into: &fields.event) else { return false }
            case (12, 2):
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

    private static func decodeEvent(
        _ base: UnsafePointer<UInt8>, _ range: Range<Int>, into event: inout PacketFields.EventFields
    ) -> Bool {
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            switch (key >> 3, key & 7) {
            case (9, 0):
                guard let value = reader.varint() else { return false }
                event.type = value
            case (10, 0):
                guard let value = reader.varint() else { return false }
                event.nameIID = value
                event.name = nil
            case (23, 2):
                guard let payload = reader.lengthDelimited() else { return false }
                event.name = reader.string(payload)
                event.nameIID = nil
            case (11, 0):
                guard let value = reader.varint() else { return false }
                event.trackUUID = value
            case (30, 0):
                guard let value = reader.varint() else { return false }
                event.counterValue = Double(Int64(bitPattern: value))
            case (44, 1):
                guard let value = reader.fixed64() else { return false }
                event.counterValue = Double(bitPattern: value)
            case (31, 0):
                guard let value = reader.varint() else { return false }
                event.extraCounterTracks.append(value)
            case (12, 0):
                guard let value = reader.varint() else { return false }
                event.extraCounterValues.append(Double(Int64(bitPattern: value)))
            case (47, 1):
                guard let value = reader.fixed64() else { return false }
                event.flowIDs.append(value)
            case (48, 1):
                guard let value = reader.fixed64() else { return false }
                event.terminatingFlowIDs.append(value)
            case (4, 2):
                guard let payload = reader.lengthDelimited(),
                    let annotation = decodeAnnotation(base, payload)
                else { return false }
                event.annotations.append(annotation)
            case (3, 0):
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
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        var nameIID: UInt64?
        var name: String?
        var value: TraceArgument?
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return nil }
            switch (key >> 3, key & 7) {
            case (1, 0): nameIID = reader.varint()
            case (10, 2):
                guard let payload = reader.lengthDelimited() else { return nil }
                name = reader.string(payload)
            case (2, 0): value = reader.varint().map { .bool($0 != 0) }
            case (3, 0): value = reader.varint().map { .uint($0) }
            case (4, 0): value = reader.varint().map { .int(Int64(bitPattern: $0)) }
            case (5, 1): value = reader.fixed64().map { .double(Double(bitPattern: $0)) }
            case (6, 2):
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
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            let field = key >> 3
            guard key & 7 == 2, field >= 1 && field <= 3, let payload = reader.lengthDelimited() else { return false }
            var entry = WireReader(base, from: payload.lowerBound, to: payload.upperBound)
            var iid: UInt64?
            var name: String?
            while !entry.isAtEnd {
                guard let entryKey = entry.varint() else { return false }
                switch (entryKey >> 3, entryKey & 7) {
                case (1, 0): iid = entry.varint()
                case (2, 2):
                    guard let text = entry.lengthDelimited() else { return false }
                    name = entry.string(text)
                default:
                    guard entry.skip(wireType: entryKey & 7) else { return false }
                }
            }
            guard let iid, let name else { return false }
            switch field {
            case 1: fields.categoryNames.append((iid, name))
            case 2: fields.eventNames.append((iid, name))
            default: fields.annotationNames.append((iid, name))
            }
        }
        return true
    }
}
