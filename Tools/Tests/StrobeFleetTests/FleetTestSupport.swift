import Foundation
import Strobe
import StrobeHistory
import StrobeTestSupport
import Testing

/// The stores the fleet tests run against: SQLite always, PostgreSQL unless
/// `STROBE_TEST_SKIP_POSTGRES=1` (the server comes from
/// `STROBE_TEST_POSTGRES_URL`, as `scripts/with-postgres.sh` sets it).
enum FleetBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    static var tested: [FleetBackend] {
        ProcessInfo.processInfo.environment["STROBE_TEST_SKIP_POSTGRES"] == "1" ? [.sqlite] : allCases
    }
}

struct NoFleetTestServer: Error, CustomStringConvertible {
    var description: String {
        "STROBE_TEST_POSTGRES_URL is not set: run under scripts/with-postgres.sh, or set STROBE_TEST_SKIP_POSTGRES=1"
    }
}

/// A scratch directory and a fresh store of one backend, removed after.
struct FleetScratch {
    var directory: String
    var store: String
    var location: HistoryLocation
    var database: String?

    static func with(_ backend: FleetBackend, _ body: (FleetScratch) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strobe-fleet-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var scratch: FleetScratch
        switch backend {
        case .sqlite:
            let path = directory + "/history.sqlite"
            scratch = FleetScratch(directory: directory, store: path, location: .sqlite(path: path))
        case .postgres:
            guard let base = ProcessInfo.processInfo.environment["STROBE_TEST_POSTGRES_URL"] else {
                throw NoFleetTestServer()
            }
            let name =
                "strobe_fleet_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
            _ = try PostgresConnection(try PostgresLocation(url: base)).execute("CREATE DATABASE \(name)")
            let text = base.replacingOccurrences(of: "/strobe_test?", with: "/\(name)?")
            scratch = FleetScratch(
                directory: directory, store: text, location: try HistoryLocation.parse(text), database: name)
        }
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            if let name = scratch.database, let base = ProcessInfo.processInfo.environment["STROBE_TEST_POSTGRES_URL"] {
                _ = try? PostgresConnection(try PostgresLocation(url: base)).execute(
                    "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }
        }
        try await body(scratch)
    }
}

/// Traces written by the SDK, in this process, one session at a time.
enum SDKTraces {
    /// The recording lock: one session per process at a time.
    static let lock = NSLock()

    /// Records `intervals` intervals named `work` (each spinning about
    /// `spin` iterations) and `samples` samples of the counter `queue`,
    /// under `metadata`, into `path`.
    static func write(
        _ path: String, metadata: TraceMetadata, intervals: Int = 50, spin: Int = 200, samples: Int = 5
    ) throws {
        lock.lock()
        defer { lock.unlock() }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.metadata = metadata
        try TraceSession.record(configuration) {
            var sink = 0
            for _ in 0..<intervals {
                Trace.interval("work") {
                    for index in 0..<spin { sink &+= index &* index }
                }
            }
            for index in 0..<samples { Trace.counter("queue", Int64(index)) }
            withExtendedLifetime(sink) {}
        }
    }

    /// The offsets of the top-level packets of a trace: (start of the
    /// field, start of the payload, end).
    static func packets(_ bytes: [UInt8]) -> [(field: Int, payload: Int, end: Int)] {
        var result: [(Int, Int, Int)] = []
        var offset = 0
        while offset < bytes.count {
            let field = offset
            offset += 1 // the tag 0x0a
            var length = 0
            var shift = 0
            while bytes[offset] & 0x80 != 0 {
                length |= Int(bytes[offset] & 0x7f) << shift
                shift += 7
                offset += 1
            }
            length |= Int(bytes[offset]) << shift
            offset += 1
            result.append((field, offset, offset + length))
            offset += length
        }
        return result
    }
}
