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
