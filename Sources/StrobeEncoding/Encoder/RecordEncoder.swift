import CStrobeLayout
import PerfettoWire

/// Encodes the records of one thread into packets; lives for one harvest.
struct RecordEncoder {
    /// The text of names and categories.
    let names: any RecordNames
    var state: SequenceState
    var shared: SharedTracks
    var out: ProtoBuffer

    mutating func encodeRecords(_ base: UnsafeMutablePointer<UInt64>, from: Int, to end: Int) {
        var index = from
        while index < end {
            let record = UnsafePointer(base + index)
            guard let length = RecordLayout.length(of: record, available: end - index) else {
                shared.invalidRecords += 1
                return
            }
            encode(record: record)
            index += length
        }
    }

    @inline(__always)
    mutating func encode(record: UnsafePointer<UInt64>) {
        let header = record[0]
        let kind = RecordLayout.kind(of: header)
        let event = RecordLayout.event(of: kind)
        if event == RecordLayout.dropMarker {
            state.restartPending = true
            state.pendingCategory = 0
            return
        }
        if event == RecordLayout.categoryPrefix {
            state.pendingCategory = RecordLayout.timestamp(of: header)
            return
        }
        // Slot 0 (index plus one is 1) holds categories past the limit,
        // written without one.
        let category = state.pendingCategory > 1 ? state.pendingCategory : 0
        state.pendingCategory = 0
        let timestamp = state.converter.boottime(raw: RecordLayout.timestamp(of: header))
        ensureSequence(timestamp: timestamp)
        switch event {
        case RecordLayout.begin:
            if kind == RecordLayout.begin {
                encodePlainBegin(record, timestamp: timestamp, category: category)
            } else {
                encodeBegin(record, kind: kind, timestamp: timestamp, category: category)
            }
        case RecordLayout.end:
            if category != 0, !closeAbove(category: category, timestamp: timestamp) {
                // Its begin was skipped: the category was off then.
                state.orphanEnds += 1
            } else if kind == RecordLayout.end, let open = state.stack.last, open.usage == nil {
                state.stack.removeLast()
                encodePlainEnd(timestamp: timestamp)
            } else {
                encodeEnd(record, kind: kind, timestamp: timestamp)
            }
        case RecordLayout.instant:
            encodeInstant(record, kind: kind, timestamp: timestamp, category: category)
        case RecordLayout.counterInt, RecordLayout.counterDouble:
            encodeCounter(record, kind: kind, timestamp: timestamp, category: category)
        case RecordLayout.asyncBegin, RecordLayout.asyncBeginChild, RecordLayout.asyncBeginRenamable:
            encodeAsyncBegin(record, kind: kind, timestamp: timestamp, category: category)
        case RecordLayout.asyncEnd, RecordLayout.asyncEndExplicit:
            encodeAsyncEnd(record, kind: kind, timestamp: timestamp)
        default:
            shared.invalidRecords += 1
        }
    }

    /// Writes the sequence's start packet when it has not started yet or must
    /// restart after lost events; call before interning anything.
    @inline(__always)
    mutating func ensureSequence(timestamp: UInt64) {
        guard !state.started || state.restartPending else { return }
        let timestamp = max(timestamp, state.lastTimestamp)
        PacketBuilder.appendSequenceStart(
            sequenceID: state.sequenceID, threadTrack: state.threadUUID, boottime: timestamp,
            realtimeOffset: state.converter.latestRealtimeOffset, previousPacketDropped: state.restartPending,
            first: !state.started, to: &out)
        state.started = true
        state.restartPending = false
        state.lastTimestamp = timestamp
        state.eventNames.removeAll()
        state.annotationNames.removeAll()
        state.categoryNames.removeAll()
    }

    /// Before the end of an interval in `category`: ends the intervals open
    /// above the innermost one in that category (their ends were skipped
    /// when their category was turned off). Returns false, changing
    /// nothing, when no open interval is in the category.
    mutating func closeAbove(category: UInt64, timestamp: UInt64) -> Bool {
        guard let index = state.stack.lastIndex(where: { $0.category == category }) else { return false }
        while state.stack.count > index + 1 {
            state.stack.removeLast()
            encodePlainEnd(timestamp: timestamp)
        }
        return true
    }

    /// Starts an event packet on a started sequence: the timestamp delta and
    /// the sequence id.
    @inline(__always)
    mutating func beginPacket(timestamp: UInt64) -> Int {
        let timestamp = max(timestamp, state.lastTimestamp)
        let packet = out.beginMessage(PerfettoWire.Trace.packet)
        out.appendVarintField(PerfettoWire.TracePacket.timestamp, timestamp - state.lastTimestamp)
        state.lastTimestamp = timestamp
        out.appendVarintField(PerfettoWire.TracePacket.trustedPacketSequenceID, UInt64(state.sequenceID))
        return packet
    }

    /// Starts an event packet whose timestamp lies before the sequence's
    /// latest: an absolute CLOCK_BOOTTIME time, which leaves the sequence's
    /// incremental clock alone. End it with `endPacket(_:_:absolute: true)`.
    mutating func beginAbsolutePacket(boottime: UInt64) -> Int {
        let packet = out.beginMessage(PerfettoWire.Trace.packet)
        out.appendVarintField(PerfettoWire.TracePacket.timestamp, boottime)
        out.appendVarintField(PerfettoWire.TracePacket.trustedPacketSequenceID, UInt64(state.sequenceID))
        return packet
    }

    /// Ends an event packet: interned data it introduces, then the flag that
    /// it needs the sequence's incremental state, then for an absolute time
    /// its clock. Fields go in field-number order, as protobuf-c writes them,
    /// so both encoders agree byte for byte.
    @inline(__always)
    mutating func endPacket(_ packet: Int, _ interning: Interning? = nil, absolute: Bool = false) {
        if let interning, !interning.isEmpty { writeInterning(interning) }
        out.appendVarintField(
            PerfettoWire.TracePacket.sequenceFlags, UInt64(PerfettoWire.SequenceFlags.needsIncrementalState))
        if absolute {
            out.appendVarintField(PerfettoWire.TracePacket.timestampClockID, UInt64(PerfettoWire.Clock.boottime))
        }
        out.endMessage(packet)
    }
}
