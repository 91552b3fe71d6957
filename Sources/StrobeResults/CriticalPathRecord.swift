/// What the critical path of one interval name crossed in each measured
/// iteration of a test: the intervals on it and the waits, so that a
/// report can say which interval now waits for which
/// (`interval:NAME:critical_path` gives the path's length).
public struct CriticalPathRecord: Sendable, Hashable, Codable {
    /// A wait on a critical path: the waiter's thread resumed when the
    /// interval it waited for ended.
    public struct Wait: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
        /// What ran next on the thread that waited; nil for the thread's
        /// own untraced code.
        public var waiter: String?
        /// The interval it waited for.
        public var waitedFor: String

        /// A wait of `waiter` for `waitedFor`.
        public init(waiter: String?, waitedFor: String) {
            self.waiter = waiter
            self.waitedFor = waitedFor
        }

        /// `lens worker 1 waits for lens worker 0`.
        public var description: String { "\(waiter ?? "(untraced)") waits for \(waitedFor)" }

        /// By waiter (untraced code first), then by what it waited for.
        public static func < (a: Wait, b: Wait) -> Bool {
            (a.waiter ?? "", a.waitedFor) < (b.waiter ?? "", b.waitedFor)
        }
    }

    /// What the critical paths of one iteration's instances of the
    /// interval crossed, each thing once.
    public struct Iteration: Sendable, Hashable, Codable {
        /// The names of the intervals on the path, sorted.
        public var names: [String]
        /// The waits on the path, sorted.
        public var waits: [Wait]

        /// An iteration's names and waits, each kept once, sorted.
        public init(names: [String] = [], waits: [Wait] = []) {
            self.names = Set(names).sorted()
            self.waits = Set(waits).sorted()
        }
    }

    /// The interval whose critical path it is.
    public var interval: String
    /// One entry per measured iteration, in iteration order.
    public var iterations: [Iteration]

    /// The name of the metric that gives the path's length,
    /// `interval:NAME:critical_path` (a suite's
    /// `.interval(NAME, .criticalPath)`).
    public var metric: String { "interval:\(interval):critical_path" }

    /// The record of `interval`'s critical path over `iterations`.
    public init(interval: String, iterations: [Iteration] = []) {
        self.interval = interval
        self.iterations = iterations
    }
}
