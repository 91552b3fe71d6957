import Synchronization

/// The async interval a task is inside: the innermost one opened by the
/// async form of ``Trace/interval(_:isolation:_:)`` in
/// the task or in the task that started it, and the innermost one a bridge
/// (such as StrobeTracing's spans) reports.
///
/// A new async interval without an explicit parent nests under it, so the
/// tree written with `await`s, `async let`, task groups and `Task {}` is the
/// tree the viewer shows.
///
/// Interval identifiers grow with time, and the scopes visible from one
/// point of a task all enclose it, so of two candidates the one with the
/// larger identifier is the inner one.
@usableFromInline
enum AsyncIntervalContext {
    /// The identifier of the innermost interval opened by the async
    /// `Trace.interval` in this task; 0 for none.
    @TaskLocal static var current: UInt64 = 0

    /// The task-local itself, for inlinable code.
    @usableFromInline static var binding: TaskLocal<UInt64> { $current }

    /// A bridge's source of its own innermost interval, as the bits of a C
    /// function pointer; 0 for none.
    private static let source = Atomic<UInt>(0)

    typealias Source = @convention(c) () -> UInt64

    static func setSource(_ function: Source) {
        source.store(unsafeBitCast(function, to: UInt.self), ordering: .releasing)
    }

    /// The parent of an async interval that begins here without an explicit
    /// one: the innermost interval of the task and of the bridge.
    @inline(__always)
    static func innermost() -> UInt64 {
        let own = current
        let bits = source.load(ordering: .acquiring)
        guard bits != 0 else { return own }
        return max(own, unsafeBitCast(bits, to: Source.self)())
    }
}

extension Trace {
    /// Runs `body` with the interval `id` as the task's innermost one.
    @inlinable
    static func withInnermostInterval<Value, Failure: Error>(
        _ id: UInt64,
        isolation: isolated (any Actor)?,
        _ body: () async throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        if id == 0 { return try await body() }
        let result: Result<Value, Failure> = await AsyncIntervalContext.binding.withValue(
            id,
            operation: { () async -> Result<Value, Failure> in
                do throws(Failure) {
                    return .success(try await body())
                } catch {
                    return .failure(error)
                }
            },
            isolation: isolation)
        return try result.get()
    }
}

extension Trace {
    /// The identifier of the innermost interval the async `Trace.interval`
    /// opened in the current task (or the task that started it); 0 for none.
    ///
    /// For bridges that keep a notion of "current" of their own and must
    /// nest under Strobe's intervals too.
    package static var innermostTaskInterval: UInt64 { AsyncIntervalContext.current }

    /// Installs a bridge's source of its innermost open interval (an
    /// identifier, 0 for none), consulted with the task's own whenever an
    /// async interval begins without an explicit parent, so intervals nest
    /// under the bridge's (a span's) as well as the other way round.
    ///
    /// The source must be cheap and must not record events.
    package static func setInnermostIntervalSource(_ source: @convention(c) () -> UInt64) {
        AsyncIntervalContext.setSource(source)
    }
}

extension Trace.AsyncInterval {
    /// The interval with identifier `id`, as a parent for
    /// ``Trace/beginAsync(_:parent:flow:terminatingFlow:arguments:renamable:startedAgo:)``.
    package init(parentID id: UInt64) {
        self.init(id: id)
    }
}
