import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// One HTTP/1.1 POST over a connection of its own (SwiftNIO, plain TCP):
/// what ``OTLPSender`` sends each attempt with.
struct HTTPPost: Sendable {
    /// What the server answered.
    struct Reply: Sendable {
        var status: Int
        var reason: String
        var headers: [(name: String, value: String)]
        /// The body's first ``HTTPPost/bodyLimit`` bytes.
        var body: [UInt8]

        /// The value of header `name` (case-insensitive), the first one.
        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// Why no reply came: the connection failed, closed early or timed out.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// How much of a reply's body is kept.
    static let bodyLimit = 64 << 10

    var endpoint: OTLPEndpoint
    /// The longest a connection may take to open.
    var connectTimeout: Duration = .seconds(10)
    /// The longest the whole exchange may take once connected.
    var replyTimeout: Duration = .seconds(60)

    /// Posts `body` with `contentType`; throws a ``Failure`` when no
    /// complete reply head came.
    func post(_ body: [UInt8], contentType: String) async throws(Failure) -> Reply {
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.nanoseconds(connectTimeout.nanoseconds))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: endpoint.host, port: endpoint.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                            wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw Failure(description: "cannot connect to \(endpoint.host):\(endpoint.port): \(Self.words(error))")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: endpoint.hostHeader)
        headers.add(name: "User-Agent", value: "strobe")
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: endpoint.target, headers: headers)
        let timeout = replyTimeout
        // Closing the channel ends the reading below, so a server that
        // never answers cannot hold the command.
        let expired = Expiry()
        let timer = Task { [channel] in
            try await Task.sleep(for: timeout)
            expired.flag.store(true, ordering: .releasing)
            channel.channel.close(promise: nil)
        }
        defer { timer.cancel() }
        do {
            let reply = try await channel.executeThenClose { inbound, outbound -> Reply? in
                // The whole request in one write: a server that answers as
                // soon as it has the body may close the connection before a
                // separate end would be written. A failed write still
                // leaves the answer, if one came, to read.
                var written: (any Error)?
                do {
                    try await outbound.write(
                        contentsOf: [.head(head), .body(.byteBuffer(ByteBuffer(bytes: body))), .end(nil)])
                } catch {
                    written = error
                }
                var reply: Reply?
                for try await part in inbound {
                    switch part {
                    case .head(let response):
                        // An interim 1xx head is followed by the real one.
                        guard response.status.code >= 200 else { continue }
                        reply = Reply(
                            status: Int(response.status.code), reason: response.status.reasonPhrase,
                            headers: response.headers.map { ($0.name, $0.value) }, body: [])
                    case .body(let buffer):
                        let room = Self.bodyLimit - (reply?.body.count ?? 0)
                        if room > 0 { reply?.body += buffer.readableBytesView.prefix(room) }
                    case .end:
                        if reply != nil { return reply }
                    }
                }
                if let written { throw written }
                return nil
            }
            if let reply { return reply }
        } catch {
            if expired.flag.load(ordering: .acquiring) { throw Failure(description: "no reply within \(timeout)") }
            throw Failure(description: "the connection failed: \(Self.words(error))")
        }
        if expired.flag.load(ordering: .acquiring) { throw Failure(description: "no reply within \(timeout)") }
        throw Failure(description: "the connection closed before a complete reply")
    }

    /// Set when the reply's time ran out.
    private final class Expiry: Sendable {
        let flag = Atomic<Bool>(false)
    }

    /// An error in words: an errno's text where there is one.
    static func words(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        if let error = error as? NIOConnectionError, let first = error.connectionErrors.first {
            return words(first.error)
        }
        if case .connectTimeout(let limit) = error as? ChannelError {
            return "no connection within \(limit.nanoseconds / 1_000_000) ms"
        }
        return "\(error)"
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
