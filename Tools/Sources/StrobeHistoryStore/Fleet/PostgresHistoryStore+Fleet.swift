import Foundation
import StrobePostgres

// A fleet's traces, in the tables of schema version 3 (``FleetSchema``),
// over the history store's connection and its transactions, retried as
// runs are. Several ingesters may add at once: a trace is inserted with
// `ON CONFLICT DO NOTHING`, so each is stored once.
extension PostgresHistoryStore {
    func add(_ records: [FleetTraceRecord]) throws -> FleetAddCounts {
        try transaction("add \(records.count) traces") { connection in
            let now = Int64(Date().timeIntervalSince1970 * 1e9)
            let inserted = try connection.execute(
                """
                INSERT INTO strobe_fleet_traces (id, source, sampling_probability, added_at_ns)
                SELECT i, s, p, $4::int8 FROM unnest($1::text[], $2::text[], $3::float8[]) AS x(i, s, p)
                ON CONFLICT (id) DO NOTHING RETURNING id
                """,
                [records.map(\.id), records.map(\.source), records.map(\.samplingProbability), now])
            var added = Set<String>()
            for row in 0..<inserted.rowCount { added.insert(try inserted.value(row, 0, as: String.self)) }
            let fresh = records.filter { added.contains($0.id) }
            let metadata = fresh.flatMap { record in
                record.metadata.sorted { $0.key < $1.key }.map { (record.id, $0.key, $0.value) }
            }
            try connection.execute(
                """
                INSERT INTO strobe_fleet_trace_metadata (trace, key, value)
                SELECT t, k, v FROM unnest($1::text[], $2::text[], $3::text[]) AS x(t, k, v)
                """,
                [metadata.map(\.0), metadata.map(\.1), metadata.map(\.2)])
            let metrics = fresh.flatMap { record in record.metrics.map { (record.id, $0) } }
            try connection.execute(
                """
                INSERT INTO strobe_fleet_metrics (trace, kind, name, count, total, sketch)
                SELECT t, k, n, c, s, b
                FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::float8[], $6::bytea[])
                    AS x(t, k, n, c, s, b)
                """,
                [
                    metrics.map(\.0), metrics.map(\.1.kind.rawValue), metrics.map(\.1.name), metrics.map(\.1.count),
                    metrics.map(\.1.total), metrics.map { PostgresBytes($0.1.sketch) },
                ])
            var counts = FleetAddCounts()
            counts.added = fresh.count
            counts.alreadyStored = records.count - fresh.count
            return counts
        }
    }

    func sessions(metric metricName: String, kind: FleetMetricRecord.Kind, filters: [String: String]) throws
        -> [FleetSession]
    {
        let filters = filters.sorted { $0.key < $1.key }
        var filterSQL = ""
        var parameters: [any PostgresParameter] = [metricName, kind.rawValue]
        for (key, value) in filters {
            filterSQL +=
                " AND m.trace IN (SELECT trace FROM strobe_fleet_trace_metadata WHERE key = $\(parameters.count + 1) "
                + "AND value = $\(parameters.count + 2))"
            parameters += [key, value]
        }
        // One read transaction: both queries see one snapshot.
        return try transaction("read the sessions of \(metricName)", .read) { connection in
            let rows = try connection.execute(
                """
                SELECT m.trace, t.sampling_probability, m.count, m.total, m.sketch
                FROM strobe_fleet_metrics m JOIN strobe_fleet_traces t ON t.id = m.trace
                WHERE m.name = $1 AND m.kind = $2\(filterSQL) ORDER BY m.trace
                """, parameters)
            let metadataRows = try connection.execute(
                """
                SELECT md.trace, md.key, md.value FROM strobe_fleet_trace_metadata md
                JOIN strobe_fleet_metrics m ON m.trace = md.trace
                WHERE m.name = $1 AND m.kind = $2\(filterSQL)
                """, parameters)
            var triples: [(String, String, String)] = []
            for row in 0..<metadataRows.rowCount {
                triples.append(
                    (
                        try metadataRows.value(row, 0, as: String.self),
                        try metadataRows.value(row, 1, as: String.self),
                        try metadataRows.value(row, 2, as: String.self)
                    ))
            }
            let metadata = Self.metadataByTrace(triples)
            return try (0..<rows.rowCount).map { row in
                let trace = try rows.value(row, 0, as: String.self)
                return FleetSession(
                    trace: trace, metadata: metadata[trace] ?? [:],
                    samplingProbability: try rows.value(row, 1, as: Double.self),
                    count: try rows.value(row, 2, as: Int64.self), total: try rows.value(row, 3, as: Double.self),
                    sketch: try rows.value(row, 4, as: [UInt8].self))
            }
        }
    }

    func metricNames() throws -> [(kind: FleetMetricRecord.Kind, name: String)] {
        try transaction("list the metrics", .read) { connection in
            let rows = try connection.execute(
                "SELECT DISTINCT kind, name FROM strobe_fleet_metrics ORDER BY kind, name")
            var names: [(kind: FleetMetricRecord.Kind, name: String)] = []
            for row in 0..<rows.rowCount {
                if let kind = FleetMetricRecord.Kind(rawValue: try rows.value(row, 0, as: String.self)) {
                    names.append((kind: kind, name: try rows.value(row, 1, as: String.self)))
                }
            }
            return names
        }
    }

    func metadataKeys() throws -> [FleetMetadataKey] {
        try transaction("list the metadata keys", .read) { connection in
            let rows = try connection.execute(
                "SELECT key, COUNT(DISTINCT value), COUNT(*) FROM strobe_fleet_trace_metadata GROUP BY key ORDER BY key"
            )
            return try (0..<rows.rowCount).map { row in
                FleetMetadataKey(
                    key: try rows.value(row, 0, as: String.self), values: try rows.value(row, 1, as: Int.self),
                    traces: try rows.value(row, 2, as: Int.self))
            }
        }
    }

    func traceCount() throws -> Int {
        try transaction("count the traces", .read) { connection in
            try connection.execute("SELECT COUNT(*) FROM strobe_fleet_traces").value(0, 0, as: Int.self)
        }
    }
}
