import PerfettoWire

/// The store of a streaming read: for each track only its open intervals,
/// each handed to the sink as it ends, so that memory grows with the
/// intervals open at once, not with the trace.
///
/// It matches begins and ends as ``RecordStore`` does (a stack per track,
/// the arguments of an end merged over those of its begin). Slices on
/// explicit tracks, which may come from several sequences out of time
/// order, wait in their track's queue until it holds as many begins as
/// ends, then go through in time order; whatever still waits at the end of
/// the trace goes through then, as a whole-file read does.
///
/// When the sink places instants, each instant goes into the innermost
/// interval of its track that holds its time, as ``OTLPExport`` places
/// them: among the interval that began last at or before it and those
/// below that one, the innermost that ends at or after it. An interval
/// that never ended holds only the instants at its start.
struct IntervalStream<Sink: IntervalSink>: TraceEventStore {
    typealias Interval = StreamedInterval

    /// A slice or instant waiting in an explicit track's queue.
    enum Waiting {
        case slice(DeferredSlice)
        case instant(Instant)

        var time: UInt64 {
            switch self {
            case .slice(let slice): slice.time
            case .instant(let instant): instant.time
            }
        }
    }

    /// One track's state.
    struct TrackState {
        var uuid: UInt64
        var open: [Interval] = []
        /// Intervals that ended at `heldTime`, in the order they ended,
        /// kept while an instant at that time may still come.
        var ended: [Interval] = []
        /// `ended[chainStart...]` ended since the track's last begin: only
        /// they can hold an instant.
        var chainStart = 0
        /// Instants at `heldTime`, placed once the track moves past it.
        var pending: [Instant] = []
        var heldTime: UInt64 = 0
        /// An explicit track's slices and instants, in time order.
        var waiting: [(item: Waiting, order: Int)] = []

        /// Whether ends wait for the track to move on: only on a track
        /// that has instants to place.
        var holdsEnds: Bool

        var isHolding: Bool { !ended.isEmpty || !pending.isEmpty }
    }

    static var keepsCounters: Bool { false }
    static var keepsSliceArguments: Bool { Sink.keepsArguments }
    var isFull: Bool { false }

    var sink: Sink
    var unmatchedEnds = 0
    private(set) var tracks: [TrackState] = []
    private var slots: [UInt64: Int] = [:]
    private var currentTrack: UInt64 = 0
    private var currentSlot = -1
    private var arrivals = 0

    init(sink: Sink) {
        self.sink = sink
    }

    /// The slot of `track`, a new one for a track not seen before.
    @inline(__always)
    mutating func slot(for track: UInt64) -> Int {
        if track == currentTrack, currentSlot >= 0 { return currentSlot }
        let slot: Int
        if let known = slots[track] {
            slot = known
        } else {
            slot = tracks.count
            tracks.append(TrackState(uuid: track, holdsEnds: Sink.placesInstants && sink.mayPlaceInstants(on: track)))
            slots[track] = slot
        }
        currentTrack = track
        currentSlot = slot
        return slot
    }

    // MARK: Events

    mutating func openInterval(track: UInt64, time: UInt64, name: UInt32) {
        push(slot(for: track), time: time, name: name, arguments: ArgumentList(), flows: [], terminating: [])
    }

    mutating func closeInterval(track: UInt64, time: UInt64) {
        pop(slot(for: track), time: time, arguments: ArgumentList(), flows: [], terminating: [])
    }

    mutating func begin(
        track: UInt64, time: UInt64, name: UInt32, arguments: ArgumentList, flows: [UInt64],
        terminating: [UInt64], threadTime: Double?, categories: [String]
    ) {
        push(slot(for: track), time: time, name: name, arguments: arguments, flows: flows, terminating: terminating)
    }

    mutating func end(
        track: UInt64, time: UInt64, arguments: ArgumentList, flows: [UInt64], terminating: [UInt64],
        threadTime: Double?
    ) {
        pop(slot(for: track), time: time, arguments: arguments, flows: flows, terminating: terminating)
    }

    mutating func deferSlice(_ slice: DeferredSlice) {
        let slot = slot(for: slice.track)
        enqueue(.slice(slice), slot: slot)
        if isBalanced(tracks[slot].waiting) { release(slot) }
    }

    mutating func instant(_ instant: Instant) {
        guard Sink.placesInstants, sink.places(instant) else { return }
        let slot = slot(for: instant.track)
        if tracks[slot].waiting.isEmpty {
            place(instant, slot: slot)
        } else {
            enqueue(.instant(instant), slot: slot)
            if isBalanced(tracks[slot].waiting) { release(slot) }
        }
    }

    mutating func counter(track: UInt64, time: UInt64, value: Double) {}

    // MARK: Stacks

    @inline(__always)
    private mutating func push(
        _ slot: Int, time: UInt64, name: UInt32, arguments: ArgumentList, flows: [UInt64],
        terminating: [UInt64]
    ) {
        if Sink.placesInstants, tracks[slot].isHolding {
            if tracks[slot].heldTime != time {
                flush(slot)
            } else {
                tracks[slot].chainStart = tracks[slot].ended.count
            }
        }
        let depth = tracks[slot].open.count
        let mark = sink.began(
            slot: slot, track: tracks[slot].uuid, name: name, start: time, depth: depth,
            below: tracks[slot].open.last?.mark)
        var details: StreamedDetails?
        if !flows.isEmpty || !terminating.isEmpty {
            let box = StreamedDetails()
            box.flowIDs = flows
            box.terminatingFlowIDs = terminating
            details = box
        }
        tracks[slot].open.append(
            Interval(
                name: name, start: time, end: nil, depth: depth, arguments: arguments, details: details, mark: mark))
    }

    @inline(__always)
    private mutating func pop(
        _ slot: Int, time: UInt64, arguments: ArgumentList, flows: [UInt64], terminating: [UInt64]
    ) {
        if Sink.placesInstants, tracks[slot].isHolding, tracks[slot].heldTime != time { flush(slot) }
        guard var interval = tracks[slot].open.popLast() else {
            unmatchedEnds += 1
            return
        }
        interval.end = time >= interval.start ? time : interval.start
        if !arguments.isEmpty { Self.mergeEndArguments(arguments, into: &interval.arguments) }
        if !flows.isEmpty { interval.boxed().flowIDs += flows }
        if !terminating.isEmpty { interval.boxed().terminatingFlowIDs += terminating }
        if tracks[slot].holdsEnds {
            tracks[slot].heldTime = time
            tracks[slot].ended.append(interval)
        } else {
            sink.ended(interval, slot: slot, track: tracks[slot].uuid)
        }
    }

    /// An end's arguments over its begin's, as ``RecordStore`` merges them:
    /// the resource-usage readings go to the interval's usage, not here.
    static func mergeEndArguments(_ arguments: ArgumentList, into merged: inout ArgumentList) {
        for (key, value) in arguments.pairs {
            if ResourceUsageArgument(name: key) != nil, case .int = value { continue }
            merged.append(key, value)
        }
    }

    // MARK: Instants

    /// Holds `instant` until its track moves past its time.
    private mutating func place(_ instant: Instant, slot: Int) {
        tracks[slot].holdsEnds = true
        if tracks[slot].isHolding, tracks[slot].heldTime != instant.time { flush(slot) }
        tracks[slot].heldTime = instant.time
        tracks[slot].pending.append(instant)
    }

    /// Places the track's pending instants, then hands on the intervals
    /// that ended at their time.
    private mutating func flush(_ slot: Int) {
        if !tracks[slot].pending.isEmpty {
            let pending = tracks[slot].pending
            tracks[slot].pending.removeAll(keepingCapacity: true)
            for instant in pending { settle(instant, slot: slot) }
        }
        let uuid = tracks[slot].uuid
        for index in tracks[slot].ended.indices { sink.ended(tracks[slot].ended[index], slot: slot, track: uuid) }
        tracks[slot].ended.removeAll(keepingCapacity: true)
        tracks[slot].chainStart = 0
    }

    /// Puts `instant` in the innermost interval that holds it: one that
    /// ended at its time since the track's last begin, else the innermost
    /// open one, which ends later (unless it never ends: see `finish`).
    private mutating func settle(_ instant: Instant, slot: Int) {
        let time = instant.time
        var index = tracks[slot].chainStart
        while index < tracks[slot].ended.count {
            let ended = tracks[slot].ended[index]
            if ended.start <= time, (ended.end ?? 0) >= time {
                tracks[slot].ended[index].boxed().events.append(instant)
                return
            }
            index += 1
        }
        var level = tracks[slot].open.count - 1
        while level >= 0 {
            if tracks[slot].open[level].start <= time {
                tracks[slot].open[level].boxed().events.append(instant)
                return
            }
            level -= 1
        }
        sink.alone(instant, slot: slot)
    }

    // MARK: Explicit tracks

    private mutating func enqueue(_ item: Waiting, slot: Int) {
        arrivals += 1
        let time = item.time
        var position = tracks[slot].waiting.count
        while position > 0, tracks[slot].waiting[position - 1].item.time > time { position -= 1 }
        tracks[slot].waiting.insert((item, arrivals), at: position)
    }

    /// Whether every end of `waiting` follows a begin of it and every begin
    /// has its end: then nothing later can change how they match.
    private func isBalanced(_ waiting: [(item: Waiting, order: Int)]) -> Bool {
        var depth = 0
        for (item, _) in waiting {
            guard case .slice(let slice) = item else { continue }
            if slice.type == PerfettoWire.EventType.sliceBegin {
                depth += 1
            } else {
                if depth == 0 { return false }
                depth -= 1
            }
        }
        return depth == 0
    }

    /// Takes the track's queue through in time order.
    private mutating func release(_ slot: Int) {
        let waiting = tracks[slot].waiting
        tracks[slot].waiting = []
        for (item, _) in waiting {
            switch item {
            case .instant(let instant):
                place(instant, slot: slot)
            case .slice(let slice) where slice.type == PerfettoWire.EventType.sliceBegin:
                push(
                    slot, time: slice.time, name: slice.name, arguments: slice.arguments, flows: slice.flowIDs,
                    terminating: slice.terminatingFlowIDs)
            case .slice(let slice):
                pop(
                    slot, time: slice.time, arguments: slice.arguments, flows: slice.flowIDs,
                    terminating: slice.terminatingFlowIDs)
            }
        }
        // An explicit track (an async interval's) rarely sees more events.
        if Sink.placesInstants, tracks[slot].isHolding { flush(slot) }
    }

    // MARK: The end

    /// Releases every queue, places every instant, and hands on the
    /// intervals that never ended, as ended with no end time.
    mutating func finish() {
        for slot in tracks.indices where !tracks[slot].waiting.isEmpty { release(slot) }
        for slot in tracks.indices {
            if Sink.placesInstants, tracks[slot].isHolding { flush(slot) }
            let uuid = tracks[slot].uuid
            while let interval = tracks[slot].open.popLast() {
                // It never ended: it holds only the instants at its start;
                // the others go to the interval below, or stand alone.
                let start = interval.start
                if let details = interval.details, details.events.contains(where: { $0.time != start }) {
                    let moved = details.events.filter { $0.time != start }
                    details.events.removeAll { $0.time != start }
                    if tracks[slot].open.isEmpty {
                        for instant in moved { sink.alone(instant, slot: slot) }
                    } else {
                        tracks[slot].open[tracks[slot].open.count - 1].boxed().events += moved
                    }
                }
                sink.ended(interval, slot: slot, track: uuid)
            }
        }
    }
}
