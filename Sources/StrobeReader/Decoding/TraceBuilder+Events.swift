import PerfettoWire

/// Track events: names, categories, arguments, counters.
extension TraceBuilder {
    mutating func handleEvent(time: UInt64, offset: Int) {
        let explicitTrack = fields.event.trackUUID
        guard let track = explicitTrack ?? current.defaultTrack else {
            note(TraceReadError(path: source, offset: offset, problem: "event without a track; skipped"))
            return
        }
        let type = fields.event.type
        var name: UInt32 = 0
        if type == PerfettoWire.EventType.sliceBegin || type == PerfettoWire.EventType.instant {
            if let iid = fields.event.nameIID {
                if let known = current.eventNames[iid] {
                    name = known
                } else {
                    note(TraceReadError(path: source, offset: offset, problem: "unknown interned name \(iid)"))
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
                    note(
                        TraceReadError(path: source, offset: offset, problem: "unknown interned category \(iid)"))
                }
            }
            categories += fields.event.categories
        }
        var arguments = ArgumentList()
        if !fields.event.annotations.isEmpty, Store.keepsSliceArguments || type == PerfettoWire.EventType.instant {
            for annotation in fields.event.annotations {
                let key = annotation.name ?? annotation.nameIID.flatMap { current.annotationNames[$0] } ?? "?"
                arguments.append(key, annotation.value)
            }
        }
        var threadTime: Double?
        if !fields.event.extraCounterValues.isEmpty || !fields.event.extraDoubleCounterValues.isEmpty {
            var event = fields.event
            // Tracks named by the event, else by the sequence's defaults.
            if event.extraCounterTracks.isEmpty { event.extraCounterTracks = current.defaultExtraCounterTracks }
            if event.extraDoubleCounterTracks.isEmpty {
                event.extraDoubleCounterTracks = current.defaultExtraDoubleCounterTracks
            }
            for (index, counterTrack) in event.extraCounterTracks.enumerated()
            where index < event.extraCounterValues.count {
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
        case PerfettoWire.EventType.sliceBegin, PerfettoWire.EventType.sliceEnd:
            if explicitTrack != nil && explicitTrack != current.defaultTrack {
                store.deferSlice(
                    DeferredSlice(
                        time: time, order: eventOrder, type: type, track: track, name: name, arguments: arguments,
                        flowIDs: flows, terminatingFlowIDs: terminating, categories: categories))
            } else if type == PerfettoWire.EventType.sliceBegin {
                store.begin(
                    track: track, time: time, name: name, arguments: arguments, flows: flows,
                    terminating: terminating, threadTime: threadTime, categories: categories)
            } else {
                store.end(
                    track: track, time: time, arguments: arguments, flows: flows,
                    terminating: terminating, threadTime: threadTime)
            }
        case PerfettoWire.EventType.instant:
            store.instant(
                Instant(
                    name: nameTable[name], track: track, tid: nil, time: time, arguments: arguments.dictionary,
                    categories: categories))
        case PerfettoWire.EventType.counter:
            guard Store.keepsCounters else { return }
            if var value = fields.event.counterValue {
                if trackInfo[track]?.counter?.isIncremental == true {
                    value += current.counterTotals[track] ?? 0
                    current.counterTotals[track] = value
                }
                appendCounter(track: track, time: time, value: value)
            }
        default:
            note(
                TraceReadError(path: source, offset: offset, problem: "event of unsupported type \(type); skipped"))
        }
    }

    mutating func appendCounter(track: UInt64, time: UInt64, value: Double) {
        guard Store.keepsCounters else { return }
        var value = value
        if let multiplier = trackInfo[track]?.counter?.multiplier, multiplier != 1 { value *= Double(multiplier) }
        store.counter(track: track, time: time, value: value)
    }

    /// The index of `name` in the name table, adding it when new.
    func intern(_ name: String) -> UInt32 {
        nameTable.intern(name)
    }
}
