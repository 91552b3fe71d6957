// Built with the package trait Server only (`--traits Server`, as the
// Makefile builds the tests).
#if Server
import Foundation
import HTTPTypes
import Strobe
import StrobeFleet
import StrobeHistory
import StrobeHistoryStore
import StrobeServer
import StrobeStoreTestSupport
import StrobeTestTraits
import Testing

/// `strobe serve`'s endpoint over real loopback connections, against a real
/// store.
@Suite(.serialized, .processWide) struct IngestServerTests {
    static let token = "a-token-of-thirty-two-characters"

    static func server(store: any FleetStore, limit: Int = IngestServerConfiguration.defaultMaximumTraceBytes)
        throws -> IngestServer
    {
        IngestServer(
            configuration: IngestServerConfiguration(
                host: "127.0.0.1", port: 0, token: try BearerToken(token, origin: "test"), maximumTraceBytes: limit),
            store: store)
    }

    static func upload(
        _ server: LiveServer, _ bytes: [UInt8], token: String? = IngestServerTests.token, name: String? = nil
    ) async throws -> (Int, [String: Any]) {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if let name { headers[IngestServer.traceNameHeader.rawName] = name }
        let answer = try await server.request("POST", IngestServer.uploadPath, headers: headers, body: bytes)
        return (answer.status, answer.object)
    }

    @Test(arguments: StoreBackend.tested)
    func aTraceIsStoredOnceAndItsRepeatIsAnsweredAsAlreadyStored(backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { scratch in
            let traces = try ServerTraces.write(count: 2, in: scratch.directory)
            let store = try await FleetStores.open(scratch.location)
            let server = try Self.server(store: store)
            try await LiveServer.with(server) { client in
                let (first, body) = try await Self.upload(client, traces[0], name: "device-1.pftrace")
                #expect(first == 201)
                #expect(body["stored"] as? Bool == true)
                #expect((body["id"] as? String)?.hasPrefix("sha256:") == true)
                let (again, repeated) = try await Self.upload(client, traces[0])
                #expect(again == 200)
                #expect(repeated["reason"] as? String == "already stored")
                let (second, _) = try await Self.upload(client, traces[1])
                #expect(second == 201)
                #expect(try await client.request("GET", "/v1/health").status == 200)
            }
            #expect(try await store.traceCount() == 2)
            #expect(server.currentCounts.stored == 2)
            #expect(server.currentCounts.alreadyStored == 1)
            await store.close()
        }
    }

    @Test func uploadsWithoutTheTokenAreRefusedAndNothingIsStored() async throws {
        try await ScratchStore.with(.sqlite) { scratch in
            let trace = try ServerTraces.write(count: 1, in: scratch.directory)[0]
            let store = try await FleetStores.open(scratch.location)
            let server = try Self.server(store: store)
            try await LiveServer.with(server) { client in
                #expect(try await Self.upload(client, trace, token: nil).0 == 401)
                #expect(
                    try await Self.upload(client, trace, token: "a-token-of-thirty-two-characterZ").0 == 401)
                #expect(try await Self.upload(client, trace, token: "short").0 == 401)
                let basic = try await client.request(
                    "POST", IngestServer.uploadPath, headers: ["Authorization": "Basic \(Self.token)"], body: trace)
                #expect(basic.status == 401)
                #expect(basic.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            }
            #expect(try await store.traceCount() == 0)
            #expect(server.currentCounts.refused == 4)
            await store.close()
        }
    }

    @Test func anUploadOverTheLimitIsRefusedWith413() async throws {
        try await ScratchStore.with(.sqlite) { scratch in
            let trace = try ServerTraces.write(count: 1, in: scratch.directory)[0]
            let store = try await FleetStores.open(scratch.location)
            let server = try Self.server(store: store, limit: trace.count - 1)
            // The request carries its length as a client sends it.
            try await LiveServer.with(server) { client in
                let (status, body) = try await Self.upload(client, trace)
                #expect(status == 413)
                #expect((body["error"] as? String)?.contains("\(trace.count - 1)") == true)
            }
            #expect(try await store.traceCount() == 0)
            await store.close()
        }
    }

    @Test func damagedAndForeignUploadsAreRefusedWithTheirReason() async throws {
        try await ScratchStore.with(.sqlite) { scratch in
            let trace = try ServerTraces.write(count: 1, in: scratch.directory)[0]
            let store = try await FleetStores.open(scratch.location)
            let server = try Self.server(store: store)
            try await LiveServer.with(server) { client in
                let (cut, cutBody) = try await Self.upload(client, TracePackets.cutInsidePacket(trace, at: 2.0 / 3))
                #expect(cut == 422)
                #expect((cutBody["reason"] as? String)?.contains("byte") == true)
                let (foreign, foreignBody) = try await Self.upload(client, Array("PK\u{3}\u{4} not a trace".utf8))
                #expect(foreign == 422)
                #expect(foreignBody["reason"] != nil)
                #expect(try await Self.upload(client, []).0 == 422)
            }
            #expect(try await store.traceCount() == 0)
            #expect(server.currentCounts.refused == 3)
            await store.close()
        }
    }

    @Test(arguments: StoreBackend.tested)
    func twoServersOnOneStoreCountEveryTraceOnce(backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { scratch in
            let traces = try ServerTraces.write(count: 12, in: scratch.directory)
            let stores = [try await FleetStores.open(scratch.location), try await FleetStores.open(scratch.location)]
            let servers = try stores.map { try Self.server(store: $0) }
            // Both servers get every trace, interleaved, over real connections.
            try await LiveServer.with(servers[0]) { first in
                try await LiveServer.with(servers[1]) { second in
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for (index, trace) in traces.enumerated() {
                            group.addTask { try await Self.upload(index % 2 == 0 ? first : second, trace).0 }
                            group.addTask { try await Self.upload(index % 2 == 0 ? second : first, trace).0 }
                        }
                        var statuses: [Int] = []
                        for try await status in group { statuses.append(status) }
                        #expect(statuses.filter { $0 == 201 }.count == traces.count)
                        #expect(statuses.filter { $0 == 200 }.count == traces.count)
                    }
                }
            }
            #expect(try await stores[0].traceCount() == traces.count)
            for store in stores { await store.close() }
        }
    }

    @Test func listenAddressesAndTokensAreCheckedWithTheirOrigin() throws {
        #expect(try IngestServerConfiguration.listenAddress(parsing: "127.0.0.1:8080") == ("127.0.0.1", 8080))
        #expect(try IngestServerConfiguration.listenAddress(parsing: "[::1]:0") == ("::1", 0))
        #expect(try IngestServerConfiguration.listenAddress(parsing: ":9000") == ("0.0.0.0", 9000))
        #expect(throws: IngestServerError.self) { try IngestServerConfiguration.listenAddress(parsing: "localhost") }
        #expect(throws: IngestServerError.self) { try IngestServerConfiguration.listenAddress(parsing: "host:http") }
        #expect(throws: IngestServerError.self) { try IngestServerConfiguration.listenAddress(parsing: "host:70000") }
        do {
            _ = try BearerToken("short", origin: "STROBE_SERVE_TOKEN")
            Issue.record("a 5-character token was accepted")
        } catch {
            #expect(error.message.contains("STROBE_SERVE_TOKEN"))
        }
        #expect(throws: IngestServerError.self) { try BearerToken("with a space in it, long enough", origin: "t") }
        let token = try BearerToken(Self.token, origin: "test")
        #expect(token.isCarried(by: "Bearer \(Self.token)"))
        #expect(token.isCarried(by: "bearer \(Self.token)"))
        #expect(!token.isCarried(by: "Bearer \(Self.token)x"))
        #expect(!token.isCarried(by: "Bearer " + Self.token.dropLast()))
        #expect(!token.isCarried(by: nil))
    }
}
#endif
