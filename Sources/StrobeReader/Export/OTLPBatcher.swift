/// Encodes spans one by one into batches of bounded size, each the spans of
/// one `ExportTraceServiceRequest`, as ``OTLPRequests`` cuts them: a span
/// goes into the current batch unless it would take the request past the
/// bound (a span alone larger than that has a batch of its own). With JSON,
/// each batch carries the same spans in OTLP's JSON encoding too.
struct OTLPBatcher {
    /// Bytes kept in the batcher's pool (a name's field, a thread's
    /// attributes), copied into spans with no reference count.
    struct Piece {
        var offset: Int
        var count: Int
    }

    /// A batch of spans, encoded.
    struct Batch {
        /// The number of its first span in the export, from 0.
        var first: Int
        var count: Int
        /// The `ExportTraceServiceRequest` of the spans, with the resource
        /// (empty with JSON).
        var body: [UInt8]
        /// The spans in JSON, separated by commas (empty without JSON).
        var json: [UInt8]
    }

    /// The spans a batch's `ScopeSpans` may hold, in bytes.
    let budget: Int
    let resource: [UInt8]
    /// Room left before each batch's `ScopeSpans` for the request's
    /// framing and resource, written once the batch is cut.
    let headerRoom: Int
    let wantsJSON: Bool
    let traceIDField: [UInt8]
    let traceIDHex: [UInt8]
    let offset: UInt64
    /// Batches cut and not yet taken, oldest first.
    private(set) var ready: [Batch] = []
    private let scope = ByteBuffer(capacity: 1 << 16)
    /// Encoded fields every span may use: see ``keep(_:)``.
    private let pool = ByteBuffer(capacity: 4096)
    private var traceIDPiece = Piece(offset: 0, count: 0)
    private var unfinishedPiece = Piece(offset: 0, count: 0)
    private var span = ProtobufWriter()
    /// The `strobe.unfinished` attribute, encoded.
    private let unfinished: [UInt8]
    private var json: [UInt8] = []
    private var first = 0
    private var count = 0

    /// A batcher of requests of at most `maxBytes` that each carry a
    /// resource of `resourceBytes`.
    init(maxBytes: Int, resource: [UInt8], traceID: [UInt8], offset: UInt64, wantsJSON: Bool) {
        // The request adds its resource and a few bytes of framing to the
        // scope's spans.
        budget = maxBytes == .max ? .max : maxBytes - resource.count - 32
        self.resource = resource
        headerRoom = 1 + 5 + 1 + ByteBuffer.varintSize(UInt64(resource.count)) + resource.count + 1 + 5
        self.wantsJSON = wantsJSON
        traceIDField = OTLPSpanRecord.traceIDField(traceID)
        traceIDHex = OTLPJSONText.hex(traceID)
        self.offset = offset
        var attribute = ProtobufWriter()
        OTLPExport.keyValue(&attribute, 9, "strobe.unfinished", .bool(true))
        unfinished = attribute.bytes
        traceIDPiece = keep(traceIDField)
        unfinishedPiece = keep(unfinished)
        startBatch()
    }

    /// Keeps `bytes` in the pool for ``writeSpan(spanID:parentID:name:start:end:thread:isUnfinished:arguments:)``.
    func keep(_ bytes: [UInt8]) -> Piece {
        let offset = pool.count
        pool.append(bytes)
        return Piece(offset: offset, count: bytes.count)
    }

    private mutating func startBatch() {
        scope.reset()
        if !wantsJSON { scope.skip(headerRoom) }
        var name = ProtobufWriter()
        name.message(1) { $0.string(1, "strobe") }
        scope.append(name.bytes)
        json.removeAll(keepingCapacity: true)
        // The JSON of a batch takes about three times its protobuf.
        if wantsJSON { json.reserveCapacity(min(budget, 1 << 24) * 3) }
    }

    /// Adds a span with no event, link or flow to the current batch, as
    /// ``OTLPSpanRecord/encode(traceIDField:offset:into:)`` encodes it,
    /// written in place.
    ///
    /// - Parameters:
    ///   - name: the name's field, encoded and kept.
    ///   - thread: the thread's attributes (see
    ///     ``OTLPSpanRecord/threadAttributes(tid:name:)``), kept.
    ///   - arguments: the interval's arguments.
    mutating func writeSpan(
        spanID: UInt64, parentID: UInt64, name: Piece, start: UInt64, end: UInt64, thread: Piece,
        isUnfinished: Bool, arguments: ArgumentList
    ) {
        let argumentBytes = arguments.isEmpty ? 0 : OTLPAttributeEncoding.size(arguments)
        let length =
            traceIDPiece.count + 10 + (parentID != 0 ? 10 : 0) + name.count + 2 + 18 + thread.count
            + (isUnfinished ? unfinishedPiece.count : 0) + argumentBytes
        if count > 0, scopeSize + length + 16 > budget { cut() }
        scope.reserve(length + 11)
        let pool = self.pool.base
        let traceID = traceIDPiece
        let unfinished = unfinishedPiece
        let offset = self.offset
        scope.write { cursor in
            cursor.put(0x12)
            cursor.putVarint(UInt64(length))
            cursor.copy(pool + traceID.offset, traceID.count)
            cursor.put(0x12)
            cursor.put(8)
            cursor.putBigEndian(spanID)
            if parentID != 0 {
                cursor.put(0x22)
                cursor.put(8)
                cursor.putBigEndian(parentID)
            }
            cursor.copy(pool + name.offset, name.count)
            cursor.put(0x30)
            cursor.put(1)
            cursor.put(0x39)
            cursor.putLittleEndian(start &+ offset)
            cursor.put(0x41)
            cursor.putLittleEndian(end &+ offset)
            cursor.copy(pool + thread.offset, thread.count)
            if isUnfinished { cursor.copy(pool + unfinished.offset, unfinished.count) }
            if argumentBytes > 0 { OTLPAttributeEncoding.put(arguments, into: &cursor) }
        }
        count += 1
    }

    /// Adds `record` to the current batch, cutting it first when full.
    mutating func write(_ record: OTLPSpanRecord) {
        span.reset()
        record.encode(traceIDField: traceIDField, offset: offset, into: &span)
        if count > 0, scopeSize + span.count + 16 > budget { cut() }
        scope.reserve(span.count + 11)
        let bytes = span.bytes
        scope.write { cursor in
            cursor.put(0x12)
            cursor.putVarint(UInt64(bytes.count))
            cursor.put(bytes)
        }
        if wantsJSON {
            if count > 0 { json.append(UInt8(ascii: ",")) }
            OTLPJSONText.appendSpan(record, traceID: traceIDHex, offset: offset, to: &json)
        }
        count += 1
    }

    /// Cuts the last batch, when it holds any span.
    mutating func finish() {
        if count > 0 { cut() }
    }

    /// Spans in the batches cut so far.
    var spansCut: Int { first }

    /// Takes the oldest batch cut.
    mutating func take() -> Batch? {
        ready.isEmpty ? nil : ready.removeFirst()
    }

    /// The bytes of the current batch's `ScopeSpans`.
    private var scopeSize: Int { scope.count - (wantsJSON ? 0 : headerRoom) }

    private mutating func cut() {
        var body: [UInt8] = []
        if !wantsJSON {
            // The request's framing and resource, just before the scope.
            var header = ProtobufWriter()
            let scopeLength = UInt64(scopeSize)
            let length =
                1 + ByteBuffer.varintSize(UInt64(resource.count)) + resource.count + 1
                + ByteBuffer.varintSize(scopeLength) + Int(scopeLength)
            header.appendVarint(0x0a)
            header.appendVarint(UInt64(length))
            header.bytes(1, resource)
            header.appendVarint(0x12)
            header.appendVarint(scopeLength)
            scope.write(header.bytes, at: headerRoom - header.count)
            body = scope.bytes(from: headerRoom - header.count)
        }
        ready.append(Batch(first: first, count: count, body: body, json: json))
        first += count
        count = 0
        startBatch()
    }

    /// The `ExportTraceServiceRequest` of one `ResourceSpans`, the resource
    /// `resource` and the `ScopeSpans` `scopeSpans`: what
    /// ``OTLPExport/request(resource:scopeSpans:)`` writes, with the
    /// lengths worked out first so that nothing is moved.
    static func request(resource: [UInt8], scopeSpans: [UInt8]) -> [UInt8] {
        var inner = ProtobufWriter()
        inner.appendVarint(UInt64(resource.count))
        let resourceLength = inner.count
        inner.reset()
        inner.appendVarint(UInt64(scopeSpans.count))
        let scopeLength = inner.count
        let length = 1 + resourceLength + resource.count + 1 + scopeLength + scopeSpans.count
        var head = ProtobufWriter()
        head.appendVarint(UInt64(0x0a))
        head.appendVarint(UInt64(length))
        var body = head.bytes
        body.reserveCapacity(body.count + length)
        var fields = ProtobufWriter()
        fields.bytes(1, resource)
        body += fields.bytes
        body.append(0x12)
        inner.reset()
        inner.appendVarint(UInt64(scopeSpans.count))
        body += inner.bytes
        body += scopeSpans
        return body
    }
}
