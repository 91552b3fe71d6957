/// How `strobe serve` listens and what it accepts.
package struct IngestServerConfiguration: Sendable {
    /// The address to listen on (a host name or IP address).
    package var host: String
    /// The TCP port; 0 asks the system for a free one (see
    /// ``IngestServer/run(onListening:)``).
    package var port: Int
    /// The bearer token every upload must carry.
    package var token: BearerToken
    /// The largest trace accepted, in bytes; a larger upload is refused with
    /// 413 before it is read whole.
    package var maximumTraceBytes: Int

    /// The default limit on an upload: 64 MiB, far above a flight-recorder
    /// dump or a sampled session.
    package static let defaultMaximumTraceBytes = 64 << 20

    /// A configuration with these values.
    package init(host: String, port: Int, token: BearerToken, maximumTraceBytes: Int = defaultMaximumTraceBytes) {
        self.host = host
        self.port = port
        self.token = token
        self.maximumTraceBytes = maximumTraceBytes
    }

    /// Parses `HOST:PORT` (`[v6]:PORT` for an IPv6 address; `:PORT` for
    /// every IPv4 interface).
    ///
    /// - Throws: ``IngestServerError`` naming the address when it has no
    ///   port or the port is not a number in 0...65535.
    package static func listenAddress(parsing text: String) throws(IngestServerError) -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw IngestServerError("--listen \(text): expected HOST:PORT, for example 127.0.0.1:8080")
        }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw IngestServerError("--listen \(text): the port '\(portText)' is not a number from 0 to 65535")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        return (host, port)
    }
}

/// A problem with `strobe serve`'s configuration, named for the user.
package struct IngestServerError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the flag, file or variable.
    package var message: String

    /// An error saying `message`.
    package init(_ message: String) { self.message = message }

    /// The message.
    package var description: String { message }
}
