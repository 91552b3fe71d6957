import CStrobeLayout
import PerfettoWire

/// Slices, instants, counters and the tracks they need.
extension RecordEncoder {
    /// The common case: a begin with a name and nothing else.
    @inline(__always)
    mutating func encodePlainBegin(_ record: UnsafePointer<UInt64>, timestamp: UInt64, category: UInt64) {
        state.stack.append(OpenInterval(usage: nil, category: category))
        var interning = Interning()
        let categoryIID = categoryIID(category, &interning)
        let iid = eventNameIID(record[1], &interning)
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(PerfettoWire.TracePacket.trackEvent)
        if categoryIID != 0 { out.appendVarintField(PerfettoWire.TrackEvent.categoryIIDs, categoryIID) }
        out.appendVarintField(PerfettoWire.TrackEvent.type, PerfettoWire.EventType.sliceBegin)
        out.appendVarintField(PerfettoWire.TrackEvent.nameIID, iid)
        out.endMessage(event)
        endPacket(packet, interning)
    }

    @inline(__always)
    mutating func encodePlainEnd(timestamp: UInt64) {
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(PerfettoWire.TracePacket.trackEvent)
        out.appendVarintField(PerfettoWire.TrackEvent.type, PerfettoWire.EventType.sliceEnd)
        out.endMessage(event)
        endPacket(packet)
    }

    mutating func encodeBegin(
        _ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, category: UInt64
    ) {
        var interning = Interning()
        let categoryIID = categoryIID(category, &interning)
        let iid = eventNameIID(record[1], &interning)
        var offset = 2
        var usage: cstrobe_rusage?
        if kind & RecordLayout.withResourceUsage != 0 {
            usage = ResourceUsageKeys.load(record + offset)
            offset += RecordLayout.resourceUsageWords
        }
        state.stack.append(OpenInterval(usage: usage, category: category))
        let annotations = collectAnnotations(record, kind: kind, offset: &offset, &interning)
        if usage != nil { ensureThreadTimeTrack() }
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(PerfettoWire.TracePacket.trackEvent)
        if categoryIID != 0 { out.appendVarintField(PerfettoWire.TrackEvent.categoryIIDs, categoryIID) }
        writeArguments(annotations)
        out.appendVarintField(PerfettoWire.TrackEvent.type, PerfettoWire.EventType.sliceBegin)
        out.appendVarintField(PerfettoWire.TrackEvent.nameIID, iid)
        if let usage, let track = state.threadTimeTrack {
            out.appendVarintField(PerfettoWire.TrackEvent.extraCounterValues, usage.user_ns &+ usage.system_ns)
            out.appendVarintField(PerfettoWire.TrackEvent.extraCounterTrackUUIDs, track)
        }
        writeFlows(annotations)
        out.endMessage(event)
        endPacket(packet, interning)
    }

    mutating func encodeEnd(_ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64) {
        guard let open = state.stack.popLast() else {
            state.orphanEnds += 1
            return
        }
        var endUsage: cstrobe_rusage?
        if kind & RecordLayout.withResourceUsage != 0 { endUsage = ResourceUsageKeys.load(record + 1) }
        var interning = Interning()
        var deltas: [(UInt64, Int64)] = []
        if let begin = open.usage, let end = endUsage {
            ensureThreadTimeTrack()
            for (key, delta) in ResourceUsageKeys.deltas(begin: begin, end: end) {
                deltas.append((annotationNameIID(key, &interning), delta))
            }
        }
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(PerfettoWire.TracePacket.trackEvent)
        for (iid, delta) in deltas {
            let annotation = out.beginMessage(PerfettoWire.TrackEvent.debugAnnotations)
            out.appendVarintField(PerfettoWire.DebugAnnotation.nameIID, iid)
            out.appendVarintField(PerfettoWire.DebugAnnotation.intValue, UInt64(bitPattern: delta))
            out.endMessage(annotation)
        }
        out.appendVarintField(PerfettoWire.TrackEvent.type, PerfettoWire.EventType.sliceEnd)
        if open.usage != nil, let end = endUsage, let track = state.threadTimeTrack {
            out.appendVarintField(PerfettoWire.TrackEvent.extraCounterValues, end.user_ns &+ end.system_ns)
            out.appendVarintField(PerfettoWire.TrackEvent.extraCounterTrackUUIDs, track)
        }
        out.endMessage(event)
        endPacket(packet, interning)
    }

    mutating func encodeInstant(
        _ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, category: UInt64
    ) {
        var interning = Interning()
        let categoryIID = categoryIID(category, &interning)
        // A name written inline is spelled out, never interned.
        let inline = record[1] == ArgumentEncoding.inlineNameWord
        let iid = inline ? 0 : eventNameIID(record[1], &interning)
        var offset = 2
        let annotations = collectAnnotations(record, kind: kind, offset: &offset, &interning)
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(PerfettoWire.TracePacket.trackEvent)
        if categoryIID != 0 { out.appendVarintField(PerfettoWire.TrackEvent.categoryIIDs, categoryIID) }
        writeArguments(annotations)
        out.appendVarintField(PerfettoWire.TrackEvent.type, PerfettoWire.EventType.instant)
        if inline {
            let name = annotations.inlineName ?? UnsafeRawBufferPointer(start: nil, count: 0)
            out.appendBytesField(PerfettoWire.TrackEvent.name, name)
        } else {
            out.appendVarintField(PerfettoWire.TrackEvent.nameIID, iid)
        }
        writeFlows(annotations)
        out.endMessage(event)
        endPacket(packet, interning)
    }

    mutating func encodeCounter(
        _ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, category: UInt64
    ) {
        let unitBits = UInt8((kind >> 4) & 0x3)
        let unit = unitBits
        let key = record[1] ^ (UInt64(unit) << 62)
        let track: UInt64
        if key == state.counterCacheWord {
            track = state.counterCacheUUID
        } else {
            track = counterTrack(word: record[1], unit: unit, key: key)
            state.counterCacheWord = key
            state.counterCacheUUID = track
        }
        var interning = Interning()
        let categoryIID = categoryIID(category, &interning)
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(PerfettoWire.TracePacket.trackEvent)
        if categoryIID != 0 { out.appendVarintField(PerfettoWire.TrackEvent.categoryIIDs, categoryIID) }
        out.appendVarintField(PerfettoWire.TrackEvent.type, PerfettoWire.EventType.counter)
        out.appendVarintField(PerfettoWire.TrackEvent.trackUUID, track)
        if RecordLayout.event(of: kind) == RecordLayout.counterInt {
            out.appendVarintField(PerfettoWire.TrackEvent.counterValue, record[2])
        } else {
            out.appendFixed64Field(PerfettoWire.TrackEvent.doubleCounterValue, record[2])
        }
        out.endMessage(event)
        endPacket(packet, interning)
    }

    /// Writes per-thread loss as a counter track under the thread, so the
    /// viewer shows when and where events were lost.
    mutating func writeLossCounter(value: UInt64, now: UInt64) {
        let track: UInt64
        if let existing = state.lossTrack {
            track = existing
        } else {
            track = shared.allocateTrackUUID()
            state.lossTrack = track
            PacketBuilder.appendTrack(
                uuid: track, parent: state.threadUUID,
                kind: .counter(name: "strobe.lost_events", unit: PacketBuilder.counterUnitCount, threadTime: false),
                sequenceID: state.sequenceID, to: &out)
        }
        let timestamp = max(now, state.lastTimestamp)
        ensureSequence(timestamp: timestamp)
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(PerfettoWire.TracePacket.trackEvent)
        out.appendVarintField(PerfettoWire.TrackEvent.type, PerfettoWire.EventType.counter)
        out.appendVarintField(PerfettoWire.TrackEvent.trackUUID, track)
        out.appendVarintField(PerfettoWire.TrackEvent.counterValue, value)
        out.endMessage(event)
        endPacket(packet)
    }

    /// The track of the counter named `word` in `unit` (a counter unit of
    /// Perfetto's, 0 for none).
    mutating func counterTrack(word: UInt64, unit: UInt8, key: UInt64) -> UInt64 {
        if let uuid = shared.counterTracks[key] { return uuid }
        let name = names.text(of: word)
        let textKey = "\(unit):\(name)"
        if let uuid = shared.counterTracksByName[textKey] {
            shared.counterTracks[key] = uuid
            return uuid
        }
        let uuid = shared.allocateTrackUUID()
        shared.counterTracks[key] = uuid
        shared.counterTracksByName[textKey] = uuid
        PacketBuilder.appendTrack(
            uuid: uuid, parent: shared.processUUID, kind: .counter(name: name, unit: unit, threadTime: false),
            sequenceID: state.sequenceID, to: &out)
        return uuid
    }

    mutating func ensureThreadTimeTrack() {
        guard state.threadTimeTrack == nil else { return }
        let uuid = shared.allocateTrackUUID()
        state.threadTimeTrack = uuid
        PacketBuilder.appendTrack(
            uuid: uuid, parent: state.threadUUID,
            kind: .counter(name: "thread_time", unit: PacketBuilder.counterUnitNanoseconds, threadTime: true),
            sequenceID: state.sequenceID, to: &out)
    }
}
