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
        var buffers: [(recorded: UInt64, discarded: UInt64, overwritten: UInt64, orphanEnds: UInt64)] = []
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
            // Most events carry one or two: dropped one by one, cheaper
            // than a range replaced.
            while !annotations.isEmpty { annotations.removeLast() }
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
