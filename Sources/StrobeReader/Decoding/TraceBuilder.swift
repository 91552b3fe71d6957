import PerfettoWire

/// Turns packets into trace events: framing, sequence state, clocks, track
/// descriptors and interned names, handing slices, instants and counter
/// values to its store (see ``TraceEventStore``).
struct TraceBuilder<Store: TraceEventStore> {
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

    var store: Store
    var fields = PacketFields()
    var states: [SequenceState] = []
    var stateIndex: [UInt32: Int] = [:]
    var current = SequenceState()
    var currentSequence: UInt32?
    var globalPairs: [UInt32: [(clock: UInt64, boottime: UInt64)]] = [:]
    var trackInfo: [UInt64: PacketFields.TrackFields] = [:]
    /// Interval and instant names, each once; events refer to them by index.
    let nameTable: NameTable
    var loss = DataLoss()
    var issues: [TraceReadError] = []
    /// Problems met beyond ``issueLimit``, counted but not kept.
    var uncountedIssues = 0
    /// The most problems kept: a streaming reader keeps a bounded number,
    /// so that a damaged file does not grow its memory.
    var issueLimit = Int.max
    var truncation: TraceReadError?
    /// The size of the whole input, when it comes in parts (problems name
    /// the end of the file).
    var inputSize: Int?
    var packetCount = 0
    var undecodedPackets = 0
    var eventOrder = 0
    var statistics: PacketFields.StatisticsFields?
    var threadTimeTracks: Set<UInt64> = []

    /// Whether the hand decoders run; off, every packet goes through
    /// protobuf-c (tests compare the two).
    let usesFastPaths: Bool

    init(source: String, store: Store, names: NameTable = NameTable(), usesFastPaths: Bool = true) {
        self.source = source
        self.store = store
        nameTable = names
        self.usesFastPaths = usesFastPaths
    }

    /// Keeps `issue`, unless ``issueLimit`` are kept already.
    mutating func note(_ issue: TraceReadError) {
        if issues.count < issueLimit { issues.append(issue) } else { uncountedIssues += 1 }
    }

    // MARK: Framing

    /// Reads the packets in `count` bytes at `base`, the input's bytes from
    /// `origin` on (which offsets in problems count from), and returns how
    /// many bytes it read. In the last part of the input (`isLast`), bytes
    /// cut off at the end are a truncation and every byte counts as read;
    /// in any other part, reading stops at the first field it cannot read
    /// whole, for the caller to give again with what follows (see
    /// ``TraceChunks``).
    @discardableResult
    mutating func consume(_ base: UnsafePointer<UInt8>, count: Int, origin: Int = 0, isLast: Bool = true) -> Int {
        var reader = WireReader(base, from: 0, to: count)
        while !reader.isAtEnd {
            let start = reader.position
            let offset = origin + start
            guard let key = reader.varint() else {
                if !isLast { return start }
                truncation = TraceReadError(
                    path: source, offset: offset, problem: "cut off inside a packet's field tag")
                return count
            }
            guard key == UInt64(PerfettoWire.Trace.packetTag) else {
                let field = PerfettoWire.WireType.field(of: key)
                let wireType = PerfettoWire.WireType.wireType(of: key)
                if wireType <= 5, field != 0, reader.skip(wireType: wireType) {
                    // A field of Trace other than `packet`: not ours to read.
                    note(TraceReadError(path: source, offset: offset, problem: "skipped unknown Trace field \(field)"))
                    continue
                }
                if !isLast { return start }
                truncation = TraceReadError(
                    path: source, offset: offset,
                    problem: "expected a packet (field 1, length-delimited), found tag 0x\(String(key, radix: 16))")
                return count
            }
            let lengthOffset = origin + reader.position
            guard let length = reader.varint() else {
                if !isLast { return start }
                truncation = TraceReadError(path: source, offset: offset, problem: "cut off inside a packet's length")
                return count
            }
            guard length <= UInt64(count - reader.position) else {
                if !isLast { return start }
                truncation = TraceReadError(
                    path: source, offset: offset,
                    problem:
                        "packet of \(length) bytes (length at byte \(lengthOffset)) runs past the end of the file at "
                        + "byte \(inputSize ?? origin + count)"
                )
                return count
            }
            guard !store.isFull else {
                truncation = TraceReadError(
                    path: source, offset: offset,
                    problem: "more than \(RecordStore.intervalLimit) intervals; reading stopped")
                return count
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
                    note(TraceReadError(path: source, offset: offset, problem: "packet does not decode; skipped"))
                    undecodedPackets += 1
                    continue
                }
            }
            process(offset: offset)
        }
        return count
    }
}
