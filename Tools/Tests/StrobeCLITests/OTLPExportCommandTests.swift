// Built with the package trait Server only (`--traits Server`, as the
// Makefile builds the tests).
#if Server
import Foundation
import StrobeReader
import Testing

@testable import StrobeOTLP

/// `strobe export --format otlp` and `otlp-json` as a user runs them; the
/// schema itself is checked by Tests/python/test_otlp_export.py with
/// OpenTelemetry's own classes.
extension StrobeCLITests {
    @Test func otlpExportWritesTheReadersRequestInBothEncodings() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/app.pftrace"
        try Self.writeTrace(trace)
        let parsed = try TraceReader.read(contentsOf: trace)

        let file = folder + "/app.otlp"
        let binary = try Self.strobe("export", trace, "--format", "otlp", "-o", file)
        #expect(binary.status == 0, "\(binary.errors)")
        // The reader's spans, byte for byte each, in the order they ended.
        let written = Self.otlpSpans(try [UInt8](Data(contentsOf: URL(fileURLWithPath: file))))
        let expected = Self.otlpSpans(OTLPExport.encode(parsed))
        #expect(written.spans.count == 6)
        #expect(
            written.spans.sorted { $0.lexicographicallyPrecedes($1) }
                == expected.spans.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(written.resources == expected.resources)

        let json = try Self.strobe("export", trace, "--format", "otlp-json")
        #expect(json.status == 0, "\(json.errors)")
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let resourceSpans = try #require((object?["resourceSpans"] as? [[String: Any]])?.first)
        let scope = try #require((resourceSpans["scopeSpans"] as? [[String: Any]])?.first)
        let spans = try #require(scope["spans"] as? [[String: Any]])
        // startup and load, three times each.
        #expect(spans.filter { $0["name"] as? String == "load" }.count == 3)
        #expect(spans.filter { $0["name"] as? String == "load" }.allSatisfy { $0["parentSpanId"] != nil })
        #expect(spans.count == parsed.intervals.count)

        let interval = try Self.strobe("export", trace, "--format", "otlp", "--interval", "load")
        #expect(interval.status == 2)
        #expect(interval.errors.contains("--interval needs --format folded or pprof"))
    }

    /// The `Span` messages of an OTLP/protobuf request (or of requests one
    /// after another), and the resources they carry.
    static func otlpSpans(_ body: [UInt8]) -> (spans: [[UInt8]], resources: Set<[UInt8]>) {
        var spans: [[UInt8]] = []
        var resources: Set<[UInt8]> = []
        var request = ProtobufFields(body)
        while let resourceSpans = request.next() {
            guard resourceSpans.number == 1, case .bytes(let resourceBytes) = resourceSpans.value else { continue }
            var fields = ProtobufFields(resourceBytes)
            while let field = fields.next() {
                guard case .bytes(let bytes) = field.value else { continue }
                if field.number == 1 { resources.insert(Array(bytes)) }
                guard field.number == 2 else { continue }
                var scope = ProtobufFields(bytes)
                while let span = scope.next() {
                    if span.number == 2, case .bytes(let spanBytes) = span.value { spans.append(Array(spanBytes)) }
                }
            }
        }
        return (spans, resources)
    }
}
#endif
