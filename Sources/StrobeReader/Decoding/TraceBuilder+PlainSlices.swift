import PerfettoWire

extension TraceBuilder {
    /// Reads the packet in `range` when it is a plain slice (see
    /// ``FastPacketDecoder/plainSlice(_:_:)``), a begin with an interned
    /// name or an end on the sequence's own track and incremental clock, in
    /// one step with no intermediate fields, when the sequence's state
    /// allows it. Returns false to leave the packet to the general path.
    /// One function, called once per packet from the framing loop.
    mutating func readPlainSlicePacket(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard let slice = FastPacketDecoder.plainSlice(base, range) else { return false }
        activate(slice.sequenceID)
        guard current.valid, let clock = current.defaultClock, clock == current.fastClock,
            let multiplier = current.fastMultiplier, let track = current.defaultTrack
        else {
            return false
        }
        let value = current.fastValue &+ slice.timestampDelta &* multiplier
        guard value >= current.fastPairClock else { return false }
        var name: UInt32 = 0
        if let nameIID = slice.nameIID {
            guard let known = current.eventNames[nameIID] else { return false }
            name = known
        }
        current.fastValue = value
        let time = current.fastPairBoottime &+ (value - current.fastPairClock)
        current.lastTimestamp = time
        eventOrder += 1
        if slice.type == PerfettoWire.EventType.sliceBegin {
            store.openInterval(track: track, time: time, name: name)
        } else {
            store.closeInterval(track: track, time: time)
        }
        return true
    }
}
