import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServiceLifecycle
import Strobe
import StrobeReader
import StrobeTracing
import Tracing

/// A Hummingbird server with its tracing middleware and an AsyncHTTPClient
/// client, in one process, recording into one Strobe trace through
/// `StrobeTracer`. The client's spans reach the server through the
/// `traceparent` header, so each server span names its client span as
/// parent. The program reads its trace back and checks that.
///
/// usage: ServerTracing [TRACE_FILE]
@main
struct ServerTracing {
    static let photoIDs = ["7", "42", "1999"]

    static func main() async throws {
        InstrumentationSystem.bootstrap(StrobeTracer())
        let path =
            CommandLine.arguments.dropFirst().first
            ?? NSTemporaryDirectory() + "strobe-server-tracing-\(getpid()).pftrace"
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let session = try TraceSession.start(configuration)

        var logger = Logger(label: "server-tracing")
        logger.logLevel = .warning
        let router = Router()
        router.middlewares.add(TracingMiddleware(recordingHeaders: [.traceparent]))
        router.get("/photos/:id") { _, context -> String in
            let id = try context.parameters.require("id")
            try await withSpan("load photo") { span in
                span.attributes["photo.id"] = id
                try await Task.sleep(for: .milliseconds(2))
            }
            return "photo \(id)\n"
        }
        router.get("/broken") { _, _ -> String in
            throw HTTPError(.internalServerError, message: "storage offline")
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port != 0 else { throw Failure("the server did not start") }

            // The client's tracer is taken from the bootstrapped system here.
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
            do {
                try await withSpan("fetch photos") { _ in
                    for id in photoIDs {
                        try await fetch(client, "http://127.0.0.1:\(port)/photos/\(id)", expecting: 200)
                    }
                    try await fetch(client, "http://127.0.0.1:\(port)/broken", expecting: 500)
                }
            } catch {
                try? await client.shutdown()
                throw error
            }
            try await client.shutdown()
            // Graceful shutdown lets the server end the spans of the requests
            // it answered before the session stops.
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
        try session.stop()

        let trace = try TraceReader.read(contentsOf: path)
        let problems = verify(trace)
        print(summary(trace, path: path))
        if problems.isEmpty {
            print(
                "verified: every client request has its server span as a child, across the traceparent header, linked "
                    + "by a flow"
            )
        } else {
            for problem in problems { print("FAILED: \(problem)") }
            exit(1)
        }
    }

    static func fetch(_ client: HTTPClient, _ url: String, expecting status: UInt) async throws {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == status else {
            throw Failure("\(url) answered \(response.status.code), expected \(status)")
        }
    }

    static func argument(_ interval: Interval, _ key: String) -> String? {
        interval.arguments[key]?.description
    }

    /// What the trace must show; an empty list when it does.
    static func verify(_ trace: ParsedTrace) -> [String] {
        var problems: [String] = []
        let spans = trace.intervals.filter { $0.arguments["span_id"] != nil }
        let clients = spans.filter { argument($0, "span.kind") == "client" }
        let servers = spans.filter { argument($0, "span.kind") == "server" }
        guard let root = spans.first(where: { $0.name == "fetch photos" }) else { return ["no span \"fetch photos\""] }
        if clients.count != photoIDs.count + 1 {
            problems.append("\(clients.count) client spans, expected \(photoIDs.count + 1)")
        }
        if servers.count != photoIDs.count + 1 {
            problems.append("\(servers.count) server spans, expected \(photoIDs.count + 1)")
        }
        for span in spans where span.duration == nil { problems.append("span \(span.name) never ended") }
        for client in clients {
            if trace.tracks[client.track]?.parent != root.track {
                problems.append("client span not under the root's track")
            }
            if client.arguments["trace_id"] != root.arguments["trace_id"] {
                problems.append("client span in another trace")
            }
            let children = servers.filter { $0.arguments["parent_span_id"] == client.arguments["span_id"] }
            guard children.count == 1, let server = children.first else {
                problems.append("client span \(argument(client, "span_id") ?? "?") has \(children.count) server spans")
                continue
            }
            if server.arguments["trace_id"] != client.arguments["trace_id"] {
                problems.append("server span in another trace")
            }
            if server.arguments["http.request.header.traceparent"] == nil {
                problems.append("server saw no traceparent")
            }
            // The flow that Perfetto draws as an arrow from caller to callee.
            let clientID = argument(client, "span_id").flatMap { UInt64($0, radix: 16) }
            if clientID == nil || client.flowIDs != [clientID!] || server.terminatingFlowIDs != [clientID!] {
                problems.append("no flow from client span \(argument(client, "span_id") ?? "?") to its server span")
            }
            // The request leaves after the client span starts, and reaches
            // the server before the client has the response. The server's span
            // may close after the client's: it ends once the response is
            // written, which can be after the client has read it.
            if let clientEnd = client.end, server.start < client.start || server.start > clientEnd {
                problems.append("server span \(server.name) starts outside its client span")
            }
        }
        let photos = servers.filter { argument($0, "http.route") == "/photos/{id}" }
        if photos.count != photoIDs.count {
            problems.append("\(photos.count) spans for /photos/{id}, expected \(photoIDs.count)")
        }
        // The middleware names a span after its route once routing is done,
        // after the span started: the interval and its track carry that name.
        for photo in photos where photo.name != "/photos/{id}" || trace.tracks[photo.track]?.name != photo.name {
            problems.append("server span \(photo.name) not named after its route")
        }
        for photo in photos where argument(photo, "http.response.status_code") != "200" {
            problems.append("photo span without status 200")
        }
        let loads = spans.filter { $0.name == "load photo" }
        let loadParents = Set(loads.compactMap { trace.tracks[$0.track]?.parent })
        if loads.count != photoIDs.count || loadParents != Set(photos.map(\.track)) {
            problems.append("\"load photo\" spans not one under each photo request")
        }
        if Set(loads.compactMap { argument($0, "photo.id") }) != Set(photoIDs) {
            problems.append("photo ids not recorded")
        }
        if let broken = servers.first(where: { argument($0, "url.path") == "/broken" }) {
            if broken.name != "/broken" { problems.append("server span \(broken.name) not named after its route") }
            if argument(broken, "status") != "error" { problems.append("/broken span without status error") }
            if argument(broken, "http.response.status_code") != "500" {
                problems.append("/broken span without status 500")
            }
            if argument(broken, "error.type")?.contains("HTTPError") != true {
                problems.append("/broken span without its error")
            }
        } else {
            problems.append("no server span for /broken")
        }
        return problems
    }

    static func summary(_ trace: ParsedTrace, path: String) -> String {
        let spans = trace.intervals.filter { $0.arguments["span_id"] != nil }.sorted { $0.start < $1.start }
        guard let origin = spans.first?.start else { return "\(path): no spans" }
        var depthOfTrack: [UInt64: Int] = [:]
        var lines = ["\(path): \(spans.count) spans, \(trace.threads.count) threads"]
        for span in spans {
            let parent = trace.tracks[span.track]?.parent
            let depth = parent.flatMap { depthOfTrack[$0] }.map { $0 + 1 } ?? 0
            depthOfTrack[span.track] = depth
            let start = Double(span.start - origin) / 1e6
            let duration = span.duration.map { String(format: "%.2f ms", Double($0) / 1e6) } ?? "open"
            let kind = argument(span, "span.kind") ?? ""
            let name = span.name
            var detail = ""
            if let status = argument(span, "http.response.status_code") { detail += " status=\(status)" }
            if let status = argument(span, "status") { detail += " span.status=\(status)" }
            lines.append(
                String(repeating: "  ", count: depth + 1)
                    + "\(name) [\(kind)] +\(String(format: "%.2f", start)) ms, \(duration)"
                    + " span \(argument(span, "span_id") ?? "?") parent \(argument(span, "parent_span_id") ?? "-")"
                    + detail)
        }
        return lines.joined(separator: "\n")
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension HTTPField.Name {
    /// The W3C trace context header.
    static let traceparent = HTTPField.Name("traceparent")!
}
