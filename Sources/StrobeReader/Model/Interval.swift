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
