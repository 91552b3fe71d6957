/// A trace file's OTLP export, read and encoded packet by packet: the spans
/// ``OTLPExport`` makes of a parsed trace (the same ids, parents,
/// durations, attributes, events and links), in requests of bounded size,
/// without reading the trace into memory. Its memory grows with the
/// intervals open at once, the trace's tracks and names, and the spans that
/// carry flow ids (kept to link them in time order), not with the file.
///
/// It reads the file twice: a scan (``TraceScan``) for what every span
/// needs (the ids' seed, the wall clock's offset, the threads), then the
/// spans. Each span is written when it ends, so spans come in the order
/// they end, not the order they began; a trace whose export passes one
/// request is several requests, each with the trace's resource.
///
/// ```swift
/// var stream = try OTLPStream(contentsOf: "big.pftrace")
/// while let request = try stream.next() { try post(request.body) }
/// ```
public struct OTLPStream {
    /// The encoding of the requests.
    public enum Encoding: Sendable {
        /// OTLP/protobuf: each request an `ExportTraceServiceRequest`.
        case protobuf
        /// OTLP's JSON encoding of the same requests.
        case json
    }

    /// What the first pass found: the trace's threads, metadata, and
    /// problems (``TraceScan/truncation``, ``TraceScan/notATrace``).
    public let scan: TraceScan
    /// The requests' encoding.
    public let encoding: Encoding
    /// Spans in the requests returned so far.
    public private(set) var spanCount = 0

    private let chunks: TraceChunks
    private var builder: TraceBuilder<IntervalStream<OTLPSpanSink>>
    private let resourceSpansOpening: [UInt8]
    private let context: OTLPStreamContext
    private var number = 0
    private var isRead = false
    private var fileParts = 0
    private var fileEnded = false

    /// Opens the trace file at `path` and scans it.
    ///
    /// - Parameters:
    ///   - unixOffset: Nanoseconds added to every time; nil takes the
    ///     trace's ``TraceScan/realtimeOffset``, else 0.
    ///   - maxBytes: The largest request (a span larger than that is alone
    ///     in its request).
    /// - Throws: ``TraceReadError`` when the file cannot be opened or read.
    public init(
        contentsOf path: String, encoding: Encoding = .protobuf, unixOffset: UInt64? = nil,
        maxBytes: Int = OTLPRequests.defaultMaxBytes
    ) throws(TraceReadError) {
        try self.init(
            contentsOf: path, encoding: encoding, unixOffset: unixOffset, maxBytes: maxBytes,
            partSize: TraceChunks.partSize)
    }

    /// The same, reading the file in parts of `partSize` bytes (tests make
    /// them small).
    init(
        contentsOf path: String, encoding: Encoding, unixOffset: UInt64?, maxBytes: Int, partSize: Int
    ) throws(TraceReadError) {
        scan = try TraceScan.read(contentsOf: path, partSize: partSize) { _, count, _ in count }
        self.encoding = encoding
        context = OTLPStreamContext(scan: scan, unixOffset: unixOffset)
        resourceSpansOpening = OTLPJSONText.resourceSpansOpening(context.resourceAttributes)
        let batcher = OTLPBatcher(
            maxBytes: maxBytes, resource: context.resource, traceID: context.traceID,
            offset: context.offset, wantsJSON: encoding == .json)
        let names = NameTable()
        let sink = OTLPSpanSink(context: context, names: names, batcher: batcher)
        builder = TraceBuilder(source: path, store: IntervalStream(sink: sink), names: names)
        builder.issueLimit = TraceScan.issueLimit
        chunks = try TraceChunks(path: path, partSize: partSize)
        builder.inputSize = chunks.size
    }

    /// Spans in the whole export, once the file is read to its end (the
    /// last request may still be to come); nil before.
    public var totalSpans: Int? { isRead ? builder.store.sink.batcher.spansCut : nil }

    /// The trace id every span carries, 16 bytes.
    public var traceID: [UInt8] { context.traceID }

    /// The next request, or nil after the last (a trace with no span gives
    /// none).
    ///
    /// - Throws: ``TraceReadError`` when the file cannot be read.
    public mutating func next() throws(TraceReadError) -> OTLPRequests.Request? {
        guard let batch = try nextBatch() else { return nil }
        number += 1
        let body: [UInt8]
        switch encoding {
        case .protobuf:
            body = batch.body
        case .json:
            body = Self.joined([
                Array("{\"resourceSpans\":[".utf8), resourceSpansOpening, batch.json,
                OTLPJSONText.resourceSpansClosing, Array("]}\n".utf8),
            ])
        }
        return OTLPRequests.Request(number: number, spans: batch.first..<(batch.first + batch.count), body: body)
    }

    /// The export as one file, part by part; nil after the last part. With
    /// protobuf the parts are the requests one after another (together one
    /// `ExportTraceServiceRequest` with a `ResourceSpans` per request), or
    /// one request without spans for a trace that has none; with JSON, one
    /// request whose `ResourceSpans` are those of the requests.
    ///
    /// - Throws: ``TraceReadError`` when the file cannot be read.
    public mutating func nextFilePart() throws(TraceReadError) -> [UInt8]? {
        guard !fileEnded else { return nil }
        let batch = try nextBatch()
        defer { fileParts += 1 }
        switch encoding {
        case .protobuf:
            if let batch { return batch.body }
            fileEnded = true
            return fileParts == 0 ? emptyRequest : nil
        case .json:
            guard let batch else {
                fileEnded = true
                let empty = fileParts == 0 ? resourceSpansOpening + OTLPJSONText.resourceSpansClosing : []
                return (fileParts == 0 ? Array("{\"resourceSpans\":[".utf8) : []) + empty + Array("]}\n".utf8)
            }
            let opening = fileParts == 0 ? Array("{\"resourceSpans\":[".utf8) : [UInt8(ascii: ",")]
            return Self.joined([opening, resourceSpansOpening, batch.json, OTLPJSONText.resourceSpansClosing])
        }
    }

    /// A request with the resource and the scope but no span, as
    /// ``OTLPExport/encode(_:unixOffset:)`` gives for a trace without one.
    public var emptyRequest: [UInt8] {
        var scope = ProtobufWriter()
        scope.message(1) { $0.string(1, "strobe") }
        return OTLPBatcher.request(resource: context.resource, scopeSpans: scope.bytes)
    }

    /// `parts` one after another, copied once.
    private static func joined(_ parts: [[UInt8]]) -> [UInt8] {
        var whole: [UInt8] = []
        whole.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for part in parts { whole += part }
        return whole
    }

    /// Problems the second pass met, the first ``TraceScan/issueLimit``
    /// (the scan met the same).
    var issues: [TraceReadError] { builder.issues }

    private mutating func nextBatch() throws(TraceReadError) -> OTLPBatcher.Batch? {
        while true {
            if let batch = builder.store.sink.batcher.take() {
                spanCount += batch.count
                return batch
            }
            if isRead { return nil }
            let more = try chunks.next { base, count, origin, isLast in
                guard builder.truncation == nil else { return count }
                return builder.consume(base, count: count, origin: origin, isLast: isLast)
            }
            if !more {
                isRead = true
                builder.store.finish()
                builder.store.sink.finish()
            }
        }
    }
}
