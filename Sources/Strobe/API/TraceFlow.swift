import Synchronization

extension Trace {
    /// A link from an interval on one thread to the work it causes elsewhere.
    ///
    /// Create a flow where the work is handed off, pass it to the `begin` of
    /// the interval that hands it off, and to the `begin` of the interval that
    /// picks it up. The viewer draws an arrow from cause to effect.
    ///
    /// ```swift
    /// let flow = Trace.Flow()
    /// Trace.interval("enqueue", flow: flow) { queue.push(job, flow) }
    /// // on a worker thread:
    /// Trace.interval("run job", terminatingFlow: job.flow) { job.run() }
    /// ```
    public struct Flow: Sendable, Hashable {
        /// The flow's identifier, unique within the process.
        public let id: UInt64

        /// A new flow with a process-unique identifier.
        public init() {
            id = Trace.nextIdentifier()
        }

        /// A flow with an identifier of your choosing, for example one carried
        /// across a process boundary.
        public init(id: UInt64) {
            self.id = id
        }
    }

    static let identifiers = Atomic<UInt64>(1)

    static func nextIdentifier() -> UInt64 {
        identifiers.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}
