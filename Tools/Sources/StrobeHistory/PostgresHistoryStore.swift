import Foundation
import PostgresNIO
import StrobeResults

/// A run history in a PostgreSQL database, over one connection.
///
/// Runs are added in READ COMMITTED transactions: a second writer adding
/// the same run waits on the first's row and then finds it stored; writers
/// claim new metric units in one order so that they never deadlock, and a
/// transaction the server still aborts (a serialization failure, a
/// deadlock) is retried.
actor PostgresHistoryStore: HistoryStore {
    nonisolated let location: HistoryLocation
    private let connection: PostgresConnection
    private let name: String
    private let logger: Logger

    private init(location: PostgresLocation, connection: PostgresConnection, logger: Logger) {
        self.location = .postgres(location)
        self.connection = connection
        self.logger = logger
        name = location.description
    }

    /// Connects (within the location's timeout) and migrates the database.
    static func connect(_ location: PostgresLocation) async throws(HistoryError) -> PostgresHistoryStore {
        var logger = Logger(label: "strobe.history")
        logger.logLevel = .critical
        var configuration: PostgresConnection.Configuration
        switch location.endpoint {
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            switch location.tls {
            case .disable: tls = .disable
            case .prefer, .require:
                do {
                    let context = try NIOSSLContext(configuration: .makeClientConfiguration())
                    tls = location.tls == .require ? .require(context) : .prefer(context)
                } catch {
                    throw HistoryError(.badLocation, "\(location): cannot set up TLS: \(error)")
                }
            }
            configuration = .init(
                host: host, port: port, username: location.user, password: location.password, database: location.database,
                tls: tls)
        case .unixSocket:
            configuration = .init(
                unixSocketPath: location.endpoint.socketPath ?? "", username: location.user, password: location.password,
                database: location.database)
        }
        let timeout = location.connectTimeout
        configuration.options.connectTimeout = .milliseconds(Int64(timeout * 1000))
        let connection: PostgresConnection
        do {
            connection = try await Deadline.run(seconds: timeout) { [configuration, logger] in
                try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            }
        } catch {
            throw HistoryError(.unreachable, "\(location): cannot connect: \(describe(error))")
        }
        let store = PostgresHistoryStore(location: location, connection: connection, logger: logger)
        do {
            try await store.migrate()
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    /// Brings the tables to the current version in one transaction, under
    /// an advisory lock so that writers starting together migrate once; a
    /// database of a newer version is refused unchanged.
    private func migrate() async throws(HistoryError) {
        try await transaction("open the history") { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS strobe_schema (version INTEGER NOT NULL)", logger: logger)
            var version = 0
            for try await (stored) in try await connection.query("SELECT MAX(version) FROM strobe_schema", logger: logger)
                .decode(Int32?.self)
            {
                version = Int(stored ?? 0)
            }
            if version > HistorySchema.currentVersion { throw HistorySchema.newer(version, store: self.name) }
            guard version < HistorySchema.currentVersion else { return }
            for migration in HistorySchema.migrations(.postgres)[version...] {
                for statement in migration {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            try await connection.query("DELETE FROM strobe_schema", logger: logger)
            try await connection.query(
                "INSERT INTO strobe_schema (version) VALUES (\(Int32(HistorySchema.currentVersion)))", logger: logger)
        }
    }

    /// The key of the advisory lock migrations take: "strobe" in ASCII.
    private static let migrationLock: Int64 = 0x7374_726F_6265

    func add(_ record: RunRecord) async throws -> AddOutcome {
        try await transaction("add run \(record.key)") { connection, logger in
            let metadata = record.run.metadata
            let key = record.key
            let round = metadata.round.map { Int32(clamping: $0) }
            let inserted = try await connection.query(
                """
                INSERT INTO strobe_runs (id, run_id, timestamp_ns, suite, git_commit, branch, host, os, cpu_model, core_count,
                    build_configuration, strobe_version, round, samples_are_launches, comparison, side, added_at_ns)
                VALUES (\(key), \(metadata.runID), \(metadata.timestamp), \(metadata.suite), \(metadata.gitCommit),
                    \(record.branch), \(metadata.host), \(metadata.os), \(metadata.cpuModel), \(Int32(clamping: metadata.coreCount)),
                    \(metadata.buildConfiguration), \(metadata.strobeVersion), \(round), \(metadata.samplesAreLaunches),
                    \(record.comparison), \(record.side), \(Int64(Date().timeIntervalSince1970 * 1e9)))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """, logger: logger
            ).collect()
            guard !inserted.isEmpty else { throw AlreadyStored() }

            let tags = metadata.tags.sorted { $0.key < $1.key }
            try await connection.query(
                """
                INSERT INTO strobe_run_tags (run, key, value)
                SELECT \(key), k, v FROM unnest(\(tags.map(\.key))::text[], \(tags.map(\.value))::text[]) AS x(k, v)
                """, logger: logger)

            let tests = record.run.tests
            let positions = tests.indices.map { Int32($0) }
            try await connection.query(
                """
                INSERT INTO strobe_tests (run, position, name, error, warmup_iterations, trace_paths)
                SELECT \(key), p, n, CASE WHEN f THEN e END, w, t
                FROM unnest(\(positions)::int4[], \(tests.map(\.name))::text[], \(tests.map { $0.error != nil })::bool[],
                    \(tests.map { $0.error ?? "" })::text[], \(tests.map { Int32(clamping: $0.warmupIterations) })::int4[],
                    \(tests.map { HistoryAssembly.encodeTracePaths($0.tracePaths) })::text[]) AS x(p, n, f, e, w, t)
                """, logger: logger)
            TestPause.pauseIfAsked()

            let rows = record.metricRows
            func bytes(_ values: [Double]) -> ByteBuffer { ByteBuffer(bytes: FloatArrayEncoding.encode(values)) }
            try await connection.query(
                """
                INSERT INTO strobe_metrics (run, test_position, position, test, name, unit, lower_is_better, samples,
                    replicate_medians, replicate_minimums, median)
                SELECT \(key), tp, p, t, n, u, l, s, md, mn, CASE WHEN hm THEN m END
                FROM unnest(\(rows.map { Int32($0.testPosition) })::int4[], \(rows.map { Int32($0.position) })::int4[],
                    \(rows.map(\.test))::text[], \(rows.map(\.metric.name))::text[], \(rows.map(\.metric.unit))::text[],
                    \(rows.map(\.metric.lowerIsBetter))::bool[], \(rows.map { bytes($0.metric.samples) })::bytea[],
                    \(rows.map { bytes($0.summary.medians) })::bytea[], \(rows.map { bytes($0.summary.minimums) })::bytea[],
                    \(rows.map { $0.summary.centralValue != nil })::bool[], \(rows.map { $0.summary.centralValue ?? 0 })::float8[])
                    AS x(tp, p, t, n, u, l, s, md, mn, hm, m)
                """, logger: logger)

            let units = record.units
            try await connection.query(
                """
                INSERT INTO strobe_metric_units (suite, test, metric, unit, first_run)
                SELECT \(metadata.suite), t, m, u, \(key)
                FROM unnest(\(units.map(\.test))::text[], \(units.map(\.metric))::text[], \(units.map(\.unit))::text[])
                    WITH ORDINALITY AS x(t, m, u, o)
                ORDER BY o
                ON CONFLICT DO NOTHING
                """, logger: logger)
            let stored = try await connection.query(
                """
                SELECT test, metric, unit, first_run FROM strobe_metric_units
                WHERE suite = \(metadata.suite)
                    AND (test, metric) IN (SELECT * FROM unnest(\(units.map(\.test))::text[], \(units.map(\.metric))::text[]))
                """, logger: logger)
            let mine = Dictionary(units.map { (MetricName(test: $0.test, metric: $0.metric), $0.unit) }, uniquingKeysWith: { a, _ in a })
            for try await (test, metric, unit, firstRun) in stored.decode((String, String, String, String).self) {
                let existing = StoredUnit(test: test, metric: metric, unit: unit, firstRun: firstRun)
                if let own = mine[MetricName(test: test, metric: metric)], own != unit {
                    throw existing.conflict(with: record, unit: own)
                }
            }
        } alreadyStored: {
            .alreadyStored
        } added: {
            .added
        }
    }

    func units(suite: String) async throws -> [StoredUnit] {
        do {
            let rows = try await connection.query(
                "SELECT test, metric, unit, first_run FROM strobe_metric_units WHERE suite = \(suite) ORDER BY test, metric",
                logger: logger)
            var units: [StoredUnit] = []
            for try await (test, metric, unit, firstRun) in rows.decode((String, String, String, String).self) {
                units.append(StoredUnit(test: test, metric: metric, unit: unit, firstRun: firstRun))
            }
            return units
        } catch {
            throw HistoryError(.database, "\(name): cannot read units: \(Self.describe(error))")
        }
    }

    func count() async throws -> Int {
        do {
            var count = 0
            for try await value in try await connection.query("SELECT COUNT(*) FROM strobe_runs", logger: logger).decode(Int64.self) {
                count = Int(value)
            }
            return count
        } catch {
            throw HistoryError(.database, "\(name): cannot count runs: \(Self.describe(error))")
        }
    }

    func runs(_ query: HistoryQuery) async throws -> [HistoryRun] {
        let condition = HistoryFilter.condition(query.filters) { "$\($0)" }
        func statement(_ sql: String) -> PostgresQuery {
            var bindings = PostgresBindings()
            for value in condition.values { bindings.append(value) }
            return PostgresQuery(unsafeSQL: sql, binds: bindings)
        }
        var assembly = HistoryAssembly()
        do {
            // One snapshot for the four queries.
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            try await read(statement, condition: condition.sql, includeSamples: query.includeSamples, into: &assembly)
            try await connection.query("COMMIT", logger: logger)
        } catch let error as HistoryError {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw HistoryError(.database, "\(name): cannot read runs: \(Self.describe(error))")
        }
        return assembly.finish()
    }

    /// Reads the four tables' rows for the runs that meet `condition`.
    private func read(
        _ statement: (String) -> PostgresQuery, condition: String, includeSamples: Bool, into assembly: inout HistoryAssembly
    ) async throws {
        do {
            let runs = try await connection.query(statement("""
                SELECT r.id, r.run_id, r.timestamp_ns, r.suite, r.git_commit, r.branch, r.host, r.os, r.cpu_model,
                    r.core_count, r.build_configuration, r.strobe_version, r.round, r.samples_are_launches, r.comparison, r.side
                FROM strobe_runs r WHERE \(condition) ORDER BY r.timestamp_ns, r.id
                """), logger: logger)
            for try await row in runs {
                let (key, runID, timestamp, suite, commit, branch, host, os, cpu, cores, build, version, round, launches, comparison, side) =
                    try row.decode(
                        (String, String, Int64, String, String, String, String, String, String, Int32, String, String, Int32?, Bool,
                            String?, String?).self)
                assembly.add(HistoryAssembly.RunRow(
                    key: key, runID: runID, timestamp: timestamp, suite: suite, gitCommit: commit, branch: branch, host: host,
                    os: os, cpuModel: cpu, coreCount: Int(cores), buildConfiguration: build, strobeVersion: version,
                    round: round.map(Int.init), samplesAreLaunches: launches, comparison: comparison, side: side))
            }
            let tags = try await connection.query(statement(
                "SELECT g.run, g.key, g.value FROM strobe_run_tags g JOIN strobe_runs r ON r.id = g.run WHERE \(condition)"),
                logger: logger)
            for try await (run, key, value) in tags.decode((String, String, String).self) {
                assembly.addTag(run: run, key: key, value: value)
            }
            let tests = try await connection.query(statement("""
                SELECT s.run, s.position, s.name, s.error, s.warmup_iterations, s.trace_paths
                FROM strobe_tests s JOIN strobe_runs r ON r.id = s.run WHERE \(condition)
                """), logger: logger)
            for try await (run, position, name, error, warmup, paths) in tests.decode((String, Int32, String, String?, Int32, String).self) {
                try assembly.addTest(
                    run: run, position: Int(position), name: name, error: error, warmupIterations: Int(warmup), tracePaths: paths)
            }
            let samples = includeSamples ? "m.samples" : "NULL::bytea"
            let metrics = try await connection.query(statement("""
                SELECT m.run, m.test_position, m.position, m.name, m.unit, m.lower_is_better, m.replicate_medians,
                    m.replicate_minimums, \(samples)
                FROM strobe_metrics m JOIN strobe_runs r ON r.id = m.run WHERE \(condition)
                """), logger: logger)
            for try await row in metrics {
                let (run, testPosition, position, name, unit, lower, medians, minimums, sampleBytes) = try row.decode(
                    (String, Int32, Int32, String, String, Bool, ByteBuffer, ByteBuffer, ByteBuffer?).self)
                func floats(_ buffer: ByteBuffer?, _ column: String) throws(HistoryError) -> [Double] {
                    guard let buffer else { return [] }
                    guard let values = FloatArrayEncoding.decode(buffer.readableBytesView) else {
                        throw HistoryAssembly.badArray(column, run: run)
                    }
                    return values
                }
                assembly.addMetric(HistoryAssembly.MetricRow(
                    run: run, testPosition: Int(testPosition), position: Int(position), name: name, unit: unit,
                    lowerIsBetter: lower, samples: try floats(sampleBytes, "samples"),
                    medians: try floats(medians, "replicate_medians"), minimums: try floats(minimums, "replicate_minimums")))
            }
        }
    }

    func close() async {
        try? await connection.close()
    }

    /// Thrown inside a transaction to roll it back because the run is stored already.
    private struct AlreadyStored: Error {}

    /// Runs `body` in a transaction and commits it, retrying (up to 50
    /// times, after a short random wait) when the server aborts it for a
    /// serialization failure, a deadlock or a unique conflict; rolls back
    /// on any other error and rethrows it as a ``HistoryError``.
    private func transaction(
        _ what: String, _ body: (PostgresConnection, Logger) async throws -> Void
    ) async throws(HistoryError) {
        _ = try await transaction(what, body, alreadyStored: { () }, added: { () })
    }

    private func transaction<Result>(
        _ what: String, _ body: (PostgresConnection, Logger) async throws -> Void, alreadyStored: () -> Result,
        added: () -> Result
    ) async throws(HistoryError) -> Result {
        var attempt = 0
        while true {
            attempt += 1
            do {
                try await connection.query("BEGIN", logger: logger)
                do {
                    try await body(connection, logger)
                    try await connection.query("COMMIT", logger: logger)
                    return added()
                } catch is AlreadyStored {
                    try await connection.query("ROLLBACK", logger: logger)
                    return alreadyStored()
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            } catch let error as HistoryError {
                throw error
            } catch {
                if attempt < 50, let state = Self.sqlState(error), ["40001", "40P01", "23505"].contains(state) {
                    try? await Task.sleep(nanoseconds: UInt64.random(in: 1_000_000...20_000_000))
                    continue
                }
                throw HistoryError(.database, "\(name): cannot \(what): \(Self.describe(error))")
            }
        }
    }

    /// The SQLSTATE of a server error.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// What the server or the connection said, without the query's values.
    static func describe(_ error: any Error) -> String {
        if let deadline = error as? Deadline.Expired { return "no answer within \(deadline.seconds) s" }
        guard let error = error as? PSQLError else { return "\(error)" }
        if let info = error.serverInfo, let message = info[.message] {
            return message + (info[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let underlying = error.underlying { return "\(error.code): \(describeUnderlying(underlying))" }
        return "\(error.code)"
    }

    private static func describeUnderlying(_ error: any Error) -> String {
        if let error = error as? IOError { return error.description }
        return String(describing: error)
    }
}

/// Runs an operation with a time limit.
enum Deadline {
    /// The operation did not finish in time.
    struct Expired: Error {
        var seconds: Double
    }

    /// The result of `operation`, or ``Expired`` after `seconds` (the
    /// operation is cancelled then).
    static func run<T: Sendable>(seconds: Double, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw Expired(seconds: seconds) }
            return value
        }
    }
}

// Marks (schema version 2): the same statements as the SQLite store's.
extension PostgresHistoryStore {
    func addMark(_ mark: HistoryMark) async throws {
        try await transaction("store the mark of \(mark.target)") { connection, logger in
            try await connection.query(
                """
                INSERT INTO strobe_marks (target, series, verdict, note, marked_at_ns)
                VALUES (\(mark.target), \(mark.series), \(mark.verdict.rawValue), \(mark.note), \(mark.markedAt))
                ON CONFLICT (target, series) DO UPDATE SET verdict = excluded.verdict, note = excluded.note,
                    marked_at_ns = excluded.marked_at_ns
                """, logger: logger)
        }
    }

    func marks() async throws -> [HistoryMark] {
        var marks: [HistoryMark] = []
        do {
            let rows = try await connection.query(
                "SELECT target, series, verdict, note, marked_at_ns FROM strobe_marks ORDER BY marked_at_ns, target, series",
                logger: logger)
            for try await (target, series, verdict, note, markedAt) in rows.decode((String, String, String, String, Int64).self) {
                guard let parsed = HistoryMark.Verdict(rawValue: verdict) else {
                    throw HistoryError(.database, "\(name): the mark of \(target) has the verdict \"\(verdict)\", not confirmed or dismissed")
                }
                marks.append(HistoryMark(target: target, series: series, verdict: parsed, note: note, markedAt: markedAt))
            }
        } catch let error as HistoryError {
            throw error
        } catch {
            throw HistoryError(.database, "\(name): cannot read marks: \(Self.describe(error))")
        }
        return marks
    }
}
