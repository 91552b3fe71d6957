import Foundation
import StrobeHistory
import StrobeResults
import Synchronization

/// A run history and a fleet's traces in an SQLite file, in WAL mode so that
/// readers never wait for a writer; writers wait for each other (up to a
/// minute). The fleet's methods are in `SQLiteHistoryStore+Fleet.swift`.
///
/// One connection (`SQLite/`, over SQLite's C API), used by one caller at a
/// time: a method waits for the one running to finish its transaction.
final class SQLiteHistoryStore: HistoryStore, FleetStore {
    let location: HistoryLocation
    private let path: String
    /// The connection, behind the lock that gives it to one caller at a
    /// time; nil once closed.
    private let connection: Mutex<SQLiteConnection?>

    /// Opens the store at `path`: with `.readWrite`, creating it (and its
    /// directory) when missing and migrating it; with `.readOnly`, only an
    /// existing store at the current schema version, opened so that nothing
    /// can be written.
    init(path: String, access: HistoryAccess = .readWrite) throws(HistoryError) {
        self.path = path
        location = .sqlite(path: path)
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
        }
        do {
            let opened = try SQLiteConnection(path: path, readOnly: access == .readOnly, busyTimeout: .seconds(60))
            try opened.execute("PRAGMA foreign_keys = ON")
            connection = Mutex(opened)
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
            version = try withConnection { db -> Int? in
                guard try db.tableExists("strobe_schema") else { return nil }
                return try db.value("SELECT MAX(version) FROM strobe_schema", as: Int.self) ?? 0
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
            try withConnection { db in
                try db.writeTransaction {
                    try db.execute("CREATE TABLE IF NOT EXISTS strobe_schema (version INTEGER NOT NULL)")
                    let version = try db.value("SELECT MAX(version) FROM strobe_schema", as: Int.self) ?? 0
                    if version > HistorySchema.currentVersion { throw HistorySchema.newer(version, store: path) }
                    guard version < HistorySchema.currentVersion else { return }
                    for migration in HistorySchema.migrations(.sqlite)[version...] {
                        for statement in migration { try db.execute(statement) }
                    }
                    try db.execute("DELETE FROM strobe_schema")
                    try db.execute("INSERT INTO strobe_schema (version) VALUES (?)", [HistorySchema.currentVersion])
                }
                try db.execute("PRAGMA journal_mode = WAL")
                try db.execute("PRAGMA synchronous = NORMAL")
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
                """
                INSERT INTO strobe_runs (id, run_id, timestamp_ns, suite, git_commit, branch, host, os, cpu_model,
                    core_count, build_configuration, strobe_version, round, samples_are_launches, comparison, side,
                    added_at_ns, simulated, instruction_source)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO NOTHING
                """,
                [
                    record.key, metadata.runID, metadata.timestamp, metadata.suite, metadata.gitCommit, record.branch,
                    metadata.host, metadata.os, metadata.cpuModel, metadata.coreCount, metadata.buildConfiguration,
                    metadata.strobeVersion, metadata.round, metadata.samplesAreLaunches, record.comparison,
                    record.side, Int64(Date().timeIntervalSince1970 * 1e9), metadata.simulated,
                    metadata.instructionSource,
                ])
            // Nothing is written yet: committing changes nothing.
            guard db.changes > 0 else { return .alreadyStored }
            let tag = try db.cachedStatement("INSERT INTO strobe_run_tags (run, key, value) VALUES (?, ?, ?)")
            for (key, value) in metadata.tags.sorted(by: { $0.key < $1.key }) {
                try tag.execute([record.key, key, value])
            }
            let test = try db.cachedStatement(
                "INSERT INTO strobe_tests (run, position, name, error, warmup_iterations, trace_paths, cpu_stacks) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?)")
            for (position, result) in record.run.tests.enumerated() {
                try test.execute([
                    record.key, position, result.name, result.error, result.warmupIterations,
                    HistoryAssembly.encodeTracePaths(result.tracePaths), HistoryAssembly.stacks(of: record, position),
                ])
            }
            TestPause.pauseIfAsked()
            let metric = try db.cachedStatement(
                """
                INSERT INTO strobe_metrics (run, test_position, position, test, name, unit, lower_is_better,
                    samples, replicate_medians, replicate_minimums, median)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for row in record.metricRows {
                try metric.execute([
                    record.key, row.testPosition, row.position, row.test, row.metric.name, row.metric.unit,
                    row.metric.better == .lower, FloatArrayEncoding.encode(row.metric.samples),
                    FloatArrayEncoding.encode(row.summary.medians), FloatArrayEncoding.encode(row.summary.minimums),
                    row.summary.centralValue,
                ])
            }
            let claim = try db.cachedStatement(
                "INSERT INTO strobe_metric_units (suite, test, metric, unit, first_run) VALUES (?, ?, ?, ?, ?) "
                    + "ON CONFLICT DO NOTHING")
            let stored = try db.cachedStatement(
                "SELECT unit, first_run FROM strobe_metric_units WHERE suite = ? AND test = ? AND metric = ?")
            for unit in record.units {
                try claim.execute([metadata.suite, unit.test, unit.metric, unit.unit, record.key])
                if let row = try stored.firstRow([metadata.suite, unit.test, unit.metric]) {
                    let existing = StoredUnit(
                        test: unit.test, metric: unit.metric, unit: try row.value(0), firstRun: try row.value(1))
                    if existing.unit != unit.unit { throw existing.conflict(with: record, unit: unit.unit) }
                }
            }
            return .added
        }
    }

    func units(suite: String) async throws -> [StoredUnit] {
        try transaction("read units", .read) { db in
            try db.rows(
                "SELECT test, metric, unit, first_run FROM strobe_metric_units WHERE suite = ? ORDER BY test, metric",
                [suite]
            ).map { row throws(SQLiteError) in
                StoredUnit(
                    test: try row.value(0), metric: try row.value(1), unit: try row.value(2),
                    firstRun: try row.value(3))
            }
        }
    }

    func count() async throws -> Int {
        try transaction("count runs", .read) { db in
            try db.value("SELECT COUNT(*) FROM strobe_runs", as: Int.self) ?? 0
        }
    }

    func addMark(_ mark: HistoryMark) async throws {
        try transaction("store the mark of \(mark.target)") { db in
            try db.execute(
                """
                INSERT INTO strobe_marks (target, series, verdict, note, marked_at_ns) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (target, series) DO UPDATE SET verdict = excluded.verdict, note = excluded.note,
                    marked_at_ns = excluded.marked_at_ns
                """,
                [mark.target, mark.series, mark.verdict.rawValue, mark.note, mark.markedAt])
        }
    }

    func marks() async throws -> [HistoryMark] {
        let path = self.path
        return try transaction("read marks", .read) { db in
            try db.rows(
                "SELECT target, series, verdict, note, marked_at_ns FROM strobe_marks "
                    + "ORDER BY marked_at_ns, target, series"
            ).map { row in
                let target: String = try row.value(0)
                let verdict: String = try row.value(2)
                guard let parsed = HistoryMark.Verdict(rawValue: verdict) else {
                    throw HistoryError(
                        .database,
                        "\(path): the mark of \(target) has the verdict \"\(verdict)\", not confirmed or dismissed")
                }
                return HistoryMark(
                    target: target, series: try row.value(1), verdict: parsed, note: try row.value(3),
                    markedAt: try row.value(4))
            }
        }
    }

    func runs(_ query: HistoryQuery) async throws -> [HistoryRun] {
        let condition = HistoryFilter.condition(query.filters) { _ in "?" }
        let arguments = condition.values
        // One read transaction: the four queries see one snapshot.
        return try transaction("read runs", .read) { db in
            var assembly = HistoryAssembly()
            try db.prepare(
                """
                SELECT r.id, r.run_id, r.timestamp_ns, r.suite, r.git_commit, r.branch, r.host, r.os, r.cpu_model,
                    r.core_count, r.build_configuration, r.strobe_version, r.round, r.samples_are_launches,
                    r.comparison, r.side, r.simulated, r.instruction_source
                FROM strobe_runs r WHERE \(condition.sql) ORDER BY r.timestamp_ns, r.id
                """
            ).forEachRow(arguments) { row in
                assembly.add(
                    HistoryAssembly.RunRow(
                        key: try row.value(0), runID: try row.value(1), timestamp: try row.value(2),
                        suite: try row.value(3), gitCommit: try row.value(4), branch: try row.value(5),
                        host: try row.value(6), os: try row.value(7), cpuModel: try row.value(8),
                        coreCount: try row.value(9), buildConfiguration: try row.value(10),
                        strobeVersion: try row.value(11), round: try row.value(12),
                        samplesAreLaunches: try row.value(13), comparison: try row.value(14), side: try row.value(15),
                        simulated: try row.value(16), instructionSource: try row.value(17)))
            }
            try db.prepare(
                "SELECT g.run, g.key, g.value FROM strobe_run_tags g JOIN strobe_runs r ON r.id = g.run "
                    + "WHERE \(condition.sql)"
            ).forEachRow(arguments) { row in
                assembly.addTag(run: try row.value(0), key: try row.value(1), value: try row.value(2))
            }
            let stacks = query.includeStacks ? "s.cpu_stacks" : "'[]'"
            try db.prepare(
                """
                SELECT s.run, s.position, s.name, s.error, s.warmup_iterations, s.trace_paths, \(stacks)
                FROM strobe_tests s JOIN strobe_runs r ON r.id = s.run WHERE \(condition.sql)
                """
            ).forEachRow(arguments) { row in
                try assembly.addTest(
                    run: try row.value(0), position: try row.value(1), name: try row.value(2),
                    error: try row.value(3), warmupIterations: try row.value(4), tracePaths: try row.value(5),
                    stacks: try row.value(6))
            }
            let samples = query.includeSamples ? "m.samples" : "NULL"
            try db.prepare(
                """
                SELECT m.run, m.test_position, m.position, m.name, m.unit, m.lower_is_better,
                    m.replicate_medians, m.replicate_minimums, \(samples)
                FROM strobe_metrics m JOIN strobe_runs r ON r.id = m.run WHERE \(condition.sql)
                """
            ).forEachRow(arguments) { row in
                let run: String = try row.value(0)
                func floats(_ column: Int, _ name: String) throws -> [Double] {
                    guard let bytes = try row.value(column, as: [UInt8]?.self) else { return [] }
                    guard let values = FloatArrayEncoding.decode(bytes) else {
                        throw HistoryAssembly.badArray(name, run: run)
                    }
                    return values
                }
                assembly.addMetric(
                    HistoryAssembly.MetricRow(
                        run: run, testPosition: try row.value(1), position: try row.value(2), name: try row.value(3),
                        unit: try row.value(4), better: try row.value(5, as: Bool.self) ? .lower : .higher,
                        samples: try floats(8, "samples"), medians: try floats(6, "replicate_medians"),
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
    func transaction<Result: Sendable>(
        _ what: String, _ access: TransactionAccess = .write, _ body: (SQLiteConnection) throws -> Result
    ) throws(HistoryError) -> Result {
        do {
            return try withConnection { db in
                switch access {
                case .write: return try db.writeTransaction { try body(db) }
                case .read: return try db.readTransaction { try body(db) }
                }
            }
        } catch let error as HistoryError {
            throw error
        } catch {
            throw HistoryError(.database, "\(path): cannot \(what): \(Self.describe(error))")
        }
    }

    /// Runs `body` with the connection once no other caller is using it.
    ///
    /// - Throws: What `body` throws; ``SQLiteError/closed`` once the store
    ///   is closed.
    private func withConnection<Result: Sendable>(_ body: (SQLiteConnection) throws -> Result) throws -> Result {
        try connection.withLock { connection throws -> Result in
            guard let connection else { throw SQLiteError.closed }
            return try body(connection)
        }
    }

    func close() async {
        // Releasing the connection finalizes its statements and closes it.
        connection.withLock { $0 = nil }
    }

    /// SQLite's message for `error`.
    static func describe(_ error: any Error) -> String {
        if let error = error as? SQLiteError { return error.message }
        return "\(error)"
    }
}
