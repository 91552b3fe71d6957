import PerfettoWire

/// What the builder gathers whatever its store: the tracks with their
/// threads and process, the wall clock's offset, what was lost and the
/// problems met.
struct TraceFacts {
    var tracks: [UInt64: TraceTrack]
    var process: TraceProcess?
    var threads: [TraceThread]
    var loss: DataLoss
    var issues: [TraceReadError]
    var truncation: TraceReadError?
    var packetCount: Int
    var decodedPacketCount: Int
    var realtimeOffset: UInt64?
}

/// Assembling the trace once every packet is read.
extension TraceBuilder {
    /// The tracks, threads and process the descriptors name, every track in
    /// `used` too (a track events use but no descriptor describes), and
    /// what was lost.
    func facts(used: some Sequence<UInt64>) -> TraceFacts {
        var tracks: [UInt64: TraceTrack] = [:]
        var process: TraceProcess?
        var threads: [TraceThread] = []
        for (uuid, info) in trackInfo { tracks[uuid] = makeTrack(uuid: uuid, info: info) }
        for uuid in used where tracks[uuid] == nil {
            tracks[uuid] = TraceTrack(
                uuid: uuid, kind: .other, name: "", parent: nil, tid: nil, pid: nil, counterUnit: nil,
                isThreadTime: false)
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
        var loss = loss
        loss.unmatchedEnds += store.unmatchedEnds
        if let statistics {
            var sequenceOfBuffer: [Int: UInt64] = [:]
            for writer in statistics.writers { sequenceOfBuffer[writer.buffer] = writer.sequenceID }
            loss.threads = statistics.buffers.enumerated().map { index, buffer in
                DataLoss.ThreadLoss(
                    sequenceID: sequenceOfBuffer[index] ?? 0, recorded: buffer.recorded,
                    discarded: buffer.discarded, overwritten: buffer.overwritten, orphanEnds: buffer.orphanEnds)
            }
        }
        return TraceFacts(
            tracks: tracks, process: process, threads: threads, loss: loss, issues: issues, truncation: truncation,
            packetCount: packetCount, decodedPacketCount: packetCount - undecodedPackets,
            realtimeOffset: globalPairs[PerfettoWire.Clock.realtime]?.last.map { $0.clock &- $0.boottime })
    }

    func makeTrack(uuid: UInt64, info: PacketFields.TrackFields) -> TraceTrack {
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

extension TraceBuilder where Store == RecordStore {
    /// The parsed trace of every packet read.
    mutating func finish() -> ParsedTrace {
        store.finishIntervals()
        let used = Set(store.stackIndex.keys).union(store.instants.map(\.track)).union(store.counterSamples.keys)
        let facts = facts(used: used)
        let tracks = facts.tracks
        let intervalTracks = store.slotTracks.map { uuid in
            let track = tracks[uuid]
            return IntervalList.Track(
                uuid: uuid, tid: track?.kind == .thread ? track?.tid ?? .min : .min, isAsync: track?.kind == .async)
        }
        let intervalExtras = store.extras.map { extra in
            IntervalList.Extra(
                duration: extra.duration, depth: extra.depth, cpuTime: extra.cpuTime, details: extra.details)
        }
        var instants = store.instants
        store.instants = []
        for index in instants.indices {
            let track = tracks[instants[index].track]
            instants[index].tid = track?.kind == .thread ? track?.tid : nil
        }
        var counters: [CounterSeries] = []
        for (uuid, samples) in store.counterSamples where !threadTimeTracks.contains(uuid) {
            var samples = samples
            if !zip(samples, samples.dropFirst()).allSatisfy({ $0.time <= $1.time }) {
                samples.sort { $0.time < $1.time }
            }
            let track = tracks[uuid]
            counters.append(
                CounterSeries(track: uuid, name: track?.name ?? "", unit: track?.counterUnit, samples: samples))
        }
        counters.sort { $0.name < $1.name }
        // Moved out, so that sorting the list later copies nothing.
        let records = store.records
        store.records = []
        return ParsedTrace(
            process: facts.process, threads: facts.threads, tracks: tracks,
            intervals: IntervalList(
                records: records, names: nameTable.names, tracks: intervalTracks, extras: intervalExtras),
            instants: instants, counters: counters, loss: facts.loss, issues: facts.issues,
            truncation: facts.truncation, packetCount: facts.packetCount,
            decodedPacketCount: facts.decodedPacketCount, realtimeOffset: facts.realtimeOffset)
    }
}
