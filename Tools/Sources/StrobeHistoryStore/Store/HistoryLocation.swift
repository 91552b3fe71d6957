import Foundation
import StrobeHistory

/// Where a run history is kept: an SQLite file, or a PostgreSQL database
/// named by a URL.
///
/// A location is written as a path (`.strobe/history.sqlite`, the default)
/// or as `postgres://USER@HOST:PORT/DATABASE` (`postgresql://` too). A server
/// reached through a Unix socket is named by its socket directory:
/// `postgres://USER@/DATABASE?host=/run/postgresql` (and `port=` when it is
/// not 5432). The password never appears in the URL: it comes from the
/// `PGPASSWORD` environment variable or from a file.
public enum HistoryLocation: Sendable, Hashable, CustomStringConvertible {
    /// An SQLite file; created, with its directory, when missing.
    case sqlite(path: String)
    /// A PostgreSQL database.
    case postgres(PostgresLocation)

    /// The default store: `.strobe/history.sqlite` under the working directory.
    public static let defaultPath = ".strobe/history.sqlite"

    /// Parses `text` (a path or a URL). The password is read from
    /// `passwordFile` when given (its first line), else from `PGPASSWORD` in
    /// `environment`.
    public static func parse(
        _ text: String, passwordFile: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(HistoryError) -> HistoryLocation {
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") else {
            guard !text.isEmpty else { throw HistoryError(.badLocation, "the history store's location is empty") }
            if text.contains("://") {
                throw HistoryError(
                    .badLocation,
                    "\(text): not a store this knows; give a file path (SQLite) or a "
                        + "postgres://USER@HOST:PORT/DATABASE URL"
                )
            }
            if passwordFile != nil {
                throw HistoryError(
                    .badLocation, "--password-file is for a PostgreSQL store, and \(text) is an SQLite file")
            }
            return .sqlite(path: text)
        }
        return .postgres(try PostgresLocation(url: text, passwordFile: passwordFile, environment: environment))
    }

    /// The location as given, without any password.
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let location): return location.description
        }
    }
}

/// A PostgreSQL database: where the server listens, who logs in, which
/// database.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    /// How the server is reached.
    public enum Endpoint: Sendable, Hashable {
        /// A TCP host and port.
        case tcp(host: String, port: Int)
        /// The Unix socket `DIRECTORY/.s.PGSQL.PORT`.
        case unixSocket(directory: String, port: Int)

        /// The socket file's path, for a Unix socket.
        public var socketPath: String? {
            guard case .unixSocket(let directory, let port) = self else { return nil }
            return directory + "/.s.PGSQL.\(port)"
        }
    }

    /// How the server is reached.
    public var endpoint: Endpoint
    /// The role logged in as.
    public var user: String
    /// The database.
    public var database: String
    /// The password, when one was given (from `PGPASSWORD` or a file);
    /// without one, libpq looks in `~/.pgpass`.
    public var password: String?
    /// Seconds to wait for the connection before giving up
    /// (`connect_timeout=`, default 10); libpq counts it in whole seconds
    /// (rounded up), at least 2, for each address the host resolves to.
    public var connectTimeout: Double = 10
    /// Whether the TCP connection is encrypted (`sslmode=`).
    public var tls: TLSMode = .prefer

    /// Whether a TCP connection uses TLS; a Unix socket never does.
    public enum TLSMode: String, Sendable, Hashable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it (the default).
        case prefer
        /// TLS, or no connection.
        case require
    }

    /// Parses a `postgres://` URL; see ``HistoryLocation``.
    public init(
        url text: String, passwordFile: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(HistoryError) {
        func bad(_ problem: String) -> HistoryError {
            HistoryError(.badLocation, "\(Self.redacted(text)): \(problem)")
        }
        guard let components = URLComponents(string: text) else {
            throw bad("not a URL; write postgres://USER@HOST:PORT/DATABASE")
        }
        if components.password != nil {
            throw bad(
                "a password in the URL would show in process lists and logs; put it in PGPASSWORD or a file given with "
                    + "--password-file"
            )
        }
        guard let user = components.user, !user.isEmpty else {
            throw bad("no user; write postgres://USER@HOST:PORT/DATABASE")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw bad("no database; write postgres://USER@HOST:PORT/DATABASE")
        }
        var socketDirectory: String?
        var portParameter: Int?
        for item in components.queryItems ?? [] {
            switch item.name {
            case "host":
                guard let value = item.value, value.hasPrefix("/") else {
                    throw bad("host= takes the absolute path of the server's socket directory")
                }
                socketDirectory = value
            case "port":
                guard let value = item.value.flatMap(Int.init), (1...65535).contains(value) else {
                    throw bad("port= takes a port number from 1 to 65535")
                }
                portParameter = value
            case "connect_timeout":
                guard let value = item.value.flatMap(Double.init), value > 0, value.isFinite else {
                    throw bad("connect_timeout= takes a positive number of seconds")
                }
                connectTimeout = value
            case "sslmode":
                guard let value = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    throw bad("sslmode= takes disable, prefer or require")
                }
                tls = value
            default:
                throw bad("unknown parameter \(item.name)= (known: host, port, connect_timeout, sslmode)")
            }
        }
        if let port = components.port, !(1...65535).contains(port) { throw bad("port \(port) is not from 1 to 65535") }
        let port = components.port ?? portParameter ?? 5432
        if let socketDirectory {
            if let host = components.host, !host.isEmpty {
                throw bad("give either a host (\(host)) or a socket directory (host=\(socketDirectory)), not both")
            }
            endpoint = .unixSocket(directory: socketDirectory, port: port)
        } else {
            guard let host = components.host, !host.isEmpty else {
                throw bad(
                    "no host; write postgres://USER@HOST:PORT/DATABASE, or ?host=/SOCKET/DIRECTORY for a Unix socket")
            }
            endpoint = .tcp(host: host, port: port)
        }
        self.user = user
        self.database = database
        if let passwordFile {
            do {
                let contents = try String(contentsOfFile: passwordFile, encoding: .utf8)
                password =
                    contents.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            } catch {
                throw HistoryError(
                    .badLocation, "--password-file \(passwordFile): cannot read it: \(error.localizedDescription)")
            }
        } else {
            password = environment["PGPASSWORD"]
        }
    }

    /// `postgres://USER@HOST:PORT/DATABASE` (or the socket form), without the password.
    public var description: String {
        switch endpoint {
        case .tcp(let host, let port): return "postgres://\(user)@\(host):\(port)/\(database)"
        case .unixSocket(let directory, let port):
            return "postgres://\(user)@/\(database)?host=\(directory)" + (port == 5432 ? "" : "&port=\(port)")
        }
    }

    /// `text` with anything between `://` and `@` after a colon masked, so
    /// that an error never repeats a password.
    static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://"),
            let at = text.range(of: "@", range: scheme.upperBound..<text.endIndex),
            let colon = text.range(of: ":", range: scheme.upperBound..<at.lowerBound)
        else { return text }
        return String(text[..<colon.upperBound]) + "***" + String(text[at.lowerBound...])
    }
}
