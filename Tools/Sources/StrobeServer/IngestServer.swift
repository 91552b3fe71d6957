import Foundation
import HTTPTypes
import Hummingbird
import Logging
import StrobeFleet
import StrobeHistoryStore
import Synchronization

/// The ingest endpoint of `strobe serve`: devices or a collector send
/// traces over HTTP, and each is extracted and stored as `strobe ingest`
/// stores a file.
///
/// - `POST /v1/traces` with the trace's bytes as the body and
///   `Authorization: Bearer TOKEN`; `X-Strobe-Trace-Name` optionally names
///   the trace in messages and in the store (else its digest does).
///   - `201 Created`: stored now; `200 OK`: the same bytes were stored
///     before, nothing changed. Both answer JSON with the trace's `id`.
///   - `401 Unauthorized`: no token, or not the server's.
///   - `413 Content Too Large`: over the size limit; nothing is read past it.
///   - `422 Unprocessable Content`: not a trace, or a damaged one; the JSON
///     `reason` names the problem and its byte offset.
///   - `503 Service Unavailable` (with `Retry-After`): the store failed; the
///     upload may be sent again, since adding is idempotent.
/// - `GET /v1/health`: `200 OK` while the server runs, for a load balancer.
///
/// The server keeps nothing between requests but counters for its log, so
/// several instances can stand behind one load balancer in front of one
/// PostgreSQL store.
package final class IngestServer: Sendable {
    /// The upload path.
    package static let uploadPath = "/v1/traces"
    /// The header that names an upload.
    package static let traceNameHeader = HTTPField.Name("X-Strobe-Trace-Name")!

    private let configuration: IngestServerConfiguration
    private let store: any FleetStore
    private let counts = Mutex(Counts())
    private let logger: Logger

    /// What the server did since it started.
    package struct Counts: Sendable, Hashable, CustomStringConvertible {
        /// Traces stored.
        package var stored = 0
        /// Uploads of traces the store held already.
        package var alreadyStored = 0
        /// Uploads refused: not a trace, damaged, too large or unauthenticated.
        package var refused = 0
        /// Uploads the store failed to take.
        package var failed = 0

        /// `S stored, A already stored, R refused, F failed`.
        package var description: String {
            "\(stored) stored, \(alreadyStored) already stored, \(refused) refused, \(failed) failed"
        }
    }

    /// A server that stores what it accepts in `store`.
    package init(configuration: IngestServerConfiguration, store: any FleetStore, logger: Logger? = nil) {
        self.configuration = configuration
        self.store = store
        var logger = logger ?? Logger(label: "strobe.serve")
        logger[metadataKey: "store"] = "\(store.location)"
        self.logger = logger
    }

    /// What the server did so far.
    package var currentCounts: Counts { counts.withLock { $0 } }

    /// The application: the router with both routes, listening where the
    /// configuration says; `onListening` receives the bound port.
    package func application(
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        router.post(RouterPath(Self.uploadPath)) { request, context in
            try await self.upload(request, context: context)
        }
        router.get("/v1/health") { _, _ in "ok\n" }
        return Application(
            router: router,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "strobe"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// Runs until the process gets SIGINT or SIGTERM, then finishes the
    /// uploads under way and returns.
    package func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await application(onListening: onListening).runService()
    }

    private func upload(_ request: Request, context: BasicRequestContext) async throws -> Response {
        guard configuration.token.isCarried(by: request.headers[.authorization]) else {
            count(\.refused)
            return Self.json(
                .unauthorized, ["error": "missing or wrong bearer token"],
                extra: [.wwwAuthenticate: "Bearer realm=\"strobe\""])
        }
        let limit = configuration.maximumTraceBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            count(\.refused)
            return Self.json(.contentTooLarge, ["error": "the trace has \(length) bytes; the limit is \(limit)"])
        }
        let body = request.body
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            count(\.refused)
            return Self.json(.contentTooLarge, ["error": "the trace is over the limit of \(limit) bytes"])
        }
        let bytes = Array(buffer.readableBytesView)
        let name = request.headers[Self.traceNameHeader].map(Self.safeName) ?? FleetTraceRecord.identity(of: bytes)
        let record: FleetTraceRecord
        switch FleetTraceExtraction.record(of: bytes, source: name) {
        case .success(let extracted): record = extracted
        case .failure(let refusal):
            count(\.refused)
            logger.notice("refused \(refusal)")
            return Self.json(.unprocessableContent, ["error": "not a usable trace", "reason": refusal.reason])
        }
        let added: FleetAddCounts
        do {
            added = try await store.add([record])
        } catch {
            count(\.failed)
            logger.error("the store failed on \(name): \(error)")
            return Self.json(
                .serviceUnavailable, ["error": "the store failed; send the trace again"], extra: [.retryAfter: "1"])
        }
        if added.added > 0 {
            count(\.stored)
            return Self.json(.created, ["id": record.id, "stored": true])
        }
        count(\.alreadyStored)
        return Self.json(.ok, ["id": record.id, "stored": false, "reason": "already stored"])
    }

    private func count(_ field: WritableKeyPath<Counts, Int>) {
        counts.withLock { $0[keyPath: field] += 1 }
    }

    /// An upload's name as stored and logged: printable characters only,
    /// at most 200 of them.
    static func safeName(_ name: String) -> String {
        String(
            String.UnicodeScalarView(name.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }).prefix(200))
    }

    private static func json(
        _ status: HTTPResponse.Status, _ fields: [String: Any], extra: HTTPFields = [:]
    ) -> Response {
        var headers = extra
        headers[.contentType] = "application/json"
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data + [0x0A])))
    }
}
