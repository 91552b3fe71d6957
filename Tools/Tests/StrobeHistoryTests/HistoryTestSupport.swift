import Foundation
import GRDB
import StrobeHistory
import StrobeResults
import StrobeTestSupport
import Testing

/// The stores the tests run against.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// Both, unless `STROBE_TEST_SKIP_POSTGRES=1` says to leave PostgreSQL out.
    static var tested: [Backend] {
        ProcessInfo.processInfo.environment["STROBE_TEST_SKIP_POSTGRES"] == "1" ? [.sqlite] : allCases
    }
}

/// Why a PostgreSQL test cannot run: no server was given.
struct NoTestServer: Error, CustomStringConvertible {
    var description: String {
        """
        STROBE_TEST_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. Run them with \
        `make test-history` (it starts a throwaway server with scripts/postgres.sh), or set \
        STROBE_TEST_POSTGRES_URL=postgres://USER@/DATABASE?host=SOCKETDIR yourself; set \
        STROBE_TEST_SKIP_POSTGRES=1 to test only SQLite.
        """
    }
}

/// A store of its own for one test: a new SQLite file, or a new database on
/// the test server.
struct TestStore: Sendable {
    /// What `--history` takes.
    var text: String
    /// The parsed location.
    var location: HistoryLocation
    /// A directory for the test's files, removed by ``remove()``.
    var directory: String
    var backend: Backend
    var databaseName: String?

    /// A fresh, empty store.
    static func make(_ backend: Backend) async throws -> TestStore {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strobe-history-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        switch backend {
        case .sqlite:
            let path = directory + "/history.sqlite"
            return TestStore(text: path, location: .sqlite(path: path), directory: directory, backend: backend)
        case .postgres:
            guard let base = ProcessInfo.processInfo.environment["STROBE_TEST_POSTGRES_URL"] else {
                throw NoTestServer()
            }
            let name =
                "strobe_test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
            try TestServer.execute("CREATE DATABASE \(name)", url: base)
            let text = base.replacingOccurrences(of: "/strobe_test?", with: "/\(name)?")
            return TestStore(
                text: text, location: try HistoryLocation.parse(text), directory: directory, backend: backend,
                databaseName: name)
        }
    }

    /// Opens the store.
    func open() async throws -> any HistoryStore { try await HistoryStores.open(location) }

    /// Removes the files and drops the database.
    func remove() async {
        try? FileManager.default.removeItem(atPath: directory)
        if let databaseName, let base = ProcessInfo.processInfo.environment["STROBE_TEST_POSTGRES_URL"] {
            try? TestServer.execute("DROP DATABASE IF EXISTS \(databaseName) WITH (FORCE)", url: base)
        }
    }

    /// Runs `body` on a fresh store and removes it after.
    static func with(_ backend: Backend, _ body: (TestStore) async throws -> Void) async throws {
        let store = try await make(backend)
        do {
            try await body(store)
        } catch {
            await store.remove()
            throw error
        }
        await store.remove()
    }

    /// Sets the schema version the store records, as a newer Strobe would.
    func setSchemaVersion(_ version: Int) async throws {
        switch location {
        case .sqlite(let path):
            let queue = try DatabaseQueue(path: path)
            try queue.inDatabase { db in
                try db.execute(sql: "UPDATE strobe_schema SET version = ?", arguments: [version])
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
            try queue.close()
        case .postgres:
            try TestServer.execute("UPDATE strobe_schema SET version = \(version)", url: text)
        }
    }

    /// What the store holds, as text: every table's rows (SQLite: the file's
    /// bytes too), to see that nothing changed.
    func snapshot() async throws -> String {
        switch location {
        case .sqlite(let path):
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            return bytes.base64EncodedString()
        case .postgres:
            var parts: [String] = []
            for table in try TestServer.rows(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
                url: text)
            {
                parts.append(
                    table + ":" + (try TestServer.rows("SELECT COUNT(*)::text FROM \(table)", url: text)).joined())
            }
            parts.append(
                "version " + (try TestServer.rows("SELECT version::text FROM strobe_schema", url: text)).joined())
            return parts.joined(separator: ", ")
        }
    }
}

/// Statements on the test server, outside the code under test, each on a
/// connection of its own. (They block their thread briefly: a local
/// server on a Unix socket.)
enum TestServer {
    static func execute(_ sql: String, url: String) throws {
        _ = try rows(sql, url: url)
    }

    /// The first column of every row, as text.
    static func rows(_ sql: String, url: String) throws -> [String] {
        let connection = try PostgresConnection(try PostgresLocation(url: url))
        let result = try connection.execute(sql)
        return try (0..<result.rowCount).map { row in try result.value(row, 0, as: String?.self) ?? "" }
    }
}

/// Runs for the tests.
enum SampleRuns {
    /// A run of `suite` with `metrics` metrics of one test (`wall`, then
    /// `m1`...) and `iterations` samples each, at `time` seconds.
    static func run(
        id: String, suite: String = "suite", time: Int64 = 1, metrics: Int = 3, iterations: Int = 5,
        unit: String = "ns",
        tags: [String: String] = ["branch": "main", "device": "ci"], launches: Bool = false, round: Int? = nil
    ) -> PerfRun {
        let values = (0..<metrics).map { index in
            PerfMetric(
                name: index == 0 ? "wall" : "m\(index)", unit: index == 0 ? unit : "bytes",
                better: index % 3 != 2 ? .lower : .higher,
                samples: (0..<iterations).map { 1000 + Double(index * 7 + $0 * 3) + Double(time % 97) / 8 })
        }
        return PerfRun(
            metadata: RunMetadata(
                suite: suite, gitCommit: "c\(time)", host: "host-\(time % 3)", os: "Linux", cpuModel: "AMD EPYC",
                coreCount: 2,
                buildConfiguration: "release", timestamp: time * 1_000_000_000, tags: tags, runID: id, round: round,
                samplesAreLaunches: launches),
            tests: [PerfTestResult(name: "parse", metrics: values, warmupIterations: 1)])
    }

    /// Two tests, one failed with trace paths kept, a run without a run id,
    /// a run of launches in a round: every field a file holds.
    static var varied: [PerfRun] {
        var first = run(id: "run-a", time: 10)
        first.tests.append(
            PerfTestResult(
                name: "render \"quoted\", comma",
                metrics: [PerfMetric(name: "fps", unit: "count/s", better: .higher, samples: [59.5, 60, 58.25])],
                error: "iteration 3: timed out", warmupIterations: 2, tracePaths: ["/tmp/a.strobe", "/tmp/b c.strobe"]))
        first.tests.append(PerfTestResult(name: "empty", metrics: [PerfMetric(name: "none", unit: "ns", samples: [])]))
        let anonymous = run(id: "", time: 5, tags: [:])
        let launches = run(
            id: "run-l", time: 20, metrics: 2, iterations: 4, tags: ["branch": "feature/x", "device": "pixel 7"],
            launches: true, round: 3)
        return [first, anonymous, launches]
    }

    /// Writes `run` as a results file in `directory`.
    @discardableResult
    static func write(_ run: PerfRun, to directory: String, name: String? = nil) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path =
            directory + "/" + (name ?? (run.metadata.runID.isEmpty ? "anonymous" : run.metadata.runID))
            + ".strobe-results"
        try ResultsFile.write(run, to: path)
        return path
    }
}

/// The built `strobe` command, beside the test bundle.
enum StrobeBinary {
    static var path: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("strobe").path
    }

    /// Runs `strobe` with `arguments` and the given extra environment;
    /// returns its exit status, output and errors.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (
        status: Int32, output: String, errors: String
    ) {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw StrobeNotBuilt(path: path)
        }
        let outcome = try runProgram(path, arguments, environment: environment)
        return (outcome.status, outcome.output, outcome.errors)
    }

    struct StrobeNotBuilt: Error, CustomStringConvertible {
        var path: String
        var description: String { "\(path) is not built; run `swift build --package-path Tools` first" }
    }
}
