/// A trace as an OTLP/protobuf `ExportTraceServiceRequest`, the body an
/// OpenTelemetry Collector's `otlp` receiver takes: one resource (the
/// trace's metadata), one scope (`strobe`), and a span per interval.
///
/// Ids derive from the trace (a hash of its metadata, process and first
/// moment), so exporting a trace twice gives the same ids. A span's parent
/// is the interval it nests in on its track, or for an async interval the
/// one whose track its track sits under; a flow becomes a link from each
/// interval on it to the one before; an instant becomes an event of the
/// innermost span on its track that holds it, or a zero-length span of its
/// own (with the attribute `strobe.instant`). An interval that never ended
/// is a zero-length span with `strobe.unfinished`.
///
/// Times are Unix-epoch nanoseconds: the trace's CLOCK_BOOTTIME plus its
/// ``ParsedTrace/realtimeOffset``, which Strobe records in each sequence's
/// clock snapshot. A trace without one (from an older Strobe, or a
/// recovered crash) keeps its BOOTTIME times unless the caller gives
/// `unixOffset`.
///
/// ```swift
/// let trace = try TraceReader.read(contentsOf: "app.pftrace")
/// let body = OTLPExport.encode(trace)
/// ```
public enum OTLPExport {
    /// The request's bytes: every span in one request.
    ///
    /// - Parameter unixOffset: Nanoseconds added to every time; nil takes
    ///   the trace's ``ParsedTrace/realtimeOffset``, else 0.
    public static func encode(_ trace: ParsedTrace, unixOffset: UInt64? = nil) -> [UInt8] {
        var requests = OTLPRequests(trace, unixOffset: unixOffset, maxBytes: .max)
        return requests.next()?.body ?? requests.emptyRequest()
    }

    /// The same spans as ``encode(_:unixOffset:)`` split into requests of
    /// at most `maxBytes` each (a span larger than that alone in its
    /// request), in order, each with the trace's resource: what a sender
    /// posts batch by batch. A trace with no span gives no request.
    public static func requests(
        _ trace: ParsedTrace, unixOffset: UInt64? = nil, maxBytes: Int = OTLPRequests.defaultMaxBytes
    ) -> OTLPRequests {
        OTLPRequests(trace, unixOffset: unixOffset, maxBytes: maxBytes)
    }

    /// An `ExportTraceServiceRequest` of one `ResourceSpans` from the
    /// resource's bytes and the `ScopeSpans`' bytes.
    static func request(resource: [UInt8], scopeSpans: [UInt8]) -> [UInt8] {
        var request = ProtobufWriter()
        request.message(1) { resourceSpans in
            resourceSpans.bytes(1, resource)
            resourceSpans.bytes(2, scopeSpans)
        }
        return request.bytes
    }

    /// The `Resource` message of a trace of `origin` and `process`.
    static func resource(origin: TraceOrigin?, process: TraceProcess?) -> [UInt8] {
        var resource = ProtobufWriter()
        for (key, value) in resourceAttributes(origin: origin, process: process) { keyValue(&resource, 1, key, value) }
        return resource.bytes
    }

    /// The resource's attributes: `service.name` (the app's name, else the
    /// process's), `service.version`, and every metadata value under its
    /// own key, the sampling probability as a number.
    static func resourceAttributes(origin: TraceOrigin?, process: TraceProcess?) -> [(String, TraceArgument)] {
        var attributes: [(String, TraceArgument)] = [
            ("service.name", .string(origin?.appName ?? process?.name ?? "strobe"))
        ]
        if let version = origin?.appVersion { attributes.append(("service.version", .string(version))) }
        if let pid = process?.pid { attributes.append(("process.pid", .int(Int64(pid)))) }
        for (key, value) in (origin?.values ?? [:]).sorted(by: { $0.key < $1.key }) {
            attributes.append((key, .string(value)))
        }
        if let probability = origin?.samplingProbability {
            attributes.append((TraceOrigin.samplingProbabilityName, .double(probability)))
        }
        return attributes
    }

    /// The resource's attributes of `trace`.
    static func resourceAttributes(_ trace: ParsedTrace) -> [(String, TraceArgument)] {
        resourceAttributes(origin: trace.origin, process: trace.process)
    }

    /// The record of `span`, one of `model`'s spans of `trace`, with the
    /// thread attributes of its thread (`threads` caches them by thread).
    static func record(
        _ span: OTLPSpans.Span, of model: OTLPSpans, trace: ParsedTrace, threads: inout [Int64: [UInt8]]
    ) -> OTLPSpanRecord {
        var attributes: [UInt8] = []
        if let tid = span.tid {
            if let known = threads[tid] {
                attributes = known
            } else {
                attributes = OTLPSpanRecord.threadAttributes(tid: tid, name: span.threadName)
                threads[tid] = attributes
            }
        }
        return OTLPSpanRecord(
            spanID: span.spanID, parentID: span.parentIndex.map { model.spans[$0].spanID } ?? 0, name: span.name,
            start: span.start, end: span.end, tid: span.tid, threadName: span.threadName,
            threadAttributes: attributes, arguments: span.arguments,
            isUnfinished: span.isUnfinished, isInstant: span.isInstant, events: span.events.map { trace.instants[$0] },
            links: span.links.map { model.spans[$0].spanID })
    }

    /// A span's attributes: its thread, then the interval's arguments.
    static func attributes(of span: OTLPSpans.Span) -> [(String, TraceArgument)] {
        var attributes: [(String, TraceArgument)] = []
        if let tid = span.tid { attributes.append(("thread.id", .int(tid))) }
        if let name = span.threadName, !name.isEmpty { attributes.append(("thread.name", .string(name))) }
        if span.isUnfinished { attributes.append(("strobe.unfinished", .bool(true))) }
        if span.isInstant { attributes.append(("strobe.instant", .bool(true))) }
        for (key, value) in span.arguments.sorted(by: { $0.key < $1.key }) { attributes.append((key, value)) }
        return attributes
    }

    /// A `KeyValue` as field `field` of `writer`.
    static func keyValue(_ writer: inout ProtobufWriter, _ field: UInt32, _ key: String, _ value: TraceArgument) {
        writer.message(field) { pair in
            pair.string(1, key)
            pair.message(2) { any in
                switch value {
                case .string(let text): any.string(1, text)
                case .bool(let flag): any.varint(2, flag ? 1 : 0)
                case .int(let number): any.int64(3, number)
                case .uint(let number): any.int64(3, Int64(bitPattern: number))
                case .double(let number): any.double(4, number)
                }
            }
        }
    }
}
