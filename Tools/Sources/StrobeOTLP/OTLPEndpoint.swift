import Foundation

/// Where OTLP/HTTP requests go: an `http://` URL, posted to as given
/// (`http://collector:4318/v1/traces`; the path is not completed).
///
/// Only plain HTTP is supported: no TLS is compiled into the tools. A
/// Collector on the same host or network, or a local proxy, takes the
/// requests and forwards them over TLS.
public struct OTLPEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// The URL as given.
    public var url: String
    /// The host to connect to (an IPv6 address without its brackets).
    public var host: String
    /// The TCP port: the URL's, else 80.
    public var port: Int
    /// The request target: the path (with `/` when the URL has none) and
    /// the query.
    public var target: String
    /// The `Host` header's value.
    public var hostHeader: String

    /// The URL as given.
    public var description: String { url }

    /// Parses `url`; throws a ``OTLPEndpointError`` naming what is wrong.
    public init(parsing url: String) throws(OTLPEndpointError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw OTLPEndpointError(url: url, problem: "not a URL; give one like http://127.0.0.1:4318/v1/traces")
        }
        if scheme == "https" {
            throw OTLPEndpointError(
                url: url,
                problem:
                    "https is not supported (strobe has no TLS); give an http:// URL, such as a Collector on this "
                    + "host or network that forwards over TLS")
        }
        guard scheme == "http" else {
            throw OTLPEndpointError(url: url, problem: "the scheme must be http, not \(scheme)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw OTLPEndpointError(url: url, problem: "no host; give one like http://127.0.0.1:4318/v1/traces")
        }
        if components.user != nil || components.password != nil {
            throw OTLPEndpointError(url: url, problem: "user and password in the URL are not supported")
        }
        let port = components.port ?? 80
        guard (1...65_535).contains(port) else {
            throw OTLPEndpointError(url: url, problem: "port \(port) is out of range")
        }
        self.url = url
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.host = bare
        self.port = port
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        target = components.percentEncodedQuery.map { path + "?" + $0 } ?? path
        let named = bare.contains(":") ? "[\(bare)]" : bare
        hostHeader = components.port == nil ? named : "\(named):\(port)"
    }
}

/// An `--otlp-endpoint` that cannot be used, and why.
public struct OTLPEndpointError: Error, CustomStringConvertible, Equatable {
    /// The URL as given.
    public var url: String
    /// What is wrong with it.
    public var problem: String

    /// The flag, the URL and the problem, for standard error.
    public var description: String { "--otlp-endpoint \(url): \(problem)" }
}
