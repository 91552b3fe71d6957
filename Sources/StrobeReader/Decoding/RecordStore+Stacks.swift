import PerfettoWire

/// The open intervals of each track, threaded through the records.
extension RecordStore {

    /// Makes `track`'s stack the current one.
    @inline(__always)
    mutating func select(_ track: UInt64) {
        if track != currentTrack { switchStack(to: track) }
    }

    mutating func switchStack(to track: UInt64) {
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

    @inline(__always)
    mutating func openInterval(track: UInt64, time: UInt64, name: UInt32) {
        openRecord(track: track, time: time, name: name)
    }

    @inline(__always)
    mutating func closeInterval(track: UInt64, time: UInt64) {
        closeRecord(track: track, time: time)
    }

    /// Opens an interval on top of `track`'s stack; returns its index.
    @inline(__always)
    @discardableResult
    mutating func openRecord(track: UInt64, time: UInt64, name: UInt32) -> Int {
        select(track)
        let index = records.count
        records.append(
            IntervalList.Record(
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
    mutating func closeRecord(track: UInt64, time: UInt64) -> Int? {
        select(track)
        let index = currentTop
        guard index >= 0 else {
            unmatchedEnds += 1
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
    func below(_ index: Int) -> Int {
        let record = records[index]
        if record.hasExtra { return extras[Int(record.duration)].below }
        return record.duration == .max ? -1 : Int(record.duration)
    }

    mutating func begin(
        track: UInt64, time: UInt64, name: UInt32, arguments: ArgumentList, flows: [UInt64],
        terminating: [UInt64], threadTime: Double?, categories: [String] = []
    ) {
        let index = openRecord(track: track, time: time, name: name)
        if !arguments.isEmpty || !flows.isEmpty || !terminating.isEmpty || !categories.isEmpty {
            updateDetails(index, isOpen: true) { values in
                values.arguments = arguments.dictionary
                values.flowIDs = flows
                values.terminatingFlowIDs = terminating
                values.categories = categories
            }
        }
        if let threadTime { updateExtra(index, isOpen: true) { $0.threadTimeAtBegin = threadTime } }
    }

    mutating func end(
        track: UInt64, time: UInt64, arguments: ArgumentList, flows: [UInt64], terminating: [UInt64],
        threadTime: Double?
    ) {
        guard let index = closeRecord(track: track, time: time) else { return }
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
    mutating func updateExtra(_ index: Int, isOpen: Bool = false, _ change: (inout Extra) -> Void) {
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
    mutating func updateDetails(
        _ index: Int, isOpen: Bool = false, _ change: (inout IntervalDetails.Values) -> Void
    ) {
        updateExtra(index, isOpen: isOpen) { extra in
            var values = extra.details?.values ?? IntervalDetails.Values()
            change(&values)
            extra.details = values.isEmpty ? nil : IntervalDetails(values)
        }
    }

    mutating func mergeEndArguments(_ arguments: ArgumentList, into index: Int) {
        var usage = ResourceUsageDelta()
        var sawUsage = false
        var others: [String: TraceArgument] = [:]
        for (key, value) in arguments.dictionary {
            guard let argument = ResourceUsageArgument(name: key), case .int(let number) = value else {
                others[key] = value
                continue
            }
            sawUsage = true
            usage[argument] = number
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
}
