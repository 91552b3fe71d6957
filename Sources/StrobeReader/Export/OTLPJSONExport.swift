import Foundation

/// The OTLP export in OTLP's JSON encoding (what `/v1/traces` takes with
/// `Content-Type: application/json`): the same request as
/// ``OTLPExport/encode(_:unixOffset:)``, with field names in lowerCamelCase,
/// trace and span ids in hex, and 64-bit integers as strings.
extension OTLPExport {
    /// The request as JSON text.
    ///
    /// `unixOffset` as in ``OTLPExport/encode(_:unixOffset:)``: nil takes
    /// the trace's ``ParsedTrace/realtimeOffset``.
    public static func json(_ trace: ParsedTrace, unixOffset: UInt64? = nil) -> String {
        let unixOffset = unixOffset ?? trace.realtimeOffset ?? 0
        let model = OTLPSpans(trace)
        let traceID = hex(model.traceID)
        let spans: [[String: Any]] = model.spans.map { span in
            var object: [String: Any] = [
                "traceId": traceID, "spanId": hex(OTLPSpans.bytes(span.spanID)), "name": span.name, "kind": 1,
                "startTimeUnixNano": String(span.start &+ unixOffset),
                "endTimeUnixNano": String(span.end &+ unixOffset),
                "attributes": attributes(of: span).map(jsonKeyValue),
            ]
            if let parent = span.parentIndex {
                object["parentSpanId"] = hex(OTLPSpans.bytes(model.spans[parent].spanID))
            }
            if !span.events.isEmpty {
                object["events"] = span.events.map { number -> [String: Any] in
                    let instant = trace.instants[number]
                    return [
                        "timeUnixNano": String(instant.time &+ unixOffset), "name": instant.name,
                        "attributes": instant.arguments.sorted { $0.key < $1.key }.map(jsonKeyValue),
                    ]
                }
            }
            if !span.links.isEmpty {
                object["links"] = span.links.map {
                    ["traceId": traceID, "spanId": hex(OTLPSpans.bytes(model.spans[$0].spanID))]
                }
            }
            return object
        }
        let request: [String: Any] = [
            "resourceSpans": [
                [
                    "resource": ["attributes": resourceAttributes(trace).map(jsonKeyValue)],
                    "scopeSpans": [["scope": ["name": "strobe"], "spans": spans]],
                ]
            ]
        ]
        // Only strings, numbers, arrays and dictionaries: serialization
        // cannot fail.
        let data = (try? JSONSerialization.data(withJSONObject: request, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func jsonKeyValue(_ pair: (String, TraceArgument)) -> [String: Any] {
        let value: [String: Any]
        switch pair.1 {
        case .string(let text): value = ["stringValue": text]
        case .bool(let flag): value = ["boolValue": flag]
        case .int(let number): value = ["intValue": String(number)]
        case .uint(let number): value = ["intValue": String(Int64(bitPattern: number))]
        case .double(let number):
            // JSON has no NaN or infinity; protobuf's JSON spells them as strings.
            let special = number.isNaN ? "NaN" : number > 0 ? "Infinity" : "-Infinity"
            value = ["doubleValue": number.isFinite ? number as Any : special]
        }
        return ["key": pair.0, "value": value]
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
