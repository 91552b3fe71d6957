/// A test's `setupOnce` block and its one result in this process.
///
/// The first caller of ``value()`` starts the block; every other caller, at
/// the same time or later, waits for that same run and gets its value, or
/// the error it threw: the block never runs twice, even after a failure.
/// Copies of a ``PerfTest`` share one instance.
actor SetupOnce<Value: Sendable> {
    private let block: @Sendable () async throws -> Value
    private var run: Task<Value, any Error>?

    init(_ block: @escaping @Sendable () async throws -> Value) {
        self.block = block
    }

    /// The block's value, running it if no caller has yet.
    func value() async throws -> Value {
        if let run { return try await run.value }
        let block = block
        // Set before the first suspension, so a caller that enters while
        // this one waits finds the run and waits for it too.
        let started = Task { try await block() }
        run = started
        return try await started.value
    }
}
