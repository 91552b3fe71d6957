import CSQLite
import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobeResults
import StrobeTestSupport

// What the history's tests ask of a scratch store beyond making one.
extension ScratchStore {
    /// Opens the store.
    package func open() async throws -> any HistoryStore { try await HistoryStores.open(location) }

    /// Sets the schema version the store records, as a newer Strobe would.
    package func setSchemaVersion(_ version: Int) async throws {
        try execute("UPDATE strobe_schema SET version = \(version)")
    }

    /// Takes the store back to schema version 3, as a Strobe before version
    /// 4 left it: `strobe_runs` without `simulated` and
    /// `instruction_source`, `strobe_tests` without `cpu_stacks`.
    package func downgradeToVersion3() async throws {
        try execute(
            "ALTER TABLE strobe_runs DROP COLUMN simulated", "ALTER TABLE strobe_runs DROP COLUMN instruction_source",
            "ALTER TABLE strobe_tests DROP COLUMN cpu_stacks", "UPDATE strobe_schema SET version = 3")
    }

    /// Runs `statements` on the store, in order, as another program would.
    private func execute(_ statements: String...) throws {
        switch location {
        case .sqlite(let path):
            // Straight through SQLite's C API, as another program would:
            // the store has no way to change its version.
            var connection: OpaquePointer?
            defer { sqlite3_close_v2(connection) }
            var code = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE, nil)
            if code == SQLITE_OK {
                let sql = (statements + ["PRAGMA wal_checkpoint(TRUNCATE)"]).joined(separator: "; ")
                code = sqlite3_exec(connection, sql, nil, nil, nil)
            }
            guard code == SQLITE_OK else {
                let message = connection.flatMap { sqlite3_errmsg($0) } ?? sqlite3_errstr(code)
                throw SQLiteFailure(path: path, message: message.map { String(cString: $0) } ?? "error \(code)")
            }
        case .postgres:
            for statement in statements { try TestServer.execute(statement, url: text) }
        }
    }

    /// What the store holds, as text: every table's rows (SQLite: the file's
    /// bytes too), to see that nothing changed.
    package func snapshot() async throws -> String {
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

/// SQLite's refusal of a test's own statement on the store at `path`.
struct SQLiteFailure: Error, CustomStringConvertible {
    /// The store's file.
    var path: String
    /// SQLite's message (`sqlite3_errmsg`).
    var message: String

    /// The file, then SQLite's message.
    var description: String { "\(path): \(message)" }
}

/// Runs for the tests.
package enum SampleRuns {
    /// A run of `suite` with `metrics` metrics of one test (`wall`, then
    /// `m1`...) and `iterations` samples each, at `time` seconds.
    package static func run(
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
    package static var varied: [PerfRun] {
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
    package static func write(_ run: PerfRun, to directory: String, name: String? = nil) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path =
            directory + "/" + (name ?? (run.metadata.runID.isEmpty ? "anonymous" : run.metadata.runID))
            + ".strobe-results"
        try ResultsFile.write(run, to: path)
        return path
    }
}

/// The built `strobe` command.
package enum StrobeBinary {
    package static let path = builtProgram("strobe")

    /// Runs `strobe` with `arguments` and the given extra environment;
    /// returns its exit status, output and errors.
    package static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (
        status: Int32, output: String, errors: String
    ) {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw StrobeNotBuilt(path: path)
        }
        let outcome = try runProgram(path, arguments, environment: environment)
        return (outcome.status, outcome.output, outcome.errors)
    }

    package struct StrobeNotBuilt: Error, CustomStringConvertible {
        package var path: String

        /// The error for the program at `path`.
        package init(path: String) { self.path = path }

        package var description: String {
            "\(path) is not built; run `swift build --package-path Tools --traits Server` first"
        }
    }
}
