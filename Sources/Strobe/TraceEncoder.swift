import CStrobe

/// Turns the records in thread buffers into Perfetto trace packets.
///
/// Each thread becomes one packet sequence. Its first packet clears the
/// sequence's incremental state, sets the thread's track as the default and
/// anchors a sequence-scoped incremental clock to CLOCK_BOOTTIME, so every
/// event packet carries only a timestamp delta, the sequence id, the
/// incremental-state flag and a small TrackEvent with interned names.
/// After lost events the sequence restarts the same way, flagged with
/// `previous_packet_dropped`, so no reader ever drops what follows.
final class TraceEncoder: @unchecked Sendable {
    /// Encoded packets not yet written out.
    var buffer = ProtoBuffer()

    let processID: Int32
    let processUUID: UInt64
    private let processName: String
    private var sequences: [ObjectIdentifier: SequenceState] = [:]
    private var counterTracks: [UInt64: UInt64] = [:]
    private var counterTracksByName: [String: UInt64] = [:]
    private var asyncTracks: Set<UInt64> = []
    private var nextTrackUUID: UInt64 = 16
    private var nextSequenceID: UInt32 = 2
    private var points: [ClockCalibration.Point] = []
    private var started = false

    /// Records that could not be parsed (a corrupt buffer); counted in stats.
    private(set) var invalidRecords: UInt64 = 0
    /// Ends whose begin is not in the trace (overwritten in a ring), skipped.
    private(set) var orphanEnds: UInt64 = 0

    /// The metadata sequence: process descriptor, counters, statistics.
    static let metadataSequenceID: UInt32 = 1

    init(processID: Int32, processName: String) {
        self.processID = processID
        self.processName = processName
        processUUID = (1 << 62) | UInt64(UInt32(bitPattern: processID))
    }

    /// Sets the clock readings that map raw timestamps to CLOCK_BOOTTIME.
    func updateCalibration(_ points: [ClockCalibration.Point]) {
        self.points = points
        for state in sequences.values { state.converter.update(points: points) }
    }

    private func startIfNeeded() {
        guard !started else { return }
        started = true
        PacketBuilder.appendTrack(
            uuid: processUUID, parent: nil, kind: .process(pid: processID, name: processName),
            sequenceID: Self.metadataSequenceID, to: &buffer)
    }

    // MARK: - Sequences

    final class SequenceState {
        let sequenceID: UInt32
        let threadUUID: UInt64
        let threadID: UInt64
        var converter: TimestampConverter
        var threadName: String?
        var started = false
        var restartPending = false
        var lastTimestamp: UInt64 = 0
        var eventNames: [UInt64: UInt64] = [:]
        var annotationNames: [UInt64: UInt64] = [:]
        var stack: [OpenInterval] = []
        var threadTimeTrack: UInt64?
        var lossTrack: UInt64?
        var reportedLoss: UInt64 = 0
        var recorded: UInt64 = 0
        var discarded: UInt64 = 0
        var overwritten: UInt64 = 0
        /// A chunk partly encoded by an earlier drain, and how far.
        var partialChunk: Chunk?
        var partialWords = 0

        init(sequenceID: UInt32, threadID: UInt64, points: [ClockCalibration.Point]) {
            self.sequenceID = sequenceID
            self.threadID = threadID
            threadUUID = (1 << 61) | threadID
            converter = TimestampConverter(points: points)
        }
    }

    struct OpenInterval {
        var usage: cstrobe_rusage?
    }

    func sequence(for recorder: ThreadRecorder) -> SequenceState {
        let key = ObjectIdentifier(recorder)
        if let state = sequences[key] { return state }
        let state = SequenceState(sequenceID: nextSequenceID, threadID: recorder.threadID, points: points)
        nextSequenceID += 1
        sequences[key] = state
        return state
    }

    /// Forgets a thread that has exited and been fully written.
    func retire(_ recorder: ThreadRecorder) {
        sequences[ObjectIdentifier(recorder)] = nil
    }

    /// Per-thread loss accounting for the statistics packet.
    func losses(bufferSize: UInt64) -> [PacketBuilder.ThreadLoss] {
        sequences.values.sorted { $0.sequenceID < $1.sequenceID }.map {
            PacketBuilder.ThreadLoss(
                sequenceID: $0.sequenceID, recorded: $0.recorded, discarded: $0.discarded,
                overwritten: $0.overwritten, bufferSize: bufferSize)
        }
    }

    // MARK: - Encoding a harvest

    /// Encodes what a drain took from one thread.
    func encode(_ harvest: ThreadRecorder.Harvest, of recorder: ThreadRecorder, now: UInt64) {
        startIfNeeded()
        let state = sequence(for: recorder)
        if state.threadName != harvest.name || !state.started {
            state.threadName = harvest.name
            let name = harvest.name.isEmpty ? "thread \(state.threadID)" : harvest.name
            PacketBuilder.appendTrack(
                uuid: state.threadUUID, parent: processUUID,
                kind: .thread(pid: processID, tid: Int64(state.threadID), name: name),
                sequenceID: state.sequenceID, to: &buffer)
        }
        for chunk in harvest.chunks {
            var from = 0
            if let partial = state.partialChunk, partial === chunk {
                from = state.partialWords
                state.partialChunk = nil
            }
            encodeRecords(chunk.base, from: from, to: chunk.usedWords, state)
        }
        if let current = harvest.current {
            var from = 0
            if let partial = state.partialChunk, partial === current { from = state.partialWords }
            encodeRecords(current.base, from: from, to: harvest.currentEnd, state)
            state.partialChunk = current
            state.partialWords = harvest.currentEnd
        } else {
            state.partialChunk = nil
        }
        state.recorded = max(state.recorded, harvest.recorded)
        state.discarded = harvest.discarded
        state.overwritten = harvest.overwritten
        let loss = harvest.discarded &+ harvest.overwritten
        if loss != state.reportedLoss {
            state.reportedLoss = loss
            writeLossCounter(state, value: loss, now: now)
        }
    }

    /// Writes per-thread loss as a counter track under the thread, so the
    /// viewer shows when and where events were lost.
    private func writeLossCounter(_ state: SequenceState, value: UInt64, now: UInt64) {
        let track: UInt64
        if let existing = state.lossTrack {
            track = existing
        } else {
            track = allocateTrackUUID()
            state.lossTrack = track
            PacketBuilder.appendTrack(
                uuid: track, parent: state.threadUUID,
                kind: .counter(name: "strobe.lost_events", unit: .count, threadTime: false),
                sequenceID: state.sequenceID, to: &buffer)
        }
        let timestamp = max(now, state.lastTimestamp)
        ensureSequence(state, timestamp: timestamp)
        let packet = beginPacket(state, timestamp: timestamp)
        let event = buffer.beginMessage(11)
        buffer.appendVarintField(9, 4)
        buffer.appendVarintField(11, track)
        buffer.appendVarintField(30, value)
        buffer.endMessage(event)
        buffer.endMessage(packet)
    }

    private func allocateTrackUUID() -> UInt64 {
        let uuid = nextTrackUUID
        nextTrackUUID += 2
        return uuid
    }

    // MARK: - Records

    private func encodeRecords(_ base: UnsafeMutablePointer<UInt64>, from: Int, to end: Int, _ state: SequenceState) {
        var index = from
        while index < end {
            let record = UnsafePointer(base + index)
            guard let length = RecordLayout.length(of: record, available: end - index) else {
                invalidRecords += 1
                return
            }
            encode(record: record, state)
            index += length
        }
    }

    private func encode(record: UnsafePointer<UInt64>, _ state: SequenceState) {
        let header = record[0]
        let kind = RecordLayout.kind(of: header)
        let timestamp = state.converter.boottime(raw: RecordLayout.timestamp(of: header))
        let event = kind & 0x0F
        if event == RecordLayout.dropMarker {
            state.restartPending = true
            return
        }
        ensureSequence(state, timestamp: timestamp)
        switch event {
        case RecordLayout.begin:
            encodeBegin(record, kind: kind, timestamp: timestamp, state)
        case RecordLayout.end:
            encodeEnd(record, kind: kind, timestamp: timestamp, state)
        case RecordLayout.instant:
            encodeInstant(record, kind: kind, timestamp: timestamp, state)
        case RecordLayout.counterInt, RecordLayout.counterDouble:
            encodeCounter(record, kind: kind, timestamp: timestamp, state)
        case RecordLayout.asyncBegin:
            encodeAsyncBegin(record, kind: kind, timestamp: timestamp, state)
        case RecordLayout.asyncEnd:
            encodeAsyncEnd(record, timestamp: timestamp, state)
        default:
            invalidRecords += 1
        }
    }

    /// Writes the sequence's start packet when it has not started yet or must
    /// restart after lost events; call before interning anything.
    @inline(__always)
    private func ensureSequence(_ state: SequenceState, timestamp: UInt64) {
        if !state.started || state.restartPending {
            let timestamp = max(timestamp, state.lastTimestamp)
            PacketBuilder.appendSequenceStart(
                sequenceID: state.sequenceID, threadTrack: state.threadUUID, boottime: timestamp,
                previousPacketDropped: state.restartPending, first: !state.started, to: &buffer)
            state.started = true
            state.restartPending = false
            state.lastTimestamp = timestamp
            state.eventNames.removeAll(keepingCapacity: true)
            state.annotationNames.removeAll(keepingCapacity: true)
        }
    }

    /// Starts an event packet on a started sequence: the timestamp delta, the
    /// sequence id and the incremental-state flag.
    @inline(__always)
    private func beginPacket(_ state: SequenceState, timestamp: UInt64) -> Int {
        let timestamp = max(timestamp, state.lastTimestamp)
        let packet = buffer.beginMessage(1)
        buffer.appendVarintField(8, timestamp - state.lastTimestamp)
        state.lastTimestamp = timestamp
        buffer.appendVarintField(10, UInt64(state.sequenceID))
        buffer.appendVarintField(13, 2)  // SEQ_NEEDS_INCREMENTAL_STATE
        return packet
    }

    /// The interned id of an event name, writing its InternedData entry when new.
    private struct Interning {
        var newEventName: (iid: UInt64, word: UInt64)?
        var newAnnotationNames: [(iid: UInt64, word: UInt64)] = []
        var isEmpty: Bool { newEventName == nil && newAnnotationNames.isEmpty }
    }

    @inline(__always)
    private func eventNameIID(_ word: UInt64, _ state: SequenceState, _ interning: inout Interning) -> UInt64 {
        if let iid = state.eventNames[word] { return iid }
        let iid = UInt64(state.eventNames.count + 1)
        state.eventNames[word] = iid
        interning.newEventName = (iid, word)
        return iid
    }

    private func annotationNameIID(_ word: UInt64, _ state: SequenceState, _ interning: inout Interning) -> UInt64 {
        if let iid = state.annotationNames[word] { return iid }
        let iid = UInt64(state.annotationNames.count + 1)
        state.annotationNames[word] = iid
        interning.newAnnotationNames.append((iid, word))
        return iid
    }

    private func writeInterning(_ interning: Interning) {
        guard !interning.isEmpty else { return }
        let data = buffer.beginMessage(12)
        if let name = interning.newEventName {
            let entry = buffer.beginMessage(2)
            buffer.appendVarintField(1, name.iid)
            buffer.appendStringField(2, NameTable.shared.text(of: name.word))
            buffer.endMessage(entry)
        }
        for name in interning.newAnnotationNames {
            let entry = buffer.beginMessage(3)
            buffer.appendVarintField(1, name.iid)
            buffer.appendStringField(2, Self.annotationText(name.word))
            buffer.endMessage(entry)
        }
        buffer.endMessage(data)
    }

    private func encodeBegin(_ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, _ state: SequenceState) {
        var interning = Interning()
        let iid = eventNameIID(record[1], state, &interning)
        var offset = 2
        var usage: cstrobe_rusage?
        if kind & RecordLayout.withResourceUsage != 0 {
            usage = Self.loadUsage(record + offset)
            offset += RecordLayout.resourceUsageWords
        }
        state.stack.append(OpenInterval(usage: usage))
        let annotations = collectAnnotations(record, kind: kind, offset: &offset, state, &interning)
        if usage != nil { ensureThreadTimeTrack(state) }
        let packet = beginPacket(state, timestamp: timestamp)
        writeInterning(interning)
        let event = buffer.beginMessage(11)
        buffer.appendVarintField(9, 1)  // TYPE_SLICE_BEGIN
        buffer.appendVarintField(10, iid)
        if let usage, let track = state.threadTimeTrack {
            buffer.appendVarintField(31, track)
            buffer.appendVarintField(12, usage.user_ns &+ usage.system_ns)
        }
        writeFlowsAndAnnotations(annotations)
        buffer.endMessage(event)
        buffer.endMessage(packet)
    }

    private func encodeEnd(_ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, _ state: SequenceState) {
        guard let open = state.stack.popLast() else {
            orphanEnds += 1
            return
        }
        var endUsage: cstrobe_rusage?
        if kind & RecordLayout.withResourceUsage != 0 { endUsage = Self.loadUsage(record + 1) }
        var interning = Interning()
        var deltas: [(UInt64, Int64)] = []
        if let begin = open.usage, let end = endUsage {
            ensureThreadTimeTrack(state)
            for (key, delta) in Self.usageDeltas(begin: begin, end: end) {
                deltas.append((annotationNameIID(key, state, &interning), delta))
            }
        }
        let packet = beginPacket(state, timestamp: timestamp)
        writeInterning(interning)
        let event = buffer.beginMessage(11)
        buffer.appendVarintField(9, 2)  // TYPE_SLICE_END
        if open.usage != nil, let end = endUsage, let track = state.threadTimeTrack {
            buffer.appendVarintField(31, track)
            buffer.appendVarintField(12, end.user_ns &+ end.system_ns)
        }
        for (iid, delta) in deltas {
            let annotation = buffer.beginMessage(4)
            buffer.appendVarintField(1, iid)
            buffer.appendVarintField(4, UInt64(bitPattern: delta))
            buffer.endMessage(annotation)
        }
        buffer.endMessage(event)
        buffer.endMessage(packet)
    }

    private func encodeInstant(_ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, _ state: SequenceState) {
        var interning = Interning()
        let iid = eventNameIID(record[1], state, &interning)
        var offset = 2
        let annotations = collectAnnotations(record, kind: kind, offset: &offset, state, &interning)
        let packet = beginPacket(state, timestamp: timestamp)
        writeInterning(interning)
        let event = buffer.beginMessage(11)
        buffer.appendVarintField(9, 3)  // TYPE_INSTANT
        buffer.appendVarintField(10, iid)
        writeFlowsAndAnnotations(annotations)
        buffer.endMessage(event)
        buffer.endMessage(packet)
    }

    private func encodeCounter(_ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, _ state: SequenceState) {
        let unitBits = UInt8((kind >> 4) & 0x3)
        let unit = Trace.CounterUnit(rawValue: unitBits) ?? .unspecified
        let track = counterTrack(word: record[1], unit: unit, state)
        let packet = beginPacket(state, timestamp: timestamp)
        let event = buffer.beginMessage(11)
        buffer.appendVarintField(9, 4)  // TYPE_COUNTER
        buffer.appendVarintField(11, track)
        if kind & 0x0F == RecordLayout.counterInt {
            buffer.appendVarintField(30, record[2])
        } else {
            buffer.appendFixed64Field(44, record[2])
        }
        buffer.endMessage(event)
        buffer.endMessage(packet)
    }

    private func encodeAsyncBegin(_ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, _ state: SequenceState) {
        let id = record[2]
        let track = Self.asyncTrackUUID(id)
        var interning = Interning()
        let iid = eventNameIID(record[1], state, &interning)
        var offset = 3
        let annotations = collectAnnotations(record, kind: kind, offset: &offset, state, &interning)
        if asyncTracks.insert(id).inserted {
            PacketBuilder.appendTrack(
                uuid: track, parent: processUUID, kind: .async(name: NameTable.shared.text(of: record[1])),
                sequenceID: state.sequenceID, to: &buffer)
        }
        let packet = beginPacket(state, timestamp: timestamp)
        writeInterning(interning)
        let event = buffer.beginMessage(11)
        buffer.appendVarintField(9, 1)
        buffer.appendVarintField(10, iid)
        buffer.appendVarintField(11, track)
        writeFlowsAndAnnotations(annotations)
        buffer.endMessage(event)
        buffer.endMessage(packet)
    }

    private func encodeAsyncEnd(_ record: UnsafePointer<UInt64>, timestamp: UInt64, _ state: SequenceState) {
        let id = record[1]
        guard asyncTracks.remove(id) != nil else {
            orphanEnds += 1
            return
        }
        let packet = beginPacket(state, timestamp: timestamp)
        let event = buffer.beginMessage(11)
        buffer.appendVarintField(9, 2)
        buffer.appendVarintField(11, Self.asyncTrackUUID(id))
        buffer.endMessage(event)
        buffer.endMessage(packet)
    }

    /// Async tracks take odd ids, counters and other tracks even ones, so
    /// neither collides and both stay short on the wire.
    static func asyncTrackUUID(_ id: UInt64) -> UInt64 { id &* 2 &+ 1 }

    private func counterTrack(word: UInt64, unit: Trace.CounterUnit, _ state: SequenceState) -> UInt64 {
        let key = word ^ (UInt64(unit.rawValue) << 62)
        if let uuid = counterTracks[key] { return uuid }
        let name = NameTable.shared.text(of: word)
        let textKey = "\(unit.rawValue):\(name)"
        if let uuid = counterTracksByName[textKey] {
            counterTracks[key] = uuid
            return uuid
        }
        let uuid = allocateTrackUUID()
        counterTracks[key] = uuid
        counterTracksByName[textKey] = uuid
        PacketBuilder.appendTrack(
            uuid: uuid, parent: processUUID, kind: .counter(name: name, unit: unit, threadTime: false),
            sequenceID: state.sequenceID, to: &buffer)
        return uuid
    }

    private func ensureThreadTimeTrack(_ state: SequenceState) {
        guard state.threadTimeTrack == nil else { return }
        let uuid = allocateTrackUUID()
        state.threadTimeTrack = uuid
        PacketBuilder.appendTrack(
            uuid: uuid, parent: state.threadUUID,
            kind: .counter(name: "thread_time", unit: .nanoseconds, threadTime: true),
            sequenceID: state.sequenceID, to: &buffer)
    }

    // MARK: - Flows and arguments

    private struct Annotations {
        var flow: UInt64?
        var terminatingFlow: UInt64?
        var arguments: [(iid: UInt64, tag: UInt64, payload: UnsafePointer<UInt64>)] = []
    }

    private func collectAnnotations(
        _ record: UnsafePointer<UInt64>, kind: UInt64, offset: inout Int, _ state: SequenceState,
        _ interning: inout Interning
    ) -> Annotations {
        var result = Annotations()
        if kind & RecordLayout.withFlow != 0 {
            result.flow = record[offset]
            offset += 1
        }
        if kind & RecordLayout.withTerminatingFlow != 0 {
            result.terminatingFlow = record[offset]
            offset += 1
        }
        if kind & RecordLayout.withArguments != 0 {
            let words = Int(record[offset])
            var position = offset + 1
            let end = position + words
            while position + 2 <= end {
                let key = record[position]
                let tag = record[position + 1]
                let payloadWords = (tag & 0xFF) == ArgumentEncoding.stringTag ? (Int(tag >> 8) + 7) / 8 : 1
                guard position + 2 + payloadWords <= end else { break }
                let iid = annotationNameIID(key, state, &interning)
                result.arguments.append((iid, tag, record + position + 2))
                position += 2 + payloadWords
            }
            offset = end
        }
        return result
    }

    private func writeFlowsAndAnnotations(_ annotations: Annotations) {
        for argument in annotations.arguments {
            let annotation = buffer.beginMessage(4)
            buffer.appendVarintField(1, argument.iid)
            switch argument.tag & 0xFF {
            case ArgumentEncoding.intTag:
                buffer.appendVarintField(4, argument.payload[0])
            case ArgumentEncoding.doubleTag:
                buffer.appendFixed64Field(5, argument.payload[0])
            case ArgumentEncoding.boolTag:
                buffer.appendVarintField(2, argument.payload[0] != 0 ? 1 : 0)
            default:
                let length = Int(argument.tag >> 8)
                buffer.appendBytesField(6, UnsafeRawBufferPointer(start: UnsafeRawPointer(argument.payload), count: length))
            }
            buffer.endMessage(annotation)
        }
        if let flow = annotations.flow { buffer.appendFixed64Field(47, flow) }
        if let flow = annotations.terminatingFlow { buffer.appendFixed64Field(48, flow) }
    }

    // MARK: - rusage

    static func loadUsage(_ words: UnsafePointer<UInt64>) -> cstrobe_rusage {
        var usage = cstrobe_rusage()
        usage.user_ns = words[0]
        usage.system_ns = words[1]
        usage.voluntary_switches = words[2]
        usage.involuntary_switches = words[3]
        usage.minor_faults = words[4]
        usage.major_faults = words[5]
        return usage
    }

    /// Argument keys of the rusage deltas attached to an interval's end.
    static let usageKeys: [String] = [
        "rusage.user_ns", "rusage.system_ns", "rusage.voluntary_switches",
        "rusage.involuntary_switches", "rusage.minor_faults", "rusage.major_faults",
    ]

    /// Reserved name words for the rusage keys (never valid pointers).
    static func usageKeyWord(_ index: Int) -> UInt64 { 0xFFFE_0000_0000_0000 | UInt64(index) }

    static func annotationText(_ word: UInt64) -> String {
        if word & 0xFFFF_0000_0000_0000 == 0xFFFE_0000_0000_0000 {
            let index = Int(word & 0xFFFF)
            return index < usageKeys.count ? usageKeys[index] : ""
        }
        return NameTable.shared.text(of: word)
    }

    static func usageDeltas(begin: cstrobe_rusage, end: cstrobe_rusage) -> [(UInt64, Int64)] {
        func delta(_ a: UInt64, _ b: UInt64) -> Int64 { Int64(bitPattern: b &- a) }
        return [
            (usageKeyWord(0), delta(begin.user_ns, end.user_ns)),
            (usageKeyWord(1), delta(begin.system_ns, end.system_ns)),
            (usageKeyWord(2), delta(begin.voluntary_switches, end.voluntary_switches)),
            (usageKeyWord(3), delta(begin.involuntary_switches, end.involuntary_switches)),
            (usageKeyWord(4), delta(begin.minor_faults, end.minor_faults)),
            (usageKeyWord(5), delta(begin.major_faults, end.major_faults)),
        ]
    }

    // MARK: - Finishing

    /// Appends the statistics packet that closes a trace.
    func finish(bufferSize: UInt64) {
        startIfNeeded()
        PacketBuilder.appendStatistics(
            losses(bufferSize: bufferSize), sequenceID: Self.metadataSequenceID,
            invalidRecords: invalidRecords, to: &buffer)
    }
}
