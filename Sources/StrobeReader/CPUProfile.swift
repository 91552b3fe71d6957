/// The CPU samples of a trace: each a thread's call stack at a moment, as
/// `PerfSample` packets with interned frames and call stacks carry them
/// (what Strobe's CPU profiler writes, and Perfetto's `traced_perf`).
///
/// ```swift
/// let profile = try CPUProfile.read(contentsOf: "app.pftrace")
/// for row in profile.topFunctions(limit: 10) { print(row.function, row.selfSamples) }
/// ```
public struct CPUProfile: Sendable {
    /// One sample.
    public struct Sample: Sendable, Hashable {
        /// When, in CLOCK_BOOTTIME nanoseconds (the trace's clock).
        public var time: UInt64
        /// The thread sampled.
        public var tid: Int64
        /// The CPU it ran on.
        public var cpu: UInt32
        /// Its call stack, an index into ``CPUProfile/stacks``.
        public var stack: Int
        /// The same call stack as frames, an index into
        /// ``CPUProfile/frameStacks``.
        public var frameStack: Int = 0
    }

    /// One frame of a call stack: a function at an address in a mapping.
    public struct Frame: Sendable, Hashable {
        /// The function, an index into ``CPUProfile/functions``.
        public var function: Int
        /// The mapping it is in, an index into ``CPUProfile/mappings``; nil
        /// when the trace names none.
        public var mapping: Int?
        /// The frame's address as an offset in the mapped file (Perfetto's
        /// `rel_pc`; Strobe's profiler writes the function's entry).
        public var relativePC: UInt64
    }

    /// A file code was sampled in.
    public struct Mapping: Sendable, Hashable {
        /// The file's path.
        public var path: String
        /// Its GNU build id in hex, empty when it has none.
        public var buildID: String
        /// The first address the process mapped it at (0 when unknown).
        public var start: UInt64 = 0
        /// The address just past the mapping (0 when unknown).
        public var end: UInt64 = 0
        /// The offset in the file that ``start`` maps.
        public var fileOffset: UInt64 = 0
    }

    /// The samples, in file order.
    public var samples: [Sample] = []
    /// The call stacks: indexes into ``functions``, the outermost caller
    /// first, the function that ran last.
    public var stacks: [[Int]] = []
    /// The call stacks as frames: indexes into ``frames``, the outermost
    /// caller first; a sample's ``Sample/frameStack`` picks one.
    public var frameStacks: [[Int]] = []
    /// The frames, each once.
    public var frames: [Frame] = []
    /// Function names, each once.
    public var functions: [String] = []
    /// The files the frames are in.
    public var mappings: [Mapping] = []
    /// Samples left out because their call stack, a frame or a name did not
    /// resolve on their sequence (interned data lost or never written).
    public var unresolvedSamples = 0
    /// Samples lost as the trace's loss packets count them
    /// (`kernel_records_lost`), which Perfetto shows as
    /// `perf_cpu_lost_records`.
    public var lostRecords = 0
    /// How the samples were taken (`perf_event` or `cpu_timer`), from the
    /// profile's closing mark; nil without one.
    public var method: String?
    /// The sampling rate asked for, per second of CPU time; nil when unknown.
    public var frequency: Int?
    /// Samples the writer lost (a ring full before it was drained); nil
    /// when the trace does not say.
    public var lostSamples: Int?
    /// Samples whose stack ends where a frame could not be unwound by its
    /// call-frame information, as the closing mark counts them; nil when the
    /// trace does not say.
    public var truncatedStacks: Int?
    /// Why the kernel's method was not used, when the trace says.
    public var fallbackReason: String?
    /// Threads no sampler could be opened for (0 when the trace names
    /// none), and why the first one failed.
    public var unsampledThreads = 0
    /// Why the first unsampled thread's sampler could not be opened.
    public var samplerFailure: String?

    /// Whether the trace holds any sample.
    public var isEmpty: Bool { samples.isEmpty }

    /// An empty profile.
    public init() {}

    /// Reads the samples of the trace file at `path`.
    ///
    /// - Throws: ``TraceReadError`` when the file cannot be read.
    public static func read(contentsOf path: String) throws(TraceReadError) -> CPUProfile {
        let bytes = try TraceReader.readFile(path)
        return read(bytes: bytes)
    }

    /// Reads the samples of a trace held in memory.
    public static func read(bytes: [UInt8]) -> CPUProfile {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return CPUProfile() }
            var parser = CPUProfileParser()
            parser.consume(base, count: buffer.count)
            return parser.profile
        }
    }

    /// The name of the instant that closes a Strobe profile.
    static let markName = "strobe.cpu_profile"
}
