import StrobeHistory

/// What the fleet views keep of one trace: its identity, where it came from,
/// its metadata and, per interval name and counter, a count, a total and a
/// quantile sketch.
public struct FleetTraceRecord: Sendable, Hashable {
    /// `sha256:` and the digest of the trace's bytes (``identity(of:)``).
    public var id: String
    /// Where the trace was read from: a path, or what an upload named it.
    public var source: String
    /// The trace's metadata (`app.version`, `device.model`, the app's own
    /// dimensions).
    public var metadata: [String: String]
    /// The chance its session was recorded at all; 1 when the trace does not
    /// say.
    public var samplingProbability: Double
    /// Its metrics, one per kind and name.
    public var metrics: [FleetMetricRecord]

    /// A record with these values.
    public init(
        id: String, source: String, metadata: [String: String], samplingProbability: Double,
        metrics: [FleetMetricRecord]
    ) {
        self.id = id
        self.source = source
        self.metadata = metadata
        self.samplingProbability = samplingProbability
        self.metrics = metrics
    }

    /// The identity of a trace of these bytes: `sha256:` and their digest in
    /// hexadecimal.
    public static func identity(of bytes: [UInt8]) -> String {
        "sha256:" + SHA256Digest.hex(bytes)
    }
}

/// One interval name's durations, or one counter's values, in one trace.
public struct FleetMetricRecord: Sendable, Hashable {
    /// Whether the values are an interval's durations or a counter's values.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Durations of ended intervals of one name, in nanoseconds.
        case interval
        /// The samples of one counter.
        case counter
    }

    /// The kind of values.
    public var kind: Kind
    /// The interval's or counter's name.
    public var name: String
    /// How many values.
    public var count: Int64
    /// Their sum.
    public var total: Double
    /// Their ``StrobeStatistics/QuantileSketch``, serialized.
    public var sketch: [UInt8]

    /// A metric with these values.
    public init(kind: Kind, name: String, count: Int64, total: Double, sketch: [UInt8]) {
        self.kind = kind
        self.name = name
        self.count = count
        self.total = total
        self.sketch = sketch
    }
}

/// One session's values of one metric, as a fleet report reads them.
public struct FleetSession: Sendable, Hashable {
    /// The trace's identity.
    public var trace: String
    /// Its metadata.
    public var metadata: [String: String]
    /// The sampling probability of its session.
    public var samplingProbability: Double
    /// How many values.
    public var count: Int64
    /// Their sum.
    public var total: Double
    /// Their sketch, serialized.
    public var sketch: [UInt8]
}

/// What adding traces to a fleet store did.
public struct FleetAddCounts: Sendable, Hashable {
    /// Traces stored now.
    public var added = 0
    /// Traces the store held already (the same bytes ingested before).
    public var alreadyStored = 0

    /// Counts of zero.
    public init() {}
}
