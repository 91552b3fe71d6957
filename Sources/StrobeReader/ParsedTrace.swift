/// Everything read from a trace file: intervals, instants and counters, with
/// the threads and tracks they belong to and what was lost.
///
/// Timestamps are CLOCK_BOOTTIME nanoseconds, the trace clock of Perfetto.
public struct ParsedTrace: Sendable {
    /// The traced process, when the trace describes one.
    public var process: TraceProcess?
    /// Threads that have a track, by kernel thread id.
    public var threads: [TraceThread]
    /// Every track the trace describes or uses, by uuid.
    public var tracks: [UInt64: TraceTrack]
    /// Intervals, sorted by start time; at the same start, the outer one
    /// first.
    public var intervals: IntervalList
    /// Instant events, sorted by time.
    public var instants: [Instant]
    /// Counter tracks with their samples.
    public var counters: [CounterSeries]
    /// What the writer lost, and what the reader had to skip.
    public var loss: DataLoss
    /// Problems that did not stop the reading, each with its byte offset.
    public var issues: [TraceReadError]
    /// Set when reading stopped early at a broken or cut-off packet; what
    /// came before it is in this value.
    public var truncation: TraceReadError?
    /// Top-level packets read.
    public var packetCount: Int
    /// Top-level packets that decoded: ``packetCount`` less those skipped.
    /// 0 means nothing in the input was a readable trace packet.
    public var decodedPacketCount: Int
    /// Why the input is not a trace at all, when no packet decoded: empty,
    /// foreign bytes at its start (named, with the bytes shown), or the
    /// first packet's problem; nil when a packet decoded.
    public var notATrace: TraceReadError? = nil

    /// Puts intervals and instants in time order, as documented.
    mutating func sortByTime() {
        intervals.sortByStart()
        if !zip(instants, instants.dropFirst()).allSatisfy({ $0.time <= $1.time }) {
            instants.sort { $0.time < $1.time }
        }
    }

    /// Whether the whole file was read.
    public var isComplete: Bool { truncation == nil }

    /// The thread with kernel thread id `tid`.
    public func thread(_ tid: Int64) -> TraceThread? { threads.first { $0.tid == tid } }

    /// Intervals named `name`.
    public func intervals(named name: String) -> [Interval] { intervals.filter(named: name) }

    /// The counter track named `name`.
    public func counter(named name: String) -> CounterSeries? { counters.first { $0.name == name } }
}

/// The traced process.
public struct TraceProcess: Sendable, Hashable {
    /// Process id.
    public var pid: Int32
    /// Process name.
    public var name: String
}

/// A thread that recorded events.
public struct TraceThread: Sendable, Hashable {
    /// Kernel thread id.
    public var tid: Int64
    /// Process id.
    public var pid: Int32
    /// Thread name.
    public var name: String
    /// The uuid of the thread's track.
    public var trackUUID: UInt64
}

/// A track: a lane of events in the viewer.
public struct TraceTrack: Sendable, Hashable {
    /// What kind of track it is.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A process's track.
        case process
        /// A thread's track.
        case thread
        /// A counter track.
        case counter
        /// An async track of its own (intervals that may cross threads).
        case async
        /// A track used by events but never described.
        case other
    }

    /// The track's uuid.
    public var uuid: UInt64
    /// What kind of track it is.
    public var kind: Kind
    /// Its name.
    public var name: String
    /// The track it is nested under.
    public var parent: UInt64?
    /// The thread, for thread tracks (and counters under one).
    public var tid: Int64?
    /// The process id, when known.
    public var pid: Int32?
    /// The unit of a counter track ("ns", "count", "bytes" or a free name).
    public var counterUnit: String?
    /// Whether the counter is a thread's CPU time.
    public var isThreadTime: Bool
}

/// The value of an argument attached to an event.
public enum TraceArgument: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A signed integer.
    case int(Int64)
    /// An unsigned integer.
    case uint(UInt64)
    /// A floating point number.
    case double(Double)
    /// A Boolean.
    case bool(Bool)
    /// A string.
    case string(String)

    /// The value as text.
    public var description: String {
        switch self {
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case .double(let value): return String(value)
        case .bool(let value): return String(value)
        case .string(let value): return value
        }
    }

    /// The value as a number, when it is one.
    public var number: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .double(let value): return value
        case .bool(let value): return value ? 1 : 0
        case .string: return nil
        }
    }
}

/// What `getrusage` counted over an interval.
public struct ResourceUsageDelta: Sendable, Hashable, Codable {
    /// CPU time in user mode, in nanoseconds.
    public var userNanoseconds: Int64 = 0
    /// CPU time in the kernel, in nanoseconds.
    public var systemNanoseconds: Int64 = 0
    /// Context switches the thread asked for (it blocked).
    public var voluntarySwitches: Int64 = 0
    /// Context switches forced on the thread (it was preempted).
    public var involuntarySwitches: Int64 = 0
    /// Page faults served without I/O.
    public var minorFaults: Int64 = 0
    /// Page faults that needed I/O.
    public var majorFaults: Int64 = 0

    /// User plus system CPU time.
    public var cpuNanoseconds: Int64 { userNanoseconds + systemNanoseconds }
}

/// A span of time on a track: a begin and (usually) its end.
///
/// Stored compactly (rare details live in one shared box), since a trace
/// holds millions of intervals.
public struct Interval: Sendable, Hashable {
    /// The interval's name.
    public var name: String
    /// The track it is on.
    public var track: UInt64
    /// Start, in CLOCK_BOOTTIME nanoseconds.
    public var start: UInt64
    @usableFromInline var storedDuration: UInt64 = .max
    @usableFromInline var storedCPUTime: UInt64 = .max
    @usableFromInline var storedThread: Int64 = .min
    @usableFromInline var storedDepth: Int32
    @usableFromInline var storedIsAsync = false
    @usableFromInline var details: IntervalDetails?

    /// An interval; `duration` nil means it never ended.
    public init(
        name: String, track: UInt64, tid: Int64? = nil, start: UInt64, duration: UInt64? = nil, depth: Int = 0,
        cpuTime: UInt64? = nil, resourceUsage: ResourceUsageDelta? = nil, arguments: [String: TraceArgument] = [:],
        flowIDs: [UInt64] = [], terminatingFlowIDs: [UInt64] = [], isAsync: Bool = false
    ) {
        self.name = name
        self.track = track
        self.start = start
        storedDepth = Int32(clamping: depth)
        self.duration = duration
        self.cpuTime = cpuTime
        self.tid = tid
        self.isAsync = isAsync
        if resourceUsage != nil || !arguments.isEmpty || !flowIDs.isEmpty || !terminatingFlowIDs.isEmpty {
            details = IntervalDetails(
                resourceUsage: resourceUsage, arguments: arguments, flowIDs: flowIDs,
                terminatingFlowIDs: terminatingFlowIDs)
        }
    }

    /// An interval from the parts ``IntervalList`` keeps, with the stored
    /// sentinels (`.max`, `.min`) for absent values.
    @inlinable
    init(
        name: String, track: UInt64, storedThread: Int64, start: UInt64, storedDuration: UInt64, storedDepth: Int32,
        storedCPUTime: UInt64, isAsync: Bool, details: IntervalDetails?
    ) {
        self.name = name
        self.track = track
        self.start = start
        self.storedDuration = storedDuration
        self.storedCPUTime = storedCPUTime
        self.storedThread = storedThread
        self.storedDepth = storedDepth
        storedIsAsync = isAsync
        self.details = details
    }

    /// The thread that ran it; nil on async tracks.
    public var tid: Int64? {
        get { storedThread == .min ? nil : storedThread }
        set { storedThread = newValue ?? .min }
    }

    /// Duration in nanoseconds; nil when the trace ends before it does.
    public var duration: UInt64? {
        get { storedDuration == .max ? nil : storedDuration }
        set { storedDuration = newValue ?? .max }
    }

    /// Nesting depth on its track (0 at the top).
    public var depth: Int {
        get { Int(storedDepth) }
        set { storedDepth = Int32(clamping: newValue) }
    }

    /// The thread's CPU time over the interval, when captured.
    public var cpuTime: UInt64? {
        get { storedCPUTime == .max ? nil : storedCPUTime }
        set { storedCPUTime = newValue ?? .max }
    }

    /// Whether the interval is on an async track of its own.
    public var isAsync: Bool {
        get { storedIsAsync }
        set { storedIsAsync = newValue }
    }

    /// The rusage deltas over the interval, when captured.
    public var resourceUsage: ResourceUsageDelta? {
        get { details?.resourceUsage }
        set { updateDetails { $0.resourceUsage = newValue } }
    }

    /// Arguments of the begin and end, merged.
    public var arguments: [String: TraceArgument] {
        get { details?.arguments ?? [:] }
        set { updateDetails { $0.arguments = newValue } }
    }

    /// Flows that start or pass through here.
    public var flowIDs: [UInt64] {
        get { details?.flowIDs ?? [] }
        set { updateDetails { $0.flowIDs = newValue } }
    }

    /// Flows that end here.
    public var terminatingFlowIDs: [UInt64] {
        get { details?.terminatingFlowIDs ?? [] }
        set { updateDetails { $0.terminatingFlowIDs = newValue } }
    }

    /// The categories of its begin (see `Trace.Category`); empty for none.
    public var categories: [String] {
        get { details?.categories ?? [] }
        set { updateDetails { $0.categories = newValue } }
    }

    /// The end, when the interval ended.
    public var end: UInt64? { duration.map { start &+ $0 } }

    private mutating func updateDetails(_ change: (inout IntervalDetails.Values) -> Void) {
        var values = details?.values ?? IntervalDetails.Values()
        change(&values)
        details = values.isEmpty ? nil : IntervalDetails(values)
    }
}

/// The rarely used parts of an interval, boxed so intervals stay small.
@usableFromInline
final class IntervalDetails: Sendable, Hashable {
    struct Values: Hashable {
        var resourceUsage: ResourceUsageDelta?
        var arguments: [String: TraceArgument] = [:]
        var flowIDs: [UInt64] = []
        var terminatingFlowIDs: [UInt64] = []
        var categories: [String] = []

        var isEmpty: Bool {
            resourceUsage == nil && arguments.isEmpty && flowIDs.isEmpty && terminatingFlowIDs.isEmpty
                && categories.isEmpty
        }
    }

    let values: Values

    init(_ values: Values) { self.values = values }

    convenience init(
        resourceUsage: ResourceUsageDelta?, arguments: [String: TraceArgument], flowIDs: [UInt64],
        terminatingFlowIDs: [UInt64]
    ) {
        self.init(
            Values(
                resourceUsage: resourceUsage, arguments: arguments, flowIDs: flowIDs,
                terminatingFlowIDs: terminatingFlowIDs))
    }

    var resourceUsage: ResourceUsageDelta? { values.resourceUsage }
    var arguments: [String: TraceArgument] { values.arguments }
    var flowIDs: [UInt64] { values.flowIDs }
    var terminatingFlowIDs: [UInt64] { values.terminatingFlowIDs }
    var categories: [String] { values.categories }

    @usableFromInline static func == (lhs: IntervalDetails, rhs: IntervalDetails) -> Bool { lhs.values == rhs.values }
    @usableFromInline func hash(into hasher: inout Hasher) { hasher.combine(values) }
}

/// A moment on a track.
public struct Instant: Sendable, Hashable {
    /// Its name.
    public var name: String
    /// The track it is on.
    public var track: UInt64
    /// The thread, when on a thread track.
    public var tid: Int64?
    /// When, in CLOCK_BOOTTIME nanoseconds.
    public var time: UInt64
    /// Its arguments.
    public var arguments: [String: TraceArgument]
    /// Its categories; empty for none.
    public var categories: [String] = []

    /// An instant.
    public init(
        name: String, track: UInt64, tid: Int64?, time: UInt64, arguments: [String: TraceArgument],
        categories: [String] = []
    ) {
        self.name = name
        self.track = track
        self.tid = tid
        self.time = time
        self.arguments = arguments
        self.categories = categories
    }
}

/// A counter track and its samples.
public struct CounterSeries: Sendable, Hashable {
    /// The track's uuid.
    public var track: UInt64
    /// The counter's name.
    public var name: String
    /// The unit, when known.
    public var unit: String?
    /// Samples in time order.
    public var samples: [CounterSample]
}

/// One value of a counter.
public struct CounterSample: Sendable, Hashable {
    /// When, in CLOCK_BOOTTIME nanoseconds.
    public var time: UInt64
    /// The value.
    public var value: Double
}

/// What was lost before or while reading the trace.
public struct DataLoss: Sendable, Hashable {
    /// Loss counts of one writing thread, from the trace's statistics.
    public struct ThreadLoss: Sendable, Hashable {
        /// The thread's packet sequence.
        public var sequenceID: UInt64
        /// Events the thread recorded.
        public var recorded: UInt64
        /// Events discarded because the thread's buffer was full.
        public var discarded: UInt64
        /// Events overwritten in a ring buffer.
        public var overwritten: UInt64
        /// Ends the writer left out because their begin is not in the
        /// trace (overwritten in a ring, or recorded while its category
        /// was off).
        public var orphanEnds: UInt64 = 0
    }

    /// Per-thread counts from the trace's statistics.
    public var threads: [ThreadLoss] = []
    /// Packets that say packets before them were lost.
    public var droppedPacketMarks = 0
    /// Packets skipped because their sequence's state was unknown.
    public var skippedPackets = 0
    /// Ends without an open interval on their track.
    public var unmatchedEnds = 0

    /// Events the writers discarded.
    public var discardedEvents: UInt64 { threads.reduce(0) { $0 + $1.discarded } }
    /// Events overwritten in ring buffers.
    public var overwrittenEvents: UInt64 { threads.reduce(0) { $0 + $1.overwritten } }
    /// Ends the writers left out because their begin is not in the trace.
    public var orphanEnds: UInt64 { threads.reduce(0) { $0 + $1.orphanEnds } }
    /// Whether anything at all was lost.
    public var isEmpty: Bool {
        discardedEvents == 0 && overwrittenEvents == 0 && orphanEnds == 0 && droppedPacketMarks == 0
            && skippedPackets == 0
    }
}
