import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobePostgres

/// A store of its own for one test, with a directory for its files: a new
/// SQLite file in the directory, or a new database on the test server.
package struct ScratchStore: Sendable {
    /// What `--history` takes.
    package var text: String
    /// The parsed location.
    package var location: HistoryLocation
    /// A directory for the test's files, removed by ``remove()``.
    package var directory: String
    /// The backend.
    package var backend: StoreBackend
    /// The database created on the test server, for PostgreSQL.
    package var databaseName: String?

    /// A fresh, empty store (not yet opened, so not yet migrated).
    ///
    /// - Throws: as ``StoreBackend/serverURL()`` for PostgreSQL without a
    ///   test server.
    package static func make(_ backend: StoreBackend) async throws -> ScratchStore {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strobe-store-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        switch backend {
        case .sqlite:
            let path = directory + "/history.sqlite"
            return ScratchStore(text: path, location: .sqlite(path: path), directory: directory, backend: backend)
        case .postgres:
            let base = try StoreBackend.serverURL()
            let name =
                "strobe_test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
            try TestServer.execute("CREATE DATABASE \(name)", url: base)
            let text = base.replacingOccurrences(of: "/strobe_test?", with: "/\(name)?")
            return ScratchStore(
                text: text, location: try HistoryLocation.parse(text), directory: directory, backend: backend,
                databaseName: name)
        }
    }

    /// Removes the directory and drops the database.
    package func remove() async {
        try? FileManager.default.removeItem(atPath: directory)
        if let databaseName, let base = try? StoreBackend.serverURL() {
            try? TestServer.execute("DROP DATABASE IF EXISTS \(databaseName) WITH (FORCE)", url: base)
        }
    }

    /// Runs `body` on a fresh store and removes it after, whether `body`
    /// throws or not.
    package static func with(_ backend: StoreBackend, _ body: (ScratchStore) async throws -> Void) async throws {
        let store = try await make(backend)
        do {
            try await body(store)
        } catch {
            await store.remove()
            throw error
        }
        await store.remove()
    }
}

/// Statements on the test server, outside the code under test, each on a
/// connection of its own. (They block their thread briefly: a local server
/// on a Unix socket.)
package enum TestServer {
    /// Runs `sql` on the database `url` names.
    package static func execute(_ sql: String, url: String) throws {
        _ = try rows(sql, url: url)
    }

    /// The first column of every row of `sql`'s result, as text.
    package static func rows(_ sql: String, url: String) throws -> [String] {
        let connection = try PostgresConnection(try PostgresLocation(url: url))
        let result = try connection.execute(sql)
        return try (0..<result.rowCount).map { row in try result.value(row, 0, as: String?.self) ?? "" }
    }
}
