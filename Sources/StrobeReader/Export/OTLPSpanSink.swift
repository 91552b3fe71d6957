/// What the streaming OTLP export knows of a trace before its second pass:
/// the ids' seed, the offset to Unix time, and each track's thread and
/// parent (from ``TraceScan``).
struct OTLPStreamContext {
    var seed: UInt64
    var traceID: [UInt8]
    var offset: UInt64
    var resourceAttributes: [(String, TraceArgument)]
    var resource: [UInt8]
    var tracks: [UInt64: TraceTrack]
    var threadNames: [Int64: String]
    /// Tracks with a slice on them.
    var sliceTracks: Set<UInt64>
    /// Tracks with an instant on them.
    var instantTracks: Set<UInt64>
    /// Tracks with slices under which a track with slices sits: the spans
    /// at the top of that track take their parent among theirs.
    var parentTracks: Set<UInt64>

    init(scan: TraceScan, unixOffset: UInt64?) {
        seed = OTLPSpans.seed(origin: scan.origin, pid: scan.process?.pid, first: scan.firstTime ?? .max)
        traceID = OTLPSpans.bytes(OTLPSpans.mix(seed, 1)) + OTLPSpans.bytes(OTLPSpans.mix(seed, 2))
        offset = unixOffset ?? scan.realtimeOffset ?? 0
        resourceAttributes = OTLPExport.resourceAttributes(origin: scan.origin, process: scan.process)
        resource = OTLPExport.resource(origin: scan.origin, process: scan.process)
        tracks = scan.tracks
        threadNames = Dictionary(scan.threads.map { ($0.tid, $0.name) }, uniquingKeysWith: { first, _ in first })
        sliceTracks = scan.sliceTracks
        instantTracks = scan.instantTracks
        var parents: Set<UInt64> = []
        for uuid in scan.sliceTracks {
            if let parent = scan.tracks[uuid]?.parent, scan.sliceTracks.contains(parent) { parents.insert(parent) }
        }
        parentTracks = parents
    }
}

/// Turns a streamed trace's intervals and instants into spans as
/// ``OTLPSpans`` does for a parsed trace (the same ids, parents, links and
/// events), and hands them to a batcher as they end.
///
/// What it keeps: per track, the last start (for ids) and its thread's
/// attributes; for each track that is another's parent, the starts and ids
/// of its spans; the spans that carry flow ids, which are linked in time
/// order once the trace ends; and the top spans of a track whose parent
/// track has not yet begun a span.
struct OTLPSpanSink: IntervalSink {
    /// A span with what is needed to link it by its flows.
    struct Held {
        var record: OTLPSpanRecord
        var depth: Int
        var serial: Int
        var flowIDs: [UInt64]
        var terminatingFlowIDs: [UInt64]
    }

    /// One slot's (track's) state.
    struct Slot {
        var track: UInt64
        var lastStart: UInt64 = 0
        var lastOrdinal: UInt64 = 0
        var hasLast = false
        var aloneTime: UInt64 = 0
        var aloneCount: UInt64 = 0
        var hasAlone = false
        var tid: Int64?
        var threadName: String?
        var threadAttributes: [UInt8]
        /// The same, kept in the batcher's pool.
        var thread: OTLPBatcher.Piece
        /// The track under which this one sits, when that has slices.
        var parentTrack: UInt64?
        var keepsHistory: Bool
    }

    static var placesInstants: Bool { true }
    static var keepsArguments: Bool { true }

    let context: OTLPStreamContext
    let names: NameTable
    var batcher: OTLPBatcher
    private var slots: [Slot] = []
    private var histories: [UInt64: [(start: UInt64, spanID: UInt64)]] = [:]
    private var orphans: [UInt64: [Held]] = [:]
    private var linked: [Held] = []
    private var serial = 0
    /// Each name's field in a span, encoded, by name index.
    private var nameFields: [OTLPBatcher.Piece] = []

    /// The most spans of one parent track remembered for its children.
    static let historyLimit = 4096

    init(context: OTLPStreamContext, names: NameTable, batcher: OTLPBatcher) {
        self.context = context
        self.names = names
        self.batcher = batcher
    }

    func places(_ instant: Instant) -> Bool {
        !OTLPSpans.skippedInstants.contains(instant.name)
    }

    func mayPlaceInstants(on track: UInt64) -> Bool {
        context.instantTracks.contains(track)
    }

    private mutating func prepare(_ slot: Int, track: UInt64) {
        if slot < slots.count, slots[slot].track == track { return }
        let described = context.tracks[track]
        let tid = described?.kind == .thread ? described?.tid : nil
        let name = tid.flatMap { context.threadNames[$0] }
        var parent: UInt64?
        if let candidate = described?.parent, context.sliceTracks.contains(candidate) { parent = candidate }
        let attributes = OTLPSpanRecord.threadAttributes(tid: tid, name: name)
        let state = Slot(
            track: track, tid: tid, threadName: name, threadAttributes: attributes,
            thread: batcher.keep(attributes), parentTrack: parent, keepsHistory: context.parentTracks.contains(track))
        while slots.count <= slot { slots.append(state) }
        slots[slot] = state
    }

    mutating func began(
        slot: Int, track: UInt64, name: UInt32, start: UInt64, depth: Int, below: IntervalMark?
    ) -> IntervalMark {
        prepare(slot, track: track)
        // Unique per trace: the track, the start, and how many spans
        // before it had both (they come one after another on a track).
        var ordinal: UInt64 = 0
        if slots[slot].hasLast, slots[slot].lastStart == start { ordinal = slots[slot].lastOrdinal + 1 }
        slots[slot].lastStart = start
        slots[slot].lastOrdinal = ordinal
        slots[slot].hasLast = true
        let id = OTLPSpans.mix(OTLPSpans.mix(OTLPSpans.mix(context.seed, track), start), ordinal) | 1
        serial += 1
        if slots[slot].keepsHistory { remember(track: track, start: start, spanID: id) }
        return IntervalMark(id: id, parentID: depth > 0 ? below?.id ?? 0 : 0, serial: serial)
    }

    mutating func ended(_ interval: StreamedInterval, slot: Int, track: UInt64) {
        prepare(slot, track: track)
        let details = interval.details
        if !batcher.wantsJSON, interval.mark.parentID != 0 || slots[slot].parentTrack == nil,
            details?.events.isEmpty ?? true, details?.flowIDs.isEmpty ?? true,
            details?.terminatingFlowIDs.isEmpty ?? true
        {
            // The common span: written in place.
            batcher.writeSpan(
                spanID: interval.mark.id, parentID: interval.mark.parentID, name: nameField(interval.name),
                start: interval.start, end: interval.end ?? interval.start, thread: slots[slot].thread,
                isUnfinished: interval.end == nil,
                arguments: interval.arguments)
            return
        }
        let state = slots[slot]
        var record = OTLPSpanRecord(
            spanID: interval.mark.id, parentID: interval.mark.parentID, name: names[interval.name],
            start: interval.start, end: interval.end ?? interval.start, tid: state.tid, threadName: state.threadName,
            threadAttributes: state.threadAttributes, arguments: interval.arguments.dictionary,
            isUnfinished: interval.end == nil, events: OTLPSpanRecord.inTimeOrder(interval.events))
        let held = Held(
            record: record, depth: interval.depth, serial: interval.mark.serial, flowIDs: interval.flowIDs,
            terminatingFlowIDs: interval.terminatingFlowIDs)
        if record.parentID == 0, let parentTrack = state.parentTrack {
            // An async interval's track sits under its parent interval's
            // track: a span at the top of such a track is a child of the
            // last span on the parent track that began at or before it
            // (else the first), once that track has begun one.
            guard let history = histories[parentTrack], let first = history.first else {
                orphans[parentTrack, default: []].append(held)
                return
            }
            record.parentID = history.last { $0.start <= record.start }?.spanID ?? first.spanID
            var adopted = held
            adopted.record = record
            emit(adopted)
            return
        }
        emit(held)
    }

    mutating func alone(_ instant: Instant, slot: Int) {
        prepare(slot, track: instant.track)
        // Unique per trace: the track, the time, and how many instants
        // without a span before it had both.
        let key = OTLPSpans.mix(
            OTLPSpans.mix(OTLPSpans.mix(context.seed, instant.track), instant.time), 0x696e_7374)
        var ordinal: UInt64 = 0
        if slots[slot].hasAlone, slots[slot].aloneTime == instant.time { ordinal = slots[slot].aloneCount }
        slots[slot].aloneTime = instant.time
        slots[slot].aloneCount = ordinal + 1
        slots[slot].hasAlone = true
        let state = slots[slot]
        batcher.write(
            OTLPSpanRecord(
                spanID: OTLPSpans.mix(key, ordinal) | 1, name: instant.name, start: instant.time, end: instant.time,
                tid: state.tid, threadName: state.threadName, threadAttributes: state.threadAttributes,
                arguments: [:], isInstant: true, events: [instant]))
    }

    /// The field of the name at `index`, encoded once and kept.
    @inline(__always)
    private mutating func nameField(_ index: UInt32) -> OTLPBatcher.Piece {
        let position = Int(index)
        if position < nameFields.count, nameFields[position].count >= 0 { return nameFields[position] }
        return encodeName(index)
    }

    private mutating func encodeName(_ index: UInt32) -> OTLPBatcher.Piece {
        let position = Int(index)
        if position >= nameFields.count {
            nameFields += repeatElement(OTLPBatcher.Piece(offset: 0, count: -1), count: position - nameFields.count + 1)
        }
        var field = ProtobufWriter()
        field.string(5, names[index])
        nameFields[position] = batcher.keep(field.bytes)
        return nameFields[position]
    }

    private mutating func remember(track: UInt64, start: UInt64, spanID: UInt64) {
        var history = histories.removeValue(forKey: track) ?? []
        history.append((start, spanID))
        if history.count > Self.historyLimit { history.remove(at: 1) }
        let waiting = history.count == 1 ? orphans.removeValue(forKey: track) : nil
        histories[track] = history
        for var orphan in waiting ?? [] {
            orphan.record.parentID = spanID
            emit(orphan)
        }
    }

    /// A span with flow ids waits for the end of the trace; any other goes
    /// to the batcher.
    private mutating func emit(_ held: Held) {
        if held.flowIDs.isEmpty, held.terminatingFlowIDs.isEmpty {
            batcher.write(held.record)
        } else {
            linked.append(held)
        }
    }

    /// Links the spans that carry flow ids, each to the span before it (in
    /// time) that carried the same id, and writes them with any span still
    /// waiting for its parent track.
    mutating func finish() {
        for (_, waiting) in orphans.sorted(by: { $0.key < $1.key }) {
            for orphan in waiting { emit(orphan) }
        }
        orphans = [:]
        linked.sort { ($0.record.start, $0.depth, $0.serial) < ($1.record.start, $1.depth, $1.serial) }
        var last: [UInt64: UInt64] = [:]
        for index in linked.indices {
            let held = linked[index]
            for id in Set(held.flowIDs + held.terminatingFlowIDs).sorted() {
                if let previous = last[id], previous != held.record.spanID {
                    linked[index].record.links.append(previous)
                }
                last[id] = held.terminatingFlowIDs.contains(id) ? nil : held.record.spanID
            }
        }
        for held in linked { batcher.write(held.record) }
        linked = []
        batcher.finish()
    }
}
