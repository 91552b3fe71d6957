#if StrobeTracing
import Strobe
import Tracing

/// A swift-distributed-tracing backend that records every span into the
/// running Strobe trace session.
///
/// ```swift
/// InstrumentationSystem.bootstrap(StrobeTracer())
/// let session = try TraceSession.start(TraceConfiguration(outputPath: "app.pftrace"))
/// try await withSpan("handle request") { span in
///     span.attributes["http.route"] = "/photos"
///     try await handle()
/// }
/// try session.stop()
/// ```
///
/// Each span is an interval on an async track of its own, so it may start
/// and end on different threads; a child's track is nested under its
/// parent's, so the viewer shows spans as a tree even when siblings overlap.
/// See ``StrobeSpan`` for how attributes, status, errors and links are
/// written.
///
/// With no session recording, starting a span costs a load and a branch
/// beyond swift-distributed-tracing's own bookkeeping: the span passes its
/// parent's context through and records nothing.
///
/// ``inject(_:into:using:)`` and ``extract(_:into:using:)`` carry a span's
/// identity across processes in a W3C `traceparent` header, so a span in
/// another Strobe process continues the same trace; see
/// ``StrobeSpanContext`` for joining the two files. A client or producer
/// span also starts a flow whose id is its span id, and a span whose parent
/// was extracted ends the flow of that parent, so when caller and callee
/// record into one trace the viewer links them with an arrow.
public struct StrobeTracer: Tracer {
    /// The span type.
    public typealias Span = StrobeSpan

    /// The header that carries a span's identity: `traceparent`.
    public static let traceparentHeader = "traceparent"

    /// A tracer.
    ///
    /// Spans and Strobe's own async intervals share one notion of the current
    /// interval: a span started inside an async `Trace.interval` nests under
    /// it, and an async interval begun inside a span nests under the span.
    public init() {
        Trace.setInnermostIntervalSource(innermostSpanInterval)
    }

    /// Starts a span: opens its interval when a session records.
    ///
    /// The span continues the trace of the Strobe span in `context`, local or
    /// extracted from another process, or starts a new trace. It begins at
    /// `instant` when that lies more than a microsecond in the past, else
    /// now, on Strobe's own clock. The session's background writer places
    /// the instant, with the offset between the wall clock and the system's
    /// boot clock that it reads at each flush; a span whose flush interval
    /// saw the wall clock set (stepped) is placed at the moment of the call.
    public func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> InstrumentationContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> StrobeSpan {
        let parentContext = context()
        guard Trace.isRecording else { return StrobeSpan(context: parentContext, record: nil) }
        // The writer places the instant: the default one, read just before
        // this call, is taken as now, with no second clock read here.
        let startedAt = instant().nanosecondsSinceEpoch
        let (parent, othersInContext) = parentContext.strobeSpanAndOthers
        let thread = SpanThreadState.current
        let identity = StrobeSpanContext(
            traceID: parent?.identity.traceID ?? thread.identifiers.nextTraceID(),
            spanID: thread.identifiers.next(),
            parentSpanID: parent?.identity.spanID,
            traceFlags: parent?.identity.traceFlags ?? 1)
        // A request that leaves the process starts a flow named by its span
        // id; the span that serves it, in a process that extracted its
        // context, ends that flow. Where both are in one trace, the viewer
        // draws an arrow from the caller to the callee.
        let flow = kind == .client || kind == .producer ? identity.spanID : 0
        var terminatingFlow: UInt64 = 0
        if let parent, parent.interval == nil, parent.identity.isRemote {
            terminatingFlow = parent.identity.spanID
        }
        // The innermost of the context's span and the task's own interval:
        // identifiers grow with time, and both enclose this point.
        let parentInterval = max(parent?.interval?.id ?? 0, Trace.innermostTaskInterval)
        // The name, the ids and the kind go into the record as they are: no
        // table of names grows, and the hex text is made by the writer.
        let interval = Trace.beginSpan(
            operationName, parent: parentInterval,
            identity: Trace.SpanIdentity(
                traceIDHigh: identity.traceID.high, traceIDLow: identity.traceID.low, spanID: identity.spanID,
                parentSpanID: parent?.identity.spanID ?? 0, kind: Self.kindName(kind)),
            flow: flow, terminatingFlow: terminatingFlow, startedAt: startedAt)
        if !othersInContext {
            // The new context holds this span alone: an ended span's
            // context serves (see SpanThreadState).
            let (context, record) = thread.context(identity: identity, interval: interval, operationName: operationName)
            return StrobeSpan(context: context, record: record)
        }
        var context = parentContext
        let record = thread.record(
            identity: identity, interval: interval, operationName: operationName, ownsContext: false)
        context[StrobeSpanKey.self] = record
        return StrobeSpan(context: context, record: record)
    }

    /// Nothing to flush: the session's writer writes spans as they end.
    public func forceFlush() {}

    /// Writes the `traceparent` header of the span in `context`, if any.
    public func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        guard let identity = context.strobeSpanContext else { return }
        injector.inject(identity.traceparent, forKey: Self.traceparentHeader, into: &carrier)
    }

    /// Reads a `traceparent` header into `context`, as the remote parent of
    /// the spans started in it.
    public func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        guard let value = extractor.extract(key: Self.traceparentHeader, from: carrier),
            let identity = StrobeSpanContext(traceparent: value)
        else { return }
        context.strobeSpanContext = identity
    }

    static func kindName(_ kind: SpanKind) -> StaticString {
        switch kind {
        case .server: return "server"
        case .client: return "client"
        case .producer: return "producer"
        case .consumer: return "consumer"
        case .internal: return "internal"
        }
    }
}

/// The interval of the span in the task's current context; 0 for none.
/// Strobe consults it when an async interval begins without a parent.
private func innermostSpanInterval() -> UInt64 {
    InstrumentationContext.current?[StrobeSpanKey.self]?.interval?.id ?? 0
}
#endif
