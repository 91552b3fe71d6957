import Foundation
import StrobeHistory
import StrobeStoreTestSupport
import Testing

@testable import StrobeHistoryStore

/// The SQLite store's own wrapper over SQLite's C API: values of every
/// storage class back as they went in, SQLite's messages in its errors, and
/// a store opened read-only refusing to write.
@Suite struct SQLiteConnectionTests {
    /// A new connection to a file in a directory of its own.
    private static func withConnection(_ body: (SQLiteConnection, String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strobe-sqlite-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/test.sqlite"
        try body(try SQLiteConnection(path: path, readOnly: false, busyTimeout: .seconds(1)), path)
    }

    @Test func everyStorageClassComesBackAsItWentIn() throws {
        try Self.withConnection { db, _ in
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB, f INTEGER)")
            let bytes: [UInt8] = [0, 1, 0xff, 0, 42]
            let insert = try db.cachedStatement("INSERT INTO t (id, i, r, s, b, f) VALUES (?, ?, ?, ?, ?, ?)")
            try insert.execute([1, Int64.min, -0.1, "ünïcode \u{0} after NUL", bytes, true])
            try insert.execute([2, Int64.max, Double.greatestFiniteMagnitude, "", [UInt8](), false])
            try insert.execute([3, nil as Int64?, nil as Double?, nil as String?, nil as Data?, nil as Bool?])
            // The same SQL, the same prepared statement.
            #expect(try db.cachedStatement("INSERT INTO t (id, i, r, s, b, f) VALUES (?, ?, ?, ?, ?, ?)") === insert)
            let rows = try db.rows("SELECT i, r, s, b, f FROM t ORDER BY id")
            #expect(rows.count == 3)
            #expect(try rows[0].value(0, as: Int64.self) == Int64.min)
            #expect(try rows[0].value(1, as: Double.self) == -0.1)
            #expect(try rows[0].value(2, as: String.self) == "ünïcode \u{0} after NUL")
            #expect(try rows[0].value(3, as: [UInt8].self) == bytes)
            #expect(try rows[0].value(3, as: Data.self) == Data(bytes))
            #expect(try rows[0].value(4, as: Bool.self))
            #expect(try rows[1].value(0, as: Int64.self) == Int64.max)
            #expect(try rows[1].value(1, as: Double.self) == Double.greatestFiniteMagnitude)
            #expect(try rows[1].value(2, as: String.self) == "")
            // An empty blob is an empty blob, not NULL.
            #expect(try rows[1].value(3, as: [UInt8]?.self) == [])
            #expect(try db.value("SELECT typeof(b) FROM t WHERE id = 2", as: String.self) == "blob")
            #expect(try !rows[1].value(4, as: Bool.self))
            for column in 0..<5 {
                #expect(try rows[2].value(column, as: Data?.self) == nil)
            }
            // NULL where a value is required names the column.
            #expect(throws: SQLiteError("column s holds NULL, not text")) { try rows[2].value(2, as: String.self) }
            #expect(throws: SQLiteError.self) { try rows[0].value(5, as: Int.self) }
        }
    }

    @Test func aFailedStatementGivesSQLiteMessageAndRollsBackItsTransaction() throws {
        try Self.withConnection { db, _ in
            try db.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")
            try db.execute("INSERT INTO t (id) VALUES (?)", ["a"])
            do {
                try db.writeTransaction {
                    try db.execute("INSERT INTO t (id) VALUES (?)", ["b"])
                    try db.execute("INSERT INTO t (id) VALUES (?)", ["a"])
                }
                Issue.record("a duplicate key was stored")
            } catch let error as SQLiteError {
                #expect(error.message == "UNIQUE constraint failed: t.id", "\(error)")
            }
            #expect(try db.value("SELECT COUNT(*) FROM t", as: Int.self) == 1)
            // ON CONFLICT DO NOTHING changes no row, which `changes` tells.
            try db.execute("INSERT INTO t (id) VALUES (?) ON CONFLICT DO NOTHING", ["a"])
            #expect(db.changes == 0)
            try db.execute("INSERT INTO t (id) VALUES (?) ON CONFLICT DO NOTHING", ["c"])
            #expect(db.changes == 1)
            // SQLite's message for bad SQL, and the wrapper's for SQL it refuses.
            #expect(throws: SQLiteError("no such table: missing", code: 1)) {
                try db.execute("SELECT * FROM missing")
            }
            #expect(throws: SQLiteError.self) { try db.execute("SELECT 1; SELECT 2") }
            #expect(throws: SQLiteError.self) { try db.execute("SELECT ?", []) }
            // A read transaction refuses to write.
            #expect(throws: SQLiteError.self) {
                try db.readTransaction { try db.execute("INSERT INTO t (id) VALUES ('d')") }
            }
            try db.execute("INSERT INTO t (id) VALUES ('d')")
        }
    }

    @Test func aReadOnlyStoreRefusesToWriteNamingItsFile() async throws {
        try await ScratchStore.with(.sqlite) { test in
            let written = try await HistoryStores.open(test.location)
            _ = try await HistoryWriter.add([RunRecord(run: SampleRuns.run(id: "kept", time: 1))], to: written)
            await written.close()
            let before = try await test.snapshot()
            let store = try await HistoryStores.open(test.location, access: .readOnly)
            #expect(try await store.count() == 1)
            do {
                try await store.addMark(HistoryMark(target: "kept", series: "s", verdict: .confirmed, markedAt: 1))
                Issue.record("a read-only store stored a mark")
            } catch let error as HistoryError {
                #expect(error.kind == .database, "\(error)")
                #expect(error.message.hasPrefix(test.text + ": cannot store the mark of kept"), "\(error)")
                #expect(error.message.contains("readonly database"), "\(error)")
            }
            #expect(try await store.runs(HistoryQuery()).map(\.key) == ["kept"])
            await store.close()
            // Closed, it says so rather than crashing.
            do {
                _ = try await store.count()
                Issue.record("a closed store counted")
            } catch let error as HistoryError {
                #expect(error.message.contains("closed"), "\(error)")
            }
            #expect(try await test.snapshot() == before)
        }
    }

    @Test func aFileThatIsNotADatabaseIsRefusedWithSQLiteMessage() async throws {
        try await ScratchStore.with(.sqlite) { test in
            let path = test.directory + "/not-a-store.sqlite"
            try Data(repeating: 0x5a, count: 4096).write(to: URL(fileURLWithPath: path))
            for access in [HistoryAccess.readWrite, .readOnly] {
                do {
                    let store = try await HistoryStores.open(.sqlite(path: path), access: access)
                    await store.close()
                    Issue.record("a file of bytes opened as a store")
                } catch let error as HistoryError {
                    #expect(error.kind == .badLocation, "\(error)")
                    #expect(error.message == "\(path): cannot open it as an SQLite database: file is not a database")
                }
            }
        }
    }
}
