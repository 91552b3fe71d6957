extension Trace {
    /// Extra data an interval captures at its begin and end.
    public struct Capture: OptionSet, Sendable, Hashable {
        /// The raw bits.
        public let rawValue: UInt8

        /// Creates a set from raw bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The thread's `getrusage(RUSAGE_THREAD)` counters: CPU user and
        /// system time, context switches and page faults. Together they tell
        /// whether the thread was busy computing or blocked waiting. Costs one
        /// system call (about 350 ns) at each end of the interval.
        public static let resourceUsage = Capture(rawValue: 1)
    }
}
