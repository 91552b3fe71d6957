import Foundation
import Strobe
import StrobeHistory

/// The stores the server tests run against: SQLite always, PostgreSQL unless
/// `STROBE_TEST_SKIP_POSTGRES=1` (the server comes from
/// `STROBE_TEST_POSTGRES_URL`, as `scripts/with-postgres.sh` sets it).
enum ServerBackend: String, CaseIterable, Sendable {
    case sqlite, postgres

    static var tested: [ServerBackend] {
        ProcessInfo.processInfo.environment["STROBE_TEST_SKIP_POSTGRES"] == "1" ? [.sqlite] : allCases
    }
}

struct NoServerTestDatabase: Error, CustomStringConvertible {
    var description: String {
        "STROBE_TEST_POSTGRES_URL is not set: run under scripts/with-postgres.sh, or set STROBE_TEST_SKIP_POSTGRES=1"
    }
}

/// A scratch directory and a fresh store of one backend, removed after.
struct ServerScratch {
    var directory: String
    var location: HistoryLocation

    static func with(_ backend: ServerBackend, _ body: (ServerScratch) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strobe-serve-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var database: String?
        let base = ProcessInfo.processInfo.environment["STROBE_TEST_POSTGRES_URL"]
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            if let database, let base, let location = try? PostgresLocation(url: base) {
                _ = try? PostgresConnection(location).execute("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            }
        }
        switch backend {
        case .sqlite:
            try await body(ServerScratch(directory: directory, location: .sqlite(path: directory + "/history.sqlite")))
        case .postgres:
            guard let base else { throw NoServerTestDatabase() }
            let name =
                "strobe_serve_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
            _ = try PostgresConnection(try PostgresLocation(url: base)).execute("CREATE DATABASE \(name)")
            database = name
            let url = base.replacingOccurrences(of: "/strobe_test?", with: "/\(name)?")
            try await body(ServerScratch(directory: directory, location: try HistoryLocation.parse(url)))
        }
    }
}

/// Traces the SDK writes in this process, one session at a time, each with
/// its own metadata so that their bytes differ.
enum ServerTraces {
    static let lock = NSLock()

    static func write(count: Int, in directory: String) throws -> [[UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        return try (0..<count).map { index in
            let path = directory + "/session-\(index).pftrace"
            var configuration = TraceConfiguration(outputPath: path)
            configuration.processSamplingInterval = .zero
            configuration.metadata = TraceMetadata(
                appName: "Lens", appVersion: index % 2 == 0 ? "5.1" : "5.2", dimensions: ["session": "\(index)"])
            try TraceSession.record(configuration) {
                for _ in 0..<40 { Trace.interval("apply lens") { _ = (0..<100).reduce(0, &+) } }
                Trace.counter("queue", Int64(index))
            }
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }
}
