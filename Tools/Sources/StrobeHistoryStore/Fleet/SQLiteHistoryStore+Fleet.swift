import Foundation

// A fleet's traces, in the tables of schema version 3 (``FleetSchema``),
// over the history store's connection and transactions.
extension SQLiteHistoryStore {
    func add(_ records: [FleetTraceRecord]) async throws -> FleetAddCounts {
        try transaction("add \(records.count) traces") { db in
            var counts = FleetAddCounts()
            let now = Int64(Date().timeIntervalSince1970 * 1e9)
            let trace = try db.cachedStatement(
                """
                INSERT INTO strobe_fleet_traces (id, source, sampling_probability, added_at_ns) VALUES (?, ?, ?, ?)
                ON CONFLICT (id) DO NOTHING
                """)
            let metadata = try db.cachedStatement(
                "INSERT INTO strobe_fleet_trace_metadata (trace, key, value) VALUES (?, ?, ?)")
            let metric = try db.cachedStatement(
                "INSERT INTO strobe_fleet_metrics (trace, kind, name, count, total, sketch) VALUES (?, ?, ?, ?, ?, ?)")
            for record in records {
                try trace.execute([record.id, record.source, record.samplingProbability, now])
                guard db.changes > 0 else {
                    counts.alreadyStored += 1
                    continue
                }
                counts.added += 1
                for (key, value) in record.metadata.sorted(by: { $0.key < $1.key }) {
                    try metadata.execute([record.id, key, value])
                }
                for row in record.metrics {
                    try metric.execute([record.id, row.kind.rawValue, row.name, row.count, row.total, row.sketch])
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
        let arguments = [name, kind.rawValue] + filters.flatMap { [$0.key, $0.value] }
        // One read transaction: both queries see one snapshot.
        return try transaction("read the sessions of \(name)", .read) { db in
            let rows = try db.rows(
                """
                SELECT m.trace, t.sampling_probability, m.count, m.total, m.sketch
                FROM strobe_fleet_metrics m JOIN strobe_fleet_traces t ON t.id = m.trace
                WHERE m.name = ? AND m.kind = ?\(filterSQL) ORDER BY m.trace
                """,
                arguments)
            let metadataRows = try db.rows(
                """
                SELECT md.trace, md.key, md.value FROM strobe_fleet_trace_metadata md
                JOIN strobe_fleet_metrics m ON m.trace = md.trace
                WHERE m.name = ? AND m.kind = ?\(filterSQL)
                """,
                arguments)
            let metadata = Self.metadataByTrace(
                try metadataRows.map { row throws(SQLiteError) in
                    (try row.value(0), try row.value(1), try row.value(2))
                })
            return try rows.map { row throws(SQLiteError) in
                let trace: String = try row.value(0)
                return FleetSession(
                    trace: trace, metadata: metadata[trace] ?? [:], samplingProbability: try row.value(1),
                    count: try row.value(2), total: try row.value(3), sketch: try row.value(4))
            }
        }
    }

    func metricNames() async throws -> [(kind: FleetMetricRecord.Kind, name: String)] {
        try transaction("list the metrics", .read) { db in
            try db.rows("SELECT DISTINCT kind, name FROM strobe_fleet_metrics ORDER BY kind, name").compactMap {
                row throws(SQLiteError) in
                // A kind this version does not know is left out.
                guard let kind = FleetMetricRecord.Kind(rawValue: try row.value(0)) else { return nil }
                return (kind: kind, name: try row.value(1))
            }
        }
    }

    func metadataKeys() async throws -> [FleetMetadataKey] {
        try transaction("list the metadata keys", .read) { db in
            try db.rows(
                "SELECT key, COUNT(DISTINCT value), COUNT(*) FROM strobe_fleet_trace_metadata GROUP BY key ORDER BY key"
            ).map { row throws(SQLiteError) in
                FleetMetadataKey(key: try row.value(0), values: try row.value(1), traces: try row.value(2))
            }
        }
    }

    func traceCount() async throws -> Int {
        try transaction("count the traces", .read) { db in
            try db.value("SELECT COUNT(*) FROM strobe_fleet_traces", as: Int.self) ?? 0
        }
    }
}
