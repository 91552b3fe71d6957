extension Trace {
    /// The unit of a counter track.
    public enum CounterUnit: UInt8, Sendable, Hashable {
        /// No particular unit.
        case unspecified = 0
        /// Nanoseconds.
        case nanoseconds = 1
        /// A count of things.
        case count = 2
        /// Bytes.
        case bytes = 3
    }
}
