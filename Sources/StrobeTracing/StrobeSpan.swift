#if StrobeTracing
import Strobe
import Synchronization
import Tracing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A span recorded by ``StrobeTracer``: an interval on an async track of its
/// own, nested under its parent's.
///
/// Its attributes, status, errors and links are written as arguments of the
/// interval when the span ends:
/// - each attribute under its own key (arrays as text, `[a, b]`);
/// - `status` (`ok` or `error`) and `status.message`, after ``setStatus(_:)``;
/// - `error.type`, `error.message` and `error.count`, after
///   ``recordError(_:attributes:at:)``, which also marks an instant named
///   `exception` on the calling thread;
/// - `link.N.trace_id` and `link.N.span_id` for each link.
///
/// The interval is written when the span ends, under the operation's name at
/// that moment, so a span renamed after it started (as HTTP servers do once
/// routing is done) shows under its final name. A span still open when the
/// session stops is written then, under its name at the start, without an
/// end.
///
/// The begin carries `trace_id`, `span_id`, `parent_span_id` (when there is
/// a parent) and `span.kind`. Events added with ``addEvent(_:)`` become
/// instants on the calling thread, with the span's `span_id`.
///
/// A span started while no session records is not recording: it costs
/// nothing more than its value, and its context is its parent's, so a
/// context extracted from a request still reaches the requests it causes.
public struct StrobeSpan: Span {
    /// The span's context: its parent's, with this span's identity.
    public let context: InstrumentationContext
    private let record: SpanRecord?

    init(context: InstrumentationContext, record: SpanRecord?) {
        self.context = context
        self.record = record
    }

    /// The span's identity, when it is recording.
    public var spanContext: StrobeSpanContext? { record?.identity }

    /// The operation's name; the interval is written under the name it has
    /// when the span ends.
    public var operationName: String {
        get { record?.withLock { $0.operationName } ?? "" }
        nonmutating set { record?.update { $0.operationName = newValue } }
    }

    /// The span's attributes, written as arguments when it ends.
    ///
    /// `span.attributes[key] = value` changes them in place under the
    /// span's lock, so a span with many attributes never copies them; the
    /// value's conversion to a `SpanAttribute` runs under that lock and must
    /// not use the same span's attributes (that stops the program with a
    /// message, rather than waiting forever).
    public var attributes: SpanAttributes {
        get { record?.withLock { $0.attributes } ?? [:] }
        nonmutating set { record?.update { $0.attributes = newValue } }
        // `span.attributes[key] = value` changes the record's attributes in
        // place, rather than copying them out and back.
        // One coroutine, not two nested ones, so its frame is on the stack.
        nonmutating _modify {
            guard let record, record.lockUnlessEnded() else {
                // No record, or a span that ended: the change is dropped,
                // as `update` drops it.
                var discarded = record?.withLock { $0.attributes } ?? [:]
                yield &discarded
                return
            }
            defer { record.unlock() }
            record.state.changed = true
            yield &record.state.attributes
        }
    }

    /// Whether the span records: a session was running when it started and
    /// it has not ended.
    public var isRecording: Bool { record?.withLock { !$0.ended } ?? false }

    /// Sets the status, written as the arguments `status` and `status.message`.
    public func setStatus(_ status: SpanStatus) {
        record?.update { $0.status = status }
    }

    /// Marks an instant named after the event on the calling thread, with the
    /// event's attributes and the span's `span_id`, at the time of the call
    /// (a thread's events are recorded in order, so the event's own instant
    /// is not used).
    public func addEvent(_ event: SpanEvent) {
        guard let record, record.withLock({ !$0.ended }) else { return }
        var arguments = [Trace.TextArgument("span_id", .string(record.spanIDText))]
        SpanRecord.append(event.attributes, to: &arguments)
        Trace.instant(named: event.name, arguments: arguments)
    }

    /// Records an error: an instant named `exception` on the calling thread
    /// at the time of the call (`instant` is not used), and the arguments
    /// `error.type`, `error.message` and `error.count` at the end.
    public func recordError<Instant: TracerInstant>(
        _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
    ) {
        guard let record else { return }
        let type = String(reflecting: Swift.type(of: error))
        let message = String(describing: error)
        let recorded = record.update { state in
            state.errorCount += 1
            state.errorType = type
            state.errorMessage = message
        }
        guard recorded else { return }
        var arguments = [
            Trace.TextArgument("span_id", .string(record.spanIDText)),
            Trace.TextArgument("error.type", .string(type)),
            Trace.TextArgument("error.message", .string(message)),
        ]
        SpanRecord.append(attributes, to: &arguments)
        Trace.instant(named: "exception", arguments: arguments)
    }

    /// Adds a link to another span, written as `link.N.trace_id` and
    /// `link.N.span_id` when the linked context has a Strobe identity.
    public func addLink(_ link: SpanLink) {
        guard let identity = link.context.strobeSpanContext else { return }
        record?.update { $0.links.append(identity) }
    }

    /// Ends the span: closes its interval, on whichever thread runs this,
    /// with the span's attributes, status, errors and links as arguments.
    ///
    /// The interval ends at `instant` when that lies more than a microsecond
    /// in the past (but never before the span began), else now. The
    /// background writer places the instant, with the offset between the
    /// wall clock and the system's boot clock it reads at each flush; an
    /// end whose flush interval saw the wall clock set is placed at the
    /// moment of the call.
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        guard let record else { return }
        if record.end(at: instant().nanosecondsSinceEpoch) {
            SpanThreadState.current.keep(context, of: record)
        }
    }
}

/// The mutable part of a recording span.
///
/// Records of ended spans are reused (see ``SpanThreadState``), so the
/// identity fields are variables; they change only while the reusing thread
/// holds the one reference to the record, and reach other threads with the
/// context that carries the record, which the task-local machinery or the
/// caller passes on with the ordering any hand-over between threads has.
/// `State` is reached only under the record's lock. Hence
/// `@unchecked Sendable`.
final class SpanRecord: @unchecked Sendable {
    struct State {
        var operationName: String
        var attributes: SpanAttributes = [:]
        var status: SpanStatus?
        var errorCount = 0
        var errorType: String?
        var errorMessage: String?
        var links: [StrobeSpanContext] = []
        var ended = false
        /// Whether anything changed after the start: only then is a reused
        /// record reset field by field, and an end writes arguments or a new
        /// name.
        var changed = false
    }

    // Written only while one thread holds the record alone (see above), so
    // accesses never overlap and go without dynamic exclusivity checks.
    @exclusivity(unchecked) private(set) var identity: StrobeSpanContext
    /// Nil for a span of another process, known from an extracted header.
    @exclusivity(unchecked) private(set) var interval: Trace.AsyncInterval?
    /// The name the interval began with.
    @exclusivity(unchecked) private(set) var initialName: String
    /// Whether the span's context holds this span alone, made by
    /// ``SpanThreadState``, which may reuse it once the span ends.
    @exclusivity(unchecked) private(set) var ownsContext: Bool
    /// The lock: the thread holding it (its `pthread_self`), 0 when none
    /// does. Spans are rarely touched by two threads at once, so it spins
    /// (yielding) instead of sleeping, and costs one atomic exchange to
    /// take; knowing its holder, it stops a thread that asks for it twice.
    private let owner = Atomic<UInt>(0)
    @exclusivity(unchecked) fileprivate var state: State

    init(identity: StrobeSpanContext, interval: Trace.AsyncInterval?, operationName: String, ownsContext: Bool = true) {
        self.identity = identity
        self.interval = interval
        initialName = operationName
        self.ownsContext = ownsContext
        state = State(operationName: operationName)
    }

    /// The record of a span in another process: the parent of spans
    /// started in a context extracted from its header.
    convenience init(remote identity: StrobeSpanContext) {
        self.init(identity: identity, interval: nil, operationName: "", ownsContext: false)
    }

    /// Makes an ended record, which the caller holds alone, the record of a
    /// new span.
    func reset(
        identity: StrobeSpanContext, interval: Trace.AsyncInterval, operationName: String, ownsContext: Bool = true
    ) {
        self.identity = identity
        self.interval = interval
        initialName = operationName
        self.ownsContext = ownsContext
        state.operationName = operationName
        state.ended = false
        guard state.changed else { return }
        // Field by field: only what a span changed is let go.
        if !state.attributes.isEmpty { state.attributes = [:] }
        state.status = nil
        if state.errorCount > 0 {
            state.errorCount = 0
            state.errorType = nil
            state.errorMessage = nil
        }
        if !state.links.isEmpty { state.links.removeAll(keepingCapacity: true) }
        state.changed = false
    }

    /// Runs `body` on the state under the record's lock.
    func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        lock()
        defer { unlock() }
        return body(&state)
    }

    private func lock() {
        let thread = Self.currentThread
        while !owner.compareExchange(expected: 0, desired: thread, ordering: .acquiring).exchanged {
            // `span.attributes[key] = value` holds the lock while the value
            // is converted: a conversion that reads or changes the same
            // span's attributes would otherwise wait for itself forever.
            precondition(
                owner.load(ordering: .relaxed) != thread,
                "a span's attributes were used while they were being changed on the same thread")
            sched_yield()
        }
    }

    func unlock() {
        owner.store(0, ordering: .releasing)
    }

    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// Takes the lock and returns true unless the span ended, in which case
    /// it leaves the lock free and returns false.
    func lockUnlessEnded() -> Bool {
        lock()
        if state.ended {
            unlock()
            return false
        }
        return true
    }

    /// The span's id as the arguments spell it.
    var spanIDText: String { identity.spanIDString }

    /// Applies `change` unless the span has ended; returns whether it did.
    @discardableResult
    func update(_ change: (inout State) -> Void) -> Bool {
        withLock { state in
            guard !state.ended else { return false }
            change(&state)
            state.changed = true
            return true
        }
    }

    /// Ends the interval at `instant`, wall-clock nanoseconds since the Unix
    /// epoch (the writer takes one within a microsecond of now as now, and
    /// one before the begin as the begin); returns whether this call ended
    /// the span.
    @discardableResult
    func end(at instant: UInt64) -> Bool {
        guard let interval else { return false }
        // Under the lock, so the state is read in place; the arguments are
        // gathered on the stack.
        return withLock { state in
            guard !state.ended else { return false }
            state.ended = true
            guard state.changed else {
                interval.endSpan(renamedTo: nil, endedAt: instant, arguments: UnsafeBufferPointer(start: nil, count: 0))
                return true
            }
            let renamed = state.operationName != initialName ? state.operationName : nil
            let capacity =
                state.attributes.count + (state.status == nil ? 0 : 2) + (state.errorCount == 0 ? 0 : 3)
                + 2 * state.links.count
            withUnsafeTemporaryAllocation(of: Trace.TextArgument.self, capacity: capacity) { buffer in
                // A counter in a struct the closures borrow, not a variable a
                // nested function captures: that one would be boxed on the
                // heap and each access to it checked at run time.
                var arguments = ArgumentList(buffer: buffer)
                state.attributes.forEach { key, attribute in
                    arguments.append(Trace.TextArgument(key, Self.argumentValue(attribute)))
                }
                if let status = state.status {
                    arguments.append(Trace.TextArgument("status", .string(status.code == .ok ? "ok" : "error")))
                    if let message = status.message {
                        arguments.append(Trace.TextArgument("status.message", .string(message)))
                    }
                }
                if state.errorCount > 0 {
                    arguments.append(Trace.TextArgument("error.count", .int(Int64(state.errorCount))))
                    if let type = state.errorType { arguments.append(Trace.TextArgument("error.type", .string(type))) }
                    if let message = state.errorMessage {
                        arguments.append(Trace.TextArgument("error.message", .string(message)))
                    }
                }
                for (index, link) in state.links.enumerated() {
                    arguments.append(Trace.TextArgument("link.\(index).trace_id", .string(link.traceID.description)))
                    arguments.append(Trace.TextArgument("link.\(index).span_id", .string(link.spanIDString)))
                }
                let written = UnsafeMutableBufferPointer(rebasing: buffer[..<arguments.count])
                interval.endSpan(renamedTo: renamed, endedAt: instant, arguments: UnsafeBufferPointer(written))
                written.deinitialize()
            }
            return true
        }
    }

    /// The arguments of an ending span, initialized one after another in
    /// stack memory.
    private struct ArgumentList {
        let buffer: UnsafeMutableBufferPointer<Trace.TextArgument>
        private(set) var count = 0

        init(buffer: UnsafeMutableBufferPointer<Trace.TextArgument>) { self.buffer = buffer }

        mutating func append(_ argument: Trace.TextArgument) {
            buffer.initializeElement(at: count, to: argument)
            count += 1
        }
    }

    /// Appends `attributes` as arguments; their keys are written with
    /// them, not interned.
    static func append(_ attributes: SpanAttributes, to arguments: inout [Trace.TextArgument]) {
        attributes.forEach { key, attribute in
            arguments.append(Trace.TextArgument(key, argumentValue(attribute)))
        }
    }

    /// An attribute as an argument value: numbers and Booleans as they are,
    /// the rest as text.
    static func argumentValue(_ attribute: SpanAttribute) -> Trace.ArgumentValue {
        switch attribute {
        case .int32(let value): return .int(Int64(value))
        case .int64(let value): return .int(value)
        case .double(let value): return .double(value)
        case .bool(let value): return .bool(value)
        case .string(let value): return .string(value)
        case .stringConvertible(let value): return .string(value.description)
        case .int32Array(let values): return .string(list(values))
        case .int64Array(let values): return .string(list(values))
        case .doubleArray(let values): return .string(list(values))
        case .boolArray(let values): return .string(list(values))
        case .stringArray(let values): return .string(list(values))
        case .stringConvertibleArray(let values): return .string(list(values.map(\.description)))
        default: return .string(String(describing: attribute))
        }
    }

    private static func list(_ values: [some CustomStringConvertible]) -> String {
        "[" + values.map(\.description).joined(separator: ", ") + "]"
    }
}

#endif
