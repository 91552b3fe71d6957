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
        append("],\"endTimeUnixNano\":", to: &text)
        appendQuoted(span.end &+ offset, to: &text)
        if !span.events.isEmpty {
            append(",\"events\":[", to: &text)
            for (index, event) in span.events.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                append("{\"attributes\":[", to: &text)
                appendList(event.arguments.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, to: &text)
                append("],\"name\":", to: &text)
                appendString(event.name, to: &text)
                append(",\"timeUnixNano\":", to: &text)
                appendQuoted(event.time &+ offset, to: &text)
                text.append(UInt8(ascii: "}"))
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
        append("\",\"startTimeUnixNano\":", to: &text)
        appendQuoted(span.start &+ offset, to: &text)
        append(",\"traceId\":\"", to: &text)
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
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { hex in
            for index in 0..<16 {
                hex[index] = hexDigit(UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * index)) & 15)
            }
            text.append(contentsOf: UnsafeBufferPointer(hex))
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    private static func append(_ literal: StaticString, to text: inout [UInt8]) {
        literal.withUTF8Buffer { text.append(contentsOf: $0) }
    }

    /// `value` in decimal, as a JSON string (OTLP's 64-bit integers).
    private static func appendQuoted(_ value: UInt64, to text: inout [UInt8]) {
        text.append(UInt8(ascii: "\""))
        appendDecimal(value, to: &text)
        text.append(UInt8(ascii: "\""))
    }

    private static func appendDecimal(_ value: UInt64, to text: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value
            var index = 20
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            text.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index...]))
        }
    }

    private static func appendDecimal(_ value: Int64, to text: inout [UInt8]) {
        if value < 0 { text.append(UInt8(ascii: "-")) }
        appendDecimal(value.magnitude, to: &text)
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
        case .bool(let flag): flag ? append("\"boolValue\":true", to: &text) : append("\"boolValue\":false", to: &text)
        case .int(let number):
            append("\"intValue\":\"", to: &text)
            appendDecimal(number, to: &text)
            text.append(UInt8(ascii: "\""))
        case .uint(let number):
            append("\"intValue\":\"", to: &text)
            appendDecimal(Int64(bitPattern: number), to: &text)
            text.append(UInt8(ascii: "\""))
        case .double(let number):
            // JSON has no NaN or infinity; protobuf's JSON spells them as strings.
            append("\"doubleValue\":", to: &text)
            if number.isFinite {
                text.append(contentsOf: "\(number)".utf8)
            } else {
                text.append(contentsOf: "\"\(number.isNaN ? "NaN" : number > 0 ? "Infinity" : "-Infinity")\"".utf8)
            }
        }
        append("}}", to: &text)
    }

    /// A JSON string: quotes, backslashes and control characters escaped.
    static func appendString(_ string: String, to text: inout [UInt8]) {
        text.append(UInt8(ascii: "\""))
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text.append(contentsOf: string.utf8)
            text.append(UInt8(ascii: "\""))
            return
        }
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
