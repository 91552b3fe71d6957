// Built with the package trait Server only (`--traits Server`, as the
// Makefile builds the tests).
#if Server
import Foundation
import HTTPTypes
import Hummingbird
import StrobeServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ingest server listening on a loopback port of its own for the length
/// of a test, and a plain HTTP client for it (URLSession, so the tests link
/// no TLS stack of their own).
struct LiveServer: Sendable {
    /// The answer to one request: its status and its JSON body, if any.
    struct Answer: Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data

        /// The body as a JSON object, or an empty one.
        var object: [String: Any] {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        }
    }

    /// The port the server listens on.
    var port: Int

    /// Runs `body` while `server` listens on a loopback port, then stops the
    /// server, whether `body` throws or not.
    static func with<Result: Sendable>(
        _ server: IngestServer, _ body: (LiveServer) async throws -> Result
    ) async throws -> Result {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let running = Task {
            defer { continuation.finish() }
            try await server.application(onListening: { port in continuation.yield(port) })
                .runService(gracefulShutdownSignals: [])
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            running.cancel()
            try await running.value
            throw NotListening()
        }
        let live = LiveServer(port: port)
        do {
            let result = try await body(live)
            running.cancel()
            _ = await running.result
            return result
        } catch {
            running.cancel()
            _ = await running.result
            throw error
        }
    }

    /// Sends one request on a connection of its own and returns the answer.
    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil)
        async throws -> Answer
    {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body { request.httpBody = Data(body) }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw NotHTTP() }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return Answer(status: http.statusCode, headers: fields, body: data)
    }

    /// The server stopped before it listened.
    struct NotListening: Error, CustomStringConvertible {
        var description: String { "the ingest server stopped before it listened on a port" }
    }

    /// The answer was not an HTTP response.
    struct NotHTTP: Error, CustomStringConvertible {
        var description: String { "the answer was not an HTTP response" }
    }
}
#endif
