/// OTLP's JSON encoding written by hand, span by span, for the streaming
/// export (``OTLPStream``): what ``OTLPExport/json(_:unixOffset:)`` writes
/// for the same spans, keys in the same sorted order, ids in hex and 64-bit
/// integers as strings.
enum OTLPJSONText {
    /// The start of a `ResourceSpans` object: the resource, then the scope,
    /// up to the opening of its span list.
    static func resourceSpansOpening(_ attributes: [(String, TraceArgument)]) -> [UInt8] {
        var text: [UInt8] = []
        append("{\"resource\":{\"attributes\":[", to: &text)
        for (index, (key, value)) in attributes.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            appendKeyValue(key, value, to: &text)
        }
        append("]},\"scopeSpans\":[{\"scope\":{\"name\":\"strobe\"},\"spans\":[", to: &text)
        return text
    }

    /// The end of a `ResourceSpans` object.
    static let resourceSpansClosing: [UInt8] = Array("]}]}".utf8)

    /// A span object.
    static func appendSpan(_ span: OTLPSpanRecord, traceID: [UInt8], offset: UInt64, to text: inout [UInt8]) {
        append("{\"attributes\":[", to: &text)
        var attributes: [(String, TraceArgument)] = []
        if let tid = span.tid { attributes.append(("thread.id", .int(tid))) }
        if let name = span.threadName, !name.isEmpty { attributes.append(("thread.name", .string(name))) }
        if span.isUnfinished { attributes.append(("strobe.unfinished", .bool(true))) }
        if span.isInstant { attributes.append(("strobe.instant", .bool(true))) }
        attributes += span.arguments.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        appendList(attributes, to: &text)
        append("],\"endTimeUnixNano\":\"\(span.end &+ offset)\"", to: &text)
        if !span.events.isEmpty {
            append(",\"events\":[", to: &text)
            for (index, event) in span.events.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                append("{\"attributes\":[", to: &text)
                appendList(event.arguments.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, to: &text)
                append("],\"name\":", to: &text)
                appendString(event.name, to: &text)
                append(",\"timeUnixNano\":\"\(event.time &+ offset)\"}", to: &text)
            }
            text.append(UInt8(ascii: "]"))
        }
        append(",\"kind\":1", to: &text)
        if !span.links.isEmpty {
            append(",\"links\":[", to: &text)
            for (index, link) in span.links.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                append("{\"spanId\":\"", to: &text)
                appendHex(link, to: &text)
                append("\",\"traceId\":\"", to: &text)
                text += traceID
                append("\"}", to: &text)
            }
            text.append(UInt8(ascii: "]"))
        }
        append(",\"name\":", to: &text)
        appendString(span.name, to: &text)
        if span.parentID != 0 {
            append(",\"parentSpanId\":\"", to: &text)
            appendHex(span.parentID, to: &text)
            text.append(UInt8(ascii: "\""))
        }
        append(",\"spanId\":\"", to: &text)
        appendHex(span.spanID, to: &text)
        append("\",\"startTimeUnixNano\":\"\(span.start &+ offset)\",\"traceId\":\"", to: &text)
        text += traceID
        append("\"}", to: &text)
    }

    /// The trace id in hex, as the spans carry it.
    static func hex(_ bytes: [UInt8]) -> [UInt8] {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return text
    }

    private static let digits = Array("0123456789abcdef".utf8)

    private static func appendHex(_ value: UInt64, to text: inout [UInt8]) {
        for shift in stride(from: 60, through: 0, by: -4) { text.append(digits[Int((value >> UInt64(shift)) & 15)]) }
    }

    private static func append(_ literal: String, to text: inout [UInt8]) {
        text.append(contentsOf: literal.utf8)
    }

    private static func appendList(_ pairs: [(String, TraceArgument)], to text: inout [UInt8]) {
        for (index, (key, value)) in pairs.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            appendKeyValue(key, value, to: &text)
        }
    }

    private static func appendKeyValue(_ key: String, _ value: TraceArgument, to text: inout [UInt8]) {
        append("{\"key\":", to: &text)
        appendString(key, to: &text)
        append(",\"value\":{", to: &text)
        switch value {
        case .string(let string):
            append("\"stringValue\":", to: &text)
            appendString(string, to: &text)
        case .bool(let flag): append("\"boolValue\":\(flag)", to: &text)
        case .int(let number): append("\"intValue\":\"\(number)\"", to: &text)
        case .uint(let number): append("\"intValue\":\"\(Int64(bitPattern: number))\"", to: &text)
        case .double(let number):
            // JSON has no NaN or infinity; protobuf's JSON spells them as strings.
            if number.isFinite {
                append("\"doubleValue\":\(number)", to: &text)
            } else {
                append("\"doubleValue\":\"\(number.isNaN ? "NaN" : number > 0 ? "Infinity" : "-Infinity")\"", to: &text)
            }
        }
        append("}}", to: &text)
    }

    /// A JSON string: quotes, backslashes and control characters escaped.
    static func appendString(_ string: String, to text: inout [UInt8]) {
        text.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"", to: &text)
            case UInt8(ascii: "\\"): append("\\\\", to: &text)
            case UInt8(ascii: "\n"): append("\\n", to: &text)
            case UInt8(ascii: "\r"): append("\\r", to: &text)
            case UInt8(ascii: "\t"): append("\\t", to: &text)
            case 0..<0x20:
                append("\\u00", to: &text)
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 15)])
            default: text.append(byte)
            }
        }
        text.append(UInt8(ascii: "\""))
    }
}
