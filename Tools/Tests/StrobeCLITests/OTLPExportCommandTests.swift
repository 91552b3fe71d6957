import Foundation
import StrobeReader
import Testing

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
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: file))) == OTLPExport.encode(parsed))

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
}
