import Foundation
import GRDB

// A fleet's traces, in the tables of schema version 3 (``FleetSchema``),
// over the history store's connection and transactions.
extension SQLiteHistoryStore {
    func add(_ records: [FleetTraceRecord]) async throws -> FleetAddCounts {
        try transaction("add \(records.count) traces") { db in
            var counts = FleetAddCounts()
            let now = Int64(Date().timeIntervalSince1970 * 1e9)
            let trace = try db.cachedStatement(
                sql: """
                    INSERT INTO strobe_fleet_traces (id, source, sampling_probability, added_at_ns) VALUES (?, ?, ?, ?)
                    ON CONFLICT (id) DO NOTHING
                    """)
            let metadata = try db.cachedStatement(
                sql: "INSERT INTO strobe_fleet_trace_metadata (trace, key, value) VALUES (?, ?, ?)")
            let metric = try db.cachedStatement(
                sql:
                    "INSERT INTO strobe_fleet_metrics (trace, kind, name, count, total, sketch) VALUES (?, ?, ?, ?, ?, "
                    + "?)"
            )
            for record in records {
                try trace.execute(arguments: [record.id, record.source, record.samplingProbability, now])
                guard db.changesCount > 0 else {
                    counts.alreadyStored += 1
                    continue
                }
                counts.added += 1
                for (key, value) in record.metadata.sorted(by: { $0.key < $1.key }) {
                    try metadata.execute(arguments: [record.id, key, value])
                }
                for row in record.metrics {
                    try metric.execute(arguments: [
                        record.id, row.kind.rawValue, row.name, row.count, row.total, Data(row.sketch),
                    ])
                }
            }
            return counts
        }
    }

    func sessions(metric name: String, kind: FleetMetricRecord.Kind, filters: [String: String]) async throws
        -> [FleetSession]
    {
        let filters = filters.sorted { $0.key < $1.key }
        let filterSQL = filters.map { _ in
            " AND m.trace IN (SELECT trace FROM strobe_fleet_trace_metadata WHERE key = ? AND value = ?)"
        }.joined()
        var values: [(any DatabaseValueConvertible)?] = [name, kind.rawValue]
        for (key, value) in filters { values += [key, value] }
        let arguments = StatementArguments(values)
        // One read transaction: both queries see one snapshot.
        return try transaction("read the sessions of \(name)", .read) { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT m.trace, t.sampling_probability, m.count, m.total, m.sketch
                    FROM strobe_fleet_metrics m JOIN strobe_fleet_traces t ON t.id = m.trace
                    WHERE m.name = ? AND m.kind = ?\(filterSQL) ORDER BY m.trace
                    """,
                arguments: arguments)
            let metadataRows = try Row.fetchAll(
                db,
                sql: """
                    SELECT md.trace, md.key, md.value FROM strobe_fleet_trace_metadata md
                    JOIN strobe_fleet_metrics m ON m.trace = md.trace
                    WHERE m.name = ? AND m.kind = ?\(filterSQL)
                    """,
                arguments: arguments)
            let metadata = Self.metadataByTrace(metadataRows.map { ($0[0], $0[1], $0[2]) })
            return rows.map { row in
                let trace: String = row[0]
                let sketch: Data = row[4]
                return FleetSession(
                    trace: trace, metadata: metadata[trace] ?? [:], samplingProbability: row[1], count: row[2],
                    total: row[3], sketch: [UInt8](sketch))
            }
        }
    }

    func metricNames() async throws -> [(kind: FleetMetricRecord.Kind, name: String)] {
        try transaction("list the metrics", .read) { db in
            try Row.fetchAll(db, sql: "SELECT DISTINCT kind, name FROM strobe_fleet_metrics ORDER BY kind, name")
                .compactMap { row in FleetMetricRecord.Kind(rawValue: row[0]).map { (kind: $0, name: row[1]) } }
        }
    }

    func metadataKeys() async throws -> [FleetMetadataKey] {
        try transaction("list the metadata keys", .read) { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT key, COUNT(DISTINCT value), COUNT(*) FROM strobe_fleet_trace_metadata GROUP BY key ORDER "
                    + "BY key"
            ).map { row in FleetMetadataKey(key: row[0], values: row[1], traces: row[2]) }
        }
    }

    func traceCount() async throws -> Int {
        try transaction("count the traces", .read) { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM strobe_fleet_traces") ?? 0
        }
    }
}
