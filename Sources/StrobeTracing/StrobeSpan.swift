#if StrobeTracing
@_spi(Bridges) import Strobe
import Synchronization
import Tracing

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
        get { record?.state.withLock { $0.operationName } ?? "" }
        nonmutating set { record?.update { $0.operationName = newValue } }
    }

    /// The span's attributes, written as arguments when it ends.
    public var attributes: SpanAttributes {
        get { record?.state.withLock { $0.attributes } ?? [:] }
        nonmutating set { record?.update { $0.attributes = newValue } }
    }

    /// Whether the span records: a session was running when it started and
    /// it has not ended.
    public var isRecording: Bool { record?.state.withLock { !$0.ended } ?? false }

    /// Sets the status, written as the arguments `status` and `status.message`.
    public func setStatus(_ status: SpanStatus) {
        record?.update { $0.status = status }
    }

    /// Marks an instant named after the event on the calling thread, with the
    /// event's attributes and the span's `span_id`, at the time of the call
    /// (a thread's events are recorded in order, so the event's own instant
    /// is not used).
    public func addEvent(_ event: SpanEvent) {
        guard let record, record.state.withLock({ !$0.ended }) else { return }
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
    /// in the past (but never before the span began), else now.
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        guard let record else { return }
        record.end(at: instant().nanosecondsSinceEpoch)
    }
}

/// The mutable part of a recording span.
///
/// Records of ended spans are reused (see ``SpanRecordPool``), so the
/// identity fields are variables; they change only while the pool holds the
/// one reference to the record, under the pool's lock, which orders the
/// change before any later reader. That, and the lock that guards `State`,
/// is why it is `@unchecked Sendable`.
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
    }

    private(set) var identity: StrobeSpanContext
    /// Nil for a span of another process, known from an extracted header.
    private(set) var interval: Trace.AsyncInterval?
    /// The name the interval began with.
    private(set) var initialName: String
    /// When the span began, in wall-clock nanoseconds since the Unix epoch.
    private(set) var startedAt: UInt64
    let state: Mutex<State>

    init(identity: StrobeSpanContext, interval: Trace.AsyncInterval?, operationName: String, startedAt: UInt64) {
        self.identity = identity
        self.interval = interval
        initialName = operationName
        self.startedAt = startedAt
        state = Mutex(State(operationName: operationName))
    }

    /// A record for a new span: an ended one nothing else refers to any
    /// more, or a new one.
    static func make(
        identity: StrobeSpanContext, interval: Trace.AsyncInterval, operationName: String, startedAt: UInt64
    ) -> SpanRecord {
        if let record = SpanRecordPool.take() {
            record.identity = identity
            record.interval = interval
            record.initialName = operationName
            record.startedAt = startedAt
            record.state.withLock { $0 = State(operationName: operationName) }
            return record
        }
        return SpanRecord(identity: identity, interval: interval, operationName: operationName, startedAt: startedAt)
    }

    /// The record of a span in another process: the parent of spans
    /// started in a context extracted from its header.
    convenience init(remote identity: StrobeSpanContext) {
        self.init(identity: identity, interval: nil, operationName: "", startedAt: 0)
    }

    /// The span's id as the arguments spell it.
    var spanIDText: String { identity.spanIDString }

    /// Applies `change` unless the span has ended; returns whether it did.
    @discardableResult
    func update(_ change: (inout State) -> Void) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            change(&state)
            return true
        }
    }

    /// Ends the interval at `instant` (wall-clock nanoseconds since the Unix
    /// epoch), or now when that is within a microsecond of now.
    func end(at instant: UInt64) {
        guard let interval else { return }
        let now = SpanClock.now()
        // An end at or before the begin is placed a little before it, and
        // the writer moves it onto the begin: the two clocks (the wall
        // clock here, Strobe's in the record) never disagree the other way.
        let endedAgo = instant <= startedAt
            ? SpanClock.nanoseconds(from: startedAt, to: now) + 2 * SpanClock.tolerance
            : SpanClock.nanoseconds(from: instant, to: now)
        // Most spans end with nothing to add: end those under the lock, and
        // copy the state out only for the others.
        let initialName = initialName
        let ended: State?? = state.withLock { state -> State?? in
            guard !state.ended else { return .some(nil) }
            state.ended = true
            if state.attributes.isEmpty, state.status == nil, state.errorCount == 0, state.links.isEmpty,
                state.operationName == initialName
            {
                interval.endSpan(renamedTo: nil, endedAgo: endedAgo, arguments: [])
                return nil
            }
            return .some(state)
        }
        guard case .some(.some(let state)) = ended else {
            if ended == nil { SpanRecordPool.give(self) }
            return
        }
        defer { SpanRecordPool.give(self) }
        var arguments: [Trace.TextArgument] = []
        let count = state.attributes.count + (state.status == nil ? 0 : 2) + (state.errorCount == 0 ? 0 : 3)
            + 2 * state.links.count
        if count > 0 { arguments.reserveCapacity(count) }
        Self.append(state.attributes, to: &arguments)
        if let status = state.status {
            arguments.append(Trace.TextArgument("status", .string(status.code == .ok ? "ok" : "error")))
            if let message = status.message { arguments.append(Trace.TextArgument("status.message", .string(message))) }
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
        interval.endSpan(
            renamedTo: state.operationName != initialName ? state.operationName : nil, endedAgo: endedAgo,
            arguments: arguments)
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

/// Records of ended spans, kept for the next spans: a span started and ended
/// in `withSpan` is no longer referred to once the call returns, so its
/// record serves the next span instead of a new allocation. A record is
/// taken only when the pool holds the one reference to it; others are let
/// go.
enum SpanRecordPool {
    private static let limit = 64
    private static let records = Mutex<[SpanRecord]>({
        var records: [SpanRecord] = []
        records.reserveCapacity(limit)
        return records
    }())

    static func take() -> SpanRecord? {
        records.withLock { records in
            while var candidate = records.popLast() {
                if isKnownUniquelyReferenced(&candidate) { return candidate }
            }
            return nil
        }
    }

    static func give(_ record: SpanRecord) {
        records.withLock { records in
            if records.count < limit { records.append(record) }
        }
    }
}
#endif
