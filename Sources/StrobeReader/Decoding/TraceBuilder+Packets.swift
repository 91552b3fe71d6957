import PerfettoWire

/// Sequence state and the general path for one decoded packet.
extension TraceBuilder {
    /// Makes `sequenceID`'s state the current one. Packets of one sequence
    /// come in runs, so the state is moved in and out of the table rarely.
    @inline(__always)
    mutating func activate(_ sequenceID: UInt32) {
        if sequenceID != currentSequence { switchSequence(to: sequenceID) }
    }

    mutating func switchSequence(to sequenceID: UInt32) {
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

    mutating func process(offset: Int) {
        activate(fields.sequenceID ?? 0)
        if fields.previousPacketDropped && !fields.firstPacketOnSequence { loss.droppedPacketMarks += 1 }
        if fields.incrementalStateCleared
            || fields.sequenceFlags & PerfettoWire.SequenceFlags.incrementalStateCleared != 0
        {
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
        if fields.sequenceFlags & PerfettoWire.SequenceFlags.needsIncrementalState != 0, !current.valid {
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

    mutating func describe(_ track: PacketFields.TrackFields) {
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
}
