extension TraceSession {
    /// Records a trace while `body` runs: starts a session, runs `body`,
    /// stops the session and returns what `body` returned.
    ///
    /// ```swift
    /// try TraceSession.record(TraceConfiguration(outputPath: "run.pftrace")) {
    ///     render()
    /// }
    /// ```
    ///
    /// The session stops even when `body` throws; then `body`'s error is the
    /// one thrown. Otherwise an error from stopping (a write that failed) is
    /// thrown, so a trace cut short never goes unnoticed.
    ///
    /// - Throws: a ``TraceSessionError`` when the session cannot start or
    ///   stop, or what `body` throws.
    @discardableResult
    public static func record<Result>(
        _ configuration: TraceConfiguration,
        _ body: () throws -> Result
    ) throws -> Result {
        let session = try start(configuration)
        let result: Result
        do {
            result = try body()
        } catch {
            try? session.stop()
            throw error
        }
        try session.stop()
        return result
    }

    /// Records a trace while asynchronous `body` runs: starts a session, runs
    /// `body`, stops the session and returns what `body` returned.
    ///
    /// See ``record(_:_:)-(_,()->Result)``.
    @discardableResult
    public static func record<Result>(
        _ configuration: TraceConfiguration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let session = try start(configuration)
        let result: Result
        do {
            result = try await body()
        } catch {
            try? session.stop()
            throw error
        }
        try session.stop()
        return result
    }
}
