import PerfettoWire

/// Assembling the parsed trace once every packet is read.
extension TraceBuilder {
    mutating func finish() -> ParsedTrace {
        deferred.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        for event in deferred {
            if event.type == PerfettoWire.EventType.sliceBegin {
                begin(
                    track: event.track, time: event.time, name: event.name, arguments: event.arguments,
                    flows: event.flowIDs, terminating: event.terminatingFlowIDs, threadTime: nil,
                    categories: event.categories)
            } else {
                end(
                    track: event.track, time: event.time, arguments: event.arguments, flows: event.flowIDs,
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
            counters.append(
                CounterSeries(track: uuid, name: track?.name ?? "", unit: track?.counterUnit, samples: samples))
        }
        counters.sort { $0.name < $1.name }

        if let statistics {
            var sequenceOfBuffer: [Int: UInt64] = [:]
            for writer in statistics.writers { sequenceOfBuffer[writer.buffer] = writer.sequenceID }
            loss.threads = statistics.buffers.enumerated().map { index, buffer in
                DataLoss.ThreadLoss(
                    sequenceID: sequenceOfBuffer[index] ?? 0, recorded: buffer.recorded,
                    discarded: buffer.discarded, overwritten: buffer.overwritten, orphanEnds: buffer.orphanEnds)
            }
        }
        return ParsedTrace(
            process: process, threads: threads, tracks: tracks,
            intervals: IntervalList(records: records, names: names, tracks: intervalTracks, extras: intervalExtras),
            instants: instants,
            counters: counters, loss: loss, issues: issues, truncation: truncation, packetCount: packetCount,
            decodedPacketCount: packetCount - undecodedPackets,
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
