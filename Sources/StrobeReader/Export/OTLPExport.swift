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
/// is a zero-length span with `strobe.unfinished`. Times are the trace's CLOCK_BOOTTIME plus `unixOffset`: a Strobe
/// trace records no wall-clock time, so spans line up with Unix time only
/// when the caller knows the offset.
///
/// ```swift
/// let trace = try TraceReader.read(contentsOf: "app.pftrace")
/// let body = OTLPExport.encode(trace)
/// ```
public enum OTLPExport {
    /// The request's bytes.
    public static func encode(_ trace: ParsedTrace, unixOffset: UInt64 = 0) -> [UInt8] {
        let model = OTLPSpans(trace)
        var request = ProtobufWriter()
        request.message(1) { resourceSpans in
            resourceSpans.message(1) { resource in
                for (key, value) in resourceAttributes(trace) { keyValue(&resource, 1, key, value) }
            }
            resourceSpans.message(2) { scopeSpans in
                scopeSpans.message(1) { scope in scope.string(1, "strobe") }
                for span in model.spans {
                    scopeSpans.message(2) { writer in
                        write(span, of: model, trace: trace, offset: unixOffset, into: &writer)
                    }
                }
            }
        }
        return request.bytes
    }

    /// The resource's attributes: `service.name` (the app's name, else the
    /// process's), `service.version`, and every metadata value under its
    /// own key, the sampling probability as a number.
    static func resourceAttributes(_ trace: ParsedTrace) -> [(String, TraceArgument)] {
        let origin = trace.origin
        var attributes: [(String, TraceArgument)] = [
            ("service.name", .string(origin?.appName ?? trace.process?.name ?? "strobe"))
        ]
        if let version = origin?.appVersion { attributes.append(("service.version", .string(version))) }
        if let pid = trace.process?.pid { attributes.append(("process.pid", .int(Int64(pid)))) }
        for (key, value) in (origin?.values ?? [:]).sorted(by: { $0.key < $1.key }) {
            attributes.append((key, .string(value)))
        }
        if let probability = origin?.samplingProbability {
            attributes.append((TraceOrigin.samplingProbabilityName, .double(probability)))
        }
        return attributes
    }

    private static func write(
        _ span: OTLPSpans.Span, of model: OTLPSpans, trace: ParsedTrace, offset: UInt64,
        into writer: inout ProtobufWriter
    ) {
        writer.bytes(1, model.traceID)
        writer.bytes(2, OTLPSpans.bytes(span.spanID))
        if let parent = span.parentIndex { writer.bytes(4, OTLPSpans.bytes(model.spans[parent].spanID)) }
        writer.string(5, span.name)
        writer.varint(6, 1) // SPAN_KIND_INTERNAL
        writer.fixed64(7, span.start &+ offset)
        writer.fixed64(8, span.end &+ offset)
        for (key, value) in attributes(of: span) { keyValue(&writer, 9, key, value) }
        for number in span.events {
            let instant = trace.instants[number]
            writer.message(11) { event in
                event.fixed64(1, instant.time &+ offset)
                event.string(2, instant.name)
                for (key, value) in instant.arguments.sorted(by: { $0.key < $1.key }) {
                    keyValue(&event, 3, key, value)
                }
            }
        }
        for link in span.links {
            writer.message(13) { message in
                message.bytes(1, model.traceID)
                message.bytes(2, OTLPSpans.bytes(model.spans[link].spanID))
            }
        }
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
    private static func keyValue(_ writer: inout ProtobufWriter, _ field: UInt32, _ key: String, _ value: TraceArgument)
    {
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
