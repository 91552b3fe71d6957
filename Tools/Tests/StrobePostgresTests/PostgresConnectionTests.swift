import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobePostgres
import StrobeStoreTestSupport
import Testing

/// The libpq connection under the PostgreSQL store: values bound as
/// parameters come back exactly, whatever they hold; errors carry the
/// server's SQLSTATE; columns are read only as their type.
@Suite(.enabled(if: StoreBackend.tested.contains(.postgres)))
struct PostgresConnectionTests {
    func connect() throws -> PostgresConnection {
        let url = try StoreBackend.serverURL()
        return try PostgresConnection(try PostgresLocation(url: url))
    }

    @Test func textAndTextArraysComeBackExactly() throws {
        let connection = try connect()
        let awkward: [String?] = [
            "plain", "", "NULL", "null", nil, "a,b", "{braces}", "\"quoted\"", "back\\slash", "\\x00", "  spaced  ",
            "tab\tand\nnewline",
            "'); DROP TABLE strobe_runs; --", "ünïcödé ✓ 𝄞", "$1", "ends with backslash\\",
        ]
        for value in awkward {
            let single = try connection.execute("SELECT $1::text", [value])
            #expect(try single.value(0, 0, as: String?.self) == value, "\(String(describing: value))")
        }
        let rows = try connection.execute(
            "SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS u(x, o) ORDER BY o", [awkward])
        #expect(try (0..<rows.rowCount).map { try rows.value($0, 0, as: String?.self) } == awkward)
        let empty = try connection.execute("SELECT cardinality($1::text[])", [[String]()])
        #expect(try empty.value(0, 0, as: Int.self) == 0)
    }

    @Test func numbersBooleansAndBytesComeBackExactly() throws {
        let connection = try connect()
        let doubles: [Double?] = [
            0, -0.0, 1, -1, 0.1, 1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            .pi, .infinity, -.infinity,
            .nan, nil, 1_000_000.123456789,
        ]
        let read = try connection.execute(
            "SELECT x FROM unnest($1::float8[]) WITH ORDINALITY AS u(x, o) ORDER BY o", [doubles])
        let back = try (0..<read.rowCount).map { try read.value($0, 0, as: Double?.self) }
        #expect(back.count == doubles.count)
        for (sent, received) in zip(doubles, back) {
            #expect(
                sent.map { $0.isNaN ? Double.nan.bitPattern : $0.bitPattern }
                    == received.map { $0.isNaN ? Double.nan.bitPattern : $0.bitPattern })
        }
        let integers = try connection.execute(
            "SELECT $1::int8, $2::int4, $3::int2, $4::bool, $5::bool",
            [Int64.min, Int32.max, Int(-32768), true, false])
        #expect(try integers.value(0, 0, as: Int64.self) == .min)
        #expect(try integers.value(0, 1, as: Int32.self) == .max)
        #expect(try integers.value(0, 2, as: Int.self) == -32768)
        #expect(try integers.value(0, 3, as: Bool.self) && !(try integers.value(0, 4, as: Bool.self)))

        let blobs: [PostgresBytes] = [
            PostgresBytes([]), PostgresBytes(Array(0...255)), PostgresBytes(Array("\\\"{},".utf8)),
        ]
        let bytes = try connection.execute(
            "SELECT x FROM unnest($1::bytea[]) WITH ORDINALITY AS u(x, o) ORDER BY o", [blobs])
        #expect(try (0..<bytes.rowCount).map { try bytes.value($0, 0, as: [UInt8].self) } == blobs.map(\.bytes))
    }

    @Test func aNULCharacterIsRefusedBeforeAnythingIsSent() throws {
        let connection = try connect()
        do {
            try connection.execute("SELECT $1::text, $2::text", ["fine", "nul\u{0}inside"])
            Issue.record("a NUL character was sent")
        } catch {
            #expect(error.message.contains("$2") && error.message.contains("NUL"), "\(error)")
        }
        // The connection is still usable.
        #expect(try connection.execute("SELECT 1").value(0, 0, as: Int.self) == 1)
    }

    @Test func serverErrorsCarryTheirSQLSTATE() throws {
        let connection = try connect()
        try connection.execute("CREATE TEMPORARY TABLE once (k INTEGER PRIMARY KEY)")
        try connection.execute("INSERT INTO once (k) VALUES ($1)", [1])
        do {
            try connection.execute("INSERT INTO once (k) VALUES ($1)", [1])
            Issue.record("a duplicate key was stored")
        } catch {
            #expect(error.sqlState == "23505" && error.message.contains("duplicate key"), "\(error)")
        }
        do {
            try connection.execute("SELEC 1")
            Issue.record("bad SQL ran")
        } catch {
            #expect(error.sqlState == "42601" && error.message.contains("syntax error"), "\(error)")
        }
    }

    @Test func aColumnIsReadOnlyAsItsTypeAndNULLOnlyAsOptional() throws {
        let connection = try connect()
        let result = try connection.execute(
            "SELECT 5000000000::int8 AS big, NULL::text AS nothing, 'x'::text AS letter")
        #expect(try result.value(0, 0, as: Int64.self) == 5_000_000_000)
        #expect(throws: PostgresError.self) { try result.value(0, 0, as: Int32.self) }
        #expect(throws: PostgresError.self) { try result.value(0, 2, as: Int.self) }
        do {
            _ = try result.value(0, 1, as: String.self)
            Issue.record("NULL read as a string")
        } catch {
            #expect(error.message.contains("nothing") && error.message.contains("NULL"), "\(error)")
        }
        #expect(try result.value(0, 1, as: String?.self) == nil)
        #expect(throws: PostgresError.self) { try result.value(1, 0, as: Int.self) }
    }
}
