/// What a trace file holds, read packet by packet without keeping its
/// events: its process, threads and tracks, the session's metadata, how
/// many intervals and instants it has and when the first began, and what
/// was lost. Its memory grows with the trace's tracks and names, not with
/// its events, so it reads a file of any size; it decodes every packet as
/// ``TraceReader`` does (the streaming exports read a file this way
/// first).
///
/// ```swift
/// let scan = try TraceScan.read(contentsOf: "big.pftrace")
/// print(scan.intervalCount, scan.threads.map(\.name), scan.truncation?.description ?? "whole")
/// ```
public struct TraceScan: Sendable {
    /// The file.
    public var path: String
    /// Its size in bytes.
    public var byteCount: Int
    /// The traced process, when the trace describes one.
    public var process: TraceProcess?
    /// Threads that have a track, by kernel thread id.
    public var threads: [TraceThread]
    /// Every track the trace describes or puts a slice or instant on, by
    /// uuid.
    public var tracks: [UInt64: TraceTrack]
    /// The session's metadata, as ``ParsedTrace/origin`` gives it.
    public var origin: TraceOrigin?
    /// CLOCK_REALTIME less CLOCK_BOOTTIME, as
    /// ``ParsedTrace/realtimeOffset`` gives it.
    public var realtimeOffset: UInt64?
    /// The earliest start of an interval or time of an instant, in
    /// CLOCK_BOOTTIME nanoseconds; nil for a trace with neither.
    public var firstTime: UInt64?
    /// Intervals begun (each begin counts, ended or not).
    public var intervalCount: Int
    /// Instant events, the session's own marks included.
    public var instantCount: Int
    /// What the writer lost and the reader skipped. A scan matches no
    /// begin with its end, so ``DataLoss/unmatchedEnds`` stays 0.
    public var loss: DataLoss
    /// Problems that did not stop the reading, each with its byte offset:
    /// the first ``issueLimit`` of them.
    public var issues: [TraceReadError]
    /// Problems met beyond those in ``issues``.
    public var moreIssues: Int
    /// Set when reading stopped early at a broken or cut-off packet.
    public var truncation: TraceReadError?
    /// Top-level packets read.
    public var packetCount: Int
    /// Top-level packets that decoded.
    public var decodedPacketCount: Int
    /// Why the file is not a trace at all, when no packet decoded.
    public var notATrace: TraceReadError?
    /// Tracks with a begin on them.
    var sliceTracks: Set<UInt64> = []
    /// Tracks with an instant on them.
    var instantTracks: Set<UInt64> = []

    /// How many problems a scan keeps.
    public static let issueLimit = 1000

    /// Whether the whole file was read.
    public var isComplete: Bool { truncation == nil }

    /// Reads the trace file at `path`.
    ///
    /// - Throws: ``TraceReadError`` when the file cannot be opened or read.
    public static func read(contentsOf path: String) throws(TraceReadError) -> TraceScan {
        try read(contentsOf: path) { _, count, _ in count }
    }

    /// Reads the trace file at `path`, handing each part of it (bytes,
    /// count, whether it is the last part) to `alongside` as well, for a
    /// reader of other packets (the CPU samples) to read in the same pass;
    /// `alongside` returns how many bytes it read, as
    /// ``TraceChunks/next(_:)`` asks.
    static func read(
        contentsOf path: String, partSize: Int = TraceChunks.partSize,
        alongside: (UnsafePointer<UInt8>, Int, Bool) -> Int
    ) throws(TraceReadError) -> TraceScan {
        let chunks = try TraceChunks(path: path, partSize: partSize)
        var builder = TraceBuilder(source: path, store: ScanStore())
        builder.issueLimit = issueLimit
        builder.inputSize = chunks.size
        while try chunks.next({ base, count, origin, isLast in
            var read = count
            if builder.truncation == nil {
                read = builder.consume(base, count: count, origin: origin, isLast: isLast)
            }
            return min(read, alongside(base, count, isLast))
        }) {}
        return TraceScan(builder, chunks: chunks)
    }

    init(_ builder: TraceBuilder<ScanStore>, chunks: TraceChunks) {
        let store = builder.store
        let facts = builder.facts(used: store.sliceTracks.union(store.instantTracks))
        path = chunks.path
        byteCount = chunks.size
        process = facts.process
        threads = facts.threads
        tracks = facts.tracks
        origin = store.origin?.origin
        realtimeOffset = facts.realtimeOffset
        let first = min(store.firstBegin, store.firstInstant)
        firstTime = first == .max ? nil : first
        intervalCount = store.begins
        instantCount = store.instants
        loss = facts.loss
        issues = facts.issues
        moreIssues = builder.uncountedIssues
        truncation = facts.truncation
        packetCount = facts.packetCount
        decodedPacketCount = facts.decodedPacketCount
        sliceTracks = store.sliceTracks
        instantTracks = store.instantTracks
        if decodedPacketCount == 0 {
            notATrace = TraceReader.notATrace(
                prefix: chunks.prefix, problems: issues + (truncation.map { [$0] } ?? []), source: path)
        }
    }
}
