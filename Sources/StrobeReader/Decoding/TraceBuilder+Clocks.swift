import PerfettoWire

/// Clock snapshots and timestamps on CLOCK_BOOTTIME.
extension TraceBuilder {
    mutating func applyClockSnapshot(offset: Int) {
        // The snapshot's moment on BOOTTIME: read directly, or through a
        // builtin clock that an earlier snapshot tied to BOOTTIME.
        var bootValue: UInt64?
        var reference = PerfettoWire.Clock.boottime
        if let boot = fields.clocks.first(where: { $0.id == PerfettoWire.Clock.boottime }) {
            bootValue = boot.timestamp &* boot.unitMultiplier
        } else {
            for clock in fields.clocks where PerfettoWire.Clock.isBuiltin(clock.id) {
                if let converted = Self.convert(clock.timestamp &* clock.unitMultiplier, pairs: globalPairs[clock.id]) {
                    bootValue = converted
                    reference = clock.id
                    break
                }
            }
        }
        guard let bootValue else {
            note(
                TraceReadError(
                    path: source, offset: offset, problem: "clock snapshot with no path to CLOCK_BOOTTIME; ignored"))
            return
        }
        for clock in fields.clocks where clock.id != PerfettoWire.Clock.boottime && clock.id != reference {
            let value = clock.timestamp &* clock.unitMultiplier
            if PerfettoWire.Clock.isSequenceScoped(clock.id) {
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
    mutating func timestamp(offset: Int) -> UInt64? {
        let clock = fields.timestampClockID ?? current.defaultClock ?? PerfettoWire.Clock.boottime
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
        let sequenceScoped = PerfettoWire.Clock.isSequenceScoped(clock)
        if sequenceScoped, let running = current.incremental[clock] {
            value = running.value &+ raw &* running.multiplier
            current.incremental[clock] = (value, running.multiplier)
        }
        // A sequence's own clock converts by its snapshots, another clock but
        // boot time by the trace's.
        if sequenceScoped || (clock != PerfettoWire.Clock.boottime && clock != 0) {
            let pairs = sequenceScoped ? current.clockPairs[clock] : globalPairs[clock]
            guard let converted = Self.convert(value, pairs: pairs) else {
                note(
                    TraceReadError(
                        path: source, offset: offset,
                        problem: "timestamp on clock \(clock) with no snapshot; event skipped"))
                return nil
            }
            value = converted
        }
        current.lastTimestamp = value
        return value
    }

    /// Converts with the latest pair whose clock reading is not after `value`
    /// (or the earliest pair).
    static func convert(_ value: UInt64, pairs: [(clock: UInt64, boottime: UInt64)]?) -> UInt64? {
        guard let pairs, let first = pairs.first else { return nil }
        var best = first
        for pair in pairs where pair.clock <= value { best = pair }
        if value >= best.clock { return best.boottime &+ (value - best.clock) }
        return best.boottime &- (best.clock - value)
    }
}
