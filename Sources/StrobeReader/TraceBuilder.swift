/// Turns packets into a ``ParsedTrace``: framing, sequence state, clocks,
/// tracks, and slices.
struct TraceBuilder {
    let source: String

    private static let boottime: UInt32 = 6
    private static let flagCleared: UInt32 = 1
    private static let flagNeedsState: UInt32 = 2

    private struct SequenceState {
        var valid = false
        var eventNames: [UInt64: String] = [:]
        var annotationNames: [UInt64: String] = [:]
        var defaultClock: UInt32?
        var defaultTrack: UInt64?
        /// Running values of incremental clocks, with their unit.
        var incremental: [UInt32: (value: UInt64, multiplier: UInt64)] = [:]
        /// Readings of sequence-scoped clocks paired with BOOTTIME.
        var clockPairs: [UInt32: [(clock: UInt64, boottime: UInt64)]] = [:]
        var lastTimestamp: UInt64 = 0
    }

    private struct TrackInfo {
        var fields: PacketFields.TrackFields
    }

    /// An open interval on a track stack: its index in `intervals` and the
    /// thread-time reading at its begin.
    private struct OpenSlice {
        var index: Int
        var threadTimeAtBegin: Double?
    }

    /// A slice event on an explicit track, kept until all are read, then
    /// ordered by time across sequences.
    private struct DeferredEvent {
        var time: UInt64
        var order: Int
        var type: UInt64
        var track: UInt64
        var name: String
        var arguments: [String: TraceArgument]
        var flowIDs: [UInt64]
        var terminatingFlowIDs: [UInt64]
    }

    private var fields = PacketFields()
    private var sequences: [UInt32: SequenceState] = [:]
    private var globalPairs: [UInt32: [(clock: UInt64, boottime: UInt64)]] = [:]
    private var trackInfo: [UInt64: PacketFields.TrackFields] = [:]
    private var stacks: [UInt64: [OpenSlice]] = [:]
    private var intervals: [Interval] = []
    private var instants: [Instant] = []
    private var counterSamples: [UInt64: [CounterSample]] = [:]
    private var deferred: [DeferredEvent] = []
    private var loss = DataLoss()
    private var issues: [TraceReadError] = []
    private var truncation: TraceReadError?
    private var packetCount = 0
    private var eventOrder = 0
    private var statistics: PacketFields.StatisticsFields?
    private var threadTimeTracks: Set<UInt64> = []

    init(source: String) {
        self.source = source
    }

    // MARK: Framing

    mutating func consume(_ base: UnsafePointer<UInt8>, count: Int) {
        var reader = WireReader(base, from: 0, to: count)
        while !reader.isAtEnd {
            let offset = reader.position
            guard let key = reader.varint() else {
                truncation = TraceReadError(file: source, offset: offset, problem: "cut off inside a packet's field tag")
                return
            }
            guard key == 0x0A else {
                if key & 7 <= 5, key >> 3 != 0, reader.skip(wireType: key & 7) {
                    // A field of Trace other than `packet`: not ours to read.
                    issues.append(TraceReadError(file: source, offset: offset, problem: "skipped unknown Trace field \(key >> 3)"))
                    continue
                }
                truncation = TraceReadError(
                    file: source, offset: offset,
                    problem: "expected a packet (field 1, length-delimited), found tag 0x\(String(key, radix: 16))")
                return
            }
            let lengthOffset = reader.position
            guard let length = reader.varint() else {
                truncation = TraceReadError(file: source, offset: offset, problem: "cut off inside a packet's length")
                return
            }
            guard length <= UInt64(count - reader.position) else {
                truncation = TraceReadError(
                    file: source, offset: offset,
                    problem: "packet of \(length) bytes (length at byte \(lengthOffset)) runs past the end of the file at byte \(count)")
                return
            }
            let range = reader.position..<(reader.position + Int(length))
            reader.position = range.upperBound
            packetCount += 1
            fields.reset()
            if !FastPacketDecoder.decode(base, range, into: &fields) {
                fields.reset()
                guard ProtobufCPacketDecoder.decode(base, range, into: &fields) else {
                    issues.append(TraceReadError(file: source, offset: offset, problem: "packet does not decode; skipped"))
                    continue
                }
            }
            process(offset: offset)
        }
    }

    // MARK: Packets

    private mutating func process(offset: Int) {
        let sequenceID = fields.sequenceID ?? 0
        var state = sequences.removeValue(forKey: sequenceID) ?? SequenceState()
        defer { sequences[sequenceID] = state }

        if fields.previousPacketDropped && !fields.firstPacketOnSequence { loss.droppedPacketMarks += 1 }
        if fields.incrementalStateCleared || fields.sequenceFlags & Self.flagCleared != 0 {
            state.valid = true
            state.eventNames.removeAll(keepingCapacity: true)
            state.annotationNames.removeAll(keepingCapacity: true)
            state.defaultClock = nil
            state.defaultTrack = nil
            state.incremental.removeAll()
        } else if fields.previousPacketDropped {
            state.valid = false
        }
        if fields.sequenceFlags & Self.flagNeedsState != 0, !state.valid {
            loss.skippedPackets += 1
            return
        }
        if let defaults = fields.defaults {
            state.defaultClock = defaults.timestampClockID
            state.defaultTrack = defaults.trackUUID
        }
        if fields.hasClockSnapshot { applyClockSnapshot(&state) }
        if state.valid {
            for (iid, name) in fields.eventNames { state.eventNames[iid] = name }
            for (iid, name) in fields.annotationNames { state.annotationNames[iid] = name }
        }
        if let track = fields.track { describe(track) }
        if let statistics = fields.statistics { self.statistics = statistics }
        guard fields.hasEvent else { return }
        guard let time = timestamp(&state, offset: offset) else { return }
        handleEvent(time: time, state: state, offset: offset)
    }

    private mutating func applyClockSnapshot(_ state: inout SequenceState) {
        guard let boot = fields.clocks.first(where: { $0.id == Self.boottime }) else {
            issues.append(TraceReadError(file: source, offset: 0, problem: "clock snapshot without CLOCK_BOOTTIME; ignored"))
            return
        }
        let bootValue = boot.timestamp &* boot.unitMultiplier
        for clock in fields.clocks where clock.id != Self.boottime {
            let value = clock.timestamp &* clock.unitMultiplier
            if (64..<128).contains(clock.id) {
                state.clockPairs[clock.id, default: []].append((value, bootValue))
                if clock.isIncremental {
                    state.incremental[clock.id] = (value, clock.unitMultiplier)
                }
            } else {
                globalPairs[clock.id, default: []].append((value, bootValue))
            }
        }
    }

    /// The packet's time on CLOCK_BOOTTIME, or nil when it cannot be placed.
    private mutating func timestamp(_ state: inout SequenceState, offset: Int) -> UInt64? {
        let clock = fields.timestampClockID ?? state.defaultClock ?? Self.boottime
        guard let raw = fields.timestamp else { return state.lastTimestamp }
        var value = raw
        if (64..<128).contains(clock) {
            if let running = state.incremental[clock] {
                value = running.value &+ raw &* running.multiplier
                state.incremental[clock] = (value, running.multiplier)
            }
            guard let converted = Self.convert(value, pairs: state.clockPairs[clock]) else {
                issues.append(TraceReadError(file: source, offset: offset, problem: "timestamp on clock \(clock) with no snapshot; event skipped"))
                return nil
            }
            value = converted
        } else if clock != Self.boottime && clock != 0 {
            guard let converted = Self.convert(value, pairs: globalPairs[clock]) else {
                issues.append(TraceReadError(file: source, offset: offset, problem: "timestamp on clock \(clock) with no snapshot; event skipped"))
                return nil
            }
            value = converted
        }
        state.lastTimestamp = value
        return value
    }

    /// Converts with the latest pair whose clock reading is not after `value`
    /// (or the earliest pair).
    private static func convert(_ value: UInt64, pairs: [(clock: UInt64, boottime: UInt64)]?) -> UInt64? {
        guard let pairs, let first = pairs.first else { return nil }
        var best = first
        for pair in pairs where pair.clock <= value { best = pair }
        if value >= best.clock { return best.boottime &+ (value - best.clock) }
        return best.boottime &- (best.clock - value)
    }

    private mutating func describe(_ track: PacketFields.TrackFields) {
        if var existing = trackInfo[track.uuid] {
            existing.parent = track.parent ?? existing.parent
            existing.name = track.name ?? existing.name
            existing.process = track.process ?? existing.process
            existing.thread = track.thread ?? existing.thread
            existing.counter = track.counter ?? existing.counter
            trackInfo[track.uuid] = existing
        } else {
            trackInfo[track.uuid] = track
        }
        if track.counter?.isThreadTime == true { threadTimeTracks.insert(track.uuid) }
    }

    // MARK: Events

    private mutating func handleEvent(time: UInt64, state: SequenceState, offset: Int) {
        let event = fields.event
        let explicitTrack = event.trackUUID
        guard let track = explicitTrack ?? state.defaultTrack else {
            issues.append(TraceReadError(file: source, offset: offset, problem: "event without a track; skipped"))
            return
        }
        var name = ""
        if event.type == 1 || event.type == 3 {
            if let iid = event.nameIID {
                if let known = state.eventNames[iid] {
                    name = known
                } else {
                    issues.append(TraceReadError(file: source, offset: offset, problem: "unknown interned name \(iid)"))
                }
            } else if let inline = event.name {
                name = inline
            }
        }
        var arguments: [String: TraceArgument] = [:]
        for annotation in event.annotations {
            let key = annotation.name ?? annotation.nameIID.flatMap { state.annotationNames[$0] } ?? "?"
            arguments[key] = annotation.value
        }
        var threadTime: Double?
        for (index, counterTrack) in event.extraCounterTracks.enumerated() where index < event.extraCounterValues.count {
            let value = event.extraCounterValues[index]
            if threadTimeTracks.contains(counterTrack) {
                threadTime = value
            } else {
                appendCounter(track: counterTrack, time: time, value: value)
            }
        }
        for (index, counterTrack) in event.extraDoubleCounterTracks.enumerated() where index < event.extraDoubleCounterValues.count {
            appendCounter(track: counterTrack, time: time, value: event.extraDoubleCounterValues[index])
        }
        eventOrder += 1
        switch event.type {
        case 1, 2:
            if explicitTrack != nil && explicitTrack != state.defaultTrack {
                deferred.append(DeferredEvent(
                    time: time, order: eventOrder, type: event.type, track: track, name: name, arguments: arguments,
                    flowIDs: event.flowIDs, terminatingFlowIDs: event.terminatingFlowIDs))
            } else if event.type == 1 {
                begin(track: track, time: time, name: name, arguments: arguments, flows: event.flowIDs,
                      terminating: event.terminatingFlowIDs, threadTime: threadTime)
            } else {
                end(track: track, time: time, arguments: arguments, flows: event.flowIDs,
                    terminating: event.terminatingFlowIDs, threadTime: threadTime)
            }
        case 3:
            instants.append(Instant(name: name, track: track, tid: nil, time: time, arguments: arguments))
        case 4:
            if let value = event.counterValue { appendCounter(track: track, time: time, value: value) }
        default:
            issues.append(TraceReadError(file: source, offset: offset, problem: "event of unsupported type \(event.type); skipped"))
        }
    }

    private mutating func appendCounter(track: UInt64, time: UInt64, value: Double) {
        var value = value
        if let multiplier = trackInfo[track]?.counter?.multiplier, multiplier != 1 { value *= Double(multiplier) }
        counterSamples[track, default: []].append(CounterSample(time: time, value: value))
    }

    private mutating func begin(
        track: UInt64, time: UInt64, name: String, arguments: [String: TraceArgument], flows: [UInt64],
        terminating: [UInt64], threadTime: Double?
    ) {
        var stack = stacks.removeValue(forKey: track) ?? []
        intervals.append(Interval(
            name: name, track: track, tid: nil, start: time, duration: nil, depth: stack.count, cpuTime: nil,
            resourceUsage: nil, arguments: arguments, flowIDs: flows, terminatingFlowIDs: terminating, isAsync: false))
        stack.append(OpenSlice(index: intervals.count - 1, threadTimeAtBegin: threadTime))
        stacks[track] = stack
    }

    private mutating func end(
        track: UInt64, time: UInt64, arguments: [String: TraceArgument], flows: [UInt64], terminating: [UInt64],
        threadTime: Double?
    ) {
        guard var stack = stacks[track], let open = stack.popLast() else {
            loss.unmatchedEnds += 1
            return
        }
        stacks[track] = stack
        let index = open.index
        intervals[index].duration = time >= intervals[index].start ? time - intervals[index].start : 0
        if let begin = open.threadTimeAtBegin, let end = threadTime, end >= begin {
            intervals[index].cpuTime = UInt64(end - begin)
        }
        if !arguments.isEmpty {
            var usage = ResourceUsageDelta()
            var sawUsage = false
            for (key, value) in arguments {
                guard key.hasPrefix("rusage."), case .int(let number) = value else {
                    intervals[index].arguments[key] = value
                    continue
                }
                sawUsage = true
                switch key {
                case "rusage.user_ns": usage.userNanoseconds = number
                case "rusage.system_ns": usage.systemNanoseconds = number
                case "rusage.voluntary_switches": usage.voluntarySwitches = number
                case "rusage.involuntary_switches": usage.involuntarySwitches = number
                case "rusage.minor_faults": usage.minorFaults = number
                case "rusage.major_faults": usage.majorFaults = number
                default: intervals[index].arguments[key] = value
                }
            }
            if sawUsage { intervals[index].resourceUsage = usage }
        }
        if !flows.isEmpty { intervals[index].flowIDs += flows }
        if !terminating.isEmpty { intervals[index].terminatingFlowIDs += terminating }
    }

    // MARK: Finishing

    mutating func finish() -> ParsedTrace {
        deferred.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        for event in deferred {
            if event.type == 1 {
                begin(track: event.track, time: event.time, name: event.name, arguments: event.arguments,
                      flows: event.flowIDs, terminating: event.terminatingFlowIDs, threadTime: nil)
            } else {
                end(track: event.track, time: event.time, arguments: event.arguments, flows: event.flowIDs,
                    terminating: event.terminatingFlowIDs, threadTime: nil)
            }
        }

        var tracks: [UInt64: TraceTrack] = [:]
        var process: TraceProcess?
        var threads: [TraceThread] = []
        for (uuid, info) in trackInfo { tracks[uuid] = makeTrack(uuid: uuid, info: info) }
        for uuid in Set(intervals.map(\.track)).union(instants.map(\.track)).union(counterSamples.keys)
        where tracks[uuid] == nil {
            tracks[uuid] = TraceTrack(
                uuid: uuid, kind: .other, name: "", parent: nil, tid: nil, pid: nil, counterUnit: nil, isThreadTime: false)
        }
        for track in tracks.values {
            if track.kind == .process, let pid = track.pid, process == nil {
                process = TraceProcess(pid: pid, name: track.name)
            }
            if track.kind == .thread, let tid = track.tid {
                threads.append(TraceThread(tid: tid, pid: track.pid ?? 0, name: track.name, trackUUID: track.uuid))
            }
        }
        threads.sort { $0.tid < $1.tid }
        for index in intervals.indices {
            let track = tracks[intervals[index].track]
            intervals[index].tid = track?.kind == .thread ? track?.tid : nil
            intervals[index].isAsync = track?.kind == .async
        }
        for index in instants.indices {
            let track = tracks[instants[index].track]
            instants[index].tid = track?.kind == .thread ? track?.tid : nil
        }
        var counters: [CounterSeries] = []
        for (uuid, samples) in counterSamples where !threadTimeTracks.contains(uuid) {
            var samples = samples
            if !zip(samples, samples.dropFirst()).allSatisfy({ $0.time <= $1.time }) {
                samples.sort { $0.time < $1.time }
            }
            let track = tracks[uuid]
            counters.append(CounterSeries(track: uuid, name: track?.name ?? "", unit: track?.counterUnit, samples: samples))
        }
        counters.sort { $0.name < $1.name }

        if let statistics {
            var sequenceOfBuffer: [Int: UInt64] = [:]
            for writer in statistics.writers { sequenceOfBuffer[writer.buffer] = writer.sequenceID }
            loss.threads = statistics.buffers.enumerated().map { index, buffer in
                DataLoss.ThreadLoss(
                    sequenceID: sequenceOfBuffer[index] ?? 0, recorded: buffer.recorded,
                    discarded: buffer.discarded, overwritten: buffer.overwritten)
            }
        }
        return ParsedTrace(
            process: process, threads: threads, tracks: tracks, intervals: intervals, instants: instants,
            counters: counters, loss: loss, issues: issues, truncation: truncation, packetCount: packetCount)
    }

    private func makeTrack(uuid: UInt64, info: PacketFields.TrackFields) -> TraceTrack {
        var kind = TraceTrack.Kind.async
        var name = info.name ?? ""
        var tid: Int64?
        var pid: Int32?
        if info.counter != nil {
            kind = .counter
        } else if let thread = info.thread {
            kind = .thread
            tid = thread.tid
            pid = thread.pid
            if name.isEmpty { name = thread.name ?? "" }
        } else if let process = info.process {
            kind = .process
            pid = process.pid
            if name.isEmpty { name = process.name ?? "" }
        }
        // Inherit the thread and process from parents.
        var parent = info.parent
        var hops = 0
        while let uuid = parent, hops < 16 {
            hops += 1
            guard let ancestor = trackInfo[uuid] else { break }
            if tid == nil, let thread = ancestor.thread { tid = thread.tid }
            if pid == nil { pid = ancestor.thread?.pid ?? ancestor.process?.pid }
            parent = ancestor.parent
        }
        if kind == .counter, info.thread == nil, info.counter?.isThreadTime != true,
            let parentUUID = info.parent, trackInfo[parentUUID]?.thread == nil
        {
            tid = nil
        }
        return TraceTrack(
            uuid: uuid, kind: kind, name: name, parent: info.parent, tid: tid, pid: pid,
            counterUnit: info.counter?.unit, isThreadTime: info.counter?.isThreadTime ?? false)
    }
}
