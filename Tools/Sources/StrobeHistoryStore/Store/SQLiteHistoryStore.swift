import Foundation
import GRDB
import StrobeHistory
import StrobeResults

/// A run history and a fleet's traces in an SQLite file, in WAL mode so that
/// readers never wait for a writer; writers wait for each other (up to a
/// minute). The fleet's methods are in `SQLiteHistoryStore+Fleet.swift`.
final class SQLiteHistoryStore: HistoryStore, FleetStore {
    let location: HistoryLocation
    private let path: String
    private let queue: DatabaseQueue

    /// Opens the store at `path`: with `.readWrite`, creating it (and its
    /// directory) when missing and migrating it; with `.readOnly`, only an
    /// existing store at the current schema version, opened so that nothing
    /// can be written.
    init(path: String, access: HistoryAccess = .readWrite) throws(HistoryError) {
        self.path = path
        location = .sqlite(path: path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        configuration.foreignKeysEnabled = true
        configuration.label = "strobe-history"
        switch access {
        case .readWrite:
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                do {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                } catch {
                    throw HistoryError(
                        .badLocation, "\(path): cannot create its directory: \(error.localizedDescription)")
                }
            }
        case .readOnly:
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw HistoryError(.noStore, HistoryAccess.missingStore(path))
            }
            if isDirectory.boolValue {
                throw HistoryError(.badLocation, "\(path): is a directory, not a history store")
            }
            configuration.readonly = true
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw HistoryError(.badLocation, "\(path): cannot open it as an SQLite database: \(Self.describe(error))")
        }
        switch access {
        case .readWrite: try migrate()
        case .readOnly: try checkVersion()
        }
    }

    /// Checks, without writing, that the file is a history store at the
    /// current schema version.
    private func checkVersion() throws(HistoryError) {
        let path = self.path
        let version: Int?
        do {
            version = try queue.inDatabase { db -> Int? in
                guard try db.tableExists("strobe_schema") else { return nil }
                return try Int.fetchOne(db, sql: "SELECT MAX(version) FROM strobe_schema") ?? 0
            }
        } catch {
            throw HistoryError(.badLocation, "\(path): not a history store: \(Self.describe(error))")
        }
        guard let version else {
            throw HistoryError(.badLocation, HistoryAccess.notAStore(path))
        }
        try HistoryAccess.checkReadable(version: version, store: path)
    }

    /// Brings the tables to the current version in one transaction, then
    /// turns on WAL; a store of a newer version is refused before anything
    /// is written.
    private func migrate() throws(HistoryError) {
        let path = self.path
        do {
            try queue.inDatabase { db in
                try db.inTransaction(.immediate) {
                    try db.execute(sql: "CREATE TABLE IF NOT EXISTS strobe_schema (version INTEGER NOT NULL)")
                    let version = try Int.fetchOne(db, sql: "SELECT MAX(version) FROM strobe_schema") ?? 0
                    if version > HistorySchema.currentVersion { throw HistorySchema.newer(version, store: path) }
                    guard version < HistorySchema.currentVersion else { return .commit }
                    for migration in HistorySchema.migrations(.sqlite)[version...] {
                        for statement in migration { try db.execute(sql: statement) }
                    }
                    try db.execute(sql: "DELETE FROM strobe_schema")
                    try db.execute(
                        sql: "INSERT INTO strobe_schema (version) VALUES (?)", arguments: [HistorySchema.currentVersion]
                    )
                    return .commit
                }
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
        } catch let error as HistoryError {
            throw error
        } catch {
            throw HistoryError(.badLocation, "\(path): cannot open the history: \(Self.describe(error))")
        }
    }

    func add(_ record: RunRecord) async throws -> AddOutcome {
        try transaction("add run \(record.key)") { db in
            let metadata = record.run.metadata
            try db.execute(
                sql: """
                    INSERT INTO strobe_runs (id, run_id, timestamp_ns, suite, git_commit, branch, host, os, cpu_model,
                        core_count, build_configuration, strobe_version, round, samples_are_launches, comparison, side,
                        added_at_ns, simulated, instruction_source)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO NOTHING
                    """,
                arguments: [
                    record.key, metadata.runID, metadata.timestamp, metadata.suite, metadata.gitCommit,
                    record.branch,
                    metadata.host, metadata.os, metadata.cpuModel, metadata.coreCount,
                    metadata.buildConfiguration,
                    metadata.strobeVersion, metadata.round, metadata.samplesAreLaunches, record.comparison,
                    record.side,
                    Int64(Date().timeIntervalSince1970 * 1e9), metadata.simulated, metadata.instructionSource,
                ])
            // Nothing is written yet: committing changes nothing.
            guard db.changesCount > 0 else { return .alreadyStored }
            let tag = try db.cachedStatement(sql: "INSERT INTO strobe_run_tags (run, key, value) VALUES (?, ?, ?)")
            for (key, value) in metadata.tags.sorted(by: { $0.key < $1.key }) {
                try tag.execute(arguments: [record.key, key, value])
            }
            let test = try db.cachedStatement(
                sql:
                    "INSERT INTO strobe_tests (run, position, name, error, warmup_iterations, trace_paths) VALUES (?, "
                    + "?, ?, ?, ?, ?)"
            )
            for (position, result) in record.run.tests.enumerated() {
                try test.execute(arguments: [
                    record.key, position, result.name, result.error, result.warmupIterations,
                    HistoryAssembly.encodeTracePaths(result.tracePaths),
                ])
            }
            TestPause.pauseIfAsked()
            let metric = try db.cachedStatement(
                sql: """
                    INSERT INTO strobe_metrics (run, test_position, position, test, name, unit, lower_is_better,
                        samples, replicate_medians, replicate_minimums, median)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for row in record.metricRows {
                try metric.execute(arguments: [
                    record.key, row.testPosition, row.position, row.test, row.metric.name, row.metric.unit,
                    row.metric.better == .lower, Data(FloatArrayEncoding.encode(row.metric.samples)),
                    Data(FloatArrayEncoding.encode(row.summary.medians)),
                    Data(FloatArrayEncoding.encode(row.summary.minimums)), row.summary.centralValue,
                ])
            }
            let claim = try db.cachedStatement(
                sql:
                    "INSERT INTO strobe_metric_units (suite, test, metric, unit, first_run) VALUES (?, ?, ?, ?, ?) ON "
                    + "CONFLICT DO NOTHING"
            )
            let stored = try db.cachedStatement(
                sql: "SELECT unit, first_run FROM strobe_metric_units WHERE suite = ? AND test = ? AND metric = ?")
            for unit in record.units {
                try claim.execute(arguments: [metadata.suite, unit.test, unit.metric, unit.unit, record.key])
                if let row = try Row.fetchOne(stored, arguments: [metadata.suite, unit.test, unit.metric]) {
                    let existing = StoredUnit(test: unit.test, metric: unit.metric, unit: row[0], firstRun: row[1])
                    if existing.unit != unit.unit { throw existing.conflict(with: record, unit: unit.unit) }
                }
            }
            return .added
        }
    }

    func units(suite: String) async throws -> [StoredUnit] {
        try transaction("read units", .read) { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT test, metric, unit, first_run FROM strobe_metric_units WHERE suite = ? ORDER BY test, "
                    + "metric",
                arguments: [suite]
            ).map { StoredUnit(test: $0[0], metric: $0[1], unit: $0[2], firstRun: $0[3]) }
        }
    }

    func count() async throws -> Int {
        try transaction("count runs", .read) { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM strobe_runs") ?? 0
        }
    }

    func addMark(_ mark: HistoryMark) async throws {
        try transaction("store the mark of \(mark.target)") { db in
            try db.execute(
                sql: """
                    INSERT INTO strobe_marks (target, series, verdict, note, marked_at_ns) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (target, series) DO UPDATE SET verdict = excluded.verdict, note = excluded.note,
                        marked_at_ns = excluded.marked_at_ns
                    """,
                arguments: [mark.target, mark.series, mark.verdict.rawValue, mark.note, mark.markedAt])
        }
    }

    func marks() async throws -> [HistoryMark] {
        let path = self.path
        return try transaction("read marks", .read) { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT target, series, verdict, note, marked_at_ns FROM strobe_marks ORDER BY marked_at_ns, "
                    + "target, series"
            ).map { row throws(HistoryError) in
                let target: String = row[0]
                let verdict: String = row[2]
                guard let parsed = HistoryMark.Verdict(rawValue: verdict) else {
                    throw HistoryError(
                        .database,
                        "\(path): the mark of \(target) has the verdict \"\(verdict)\", not confirmed or dismissed")
                }
                return HistoryMark(target: target, series: row[1], verdict: parsed, note: row[3], markedAt: row[4])
            }
        }
    }

    func runs(_ query: HistoryQuery) async throws -> [HistoryRun] {
        let condition = HistoryFilter.condition(query.filters) { _ in "?" }
        let arguments = StatementArguments(condition.values)
        // One read transaction: the four queries see one snapshot.
        return try transaction("read runs", .read) { db in
            var assembly = HistoryAssembly()
            let runs = try Row.fetchCursor(
                db,
                sql: """
                    SELECT r.id, r.run_id, r.timestamp_ns, r.suite, r.git_commit, r.branch, r.host, r.os, r.cpu_model,
                        r.core_count, r.build_configuration, r.strobe_version, r.round, r.samples_are_launches,
                        r.comparison, r.side, r.simulated, r.instruction_source
                    FROM strobe_runs r WHERE \(condition.sql) ORDER BY r.timestamp_ns, r.id
                    """,
                arguments: arguments)
            while let row = try runs.next() {
                assembly.add(
                    HistoryAssembly.RunRow(
                        key: row[0], runID: row[1], timestamp: row[2], suite: row[3], gitCommit: row[4],
                        branch: row[5],
                        host: row[6], os: row[7], cpuModel: row[8], coreCount: row[9],
                        buildConfiguration: row[10],
                        strobeVersion: row[11], round: row[12], samplesAreLaunches: row[13],
                        comparison: row[14],
                        side: row[15], simulated: row[16], instructionSource: row[17]))
            }
            let tags = try Row.fetchCursor(
                db,
                sql:
                    "SELECT g.run, g.key, g.value FROM strobe_run_tags g JOIN strobe_runs r ON r.id = g.run WHERE "
                    + "\(condition.sql)",
                arguments: arguments)
            while let row = try tags.next() { assembly.addTag(run: row[0], key: row[1], value: row[2]) }
            let tests = try Row.fetchCursor(
                db,
                sql: """
                    SELECT s.run, s.position, s.name, s.error, s.warmup_iterations, s.trace_paths
                    FROM strobe_tests s JOIN strobe_runs r ON r.id = s.run WHERE \(condition.sql)
                    """,
                arguments: arguments)
            while let row = try tests.next() {
                try assembly.addTest(
                    run: row[0], position: row[1], name: row[2], error: row[3], warmupIterations: row[4],
                    tracePaths: row[5])
            }
            let samples = query.includeSamples ? "m.samples" : "NULL"
            let metrics = try Row.fetchCursor(
                db,
                sql: """
                    SELECT m.run, m.test_position, m.position, m.name, m.unit, m.lower_is_better,
                        m.replicate_medians, m.replicate_minimums, \(samples)
                    FROM strobe_metrics m JOIN strobe_runs r ON r.id = m.run WHERE \(condition.sql)
                    """,
                arguments: arguments)
            while let row = try metrics.next() {
                let run: String = row[0]
                func floats(_ column: Int, _ name: String) throws(HistoryError) -> [Double] {
                    guard let data = row[column] as Data? else { return [] }
                    guard let values = FloatArrayEncoding.decode(data) else {
                        throw HistoryAssembly.badArray(name, run: run)
                    }
                    return values
                }
                assembly.addMetric(
                    HistoryAssembly.MetricRow(
                        run: run, testPosition: row[1], position: row[2], name: row[3], unit: row[4],
                        better: row[5] as Bool ? .lower : .higher, samples: try floats(8, "samples"),
                        medians: try floats(6, "replicate_medians"),
                        minimums: try floats(7, "replicate_minimums")))
            }
            return assembly.finish()
        }
    }

    /// Runs `body` in one transaction and commits it, returning what it
    /// returns; rolls back on an error and rethrows it, as a
    /// ``HistoryError`` naming `what` unless it is one already.
    ///
    /// A write transaction is IMMEDIATE: it takes the write lock as it
    /// begins, where SQLite's busy timeout (a minute) waits for another
    /// writer to finish, never later on upgrading a read lock, where no
    /// timeout helps. A read transaction sees one snapshot.
    func transaction<Result>(
        _ what: String, _ access: TransactionAccess = .write, _ body: (Database) throws -> Result
    ) throws(HistoryError) -> Result {
        do {
            switch access {
            case .write: return try queue.write(body)
            case .read: return try queue.read(body)
            }
        } catch let error as HistoryError {
            throw error
        } catch {
            throw HistoryError(.database, "\(path): cannot \(what): \(Self.describe(error))")
        }
    }

    func close() async {
        try? queue.close()
    }

    /// SQLite's message for `error`.
    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
    }
}
