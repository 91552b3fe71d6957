import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Strobe
import StrobeFleet
import StrobeHistory
import StrobeServe
import Testing

/// `strobe serve`'s endpoint over a real HTTP connection: a trace is stored
/// once however often it is sent; a damaged, oversized or unauthenticated
/// upload is refused with its status and nothing is stored.
@Suite(.serialized)
struct ServeTests {
    @Test func uploadsAreStoredOnceAndBadOnesRefusedWithTheirStatus() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-serve-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/trace.pftrace"
        try SDKTraces.write(path, metadata: TraceMetadata(appVersion: "5.2", dimensions: ["device.class": "mid"]))
        let trace = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let store = try await FleetStores.open(.sqlite(path: directory + "/history.sqlite"))
        var settings = FleetIngestServer.Settings(token: "s3cret")
        settings.maximumBytes = trace.count + 10
        let app = Application(router: FleetIngestServer.router(store: store, settings: settings))
        try await app.test(.live) { client in
            func post(_ body: [UInt8], token: String? = "s3cret") async throws -> (HTTPResponse.Status, String) {
                var headers: HTTPFields = [FleetIngestServer.nameHeader: "device-42/trace.pftrace"]
                if let token { headers[.authorization] = "Bearer \(token)" }
                return try await client.execute(
                    uri: FleetIngestServer.path, method: .post, headers: headers, body: ByteBuffer(bytes: body)
                ) { response in (response.status, String(buffer: response.body)) }
            }
            let (status, body) = try await post(trace)
            #expect(status == .ok)
            #expect(body.contains("\"stored\":\"added\"") && body.contains(FleetTraceRecord.identity(of: trace)), "\(body)")
            let (again, againBody) = try await post(trace)
            #expect(again == .ok && againBody.contains("\"stored\":\"already stored\""), "\(againBody)")

            let (cut, cutBody) = try await post(Array(trace.prefix(trace.count - 3)))
            #expect(cut == .badRequest)
            #expect(cutBody.contains("device-42\\/trace.pftrace: cut short: byte "), "\(cutBody)")
            #expect(try await post(Array("hello".utf8)).0 == .badRequest)

            var other = trace
            other.append(contentsOf: [0x0a, 0x00])  // an empty packet more: another trace, and one that reads
            #expect(try await post(other, token: nil).0 == .unauthorized)
            #expect(try await post(other, token: "s3cre").0 == .unauthorized)
            #expect(try await post(other + [UInt8](repeating: 0, count: 64)).0 == .contentTooLarge)
        }
        #expect(try await store.traceCount() == 1)
        await store.close()
    }
}
