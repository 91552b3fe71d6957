/// One span of the OTLP export with its ids worked out, as both the export
/// of a parsed trace (``OTLPExport``) and the streaming one
/// (``OTLPStream``) encode it: the same record gives the same bytes.
struct OTLPSpanRecord {
    var spanID: UInt64
    /// The parent's span id; 0 for none.
    var parentID: UInt64 = 0
    var name: String
    var start: UInt64
    var end: UInt64
    /// Its thread, and the thread's name, when it is on a thread's track.
    var tid: Int64?
    var threadName: String?
    /// The `thread.id` and `thread.name` attributes, encoded (see
    /// ``threadAttributes(tid:name:)``).
    var threadAttributes: [UInt8]
    var arguments: [String: TraceArgument]
    var isUnfinished = false
    /// Whether it stands for an instant that no span held.
    var isInstant = false
    /// The instants it holds, in time order.
    var events: [Instant] = []
    /// The span ids of the spans whose flows lead into it.
    var links: [UInt64] = []

    /// The `thread.id` and `thread.name` attributes of a span on thread
    /// `tid` (nothing without one), as `KeyValue` fields of a span.
    static func threadAttributes(tid: Int64?, name: String?) -> [UInt8] {
        var writer = ProtobufWriter()
        if let tid { OTLPExport.keyValue(&writer, 9, "thread.id", .int(tid)) }
        if let name, !name.isEmpty { OTLPExport.keyValue(&writer, 9, "thread.name", .string(name)) }
        return writer.bytes
    }

    /// Writes the span's `Span` fields: `traceID` is the trace id's field,
    /// already encoded, and `offset` is added to every time.
    func encode(traceIDField: [UInt8], offset: UInt64, into writer: inout ProtobufWriter) {
        writer.append(traceIDField)
        writer.id(2, spanID)
        if parentID != 0 { writer.id(4, parentID) }
        writer.string(5, name)
        writer.varint(6, 1) // SPAN_KIND_INTERNAL
        writer.fixed64(7, start &+ offset)
        writer.fixed64(8, end &+ offset)
        writer.append(threadAttributes)
        if isUnfinished { OTLPExport.keyValue(&writer, 9, "strobe.unfinished", .bool(true)) }
        if isInstant { OTLPExport.keyValue(&writer, 9, "strobe.instant", .bool(true)) }
        if !arguments.isEmpty { Self.encodeArguments(arguments, into: &writer) }
        for instant in events {
            writer.message(11) { event in
                event.fixed64(1, instant.time &+ offset)
                event.string(2, instant.name)
                for (key, value) in instant.arguments.sorted(by: { $0.key < $1.key }) {
                    OTLPExport.keyValue(&event, 3, key, value)
                }
            }
        }
        for link in links {
            writer.message(13) { message in
                message.append(traceIDField)
                message.id(2, link)
            }
        }
    }

    /// `arguments` as a span's attributes, by key.
    static func encodeArguments(_ arguments: [String: TraceArgument], into writer: inout ProtobufWriter) {
        if arguments.count == 1, let (key, value) = arguments.first {
            OTLPExport.keyValue(&writer, 9, key, value)
            return
        }
        for (key, value) in arguments.sorted(by: { $0.key < $1.key }) { OTLPExport.keyValue(&writer, 9, key, value) }
    }

    /// The trace id as the `trace_id` field of a span or link.
    static func traceIDField(_ traceID: [UInt8]) -> [UInt8] {
        var writer = ProtobufWriter()
        writer.bytes(1, traceID)
        return writer.bytes
    }

    /// `events` in time order, those at one time in the order they came.
    static func inTimeOrder(_ events: [Instant]) -> [Instant] {
        if zip(events, events.dropFirst()).allSatisfy({ $0.time <= $1.time }) { return events }
        return events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }
}
