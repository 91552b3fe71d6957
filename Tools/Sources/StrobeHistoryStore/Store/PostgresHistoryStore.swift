import Foundation
import StrobeHistory
import StrobePostgres
import StrobeResults

/// A run history and a fleet's traces in a PostgreSQL database, over one
/// libpq connection (the fleet's methods are in
/// `PostgresHistoryStore+Fleet.swift`).
///
/// Runs and traces are added in READ COMMITTED transactions: a second
/// writer adding the same run or trace waits on the first's row and then
/// finds it stored; writers claim new metric units in one order so that
/// they never deadlock, and a transaction the server still aborts (a
/// serialization failure, a deadlock) is retried.
///
/// libpq blocks until the server answers, so the actor runs on a dispatch
/// queue of its own rather than on Swift's cooperative pool; its methods
/// never suspend, so one call finishes before the next begins.
actor PostgresHistoryStore: HistoryStore, FleetStore {
    nonisolated let location: HistoryLocation
    private let name: String
    private let executor: DispatchQueueExecutor
    /// The connection; nil once closed.
    private var connection: PostgresConnection?

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private init(location: PostgresLocation) {
        self.location = .postgres(location)
        name = location.description
        executor = DispatchQueueExecutor(label: "strobe.history.postgres")
    }

    /// Connects (within the location's timeout) and, with `.readWrite`,
    /// migrates the database; with `.readOnly`, checks its version and makes
    /// the session's transactions read-only.
    static func connect(_ location: PostgresLocation, access: HistoryAccess = .readWrite) async throws(HistoryError)
        -> PostgresHistoryStore
    {
        let store = PostgresHistoryStore(location: location)
        try await store.open(location, access: access)
        return store
    }

    /// Connects, on the store's queue, then migrates or checks.
    private func open(_ location: PostgresLocation, access: HistoryAccess) throws(HistoryError) {
        do {
            connection = try PostgresConnection(location)
        } catch {
            throw HistoryError(.unreachable, "\(location): cannot connect: \(error)")
        }
        do {
            switch access {
            case .readWrite: try migrate()
            case .readOnly: try checkVersion()
            }
        } catch {
            connection = nil
            throw error
        }
    }

    /// Brings the tables to the current version in one transaction, under
    /// an advisory lock so that writers starting together migrate once; a
    /// database of a newer version is refused unchanged.
    private func migrate() throws(HistoryError) {
        try transaction("open the history") { connection in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [Self.migrationLock])
            try connection.execute("CREATE TABLE IF NOT EXISTS strobe_schema (version INTEGER NOT NULL)")
            let version =
                try connection.execute("SELECT MAX(version) FROM strobe_schema").value(0, 0, as: Int?.self) ?? 0
            if version > HistorySchema.currentVersion { throw HistorySchema.newer(version, store: self.name) }
            guard version < HistorySchema.currentVersion else { return }
            for migration in HistorySchema.migrations(.postgres)[version...] {
                for statement in migration { try connection.execute(statement) }
            }
            try connection.execute("DELETE FROM strobe_schema")
            try connection.execute("INSERT INTO strobe_schema (version) VALUES ($1)", [HistorySchema.currentVersion])
        }
    }

    /// Checks, without writing, that the database holds a history at the
    /// current schema version, then makes every later transaction of the
    /// session read-only.
    private func checkVersion() throws(HistoryError) {
        let name = self.name
        try transaction("open the history", .read) { connection in
            let exists = try connection.execute("SELECT to_regclass('strobe_schema') IS NOT NULL").value(
                0, 0, as: Bool.self)
            guard exists else { throw HistoryError(.badLocation, HistoryAccess.notAStore(name)) }
            let version =
                try connection.execute("SELECT MAX(version) FROM strobe_schema").value(0, 0, as: Int?.self) ?? 0
            try HistoryAccess.checkReadable(version: version, store: name)
        }
        _ = try transaction("make the session read-only") { connection in
            try connection.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        }
    }

    /// The key of the advisory lock migrations take: "strobe" in ASCII.
    private static let migrationLock: Int64 = 0x7374_726F_6265

    func add(_ record: RunRecord) throws -> AddOutcome {
        try transaction("add run \(record.key)") { connection in
            let metadata = record.run.metadata
            let key = record.key
            let inserted = try connection.execute(
                """
                INSERT INTO strobe_runs (id, run_id, timestamp_ns, suite, git_commit, branch, host, os, cpu_model,
                    core_count, build_configuration, strobe_version, round, samples_are_launches, comparison, side,
                    added_at_ns, simulated, instruction_source)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
                ON CONFLICT (id) DO NOTHING RETURNING id
                """,
                [
                    key, metadata.runID, metadata.timestamp, metadata.suite, metadata.gitCommit, record.branch,
                    metadata.host,
                    metadata.os, metadata.cpuModel, Int32(clamping: metadata.coreCount), metadata.buildConfiguration,
                    metadata.strobeVersion, metadata.round.map { Int32(clamping: $0) }, metadata.samplesAreLaunches,
                    record.comparison, record.side, Int64(Date().timeIntervalSince1970 * 1e9), metadata.simulated,
                    metadata.instructionSource,
                ])
            // Nothing is written yet: committing changes nothing.
            guard inserted.rowCount > 0 else { return .alreadyStored }

            let tags = metadata.tags.sorted { $0.key < $1.key }
            try connection.execute(
                "INSERT INTO strobe_run_tags (run, key, value) SELECT $1::text, k, v FROM unnest($2::text[], "
                    + "$3::text[]) AS x(k, v)",
                [key, tags.map(\.key), tags.map(\.value)])

            let tests = record.run.tests
            try connection.execute(
                """
                INSERT INTO strobe_tests (run, position, name, error, warmup_iterations, trace_paths, cpu_stacks)
                SELECT $1::text, p, n, e, w, t, c
                FROM unnest($2::int4[], $3::text[], $4::text[], $5::int4[], $6::text[], $7::text[])
                    AS x(p, n, e, w, t, c)
                """,
                [
                    key, tests.indices.map { Int32($0) }, tests.map(\.name), tests.map(\.error),
                    tests.map { Int32(clamping: $0.warmupIterations) },
                    tests.map { HistoryAssembly.encodeTracePaths($0.tracePaths) },
                    tests.indices.map { HistoryAssembly.stacks(of: record, $0) },
                ])
            TestPause.pauseIfAsked()

            let rows = record.metricRows
            func bytes(_ values: [Double]) -> PostgresBytes { PostgresBytes(FloatArrayEncoding.encode(values)) }
            try connection.execute(
                """
                INSERT INTO strobe_metrics (run, test_position, position, test, name, unit, lower_is_better, samples,
                    replicate_medians, replicate_minimums, median)
                SELECT $1::text, tp, p, t, n, u, l, s, md, mn, m
                FROM unnest($2::int4[], $3::int4[], $4::text[], $5::text[], $6::text[], $7::bool[], $8::bytea[],
                    $9::bytea[], $10::bytea[], $11::float8[]) AS x(tp, p, t, n, u, l, s, md, mn, m)
                """,
                [
                    key, rows.map { Int32($0.testPosition) }, rows.map { Int32($0.position) }, rows.map(\.test),
                    rows.map(\.metric.name), rows.map(\.metric.unit), rows.map { $0.metric.better == .lower },
                    rows.map { bytes($0.metric.samples) }, rows.map { bytes($0.summary.medians) },
                    rows.map { bytes($0.summary.minimums) }, rows.map(\.summary.centralValue),
                ])

            let units = record.units
            try connection.execute(
                """
                INSERT INTO strobe_metric_units (suite, test, metric, unit, first_run)
                SELECT $1::text, t, m, u, $2::text
                FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS x(t, m, u, o)
                ORDER BY o
                ON CONFLICT DO NOTHING
                """,
                [metadata.suite, key, units.map(\.test), units.map(\.metric), units.map(\.unit)])
            let stored = try connection.execute(
                """
                SELECT test, metric, unit, first_run FROM strobe_metric_units
                WHERE suite = $1 AND (test, metric) IN (SELECT * FROM unnest($2::text[], $3::text[]))
                """,
                [metadata.suite, units.map(\.test), units.map(\.metric)])
            let mine = Dictionary(
                units.map { (MetricName(test: $0.test, metric: $0.metric), $0.unit) }, uniquingKeysWith: { a, _ in a })
            for row in 0..<stored.rowCount {
                let existing = StoredUnit(
                    test: try stored.value(row, 0), metric: try stored.value(row, 1), unit: try stored.value(row, 2),
                    firstRun: try stored.value(row, 3))
                if let own = mine[MetricName(test: existing.test, metric: existing.metric)], own != existing.unit {
                    throw existing.conflict(with: record, unit: own)
                }
            }
            return .added
        }
    }

    func units(suite: String) throws -> [StoredUnit] {
        try transaction("read units", .read) { connection in
            let rows = try connection.execute(
                "SELECT test, metric, unit, first_run FROM strobe_metric_units WHERE suite = $1 ORDER BY test, metric",
                [suite])
            return try (0..<rows.rowCount).map { (row) throws(PostgresError) in
                StoredUnit(
                    test: try rows.value(row, 0), metric: try rows.value(row, 1), unit: try rows.value(row, 2),
                    firstRun: try rows.value(row, 3))
            }
        }
    }

    func count() throws -> Int {
        try transaction("count runs", .read) { connection in
            try connection.execute("SELECT COUNT(*) FROM strobe_runs").value(0, 0)
        }
    }

    func runs(_ query: HistoryQuery) throws -> [HistoryRun] {
        let condition = HistoryFilter.condition(query.filters) { "$\($0)" }
        // One snapshot for the four queries.
        return try transaction("read runs", .read) { connection in
            var assembly = HistoryAssembly()
            try read(
                connection, condition: condition, includeSamples: query.includeSamples,
                includeStacks: query.includeStacks, into: &assembly)
            return assembly.finish()
        }
    }

    /// Reads the four tables' rows for the runs that meet `condition`.
    private func read(
        _ connection: PostgresConnection, condition: (sql: String, values: [String]), includeSamples: Bool,
        includeStacks: Bool,
        into assembly: inout HistoryAssembly
    ) throws {
        let runs = try connection.execute(
            """
            SELECT r.id, r.run_id, r.timestamp_ns, r.suite, r.git_commit, r.branch, r.host, r.os, r.cpu_model,
                r.core_count, r.build_configuration, r.strobe_version, r.round, r.samples_are_launches, r.comparison,
                r.side, r.simulated, r.instruction_source
            FROM strobe_runs r WHERE \(condition.sql) ORDER BY r.timestamp_ns, r.id
            """, condition.values)
        for row in 0..<runs.rowCount {
            assembly.add(
                HistoryAssembly.RunRow(
                    key: try runs.value(row, 0), runID: try runs.value(row, 1), timestamp: try runs.value(row, 2),
                    suite: try runs.value(row, 3), gitCommit: try runs.value(row, 4), branch: try runs.value(row, 5),
                    host: try runs.value(row, 6), os: try runs.value(row, 7), cpuModel: try runs.value(row, 8),
                    coreCount: try runs.value(row, 9), buildConfiguration: try runs.value(row, 10),
                    strobeVersion: try runs.value(row, 11), round: try runs.value(row, 12),
                    samplesAreLaunches: try runs.value(row, 13), comparison: try runs.value(row, 14),
                    side: try runs.value(row, 15), simulated: try runs.value(row, 16),
                    instructionSource: try runs.value(row, 17)))
        }
        let tags = try connection.execute(
            "SELECT g.run, g.key, g.value FROM strobe_run_tags g JOIN strobe_runs r ON r.id = g.run WHERE "
                + "\(condition.sql)",
            condition.values)
        for row in 0..<tags.rowCount {
            assembly.addTag(run: try tags.value(row, 0), key: try tags.value(row, 1), value: try tags.value(row, 2))
        }
        let tests = try connection.execute(
            """
            SELECT s.run, s.position, s.name, s.error, s.warmup_iterations, s.trace_paths,
                \(includeStacks ? "s.cpu_stacks" : "'[]'::text")
            FROM strobe_tests s JOIN strobe_runs r ON r.id = s.run WHERE \(condition.sql)
            """, condition.values)
        for row in 0..<tests.rowCount {
            try assembly.addTest(
                run: try tests.value(row, 0), position: try tests.value(row, 1), name: try tests.value(row, 2),
                error: try tests.value(row, 3), warmupIterations: try tests.value(row, 4),
                tracePaths: try tests.value(row, 5), stacks: try tests.value(row, 6))
        }
        let samples = includeSamples ? "m.samples" : "NULL::bytea"
        let metrics = try connection.execute(
            """
            SELECT m.run, m.test_position, m.position, m.name, m.unit, m.lower_is_better, m.replicate_medians,
                m.replicate_minimums, \(samples)
            FROM strobe_metrics m JOIN strobe_runs r ON r.id = m.run WHERE \(condition.sql)
            """, condition.values)
        for row in 0..<metrics.rowCount {
            let run: String = try metrics.value(row, 0)
            func floats(_ column: Int, _ name: String) throws -> [Double] {
                guard let bytes = try metrics.value(row, column, as: [UInt8]?.self) else { return [] }
                guard let values = FloatArrayEncoding.decode(bytes) else {
                    throw HistoryAssembly.badArray(name, run: run)
                }
                return values
            }
            assembly.addMetric(
                HistoryAssembly.MetricRow(
                    run: run, testPosition: try metrics.value(row, 1), position: try metrics.value(row, 2),
                    name: try metrics.value(row, 3), unit: try metrics.value(row, 4),
                    better: try metrics.value(row, 5, as: Bool.self) ? .lower : .higher,
                    samples: try floats(8, "samples"), medians: try floats(6, "replicate_medians"),
                    minimums: try floats(7, "replicate_minimums")))
        }
    }

    func close() {
        connection = nil
    }

    /// The SQLSTATEs of a transaction the server aborted that may succeed
    /// when run again: a serialization failure, a deadlock, and a unique
    /// conflict with a transaction that committed meanwhile.
    private static let retriedStates: Set<String> = ["40001", "40P01", "23505"]

    /// Runs `body` in one transaction and commits it, returning what it
    /// returns. When the server aborts it for a serialization failure, a
    /// deadlock or a unique conflict, runs it again (up to 50 times, after a
    /// short random wait); on any other error rolls back and rethrows it, as
    /// a ``HistoryError`` naming `what` unless it is one already.
    ///
    /// A write transaction is READ COMMITTED; a read one is REPEATABLE READ
    /// and READ ONLY, so that its statements see one snapshot.
    func transaction<Result>(
        _ what: String, _ access: TransactionAccess = .write, _ body: (PostgresConnection) throws -> Result
    ) throws(HistoryError) -> Result {
        guard let connection else { throw HistoryError(.database, "\(name): the store is closed") }
        let begin =
            switch access {
            case .write: "BEGIN"
            case .read: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
            }
        var attempt = 0
        while true {
            attempt += 1
            do {
                try connection.execute(begin)
                do {
                    let result = try body(connection)
                    try connection.execute("COMMIT")
                    return result
                } catch {
                    _ = try? connection.execute("ROLLBACK")
                    throw error
                }
            } catch let error as HistoryError {
                throw error
            } catch let error as PostgresError {
                if attempt < 50, let state = error.sqlState, Self.retriedStates.contains(state) {
                    // The queue is this store's own: waiting here holds up no other task.
                    usleep(UInt32.random(in: 1_000...20_000))
                    continue
                }
                throw HistoryError(.database, "\(name): cannot \(what): \(error)")
            } catch {
                throw HistoryError(.database, "\(name): cannot \(what): \(error)")
            }
        }
    }
}

// Marks (schema version 2): the same statements as the SQLite store's.
extension PostgresHistoryStore {
    func addMark(_ mark: HistoryMark) throws {
        try transaction("store the mark of \(mark.target)") { connection in
            _ = try connection.execute(
                """
                INSERT INTO strobe_marks (target, series, verdict, note, marked_at_ns)
                VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (target, series) DO UPDATE SET verdict = excluded.verdict, note = excluded.note,
                    marked_at_ns = excluded.marked_at_ns
                """, [mark.target, mark.series, mark.verdict.rawValue, mark.note, mark.markedAt])
        }
    }

    func marks() throws -> [HistoryMark] {
        try transaction("read marks", .read) { connection in
            let rows = try connection.execute(
                "SELECT target, series, verdict, note, marked_at_ns FROM strobe_marks ORDER BY marked_at_ns, target, "
                    + "series"
            )
            return try (0..<rows.rowCount).map { row in
                let target: String = try rows.value(row, 0)
                let verdict: String = try rows.value(row, 2)
                guard let parsed = HistoryMark.Verdict(rawValue: verdict) else {
                    throw HistoryError(
                        .database,
                        "\(name): the mark of \(target) has the verdict \"\(verdict)\", not confirmed or dismissed")
                }
                return HistoryMark(
                    target: target, series: try rows.value(row, 1), verdict: parsed, note: try rows.value(row, 3),
                    markedAt: try rows.value(row, 4))
            }
        }
    }
}
