extension TraceBuilder {
    /// The densest packets - a begin with an interned name or an end, on the
    /// sequence's own track and incremental clock - handled in one pass with
    /// no intermediate fields. Returns false to leave the packet to the
    /// general path.
    @inline(__always)
    mutating func readPlainSlicePacket(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Bool {
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
    mutating func readPlainSlicePacketInAnyOrder(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Bool {
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
    mutating func readPlainSlice(
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
}
