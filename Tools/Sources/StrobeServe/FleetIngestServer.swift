import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServiceLifecycle
import StrobeFleet
import StrobeHistory

/// The fleet's ingest endpoint (`strobe serve`): devices or a collector
/// `POST` a trace's bytes to `/v1/traces`, with the token in an
/// `Authorization: Bearer TOKEN` header; the server extracts the trace
/// (``StrobeFleet/FleetTraceExtraction``) and stores it like `strobe ingest`.
///
/// It keeps no state between requests, so several servers can stand behind a
/// load balancer in front of one PostgreSQL store; a trace sent twice, to
/// one server or two, is stored once (its identity is the digest of its
/// bytes).
///
/// Answers, each a JSON object:
/// - 200 `{"id": "sha256:…", "stored": "added"}` or `"already stored"`;
/// - 400 `{"error": "…"}`: the body is not a trace it can read (the reason
///   names the byte offset);
/// - 401 without the token or with a wrong one, 413 for a body over the
///   limit: nothing is read or stored.
public enum FleetIngestServer {
    /// The endpoint's settings.
    public struct Settings: Sendable {
        /// The token every request must carry.
        public var token: String
        /// The largest trace accepted, in bytes. Default: 64 MiB.
        public var maximumBytes = 64 << 20

        /// Settings with `token`.
        public init(token: String) {
            self.token = token
        }
    }

    /// The path traces are posted to.
    public static let path = "/v1/traces"

    /// The header that may name the upload in messages and in the store
    /// (the trace's `source`); default `upload`.
    public static let nameHeader = HTTPField.Name("X-Strobe-Trace-Name")!

    /// The routes, storing into `store`.
    public static func router(store: any FleetStore, settings: Settings) -> Router<BasicRequestContext> {
        let router = Router()
        let expected = Array("Bearer \(settings.token)".utf8)
        router.post(RouterPath(stringLiteral: path)) { request, context -> Response in
            let given = Array((request.headers[.authorization] ?? "").utf8)
            guard constantTimeEqual(given, expected) else {
                return json(.unauthorized, ["error": "a valid Authorization: Bearer token is required"])
            }
            if let length = request.headers[.contentLength].flatMap(Int.init), length > settings.maximumBytes {
                return json(.contentTooLarge, ["error": "the trace is \(length) bytes; the limit is \(settings.maximumBytes)"])
            }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: settings.maximumBytes)
            } catch let error as HTTPError where error.status == .contentTooLarge {
                return json(.contentTooLarge, ["error": "the trace is over the limit of \(settings.maximumBytes) bytes"])
            }
            let name = request.headers[nameHeader] ?? "upload"
            switch FleetTraceExtraction.record(of: Array(buffer: body), source: name) {
            case .failure(let refusal):
                return json(.badRequest, ["error": refusal.description])
            case .success(let record):
                do {
                    let counts = try await store.add([record])
                    return json(.ok, ["id": record.id, "stored": counts.added == 1 ? "added" : "already stored"])
                } catch {
                    context.logger.error("cannot store \(name): \(error)")
                    return json(.serviceUnavailable, ["error": "the store cannot take the trace now"])
                }
            }
        }
        return router
    }

    /// Compares without stopping at the first difference, so that the time
    /// taken says nothing about the token.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: String]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data + Data("\n".utf8))))
    }
}

extension FleetIngestServer {
    /// Serves `store` on `host`:`port` (0 picks a free port) until SIGINT or
    /// SIGTERM; `onListening` gets the port once the server listens.
    public static func run(
        store: any FleetStore, settings: Settings, host: String, port: Int,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        var logger = Logger(label: "strobe.serve")
        logger.logLevel = .warning
        let app = Application(
            router: router(store: store, settings: settings),
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger)
        let services = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await services.run()
    }
}
