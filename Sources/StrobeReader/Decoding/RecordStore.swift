import PerfettoWire

#if canImport(Glibc)
import Glibc
#endif

/// The store of ``TraceReader``: every interval kept as a compact record,
/// with every instant and counter sample, for a ``ParsedTrace``.
struct RecordStore: TraceEventStore {
    /// The parts of an interval that do not fit its record, while reading.
    struct Extra {
        var duration = UInt64.max
        var depth: Int32
        /// The interval open below this one on its track, while it is open.
        var below: Int
        /// The thread-time reading at the begin; NaN when there was none.
        var threadTimeAtBegin = Double.nan
        var cpuTime = UInt64.max
        var details: IntervalDetails?
    }

    static var keepsCounters: Bool { true }
    static var keepsSliceArguments: Bool { true }

    /// Record and extra indices fit in 32 bits, below the `UInt32.max` that
    /// marks none.
    static let intervalLimit = Int(UInt32.max) - 1

    /// Intervals in the order of their begins. While an interval without an
    /// extra is open, its `duration` holds the index of the interval open
    /// below it on its track (`UInt32.max` for none), so each track's stack
    /// is a list threaded through the records.
    var records: [IntervalList.Record] = []
    var extras: [Extra] = []
    /// Tracks with slices, by slot: the uuid, the record index of the
    /// innermost open interval (-1 when none is open), and how many are
    /// open. The current slot's top and count are kept in `currentTop` and
    /// `currentOpen` instead, until another slot becomes current.
    var slotTracks: [UInt64] = []
    var tops: [Int] = []
    var openCounts: [UInt32] = []
    var stackIndex: [UInt64: Int] = [:]
    var currentTrack: UInt64?
    var currentSlot = 0
    var currentTop = -1
    var currentOpen: UInt32 = 0
    var instants: [Instant] = []
    var counterSamples: [UInt64: [CounterSample]] = [:]
    var deferred: [DeferredSlice] = []
    var unmatchedEnds = 0

    var isFull: Bool { records.count + deferred.count >= Self.intervalLimit }

    /// Reserves room for the intervals of `count` bytes of trace: a begin
    /// packet takes at least 12 bytes and its end about as many, so
    /// reserving for that many avoids copying the array as it grows.
    mutating func reserve(forBytes count: Int) {
        records.reserveCapacity(min(count / 24, 1 << 26))
        Self.adviseHugePages(&records)
    }

    mutating func deferSlice(_ slice: DeferredSlice) {
        deferred.append(slice)
    }

    mutating func instant(_ instant: Instant) {
        instants.append(instant)
    }

    mutating func counter(track: UInt64, time: UInt64, value: Double) {
        counterSamples[track, default: []].append(CounterSample(time: time, value: value))
    }

    /// Applies the slices on explicit tracks in time order, then ends the
    /// bookkeeping of intervals still open (their durations hold stack
    /// links until now).
    mutating func finishIntervals() {
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
        deferred = []
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
    }

    /// Asks the kernel to back a large, still untouched array with huge
    /// pages, which saves most of its page faults as it fills.
    static func adviseHugePages<Element>(_ array: inout [Element]) {
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
}
