#if canImport(Glibc)
import Glibc
#endif

/// Turns packets into a ``ParsedTrace``: framing, sequence state, clocks,
/// tracks, and slices.
struct TraceBuilder {
    let source: String

    private static let boottime: UInt32 = 6
    private static let flagCleared: UInt32 = 1
    private static let flagNeedsState: UInt32 = 2

    private struct SequenceState {
        var valid = false
        /// Event names, as indices into the builder's name table.
        var eventNames = InternedNames<UInt32>()
        var annotationNames = InternedNames<String>()
        var categoryNames = InternedNames<String>()
        var defaultClock: UInt32?
        var defaultTrack: UInt64?
        var defaultExtraCounterTracks: [UInt64] = []
        var defaultExtraDoubleCounterTracks: [UInt64] = []
        /// Running values of incremental clocks, with their unit.
        var incremental: [UInt32: (value: UInt64, multiplier: UInt64)] = [:]
        /// Readings of sequence-scoped clocks paired with BOOTTIME.
        var clockPairs: [UInt32: [(clock: UInt64, boottime: UInt64)]] = [:]
        var lastTimestamp: UInt64 = 0
        /// The incremental clock most packets use, cached out of the tables.
        var fastClock: UInt32 = .max
        var fastValue: UInt64 = 0
        var fastMultiplier: UInt64?
        var fastPairClock: UInt64 = 0
        var fastPairBoottime: UInt64 = 0
        /// Running totals of incremental counter tracks.
        var counterTotals: [UInt64: Double] = [:]
    }

    /// A slice event on an explicit track, kept until all are read, then
    /// ordered by time across sequences.
    private struct DeferredEvent {
        var time: UInt64
        var order: Int
        var type: UInt64
        var track: UInt64
        var name: UInt32
        var arguments: [String: TraceArgument]
        var flowIDs: [UInt64]
        var terminatingFlowIDs: [UInt64]
        var categories: [String]
    }

    private var fields = PacketFields()
    private var states: [SequenceState] = []
    private var stateIndex: [UInt32: Int] = [:]
    private var current = SequenceState()
    private var currentSequence: UInt32?
    private var globalPairs: [UInt32: [(clock: UInt64, boottime: UInt64)]] = [:]
    private var trackInfo: [UInt64: PacketFields.TrackFields] = [:]
    /// The parts of an interval that do not fit its record, while reading.
    private struct Extra {
        var duration = UInt64.max
        var depth: Int32
        /// The interval open below this one on its track, while it is open.
        var below: Int
        /// The thread-time reading at the begin; NaN when there was none.
        var threadTimeAtBegin = Double.nan
        var cpuTime = UInt64.max
        var details: IntervalDetails?
    }

    /// Intervals in the order of their begins. While an interval without an
    /// extra is open, its `duration` holds the index of the interval open
    /// below it on its track (`UInt32.max` for none), so each track's stack
    /// is a list threaded through the records.
    private var records: [IntervalList.Record] = []
    private var extras: [Extra] = []
    /// Record and extra indices fit in 32 bits, below the `UInt32.max` that
    /// marks none.
    private static let intervalLimit = Int(UInt32.max) - 1
    /// Interval names, each once; `records` refer to them by index.
    private var names: [String] = [""]
    private var nameIndex: [String: UInt32] = ["": 0]
    /// Tracks with slices, by slot: the uuid, the record index of the
    /// innermost open interval (-1 when none is open), and how many are
    /// open. The current slot's top and count are kept in `currentTop` and
    /// `currentOpen` instead, until another slot becomes current.
    private var slotTracks: [UInt64] = []
    private var tops: [Int] = []
    private var openCounts: [UInt32] = []
    private var stackIndex: [UInt64: Int] = [:]
    private var currentTrack: UInt64?
    private var currentSlot = 0
    private var currentTop = -1
    private var currentOpen: UInt32 = 0
    private var instants: [Instant] = []
    private var counterSamples: [UInt64: [CounterSample]] = [:]
    private var deferred: [DeferredEvent] = []
    private var loss = DataLoss()
    private var issues: [TraceReadError] = []
    private var truncation: TraceReadError?
    private var packetCount = 0
    private var undecodedPackets = 0
    private var eventOrder = 0
    private var statistics: PacketFields.StatisticsFields?
    private var threadTimeTracks: Set<UInt64> = []

    private static let noArguments: [String: TraceArgument] = [:]

    /// Whether the hand decoders run; off, every packet goes through
    /// protobuf-c (tests compare the two).
    let usesFastPaths: Bool

    init(source: String, usesFastPaths: Bool = true) {
        self.source = source
        self.usesFastPaths = usesFastPaths
    }

    // MARK: Framing

    mutating func consume(_ base: UnsafePointer<UInt8>, count: Int) {
        // A begin packet takes at least 12 bytes and its end about as many;
        // reserving for that many intervals avoids copying the array as it
        // grows.
        records.reserveCapacity(min(count / 24, 1 << 26))
        Self.adviseHugePages(&records)
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
            guard records.count + deferred.count < Self.intervalLimit else {
                truncation = TraceReadError(
                    file: source, offset: offset, problem: "more than \(Self.intervalLimit) intervals; reading stopped")
                return
            }
            let range = reader.position..<(reader.position + Int(length))
            reader.position = range.upperBound
            packetCount += 1
            if usesFastPaths, readPlainSlicePacket(base, range) { continue }
            fields.reset()
            if !usesFastPaths || !FastPacketDecoder.decode(base, range, into: &fields) {
                fields.reset()
                guard ProtobufCPacketDecoder.decode(base, range, into: &fields) else {
                    issues.append(TraceReadError(file: source, offset: offset, problem: "packet does not decode; skipped"))
                    undecodedPackets += 1
                    continue
                }
            }
            process(offset: offset)
        }
    }

    /// Asks the kernel to back a large, still untouched array with huge
    /// pages, which saves most of its page faults as it fills.
    private static func adviseHugePages<Element>(_ array: inout [Element]) {
        #if os(Linux)
        let bytes = array.capacity * MemoryLayout<Element>.stride
        guard bytes >= 8 << 20 else { return }
        array.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            let huge = 2 << 20
            let start = (Int(bitPattern: base) + huge - 1) & ~(huge - 1)
            let end = (Int(bitPattern: base) + bytes) & ~(huge - 1)
            guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
            _ = madvise(pointer, end - start, MADV_HUGEPAGE)
        }
        #endif
    }

    // MARK: Packets

    /// The densest packets - a begin with an interned name or an end, on the
    /// sequence's own track and incremental clock - handled in one pass with
    /// no intermediate fields. Returns false to leave the packet to the
    /// general path.
    @inline(__always)
    private mutating func readPlainSlicePacket(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Bool {
        // Strobe writes these fields in field-number order: timestamp,
        // sequence id, the event (type, then name), flags. Read that layout
        // straight through; any other goes through the field loop.
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        guard reader.take(0x40), let delta = reader.varint(), reader.take(0x50), let sequence = reader.varint(),
            reader.take(0x5A), let payload = reader.lengthDelimited(), reader.take(0x68), reader.take(0x02),
            reader.isAtEnd
        else { return readPlainSlicePacketInAnyOrder(base, range) }
        var event = WireReader(base, from: payload.lowerBound, to: payload.upperBound)
        guard event.take(0x48), let type = event.varint() else {
            // An event that opens with another field (arguments, say) is
            // not plain in any order.
            return event.take(0x50) && readPlainSlicePacketInAnyOrder(base, range)
        }
        guard type == 1 || type == 2 else { return false }
        var nameIID: UInt64?
        if type == 1 {
            guard event.take(0x50), let iid = event.varint() else { return readPlainSlicePacketInAnyOrder(base, range) }
            nameIID = iid
        }
        guard event.isAtEnd else { return readPlainSlicePacketInAnyOrder(base, range) }
        return readPlainSlice(
            delta: delta, sequence: UInt32(truncatingIfNeeded: sequence), flags: UInt64(Self.flagNeedsState),
            type: type, nameIID: nameIID)
    }

    /// ``readPlainSlicePacket(_:_:)`` for fields in any order.
    private mutating func readPlainSlicePacketInAnyOrder(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Bool {
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        var delta: UInt64?
        var sequence: UInt32?
        var flags: UInt64 = 0
        var type: UInt64 = 0
        var nameIID: UInt64?
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            switch key {
            case 0x40:  // timestamp
                delta = reader.varint()
            case 0x50:  // trusted_packet_sequence_id
                sequence = reader.varint().map { UInt32(truncatingIfNeeded: $0) }
            case 0x68:  // sequence_flags
                guard let value = reader.varint() else { return false }
                flags = value
            case 0x5A:  // track_event
                guard let payload = reader.lengthDelimited() else { return false }
                var event = WireReader(base, from: payload.lowerBound, to: payload.upperBound)
                while !event.isAtEnd {
                    guard let eventKey = event.varint() else { return false }
                    switch eventKey {
                    case 0x48: type = event.varint() ?? 0
                    case 0x50: nameIID = event.varint()
                    default: return false
                    }
                }
            default:
                return false
            }
        }
        guard let delta, let sequence else { return false }
        return readPlainSlice(delta: delta, sequence: sequence, flags: flags, type: type, nameIID: nameIID)
    }

    /// Applies a decoded plain slice packet when the sequence's state allows
    /// the shortcut; false leaves the packet to the general path.
    @inline(__always)
    private mutating func readPlainSlice(
        delta: UInt64, sequence: UInt32, flags: UInt64, type: UInt64, nameIID: UInt64?
    ) -> Bool {
        guard flags == UInt64(Self.flagNeedsState), type == 1 && nameIID != nil || type == 2 && nameIID == nil
        else { return false }
        activate(sequence)
        guard current.valid, let clock = current.defaultClock, clock == current.fastClock,
            let multiplier = current.fastMultiplier, let track = current.defaultTrack
        else {
            return false
        }
        let value = current.fastValue &+ delta &* multiplier
        guard value >= current.fastPairClock else { return false }
        var name: UInt32 = 0
        if let nameIID {
            guard let known = current.eventNames[nameIID] else { return false }
            name = known
        }
        current.fastValue = value
        let time = current.fastPairBoottime &+ (value - current.fastPairClock)
        current.lastTimestamp = time
        eventOrder += 1
        if type == 1 {
            openInterval(track: track, time: time, name: name)
        } else {
            closeInterval(track: track, time: time)
        }
        return true
    }

    /// Makes `sequenceID`'s state the current one. Packets of one sequence
    /// come in runs, so the state is moved in and out of the table rarely.
    @inline(__always)
    private mutating func activate(_ sequenceID: UInt32) {
        if sequenceID != currentSequence { switchSequence(to: sequenceID) }
    }

    private mutating func switchSequence(to sequenceID: UInt32) {
        if let previous = currentSequence, let index = stateIndex[previous] {
            swap(&current, &states[index])
        }
        if let index = stateIndex[sequenceID] {
            swap(&current, &states[index])
        } else {
            stateIndex[sequenceID] = states.count
            states.append(SequenceState())
            current = SequenceState()
        }
        currentSequence = sequenceID
    }

    private mutating func process(offset: Int) {
        activate(fields.sequenceID ?? 0)
        if fields.previousPacketDropped && !fields.firstPacketOnSequence { loss.droppedPacketMarks += 1 }
        if fields.incrementalStateCleared || fields.sequenceFlags & Self.flagCleared != 0 {
            current.valid = true
            current.eventNames.removeAll()
            current.annotationNames.removeAll()
            current.categoryNames.removeAll()
            current.defaultClock = nil
            current.defaultTrack = nil
            current.defaultExtraCounterTracks = []
            current.defaultExtraDoubleCounterTracks = []
            current.incremental.removeAll()
            current.fastClock = .max
            current.fastMultiplier = nil
            current.counterTotals.removeAll()
        } else if fields.previousPacketDropped {
            current.valid = false
        }
        // Interned data for a state that was lost cannot be trusted, and
        // packets that need that state are skipped (each counted, as the
        // trace processor does).
        if fields.hasInternedData, !current.valid { loss.skippedPackets += 1 }
        if fields.sequenceFlags & Self.flagNeedsState != 0, !current.valid {
            loss.skippedPackets += 1
            return
        }
        if let defaults = fields.defaults {
            current.defaultClock = defaults.timestampClockID
            current.defaultTrack = defaults.trackUUID
            current.defaultExtraCounterTracks = defaults.extraCounterTracks
            current.defaultExtraDoubleCounterTracks = defaults.extraDoubleCounterTracks
        }
        if fields.hasClockSnapshot { applyClockSnapshot(offset: offset) }
        if current.valid {
            for (iid, name) in fields.eventNames { current.eventNames[iid] = intern(name) }
            for (iid, name) in fields.annotationNames { current.annotationNames[iid] = name }
            for (iid, name) in fields.categoryNames { current.categoryNames[iid] = name }
        }
        if let track = fields.track { describe(track) }
        if let statistics = fields.statistics { self.statistics = statistics }
        guard fields.hasEvent else { return }
        guard let time = timestamp(offset: offset) else { return }
        handleEvent(time: time, offset: offset)
    }

    private mutating func applyClockSnapshot(offset: Int) {
        // The snapshot's moment on BOOTTIME: read directly, or through a
        // builtin clock that an earlier snapshot tied to BOOTTIME.
        var bootValue: UInt64?
        var reference = Self.boottime
        if let boot = fields.clocks.first(where: { $0.id == Self.boottime }) {
            bootValue = boot.timestamp &* boot.unitMultiplier
        } else {
            for clock in fields.clocks where clock.id < 64 {
                if let converted = Self.convert(clock.timestamp &* clock.unitMultiplier, pairs: globalPairs[clock.id]) {
                    bootValue = converted
                    reference = clock.id
                    break
                }
            }
        }
        guard let bootValue else {
            issues.append(TraceReadError(
                file: source, offset: offset, problem: "clock snapshot with no path to CLOCK_BOOTTIME; ignored"))
            return
        }
        for clock in fields.clocks where clock.id != Self.boottime && clock.id != reference {
            let value = clock.timestamp &* clock.unitMultiplier
            if (64..<128).contains(clock.id) {
                current.clockPairs[clock.id, default: []].append((value, bootValue))
                if clock.isIncremental {
                    current.incremental[clock.id] = (value, clock.unitMultiplier)
                    current.fastClock = clock.id
                    current.fastValue = value
                    current.fastMultiplier = clock.unitMultiplier
                    current.fastPairClock = value
                    current.fastPairBoottime = bootValue
                }
            } else {
                globalPairs[clock.id, default: []].append((value, bootValue))
            }
        }
    }

    /// The packet's time on CLOCK_BOOTTIME, or nil when it cannot be placed.
    private mutating func timestamp(offset: Int) -> UInt64? {
        let clock = fields.timestampClockID ?? current.defaultClock ?? Self.boottime
        guard let raw = fields.timestamp else { return current.lastTimestamp }
        var value = raw
        // The common case: the sequence's incremental clock, converted with
        // its latest snapshot.
        if clock == current.fastClock, let multiplier = current.fastMultiplier {
            value = current.fastValue &+ raw &* multiplier
            current.fastValue = value
            if value >= current.fastPairClock {
                let converted = current.fastPairBoottime &+ (value - current.fastPairClock)
                current.lastTimestamp = converted
                return converted
            }
            current.incremental[clock] = (value, multiplier)
            guard let converted = Self.convert(value, pairs: current.clockPairs[clock]) else { return nil }
            current.lastTimestamp = converted
            return converted
        }
        if (64..<128).contains(clock) {
            if let running = current.incremental[clock] {
                value = running.value &+ raw &* running.multiplier
                current.incremental[clock] = (value, running.multiplier)
            }
            guard let converted = Self.convert(value, pairs: current.clockPairs[clock]) else {
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
        current.lastTimestamp = value
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

    private mutating func handleEvent(time: UInt64, offset: Int) {
        let explicitTrack = fields.event.trackUUID
        guard let track = explicitTrack ?? current.defaultTrack else {
            issues.append(TraceReadError(file: source, offset: offset, problem: "event without a track; skipped"))
            return
        }
        let type = fields.event.type
        var name: UInt32 = 0
        if type == 1 || type == 3 {
            if let iid = fields.event.nameIID {
                if let known = current.eventNames[iid] {
                    name = known
                } else {
                    issues.append(TraceReadError(file: source, offset: offset, problem: "unknown interned name \(iid)"))
                }
            } else if let inline = fields.event.name {
                name = intern(inline)
            }
        }
        var categories: [String] = []
        if !fields.event.categoryIIDs.isEmpty || !fields.event.categories.isEmpty {
            for iid in fields.event.categoryIIDs {
                if let known = current.categoryNames[iid] {
                    categories.append(known)
                } else {
                    issues.append(TraceReadError(file: source, offset: offset, problem: "unknown interned category \(iid)"))
                }
            }
            categories += fields.event.categories
        }
        var arguments = Self.noArguments
        for annotation in fields.event.annotations {
            let key = annotation.name ?? annotation.nameIID.flatMap { current.annotationNames[$0] } ?? "?"
            arguments[key] = annotation.value
        }
        var threadTime: Double?
        if !fields.event.extraCounterValues.isEmpty || !fields.event.extraDoubleCounterValues.isEmpty {
            var event = fields.event
            // Tracks named by the event, else by the sequence's defaults.
            if event.extraCounterTracks.isEmpty { event.extraCounterTracks = current.defaultExtraCounterTracks }
            if event.extraDoubleCounterTracks.isEmpty { event.extraDoubleCounterTracks = current.defaultExtraDoubleCounterTracks }
            for (index, counterTrack) in event.extraCounterTracks.enumerated() where index < event.extraCounterValues.count {
                let value = event.extraCounterValues[index]
                if threadTimeTracks.contains(counterTrack) {
                    threadTime = value
                } else {
                    appendCounter(track: counterTrack, time: time, value: value)
                }
            }
            for (index, counterTrack) in event.extraDoubleCounterTracks.enumerated()
            where index < event.extraDoubleCounterValues.count {
                appendCounter(track: counterTrack, time: time, value: event.extraDoubleCounterValues[index])
            }
        }
        let flows = fields.event.flowIDs.isEmpty ? [] : fields.event.flowIDs
        let terminating = fields.event.terminatingFlowIDs.isEmpty ? [] : fields.event.terminatingFlowIDs
        eventOrder += 1
        switch type {
        case 1, 2:
            if explicitTrack != nil && explicitTrack != current.defaultTrack {
                deferred.append(DeferredEvent(
                    time: time, order: eventOrder, type: type, track: track, name: name, arguments: arguments,
                    flowIDs: flows, terminatingFlowIDs: terminating, categories: categories))
            } else if type == 1 {
                begin(track: track, time: time, name: name, arguments: arguments, flows: flows,
                      terminating: terminating, threadTime: threadTime, categories: categories)
            } else {
                end(track: track, time: time, arguments: arguments, flows: flows,
                    terminating: terminating, threadTime: threadTime)
            }
        case 3:
            instants.append(Instant(
                name: names[Int(name)], track: track, tid: nil, time: time, arguments: arguments, categories: categories))
        case 4:
            if var value = fields.event.counterValue {
                if trackInfo[track]?.counter?.isIncremental == true {
                    value += current.counterTotals[track] ?? 0
                    current.counterTotals[track] = value
                }
                appendCounter(track: track, time: time, value: value)
            }
        default:
            issues.append(TraceReadError(file: source, offset: offset, problem: "event of unsupported type \(type); skipped"))
        }
    }

    private mutating func appendCounter(track: UInt64, time: UInt64, value: Double) {
        var value = value
        if let multiplier = trackInfo[track]?.counter?.multiplier, multiplier != 1 { value *= Double(multiplier) }
        counterSamples[track, default: []].append(CounterSample(time: time, value: value))
    }

    /// The index of `name` in the name table, adding it when new.
    private mutating func intern(_ name: String) -> UInt32 {
        if let known = nameIndex[name] { return known }
        let index = UInt32(names.count)
        names.append(name)
        nameIndex[name] = index
        return index
    }

    /// Makes `track`'s stack the current one.
    @inline(__always)
    private mutating func select(_ track: UInt64) {
        if track != currentTrack { switchStack(to: track) }
    }

    private mutating func switchStack(to track: UInt64) {
        if currentTrack != nil {
            tops[currentSlot] = currentTop
            openCounts[currentSlot] = currentOpen
        }
        let slot: Int
        if let known = stackIndex[track] {
            slot = known
        } else {
            slot = slotTracks.count
            slotTracks.append(track)
            tops.append(-1)
            openCounts.append(0)
            stackIndex[track] = slot
        }
        currentTrack = track
        currentSlot = slot
        currentTop = tops[slot]
        currentOpen = openCounts[slot]
    }

    /// Opens an interval on top of `track`'s stack; returns its index.
    @inline(__always)
    @discardableResult
    private mutating func openInterval(track: UInt64, time: UInt64, name: UInt32) -> Int {
        select(track)
        let index = records.count
        records.append(IntervalList.Record(
            start: time, duration: currentTop < 0 ? .max : UInt32(truncatingIfNeeded: currentTop), name: name,
            track: UInt32(truncatingIfNeeded: currentSlot),
            depthAndFlag: min(currentOpen, IntervalList.Record.depthMask)))
        currentTop = index
        currentOpen &+= 1
        return index
    }

    /// Ends the innermost open interval of `track`; returns its index, or
    /// nil when none is open.
    @inline(__always)
    @discardableResult
    private mutating func closeInterval(track: UInt64, time: UInt64) -> Int? {
        select(track)
        let index = currentTop
        guard index >= 0 else {
            loss.unmatchedEnds += 1
            return nil
        }
        currentOpen &-= 1
        let record = records[index]
        let duration = time >= record.start ? time - record.start : 0
        if !record.hasExtra {
            currentTop = record.duration == .max ? -1 : Int(record.duration)
            if duration < UInt64(UInt32.max) {
                records[index].duration = UInt32(truncatingIfNeeded: duration)
            } else {
                records[index].duration = .max
                updateExtra(index) { $0.duration = duration }
            }
        } else {
            let extra = Int(record.duration)
            currentTop = extras[extra].below
            extras[extra].duration = duration
        }
        return index
    }

    /// The index of the interval open below the open interval at `index`.
    private func below(_ index: Int) -> Int {
        let record = records[index]
        if record.hasExtra { return extras[Int(record.duration)].below }
        return record.duration == .max ? -1 : Int(record.duration)
    }

    private mutating func begin(
        track: UInt64, time: UInt64, name: UInt32, arguments: [String: TraceArgument], flows: [UInt64],
        terminating: [UInt64], threadTime: Double?, categories: [String] = []
    ) {
        let index = openInterval(track: track, time: time, name: name)
        if !arguments.isEmpty || !flows.isEmpty || !terminating.isEmpty || !categories.isEmpty {
            updateDetails(index, isOpen: true) { values in
                values.arguments = arguments
                values.flowIDs = flows
                values.terminatingFlowIDs = terminating
                values.categories = categories
            }
        }
        if let threadTime { updateExtra(index, isOpen: true) { $0.threadTimeAtBegin = threadTime } }
    }

    private mutating func end(
        track: UInt64, time: UInt64, arguments: [String: TraceArgument], flows: [UInt64], terminating: [UInt64],
        threadTime: Double?
    ) {
        guard let index = closeInterval(track: track, time: time) else { return }
        if let end = threadTime, records[index].hasExtra {
            let extra = Int(records[index].duration)
            // False for NaN: no reading at the begin.
            if end >= extras[extra].threadTimeAtBegin {
                extras[extra].cpuTime = UInt64(end - extras[extra].threadTimeAtBegin)
            }
        }
        if !arguments.isEmpty { mergeEndArguments(arguments, into: index) }
        if !flows.isEmpty || !terminating.isEmpty {
            updateDetails(index) { values in
                values.flowIDs += flows
                values.terminatingFlowIDs += terminating
            }
        }
    }

    /// Changes the extra of the interval at `index`, giving it one first if
    /// it has none: the record's `duration` field, the link to the interval
    /// below when `isOpen`, else the duration, then moves there.
    private mutating func updateExtra(_ index: Int, isOpen: Bool = false, _ change: (inout Extra) -> Void) {
        let record = records[index]
        if !record.hasExtra {
            var extra = Extra(depth: Int32(bitPattern: record.depthAndFlag), below: -1)
            if isOpen {
                extra.below = record.duration == .max ? -1 : Int(record.duration)
            } else if record.duration != .max {
                extra.duration = UInt64(record.duration)
            }
            records[index].duration = UInt32(truncatingIfNeeded: extras.count)
            records[index].depthAndFlag |= IntervalList.Record.hasExtraFlag
            extras.append(extra)
        }
        change(&extras[Int(records[index].duration)])
    }

    /// Changes the details of the interval at `index`; they stay boxed, and
    /// the box is replaced rather than shared state changed.
    private mutating func updateDetails(
        _ index: Int, isOpen: Bool = false, _ change: (inout IntervalDetails.Values) -> Void
    ) {
        updateExtra(index, isOpen: isOpen) { extra in
            var values = extra.details?.values ?? IntervalDetails.Values()
            change(&values)
            extra.details = values.isEmpty ? nil : IntervalDetails(values)
        }
    }

    private mutating func mergeEndArguments(_ arguments: [String: TraceArgument], into index: Int) {
        var usage = ResourceUsageDelta()
        var sawUsage = false
        var others: [String: TraceArgument] = [:]
        for (key, value) in arguments {
            guard key.hasPrefix("rusage."), case .int(let number) = value else {
                others[key] = value
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
            default: others[key] = value
            }
        }
        updateDetails(index) { values in
            if values.arguments.isEmpty {
                values.arguments = others
            } else {
                values.arguments.merge(others) { _, new in new }
            }
            if sawUsage { values.resourceUsage = usage }
        }
    }

    // MARK: Finishing

    mutating func finish() -> ParsedTrace {
        deferred.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        for event in deferred {
            if event.type == 1 {
                begin(track: event.track, time: event.time, name: event.name, arguments: event.arguments,
                      flows: event.flowIDs, terminating: event.terminatingFlowIDs, threadTime: nil,
                      categories: event.categories)
            } else {
                end(track: event.track, time: event.time, arguments: event.arguments, flows: event.flowIDs,
                    terminating: event.terminatingFlowIDs, threadTime: nil)
            }
        }

        var tracks: [UInt64: TraceTrack] = [:]
        var process: TraceProcess?
        var threads: [TraceThread] = []
        for (uuid, info) in trackInfo { tracks[uuid] = makeTrack(uuid: uuid, info: info) }
        for uuid in Set(stackIndex.keys).union(instants.map(\.track)).union(counterSamples.keys)
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
        // Intervals still open: their durations hold stack links until now.
        if currentTrack != nil { tops[currentSlot] = currentTop }
        for slot in tops.indices {
            var index = tops[slot]
            while index >= 0 {
                let next = below(index)
                if records[index].hasExtra {
                    extras[Int(records[index].duration)].duration = .max
                } else {
                    records[index].duration = .max
                }
                index = next
            }
            tops[slot] = -1
        }
        let intervalTracks = slotTracks.map { uuid in
            let track = tracks[uuid]
            return IntervalList.Track(
                uuid: uuid, tid: track?.kind == .thread ? track?.tid ?? .min : .min, isAsync: track?.kind == .async)
        }
        let intervalExtras = extras.map { extra in
            IntervalList.Extra(
                duration: extra.duration, depth: extra.depth, cpuTime: extra.cpuTime, details: extra.details)
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
            process: process, threads: threads, tracks: tracks,
            intervals: IntervalList(records: records, names: names, tracks: intervalTracks, extras: intervalExtras),
            instants: instants,
            counters: counters, loss: loss, issues: issues, truncation: truncation, packetCount: packetCount,
            decodedPacketCount: packetCount - undecodedPackets)
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

/// Interned values of one sequence: an array for the small dense ids
/// writers use, a dictionary for any others.
struct InternedNames<Value> {
    private var dense: [Value?] = []
    private var sparse: [UInt64: Value] = [:]
    private static var denseLimit: UInt64 { 1 << 16 }

    subscript(iid: UInt64) -> Value? {
        @inline(__always) get {
            if iid < UInt64(dense.count) { return dense[Int(iid)] }
            return sparse.isEmpty ? nil : sparse[iid]
        }
        set {
            if iid < Self.denseLimit {
                let index = Int(iid)
                if index >= dense.count { dense.append(contentsOf: repeatElement(nil, count: index - dense.count + 1)) }
                dense[index] = newValue
            } else {
                sparse[iid] = newValue
            }
        }
    }

    mutating func removeAll() {
        dense.removeAll(keepingCapacity: true)
        sparse.removeAll()
    }
}
