/// The pprof export of a trace file, read packet by packet: the bytes
/// ``PprofExport/encode(_:samples:threads:timeNanos:)`` gives for the same
/// samples, with samples counted by stack and thread as they are read, so
/// that memory grows with the distinct stacks, frames and functions, not
/// with the samples or the file.
///
/// ```swift
/// let export = try PprofExport.encode(contentsOf: "big.pftrace", within: "frame")
/// if export.exportedSamples > 0 { try write(gzip(export.bytes)) }
/// ```
extension PprofExport {
    /// What ``encode(contentsOf:within:timeNanos:)`` read and wrote.
    public struct FileExport: Sendable {
        /// The `Profile`'s bytes, uncompressed.
        public var bytes: [UInt8]
        /// CPU samples in the trace whose call stacks resolved.
        public var samples: Int
        /// Samples exported: every sample, or those inside the interval's
        /// instances.
        public var exportedSamples: Int
        /// With an interval, its instances that ended on a thread (those
        /// whose samples count).
        public var instances: Int?
        /// The trace's threads, which name the `thread` labels.
        public var threads: [TraceThread]
        /// Set when reading stopped early at a broken or cut-off packet.
        public var truncation: TraceReadError?
        /// Why the file is not a trace at all, when no packet decoded.
        public var notATrace: TraceReadError?
    }

    /// The pprof export of the CPU samples in the trace file at `path`, or
    /// of those inside the instances of the interval named `interval` (as
    /// ``CPUProfile/samples(within:)`` chooses them). With an interval the
    /// file is read twice: its instances first, then its samples; their
    /// memory grows with the instances.
    ///
    /// - Parameter timeNanos: when the profile started, in Unix
    ///   nanoseconds, when the caller knows it.
    /// - Throws: ``TraceReadError`` when the file cannot be opened or read.
    public static func encode(
        contentsOf path: String, within interval: String? = nil, timeNanos: Int64? = nil
    ) throws(TraceReadError) -> FileExport {
        try encode(contentsOf: path, within: interval, timeNanos: timeNanos, partSize: TraceChunks.partSize)
    }

    /// The same, reading the file in parts of `partSize` bytes (tests make
    /// them small).
    static func encode(
        contentsOf path: String, within interval: String?, timeNanos: Int64?, partSize: Int
    ) throws(TraceReadError) -> FileExport {
        var parser = CPUProfileParser()
        parser.counts = SampleCounts()
        var export = FileExport(bytes: [], samples: 0, exportedSamples: 0, threads: [])
        if let interval {
            let (ranges, instances) = try readInstances(of: interval, in: path, partSize: partSize, into: &export)
            export.instances = instances
            parser.within = ranges
            let chunks = try TraceChunks(path: path, partSize: partSize)
            while try chunks.next({ base, count, _, isLast in parser.consume(base, count: count, isLast: isLast) }) {}
        } else {
            let scan = try TraceScan.read(contentsOf: path, partSize: partSize) { base, count, isLast in
                parser.consume(base, count: count, isLast: isLast)
            }
            export.threads = scan.threads
            export.truncation = scan.truncation
            export.notATrace = scan.notATrace
        }
        let counts = parser.counts ?? SampleCounts()
        export.samples = parser.sampleCount
        export.exportedSamples = counts.total
        export.bytes = encode(parser.profile, counts: counts, threads: export.threads, timeNanos: timeNanos)
        return export
    }

    /// The first pass with an interval: the time ranges of its instances on
    /// each thread, and how many there are; the threads and problems go in
    /// `export`.
    private static func readInstances(
        of interval: String, in path: String, partSize: Int, into export: inout FileExport
    ) throws(TraceReadError) -> (ThreadTimeRanges, Int) {
        let chunks = try TraceChunks(path: path, partSize: partSize)
        let names = NameTable()
        let sink = InstanceSink(name: names.intern(interval))
        var builder = TraceBuilder(source: path, store: IntervalStream(sink: sink), names: names)
        builder.issueLimit = TraceScan.issueLimit
        builder.inputSize = chunks.size
        while try chunks.next({ base, count, origin, isLast in
            guard builder.truncation == nil else { return count }
            return builder.consume(base, count: count, origin: origin, isLast: isLast)
        }) {}
        builder.store.finish()
        let facts = builder.facts(used: [])
        export.threads = facts.threads
        export.truncation = facts.truncation
        if facts.decodedPacketCount == 0 {
            export.notATrace = TraceReader.notATrace(
                prefix: chunks.prefix, problems: facts.issues + (facts.truncation.map { [$0] } ?? []), source: path)
        }
        var instances = 0
        var byThread: [Int64: [ThreadTimeRanges.Packed]] = [:]
        for (track, ranges) in builder.store.sink.instances {
            guard let described = facts.tracks[track], described.kind == .thread, let tid = described.tid else {
                continue
            }
            instances += builder.store.sink.counts[track] ?? 0
            var finished = ranges
            finished.finish()
            byThread[tid, default: []].append(finished)
        }
        builder.store.sink.instances = [:]
        return (ThreadTimeRanges(byThread), instances)
    }

    /// Keeps the time ranges of the instances of one interval name that
    /// ended, by track, overlapping ones merged as they come.
    struct InstanceSink: IntervalSink {
        static var placesInstants: Bool { false }
        static var keepsArguments: Bool { false }
        let name: UInt32
        var instances: [UInt64: ThreadTimeRanges.Packed] = [:]
        /// Instances that ended, by track.
        var counts: [UInt64: Int] = [:]

        func places(_ instant: Instant) -> Bool { false }

        func mayPlaceInstants(on track: UInt64) -> Bool { false }

        func began(
            slot: Int, track: UInt64, name: UInt32, start: UInt64, depth: Int, below: IntervalMark?
        ) -> IntervalMark {
            IntervalMark()
        }

        mutating func ended(_ interval: StreamedInterval, slot: Int, track: UInt64) {
            guard interval.name == name, let end = interval.end else { return }
            counts[track, default: 0] += 1
            instances[track, default: ThreadTimeRanges.Packed()].append((interval.start, end))
        }

        func alone(_ instant: Instant, slot: Int) {}
    }
}
