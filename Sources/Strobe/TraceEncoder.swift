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
///
/// The per-thread loop works on value types held in locals (the output
/// buffer, the sequence state) and writes them back when done, which keeps
/// the hot path free of reference-counting and exclusivity checks.
final class TraceEncoder: @unchecked Sendable {
    /// Encoded packets not yet written out.
    var buffer = ProtoBuffer()

    let processID: Int32
    let processUUID: UInt64
    private let processName: String
    /// Per-thread state, by recorder serial.
    private var sequences: [UInt64: SequenceState] = [:]
    /// The loss counts of threads that exited and were written out, whose
    /// sequence state is released.
    private var retiredLosses: [(sequenceID: UInt32, recorded: UInt64, discarded: UInt64, overwritten: UInt64)] = []
    private var tracks = SharedTracks()
    private var nextSequenceID: UInt32 = 2
    private var points: [ClockCalibration.Point] = []
    private var started = false

    /// Records that could not be parsed (a corrupt buffer); counted in stats.
    var invalidRecords: UInt64 { tracks.invalidRecords }
    /// Ends whose begin is not in the trace (overwritten in a ring), skipped.
    var orphanEnds: UInt64 { tracks.orphanEnds }

    /// The metadata sequence: process descriptor, counters, statistics.
    static let metadataSequenceID: UInt32 = 1

    /// An encoder for a session whose async intervals have identifiers from
    /// `firstIdentifier` on; their begins all reach this encoder.
    init(processID: Int32, processName: String, firstIdentifier: UInt64 = 0) {
        self.processID = processID
        self.processName = processName
        processUUID = (1 << 62) | UInt64(UInt32(bitPattern: processID))
        tracks.processUUID = processUUID
        tracks.firstIdentifier = firstIdentifier
    }

    /// For a snapshot of rings, where begins may have been overwritten: notes
    /// which async intervals begin in `harvests`, before encoding them.
    func noteAsyncBegins(in harvests: [ThreadRecorder.Harvest]) {
        var begins = Set<UInt64>()
        func scan(_ base: UnsafeMutablePointer<UInt64>, to end: Int) {
            var index = 0
            while index < end {
                let record = UnsafePointer(base + index)
                guard let length = RecordLayout.length(of: record, available: end - index) else { return }
                let event = RecordLayout.kind(of: record[0]) & 0x0F
                if event == RecordLayout.asyncBegin || event == RecordLayout.asyncBeginChild
                    || event == RecordLayout.asyncBeginRenamable
                {
                    begins.insert(record[2])
                }
                index += length
            }
        }
        for harvest in harvests {
            for chunk in harvest.chunks { scan(chunk.base, to: chunk.usedWords) }
            if let current = harvest.current { scan(current.base, to: harvest.currentEnd) }
        }
        tracks.snapshotBegins = begins
    }

    deinit {
        buffer.release()
        for state in sequences.values { state.release() }
    }

    /// Sets the clock readings that map raw timestamps to CLOCK_BOOTTIME.
    func updateCalibration(_ points: [ClockCalibration.Point]) {
        self.points = points
    }

    private func startIfNeeded(_ out: inout ProtoBuffer) {
        guard !started else { return }
        started = true
        PacketBuilder.appendTrack(
            uuid: processUUID, parent: nil, kind: .process(pid: processID, name: processName),
            sequenceID: Self.metadataSequenceID, to: &out)
    }

    /// Writes renamable async intervals still open, each on the sequence of
    /// the thread that began it, under its first name and without an end.
    private func writeUnendedRenamableBegins() {
        let held = tracks.heldBegins
        guard !held.isEmpty else { return }
        tracks.heldBegins = [:]
        for (_, begin) in held.sorted(by: { $0.key < $1.key }) {
            guard let key = sequences.first(where: { $0.value.sequenceID == begin.sequenceID })?.key,
                let state = sequences.removeValue(forKey: key)
            else { continue }
            withRecordEncoder(state, key: key) { $0.writeHeldBegin(begin, name: nil) }
        }
    }

    /// Runs `body` with an encoder for one sequence. The sequence's state, the
    /// shared tracks and the output buffer move into the encoder and back
    /// out after, so nothing is copied on write.
    private func withRecordEncoder(_ state: SequenceState, key: UInt64, _ body: (inout RecordEncoder) -> Void) {
        var encoder = RecordEncoder(state: state, shared: tracks, out: buffer)
        buffer = ProtoBuffer(empty: ())
        tracks = SharedTracks()
        body(&encoder)
        buffer = encoder.out
        tracks = encoder.shared
        sequences[key] = encoder.state
    }

    /// Per-thread loss accounting for the statistics packet.
    func losses(bufferSize: UInt64) -> [PacketBuilder.ThreadLoss] {
        let live = sequences.values.map { ($0.sequenceID, $0.recorded, $0.discarded, $0.overwritten) }
        return (live + retiredLosses).sorted { $0.0 < $1.0 }.map {
            PacketBuilder.ThreadLoss(
                sequenceID: $0.0, recorded: $0.1, discarded: $0.2, overwritten: $0.3, bufferSize: bufferSize)
        }
    }

    /// Releases what the encoder keeps for a thread that exited and was
    /// written out, keeping only its loss counts, so that threads coming and
    /// going do not grow the writer's memory. A thread whose renamable
    /// begins are still held keeps its state: they are written on its
    /// sequence.
    func retire(_ recorder: ThreadRecorder) {
        let key = recorder.serial
        guard let state = sequences[key], state.partialChunk == nil,
            !tracks.heldBegins.values.contains(where: { $0.sequenceID == state.sequenceID })
        else { return }
        sequences[key] = nil
        retiredLosses.append((state.sequenceID, state.recorded, state.discarded, state.overwritten))
        state.release()
    }

    // MARK: - Encoding a harvest

    /// Encodes what a drain took from one thread.
    func encode(_ harvest: ThreadRecorder.Harvest, of recorder: ThreadRecorder, now: UInt64) {
        let key = recorder.serial
        var state = sequences.removeValue(forKey: key)
            ?? SequenceState(sequenceID: nextSequenceID, threadID: recorder.threadID)
        if state.sequenceID == nextSequenceID { nextSequenceID += 1 }
        startIfNeeded(&buffer)
        state.converter.update(points: points)
        if state.threadName != harvest.name || !state.started {
            state.threadName = harvest.name
            let name = harvest.name.isEmpty ? "thread \(state.threadID)" : harvest.name
            PacketBuilder.appendTrack(
                uuid: state.threadUUID, parent: processUUID,
                kind: .thread(pid: processID, tid: Int64(state.threadID), name: name),
                sequenceID: state.sequenceID, to: &buffer)
        }
        withRecordEncoder(state, key: key) { encoder in
            encode(harvest, with: &encoder, now: now)
        }
    }

    private func encode(_ harvest: ThreadRecorder.Harvest, with encoder: inout RecordEncoder, now: UInt64) {
        for chunk in harvest.chunks {
            var from = 0
            if let partial = encoder.state.partialChunk, partial === chunk {
                from = encoder.state.partialWords
                encoder.state.partialChunk = nil
            }
            encoder.encodeRecords(chunk.base, from: from, to: chunk.usedWords)
        }
        if let current = harvest.current {
            var from = 0
            if let partial = encoder.state.partialChunk, partial === current { from = encoder.state.partialWords }
            encoder.encodeRecords(current.base, from: from, to: harvest.currentEnd)
            encoder.state.partialChunk = current
            encoder.state.partialWords = harvest.currentEnd
        } else {
            encoder.state.partialChunk = nil
        }
        encoder.state.recorded = max(encoder.state.recorded, harvest.recorded)
        encoder.state.discarded = harvest.discarded
        encoder.state.overwritten = harvest.overwritten
        let loss = harvest.discarded &+ harvest.overwritten
        if loss != encoder.state.reportedLoss {
            encoder.state.reportedLoss = loss
            encoder.writeLossCounter(value: loss, now: now)
        }
    }

    // MARK: - Finishing

    /// Appends the statistics packet that closes a trace, after the begins
    /// of renamable async intervals that never ended.
    func finish(bufferSize: UInt64) {
        writeUnendedRenamableBegins()
        var out = buffer
        startIfNeeded(&out)
        PacketBuilder.appendStatistics(
            losses(bufferSize: bufferSize), sequenceID: Self.metadataSequenceID,
            invalidRecords: tracks.invalidRecords, to: &out)
        buffer = out
    }
}

/// Tracks shared by all sequences of a trace: counters and async intervals.
struct SharedTracks {
    var processUUID: UInt64 = 0
    var counterTracks: [UInt64: UInt64] = [:]
    var counterTracksByName: [String: UInt64] = [:]
    /// Async intervals begun in the trace and not ended, with the time they
    /// began on CLOCK_BOOTTIME.
    var asyncTracks: [UInt64: UInt64] = [:]
    /// Async intervals whose end was encoded before their begin: they began
    /// on a thread drained after the one that ended them.
    var endedEarly: Set<UInt64> = []
    /// The first async identifier of the session (streaming encoders).
    var firstIdentifier: UInt64 = 0
    /// Async intervals that begin in a snapshot (snapshot encoders).
    var snapshotBegins: Set<UInt64>?
    /// Renamable async begins waiting for their end, which names them.
    var heldBegins: [UInt64: HeldAsyncBegin] = [:]
    /// Held begins beyond this many are written early, the oldest quarter at
    /// a time, under their first name: intervals that never end must not
    /// grow the writer's memory without bound.
    static let heldBeginLimit = 16_384
    /// New names from renaming ends encoded before their begin: a name
    /// word, or the text of a name written inline.
    var renames: [UInt64: EventName] = [:]
    var nextTrackUUID: UInt64 = 16
    var invalidRecords: UInt64 = 0
    var orphanEnds: UInt64 = 0

    /// Async tracks take odd ids, counters and other tracks even ones, so
    /// neither collides and both stay short on the wire.
    static func asyncTrackUUID(_ id: UInt64) -> UInt64 { id &* 2 &+ 1 }

    /// Whether the begin of async interval `id` is, or will be, in this trace.
    func beginIsInTrace(_ id: UInt64) -> Bool {
        if asyncTracks[id] != nil || heldBegins[id] != nil { return true }
        if let snapshotBegins { return snapshotBegins.contains(id) }
        return id >= firstIdentifier
    }

    mutating func allocateTrackUUID() -> UInt64 {
        let uuid = nextTrackUUID
        nextTrackUUID += 2
        return uuid
    }
}

/// The name of an event: a name word (a literal or an interned name), or
/// text written inline in its record.
enum EventName {
    case word(UInt64)
    case text([UInt8])

    /// The name a record's name word gives; for an inline name, the text of
    /// its name argument.
    init(word: UInt64, record: UnsafePointer<UInt64>, kind: UInt64) {
        if word == ArgumentEncoding.inlineNameWord {
            let text = RecordEncoder.inlineName(record, kind: kind)
            self = .text(text.map { Array($0) } ?? [])
        } else {
            self = .word(word)
        }
    }

    var text: String {
        switch self {
        case .word(let word): return NameTable.shared.text(of: word)
        case .text(let bytes): return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Calls `body` with the name's UTF-8 bytes.
    func withUTF8<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        switch self {
        case .word(let word): return body(UnsafeRawBufferPointer(NameTable.shared.utf8(of: word)))
        case .text(let bytes): return bytes.withUnsafeBytes(body)
        }
    }
}

/// A renamable async begin, copied out of its thread's buffer until its end.
struct HeldAsyncBegin {
    /// The record, word for word.
    var words: [UInt64]
    /// When it began, on CLOCK_BOOTTIME.
    var boottime: UInt64
    /// The sequence of the thread that began it.
    var sequenceID: UInt32
}

/// One thread's encoding state.
struct SequenceState {
    let sequenceID: UInt32
    let threadUUID: UInt64
    let threadID: UInt64
    var converter = TimestampConverter(points: [])
    var threadName: String?
    var started = false
    var restartPending = false
    var lastTimestamp: UInt64 = 0
    var eventNames = InternTable()
    var annotationNames = InternTable()
    var categoryNames = InternTable()
    /// The category of the next record, from its prefix word: the
    /// category's index plus one; 0 for none.
    var pendingCategory: UInt64 = 0
    var stack: [OpenInterval] = []
    var counterCacheWord: UInt64 = .max
    var counterCacheUUID: UInt64 = 0
    var threadTimeTrack: UInt64?
    var lossTrack: UInt64?
    var reportedLoss: UInt64 = 0
    var recorded: UInt64 = 0
    var discarded: UInt64 = 0
    var overwritten: UInt64 = 0
    /// A chunk partly encoded by an earlier drain, and how far.
    var partialChunk: Chunk?
    var partialWords = 0

    init(sequenceID: UInt32, threadID: UInt64) {
        self.sequenceID = sequenceID
        self.threadID = threadID
        threadUUID = (1 << 61) | threadID
    }

    func release() {
        eventNames.release()
        annotationNames.release()
        categoryNames.release()
    }
}

struct OpenInterval {
    var usage: cstrobe_rusage?
    /// The begin's category (index plus one); 0 for none.
    var category: UInt64 = 0
}

/// Interned ids of name words on one sequence: a direct-mapped cache in
/// front of a dictionary, so repeated names cost a load and a compare.
struct InternTable {
    private static let slots = 64
    private let words: UnsafeMutablePointer<UInt64>
    private let ids: UnsafeMutablePointer<UInt64>
    private var table: [UInt64: UInt64] = [:]

    init() {
        words = .allocate(capacity: Self.slots)
        words.initialize(repeating: .max, count: Self.slots)
        ids = .allocate(capacity: Self.slots)
        ids.initialize(repeating: 0, count: Self.slots)
    }

    func release() {
        words.deallocate()
        ids.deallocate()
    }

    @inline(__always)
    private static func slot(_ word: UInt64) -> Int {
        Int(truncatingIfNeeded: (word ^ (word >> 17) ^ (word >> 48)) & UInt64(slots - 1))
    }

    /// The id of `word`, and whether it was just assigned.
    @inline(__always)
    mutating func id(for word: UInt64) -> (id: UInt64, isNew: Bool) {
        let slot = Self.slot(word)
        if words[slot] == word { return (ids[slot], false) }
        let id: UInt64
        var isNew = false
        if let known = table[word] {
            id = known
        } else {
            id = UInt64(table.count + 1)
            table[word] = id
            isNew = true
        }
        words[slot] = word
        ids[slot] = id
        return (id, isNew)
    }

    mutating func removeAll() {
        table.removeAll(keepingCapacity: true)
        words.update(repeating: .max, count: Self.slots)
    }
}

/// Encodes the records of one thread into packets; lives for one harvest.
struct RecordEncoder {
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
    private mutating func encode(record: UnsafePointer<UInt64>) {
        let header = record[0]
        let kind = RecordLayout.kind(of: header)
        let event = kind & 0x0F
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
                shared.orphanEnds += 1
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
    private mutating func ensureSequence(timestamp: UInt64) {
        guard !state.started || state.restartPending else { return }
        let timestamp = max(timestamp, state.lastTimestamp)
        PacketBuilder.appendSequenceStart(
            sequenceID: state.sequenceID, threadTrack: state.threadUUID, boottime: timestamp,
            previousPacketDropped: state.restartPending, first: !state.started, to: &out)
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
    private mutating func closeAbove(category: UInt64, timestamp: UInt64) -> Bool {
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
    private mutating func beginPacket(timestamp: UInt64) -> Int {
        let timestamp = max(timestamp, state.lastTimestamp)
        let packet = out.beginMessage(1)
        out.appendVarintField(8, timestamp - state.lastTimestamp)
        state.lastTimestamp = timestamp
        out.appendVarintField(10, UInt64(state.sequenceID))
        return packet
    }

    /// Starts an event packet whose timestamp lies before the sequence's
    /// latest: an absolute CLOCK_BOOTTIME time, which leaves the sequence's
    /// incremental clock alone. End it with `endPacket(_:_:absolute: true)`.
    private mutating func beginAbsolutePacket(boottime: UInt64) -> Int {
        let packet = out.beginMessage(1)
        out.appendVarintField(8, boottime)
        out.appendVarintField(10, UInt64(state.sequenceID))
        return packet
    }

    /// Ends an event packet: interned data it introduces, then the flag that
    /// it needs the sequence's incremental state, then for an absolute time
    /// its clock. Fields go in field-number order, as protobuf-c writes them,
    /// so both encoders agree byte for byte.
    @inline(__always)
    private mutating func endPacket(_ packet: Int, _ interning: Interning? = nil, absolute: Bool = false) {
        if let interning, !interning.isEmpty { writeInterning(interning) }
        out.appendVarintField(13, 2)  // SEQ_NEEDS_INCREMENTAL_STATE
        if absolute { out.appendVarintField(58, UInt64(PacketBuilder.boottimeClockID)) }
        out.endMessage(packet)
    }

    // MARK: Interning

    private struct Interning {
        var newCategory: (iid: UInt64, category: UInt64)?
        var newEventName: (iid: UInt64, word: UInt64)?
        var newAnnotationNames: [(iid: UInt64, word: UInt64)] = []
        var isEmpty: Bool { newEventName == nil && newAnnotationNames.isEmpty && newCategory == nil }
    }

    /// The interned id of `category` (index plus one), or 0 for none.
    @inline(__always)
    private mutating func categoryIID(_ category: UInt64, _ interning: inout Interning) -> UInt64 {
        guard category != 0 else { return 0 }
        let (iid, isNew) = state.categoryNames.id(for: category)
        if isNew { interning.newCategory = (iid, category) }
        return iid
    }

    @inline(__always)
    private mutating func eventNameIID(_ word: UInt64, _ interning: inout Interning) -> UInt64 {
        let (iid, isNew) = state.eventNames.id(for: word)
        if isNew { interning.newEventName = (iid, word) }
        return iid
    }

    private mutating func annotationNameIID(_ word: UInt64, _ interning: inout Interning) -> UInt64 {
        let (iid, isNew) = state.annotationNames.id(for: word)
        if isNew { interning.newAnnotationNames.append((iid, word)) }
        return iid
    }

    private mutating func writeInterning(_ interning: Interning) {
        guard !interning.isEmpty else { return }
        let data = out.beginMessage(12)
        if let category = interning.newCategory {
            let entry = out.beginMessage(1)
            out.appendVarintField(1, category.iid)
            out.appendStringField(2, CategoryRegistry.shared.name(of: UInt32(category.category - 1)))
            out.endMessage(entry)
        }
        if let name = interning.newEventName {
            let entry = out.beginMessage(2)
            out.appendVarintField(1, name.iid)
            out.appendStringField(2, NameTable.shared.text(of: name.word))
            out.endMessage(entry)
        }
        for name in interning.newAnnotationNames {
            let entry = out.beginMessage(3)
            out.appendVarintField(1, name.iid)
            out.appendStringField(2, ResourceUsageKeys.annotationText(name.word))
            out.endMessage(entry)
        }
        out.endMessage(data)
    }

    // MARK: Events

    /// The common case: a begin with a name and nothing else.
    @inline(__always)
    private mutating func encodePlainBegin(_ record: UnsafePointer<UInt64>, timestamp: UInt64, category: UInt64) {
        state.stack.append(OpenInterval(usage: nil, category: category))
        var interning = Interning()
        let categoryIID = categoryIID(category, &interning)
        let iid = eventNameIID(record[1], &interning)
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(11)
        if categoryIID != 0 { out.appendVarintField(3, categoryIID) }
        out.appendVarintField(9, 1)  // TYPE_SLICE_BEGIN
        out.appendVarintField(10, iid)
        out.endMessage(event)
        endPacket(packet, interning)
    }

    @inline(__always)
    private mutating func encodePlainEnd(timestamp: UInt64) {
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(11)
        out.appendVarintField(9, 2)  // TYPE_SLICE_END
        out.endMessage(event)
        endPacket(packet)
    }

    private mutating func encodeBegin(
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
        let event = out.beginMessage(11)
        if categoryIID != 0 { out.appendVarintField(3, categoryIID) }
        writeArguments(annotations)
        out.appendVarintField(9, 1)  // TYPE_SLICE_BEGIN
        out.appendVarintField(10, iid)
        if let usage, let track = state.threadTimeTrack {
            out.appendVarintField(12, usage.user_ns &+ usage.system_ns)
            out.appendVarintField(31, track)
        }
        writeFlows(annotations)
        out.endMessage(event)
        endPacket(packet, interning)
    }

    private mutating func encodeEnd(_ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64) {
        guard let open = state.stack.popLast() else {
            shared.orphanEnds += 1
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
        let event = out.beginMessage(11)
        for (iid, delta) in deltas {
            let annotation = out.beginMessage(4)
            out.appendVarintField(1, iid)
            out.appendVarintField(4, UInt64(bitPattern: delta))
            out.endMessage(annotation)
        }
        out.appendVarintField(9, 2)  // TYPE_SLICE_END
        if open.usage != nil, let end = endUsage, let track = state.threadTimeTrack {
            out.appendVarintField(12, end.user_ns &+ end.system_ns)
            out.appendVarintField(31, track)
        }
        out.endMessage(event)
        endPacket(packet, interning)
    }

    private mutating func encodeInstant(
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
        let event = out.beginMessage(11)
        if categoryIID != 0 { out.appendVarintField(3, categoryIID) }
        writeArguments(annotations)
        out.appendVarintField(9, 3)  // TYPE_INSTANT
        if inline {
            out.appendBytesField(23, Self.inlineName(record, kind: kind) ?? UnsafeRawBufferPointer(start: nil, count: 0))
        } else {
            out.appendVarintField(10, iid)
        }
        writeFlows(annotations)
        out.endMessage(event)
        endPacket(packet, interning)
    }

    private mutating func encodeCounter(
        _ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, category: UInt64
    ) {
        let unitBits = UInt8((kind >> 4) & 0x3)
        let unit = Trace.CounterUnit(rawValue: unitBits) ?? .unspecified
        let key = record[1] ^ (UInt64(unit.rawValue) << 62)
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
        let event = out.beginMessage(11)
        if categoryIID != 0 { out.appendVarintField(3, categoryIID) }
        out.appendVarintField(9, 4)  // TYPE_COUNTER
        out.appendVarintField(11, track)
        if kind & 0x0F == RecordLayout.counterInt {
            out.appendVarintField(30, record[2])
        } else {
            out.appendFixed64Field(44, record[2])
        }
        out.endMessage(event)
        endPacket(packet, interning)
    }

    private mutating func encodeAsyncBegin(
        _ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, category: UInt64
    ) {
        let id = record[2]
        guard kind & 0x0F == RecordLayout.asyncBeginRenamable else {
            return writeAsyncBegin(
                record, kind: kind, name: EventName(word: record[1], record: record, kind: kind), timestamp: timestamp,
                absolute: false, category: category)
        }
        // It may have begun before it was recorded, so it carries its own time.
        let began = timestamp - min(record[4], timestamp)
        if shared.endedEarly.contains(id) {
            // Its end, and any new name, came first.
            let name = shared.renames.removeValue(forKey: id) ?? EventName(word: record[1], record: record, kind: kind)
            return writeAsyncBegin(record, kind: kind, name: name, timestamp: began, absolute: true)
        }
        // Hold it until its end says the name.
        let length = RecordLayout.length(of: record, available: .max) ?? RecordLayout.fixedWords(kind: kind)
        shared.heldBegins[id] = HeldAsyncBegin(
            words: Array(UnsafeBufferPointer(start: record, count: length)), boottime: began,
            sequenceID: state.sequenceID)
        if shared.heldBegins.count > SharedTracks.heldBeginLimit {
            // Identifiers grow with time: the smallest are the oldest.
            for oldest in shared.heldBegins.keys.sorted().prefix(SharedTracks.heldBeginLimit / 4) {
                if let held = shared.heldBegins.removeValue(forKey: oldest) { writeHeldBegin(held, name: nil) }
            }
        }
    }

    /// Writes a held renamable begin now, on this sequence, at its own time,
    /// under `name` (its first name when nil).
    mutating func writeHeldBegin(_ begin: HeldAsyncBegin, name: EventName?) {
        begin.words.withUnsafeBufferPointer { words in
            guard let record = words.baseAddress else { return }
            let kind = RecordLayout.kind(of: record[0])
            writeAsyncBegin(
                record, kind: kind, name: name ?? EventName(word: record[1], record: record, kind: kind),
                timestamp: begin.boottime, absolute: true)
        }
    }

    private mutating func writeAsyncBegin(
        _ record: UnsafePointer<UInt64>, kind: UInt64, name: EventName, timestamp: UInt64, absolute: Bool,
        category: UInt64 = 0
    ) {
        let id = record[2]
        let track = SharedTracks.asyncTrackUUID(id)
        var interning = Interning()
        let categoryIID = categoryIID(category, &interning)
        // Names written inline are spelled out, never interned: each may be
        // new (a URL per request).
        var iid: UInt64 = 0
        if case .word(let word) = name { iid = eventNameIID(word, &interning) }
        var offset = RecordLayout.fixedWords(kind: kind)
        let parentID = RecordLayout.asyncParent(of: record, kind: kind)
        let annotations = collectAnnotations(record, kind: kind, offset: &offset, &interning)
        // An interval whose end came first is already closed.
        let endedEarly = shared.endedEarly.remove(id) != nil
        if endedEarly || shared.asyncTracks.updateValue(timestamp, forKey: id) == nil {
            // Nest under the parent's track only when the parent is described
            // in this trace; a track under an unknown parent would be lost.
            var parent = shared.processUUID
            if parentID != 0, shared.beginIsInTrace(parentID) { parent = SharedTracks.asyncTrackUUID(parentID) }
            name.withUTF8 { text in
                PacketBuilder.appendAsyncTrack(
                    uuid: track, parent: parent, name: text, sequenceID: state.sequenceID, to: &out)
            }
        }
        let packet = absolute ? beginAbsolutePacket(boottime: timestamp) : beginPacket(timestamp: timestamp)
        let message = out.beginMessage(11)
        if categoryIID != 0 { out.appendVarintField(3, categoryIID) }
        writeArguments(annotations)
        out.appendVarintField(9, 1)
        if case .text(let text) = name {
            out.appendVarintField(11, track)
            text.withUnsafeBytes { out.appendBytesField(23, $0) }
        } else {
            out.appendVarintField(10, iid)
            out.appendVarintField(11, track)
        }
        writeFlows(annotations)
        out.endMessage(message)
        endPacket(packet, interning, absolute: absolute)
    }

    private mutating func encodeAsyncEnd(_ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64) {
        let id = record[1]
        let explicit = kind & 0x0F == RecordLayout.asyncEndExplicit
        let newName = explicit && record[2] != 0 ? EventName(word: record[2], record: record, kind: kind) : nil
        let endedAgo = explicit ? record[3] : 0
        // A new name that comes too late for the begin, written already
        // (held too long), is kept as the argument `name`.
        var lateName: EventName?
        if let held = shared.heldBegins.removeValue(forKey: id) {
            writeHeldBegin(held, name: newName)
        } else {
            lateName = newName
        }
        var ended = timestamp - min(endedAgo, timestamp)
        if let began = shared.asyncTracks.removeValue(forKey: id) {
            ended = max(ended, began)
        } else {
            lateName = nil
            // Its begin is on a thread not encoded yet: write the end now, in
            // this sequence's time order, and the begin when it comes.
            guard shared.beginIsInTrace(id) else {
                shared.orphanEnds += 1
                return
            }
            shared.endedEarly.insert(id)
            if let newName { shared.renames[id] = newName }
        }
        var interning = Interning()
        var annotations = Annotations()
        if kind & 0xF0 != 0 {
            var offset = RecordLayout.fixedWords(kind: kind)
            annotations = collectAnnotations(record, kind: kind, offset: &offset, &interning)
        }
        let lateNameKey = lateName.map { _ in annotationNameIID(Self.nameKey.word, &interning) }
        // An end in the past takes an absolute time, as a held begin does.
        let absolute = endedAgo > 0
        let packet = absolute ? beginAbsolutePacket(boottime: ended) : beginPacket(timestamp: timestamp)
        let event = out.beginMessage(11)
        writeArguments(annotations)
        if let lateName, let lateNameKey {
            let annotation = out.beginMessage(4)
            out.appendVarintField(1, lateNameKey)
            out.appendStringField(6, lateName.text)
            out.endMessage(annotation)
        }
        out.appendVarintField(9, 2)
        out.appendVarintField(11, SharedTracks.asyncTrackUUID(id))
        writeFlows(annotations)
        out.endMessage(event)
        endPacket(packet, interning, absolute: absolute)
    }

    /// The argument key of a name that came too late for its begin.
    private static let nameKey = Trace.Name("name")

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
                kind: .counter(name: "strobe.lost_events", unit: .count, threadTime: false),
                sequenceID: state.sequenceID, to: &out)
        }
        let timestamp = max(now, state.lastTimestamp)
        ensureSequence(timestamp: timestamp)
        let packet = beginPacket(timestamp: timestamp)
        let event = out.beginMessage(11)
        out.appendVarintField(9, 4)
        out.appendVarintField(11, track)
        out.appendVarintField(30, value)
        out.endMessage(event)
        endPacket(packet)
    }

    private mutating func counterTrack(word: UInt64, unit: Trace.CounterUnit, key: UInt64) -> UInt64 {
        if let uuid = shared.counterTracks[key] { return uuid }
        let name = NameTable.shared.text(of: word)
        let textKey = "\(unit.rawValue):\(name)"
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

    private mutating func ensureThreadTimeTrack() {
        guard state.threadTimeTrack == nil else { return }
        let uuid = shared.allocateTrackUUID()
        state.threadTimeTrack = uuid
        PacketBuilder.appendTrack(
            uuid: uuid, parent: state.threadUUID,
            kind: .counter(name: "thread_time", unit: .nanoseconds, threadTime: true),
            sequenceID: state.sequenceID, to: &out)
    }

    // MARK: Flows and arguments

    private struct Annotations {
        var flow: UInt64?
        var terminatingFlow: UInt64?
        /// Each argument: its interned key, or 0 and the key's text when
        /// the key is written inline.
        var arguments: [(iid: UInt64, tag: UInt64, payload: UnsafePointer<UInt64>, key: UnsafeRawBufferPointer?)] = []
    }

    /// The text of the argument that holds the name of the record, when it
    /// has one (its name word is `ArgumentEncoding.inlineNameWord`).
    static func inlineName(_ record: UnsafePointer<UInt64>, kind: UInt64) -> UnsafeRawBufferPointer? {
        var offset = RecordLayout.fixedWords(kind: kind)
        if kind & RecordLayout.withResourceUsage != 0, kind & 0x0F == RecordLayout.begin {
            offset += RecordLayout.resourceUsageWords
        }
        if kind & RecordLayout.withFlow != 0 { offset += 1 }
        if kind & RecordLayout.withTerminatingFlow != 0 { offset += 1 }
        guard kind & RecordLayout.withArguments != 0 else { return nil }
        var found: UnsafeRawBufferPointer?
        forEachArgument(record, at: offset) { key, tag, payload, _ in
            if key == ArgumentEncoding.nameKey, tag & 0xFF == ArgumentEncoding.stringTag {
                found = UnsafeRawBufferPointer(start: payload, count: Int(tag >> 8))
            }
        }
        return found
    }

    /// Calls `body` with each argument of the argument block at `offset`:
    /// key word, tag, payload and, for an inline key, the key's text.
    /// Returns the offset past the block.
    @discardableResult
    private static func forEachArgument(
        _ record: UnsafePointer<UInt64>, at offset: Int,
        _ body: (UInt64, UInt64, UnsafePointer<UInt64>, UnsafeRawBufferPointer?) -> Void
    ) -> Int {
        let words = Int(record[offset])
        var position = offset + 1
        let end = position + words
        while position + 2 <= end {
            let key = record[position]
            let tag = record[position + 1]
            let payloadWords = ArgumentEncoding.payloadWords(tag: tag)
            let inline = ArgumentEncoding.isInlineKey(key)
            let keyLength = inline ? Int(key & 0xFFFF) : 0
            guard position + 2 + payloadWords + (keyLength + 7) / 8 <= end else { break }
            let payload = record + position + 2
            let keyText = inline ? UnsafeRawBufferPointer(start: payload + payloadWords, count: keyLength) : nil
            body(key, tag, payload, keyText)
            position += 2 + payloadWords + (keyLength + 7) / 8
        }
        return end
    }

    private mutating func collectAnnotations(
        _ record: UnsafePointer<UInt64>, kind: UInt64, offset: inout Int, _ interning: inout Interning
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
            // At most one argument per two words of the block.
            result.arguments.reserveCapacity(min(Int(record[offset]) / 2, 16))
            offset = Self.forEachArgument(record, at: offset) { key, tag, payload, keyText in
                if key == ArgumentEncoding.nameKey { return }  // the event's own name
                if keyText != nil {
                    result.arguments.append((0, tag, payload, keyText))
                } else {
                    result.arguments.append((annotationNameIID(key, &interning), tag, payload, nil))
                }
            }
        }
        return result
    }

    private mutating func writeArguments(_ annotations: Annotations) {
        for argument in annotations.arguments {
            let annotation = out.beginMessage(4)
            if argument.key == nil { out.appendVarintField(1, argument.iid) }
            switch argument.tag & 0xFF {
            case ArgumentEncoding.intTag:
                out.appendVarintField(4, argument.payload[0])
            case ArgumentEncoding.doubleTag:
                out.appendFixed64Field(5, argument.payload[0])
            case ArgumentEncoding.boolTag:
                out.appendVarintField(2, argument.payload[0] != 0 ? 1 : 0)
            case ArgumentEncoding.hexTag:
                writeHex(argument.payload, words: Int(argument.tag >> 8))
            default:
                let length = Int(argument.tag >> 8)
                out.appendBytesField(6, UnsafeRawBufferPointer(start: UnsafeRawPointer(argument.payload), count: length))
            }
            if let key = argument.key { out.appendBytesField(10, key) }
            out.endMessage(annotation)
        }
    }

    /// Writes `words` identifier words as one string of lowercase hex, 16
    /// digits a word.
    private mutating func writeHex(_ payload: UnsafePointer<UInt64>, words: Int) {
        let digits: StaticString = "0123456789abcdef"
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(16 * words, 1)) { text in
            for word in 0..<words {
                let value = payload[word]
                for index in 0..<16 {
                    text[word * 16 + index] = digits.utf8Start[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
                }
            }
            out.appendBytesField(6, UnsafeRawBufferPointer(start: text.baseAddress, count: 16 * words))
        }
    }

    private mutating func writeFlows(_ annotations: Annotations) {
        if let flow = annotations.flow { out.appendFixed64Field(47, flow) }
        if let flow = annotations.terminatingFlow { out.appendFixed64Field(48, flow) }
    }
}

/// The rusage attachment: loading it and the argument keys of its deltas.
enum ResourceUsageKeys {
    static func load(_ words: UnsafePointer<UInt64>) -> cstrobe_rusage {
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
    static let keys: [String] = [
        "rusage.user_ns", "rusage.system_ns", "rusage.voluntary_switches",
        "rusage.involuntary_switches", "rusage.minor_faults", "rusage.major_faults",
    ]

    /// Reserved name words for the keys (never valid name words).
    static func keyWord(_ index: Int) -> UInt64 { 0xFFFE_0000_0000_0000 | UInt64(index) }

    static func annotationText(_ word: UInt64) -> String {
        if word & 0xFFFF_0000_0000_0000 == 0xFFFE_0000_0000_0000 {
            let index = Int(word & 0xFFFF)
            return index < keys.count ? keys[index] : ""
        }
        return NameTable.shared.text(of: word)
    }

    static func deltas(begin: cstrobe_rusage, end: cstrobe_rusage) -> [(UInt64, Int64)] {
        func delta(_ a: UInt64, _ b: UInt64) -> Int64 { Int64(bitPattern: b &- a) }
        return [
            (keyWord(0), delta(begin.user_ns, end.user_ns)),
            (keyWord(1), delta(begin.system_ns, end.system_ns)),
            (keyWord(2), delta(begin.voluntary_switches, end.voluntary_switches)),
            (keyWord(3), delta(begin.involuntary_switches, end.involuntary_switches)),
            (keyWord(4), delta(begin.minor_faults, end.minor_faults)),
            (keyWord(5), delta(begin.major_faults, end.major_faults)),
        ]
    }
}
