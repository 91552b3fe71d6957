import PerfettoWire

#if canImport(Glibc)
import Glibc
#endif

/// Turns packets into a ``ParsedTrace``: framing, sequence state, clocks,
/// tracks, and slices.
struct TraceBuilder {
    let source: String

    struct SequenceState {
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
    struct DeferredEvent {
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

    var fields = PacketFields()
    var states: [SequenceState] = []
    var stateIndex: [UInt32: Int] = [:]
    var current = SequenceState()
    var currentSequence: UInt32?
    var globalPairs: [UInt32: [(clock: UInt64, boottime: UInt64)]] = [:]
    var trackInfo: [UInt64: PacketFields.TrackFields] = [:]
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

    /// Intervals in the order of their begins. While an interval without an
    /// extra is open, its `duration` holds the index of the interval open
    /// below it on its track (`UInt32.max` for none), so each track's stack
    /// is a list threaded through the records.
    var records: [IntervalList.Record] = []
    var extras: [Extra] = []
    /// Record and extra indices fit in 32 bits, below the `UInt32.max` that
    /// marks none.
    static let intervalLimit = Int(UInt32.max) - 1
    /// Interval names, each once; `records` refer to them by index.
    var names: [String] = [""]
    var nameIndex: [String: UInt32] = ["": 0]
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
    var deferred: [DeferredEvent] = []
    var loss = DataLoss()
    var issues: [TraceReadError] = []
    var truncation: TraceReadError?
    var packetCount = 0
    var undecodedPackets = 0
    var eventOrder = 0
    var statistics: PacketFields.StatisticsFields?
    var threadTimeTracks: Set<UInt64> = []

    static let noArguments: [String: TraceArgument] = [:]

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
                truncation = TraceReadError(
                    path: source, offset: offset, problem: "cut off inside a packet's field tag")
                return
            }
            guard key == UInt64(PerfettoWire.Trace.packetTag) else {
                let field = PerfettoWire.WireType.field(of: key)
                let wireType = PerfettoWire.WireType.wireType(of: key)
                if wireType <= 5, field != 0, reader.skip(wireType: wireType) {
                    // A field of Trace other than `packet`: not ours to read.
                    issues.append(
                        TraceReadError(path: source, offset: offset, problem: "skipped unknown Trace field \(field)"))
                    continue
                }
                truncation = TraceReadError(
                    path: source, offset: offset,
                    problem: "expected a packet (field 1, length-delimited), found tag 0x\(String(key, radix: 16))")
                return
            }
            let lengthOffset = reader.position
            guard let length = reader.varint() else {
                truncation = TraceReadError(path: source, offset: offset, problem: "cut off inside a packet's length")
                return
            }
            guard length <= UInt64(count - reader.position) else {
                truncation = TraceReadError(
                    path: source, offset: offset,
                    problem:
                        "packet of \(length) bytes (length at byte \(lengthOffset)) runs past the end of the file at "
                        + "byte \(count)"
                )
                return
            }
            guard records.count + deferred.count < Self.intervalLimit else {
                truncation = TraceReadError(
                    path: source, offset: offset, problem: "more than \(Self.intervalLimit) intervals; reading stopped")
                return
            }
            let range = reader.position..<(reader.position + Int(length))
            reader.position = range.upperBound
            packetCount += 1
            // The hand decoder first (the densest packets without any
            // intermediate fields), protobuf-c for whatever it does not read.
            if usesFastPaths, readPlainSlicePacket(base, range) { continue }
            fields.reset()
            if !usesFastPaths || !FastPacketDecoder.decode(base, range, into: &fields) {
                fields.reset()
                guard ProtobufCPacketDecoder.decode(base, range, into: &fields) else {
                    issues.append(
                        TraceReadError(path: source, offset: offset, problem: "packet does not decode; skipped"))
                    undecodedPackets += 1
                    continue
                }
            }
            process(offset: offset)
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
