import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobePostgres
import StrobeStoreTestSupport
import Testing

/// Two ingesters adding the same traces at once, as two `strobe ingest`
/// runs over overlapping folders or two `strobe serve` processes on one
/// store do.
@Suite(.serialized)
struct FleetStoreConcurrencyTests {
    /// `count` traces, each with its metadata and one interval's sketch.
    static func records(_ count: Int) -> [FleetTraceRecord] {
        (0..<count).map { index in
            FleetTraceRecord(
                id: "sha256:" + String(index, radix: 16).leftPadded(to: 64), source: "trace-\(index).pftrace",
                metadata: ["app.version": "5.\(index % 2)", "device.class": index % 3 == 0 ? "low" : "high"],
                samplingProbability: 1,
                metrics: [
                    FleetMetricRecord(
                        kind: .interval, name: "work", count: 1, total: Double(index),
                        sketch: [UInt8(truncatingIfNeeded: index)])
                ])
        }
    }

    /// On PostgreSQL the test database gets a trigger that waits 0.1 s
    /// before each trace is inserted, and both ingesters wait behind a lock
    /// on the table and are let go together: inserting the same ten keys
    /// from opposite ends, each comes to a key the other holds uncommitted
    /// while the other waits on one of its own, whatever the scheduling
    /// (unless one starts 0.9 s late). The server aborts one for a deadlock,
    /// and the store must run it again.
    @Test(arguments: StoreBackend.tested)
    func twoIngestersAddingTheSameTracesInOppositeOrdersStoreEachOnce(backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { scratch in
            let records = Self.records(backend == .postgres ? 10 : 2_000)
            let first = try await FleetStores.open(scratch.location)
            let second = try await FleetStores.open(scratch.location)
            var gate: PostgresConnection?
            if backend == .postgres {
                let connection = try PostgresConnection(try PostgresLocation(url: scratch.text))
                try connection.execute(
                    """
                    CREATE FUNCTION strobe_test_slow_insert() RETURNS trigger LANGUAGE plpgsql
                    AS $$ BEGIN PERFORM pg_sleep(0.1); RETURN NEW; END $$
                    """)
                try connection.execute(
                    """
                    CREATE TRIGGER strobe_test_slow_insert BEFORE INSERT ON strobe_fleet_traces
                    FOR EACH ROW EXECUTE FUNCTION strobe_test_slow_insert()
                    """)
                try connection.execute("BEGIN")
                try connection.execute("LOCK TABLE strobe_fleet_traces IN SHARE MODE")
                gate = connection
            }
            async let forward = first.add(records)
            async let backward = second.add(records.reversed())
            if let gate {
                // Both ingesters wait behind the lock before it is let go.
                let deadline = ContinuousClock.now + .seconds(30)
                while try Self.waitingForTheTraces(scratch.text) < 2, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                try gate.execute("COMMIT")
            }
            let counts = try await [forward, backward]
            #expect(counts.map(\.added).reduce(0, +) == records.count)
            #expect(counts.map(\.alreadyStored).reduce(0, +) == records.count)
            #expect(try await first.traceCount() == records.count)
            let sessions = try await second.sessions(metric: "work", kind: .interval, filters: ["device.class": "low"])
            #expect(sessions.count == records.indices.filter { $0 % 3 == 0 }.count)
            await first.close()
            await second.close()
            if backend == .postgres {
                #expect(
                    try await Self.deadlocks(scratch.text) > 0, "the ingesters never deadlocked: nothing was retried")
            }
        }
    }

    /// The connections of the database `url` names that wait for a lock on
    /// the fleet's traces table.
    static func waitingForTheTraces(_ url: String) throws -> Int {
        let sql = """
            SELECT count(*)::text FROM pg_locks
            WHERE NOT granted AND relation = 'strobe_fleet_traces'::regclass
            """
        return Int(try TestServer.rows(sql, url: url).first ?? "0") ?? 0
    }

    /// The deadlocks the server counted in the database `url` names, once a
    /// closed connection's counts have reached the statistics (within five
    /// seconds).
    static func deadlocks(_ url: String) async throws -> Int {
        var count = 0
        for _ in 0..<50 {
            count =
                Int(
                    try TestServer.rows(
                        "SELECT deadlocks::text FROM pg_stat_database WHERE datname = current_database()", url: url
                    ).first ?? "0") ?? 0
            if count > 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return count
    }
}

extension String {
    /// The string with zeros before it up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
