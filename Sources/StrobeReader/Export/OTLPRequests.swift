/// A trace's OTLP export as a sequence of `ExportTraceServiceRequest`s of
/// bounded size, each with the trace's resource and the next spans in
/// order, as ``OTLPExport/requests(_:unixOffset:maxBytes:)`` gives them.
/// Every span is in exactly one request; one larger than the bound is
/// alone in its request.
///
/// ```swift
/// for request in OTLPExport.requests(trace, maxBytes: 1 << 20) {
///     print(request.number, request.spans, request.body.count)
/// }
/// ```
public struct OTLPRequests: Sequence, IteratorProtocol {
    /// One request.
    public struct Request: Sendable {
        /// Its place in the sequence, from 1.
        public var number: Int
        /// The spans it holds, as indexes into the export's spans.
        public var spans: Range<Int>
        /// The `ExportTraceServiceRequest`'s bytes.
        public var body: [UInt8]
    }

    /// The bound a sender uses unless told otherwise: 4 MiB, what an
    /// OpenTelemetry Collector's receivers take by default with room to
    /// spare.
    public static let defaultMaxBytes = 4 << 20

    private let trace: ParsedTrace
    private let model: OTLPSpans
    private let offset: UInt64
    private let maxBytes: Int
    private let resource: [UInt8]
    private var position = 0
    private var number = 0
    private let traceIDField: [UInt8]
    private var span = ProtobufWriter()
    private var threads: [Int64: [UInt8]] = [:]

    init(_ trace: ParsedTrace, unixOffset: UInt64?, maxBytes: Int) {
        self.trace = trace
        model = OTLPSpans(trace)
        offset = unixOffset ?? trace.realtimeOffset ?? 0
        self.maxBytes = maxBytes
        resource = OTLPExport.resource(origin: trace.origin, process: trace.process)
        traceIDField = OTLPSpanRecord.traceIDField(model.traceID)
    }

    /// How many spans the export holds, over all its requests.
    public var spanCount: Int { model.spans.count }

    /// The trace id every span carries, 16 bytes.
    public var traceID: [UInt8] { model.traceID }

    /// The next request, or nil after the last span.
    public mutating func next() -> Request? {
        guard position < model.spans.count else { return nil }
        // The request adds its resource and a few bytes of framing to the
        // scope's spans.
        let budget = maxBytes == .max ? .max : maxBytes - resource.count - 32
        var scope = ProtobufWriter()
        scope.message(1) { $0.string(1, "strobe") }
        let first = position
        while position < model.spans.count {
            span.reset()
            OTLPExport.record(model.spans[position], of: model, trace: trace, threads: &threads)
                .encode(traceIDField: traceIDField, offset: offset, into: &span)
            if position > first, scope.count + span.count + 16 > budget { break }
            scope.bytes(2, span.bytes)
            position += 1
        }
        number += 1
        return Request(
            number: number, spans: first..<position,
            body: OTLPExport.request(resource: resource, scopeSpans: scope.bytes))
    }

    /// A request with the resource and the scope but no span.
    func emptyRequest() -> [UInt8] {
        var scope = ProtobufWriter()
        scope.message(1) { $0.string(1, "strobe") }
        return OTLPExport.request(resource: resource, scopeSpans: scope.bytes)
    }
}
