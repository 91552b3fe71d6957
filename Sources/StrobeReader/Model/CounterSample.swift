/// One value of a counter.
public struct CounterSample: Sendable, Hashable {
    /// When, in CLOCK_BOOTTIME nanoseconds.
    public var time: UInt64
    /// The value.
    public var value: Double
}
