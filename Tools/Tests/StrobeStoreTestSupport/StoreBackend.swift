import Foundation

/// The stores the store, fleet and server tests run against: SQLite always,
/// PostgreSQL unless `STROBE_TEST_SKIP_POSTGRES=1` (the server comes from
/// `STROBE_TEST_POSTGRES_URL`, as `scripts/with-postgres.sh` sets it).
package enum StoreBackend: String, CaseIterable, CustomStringConvertible, Sendable {
    /// An SQLite file.
    case sqlite
    /// A database on the test server.
    case postgres

    /// The backend's name, as test arguments show it.
    package var description: String { rawValue }

    /// Both, unless `STROBE_TEST_SKIP_POSTGRES=1` says to leave PostgreSQL out.
    package static var tested: [StoreBackend] {
        ProcessInfo.processInfo.environment["STROBE_TEST_SKIP_POSTGRES"] == "1" ? [.sqlite] : allCases
    }

    /// The test server's URL, from `STROBE_TEST_POSTGRES_URL`.
    ///
    /// - Throws: ``NoTestServer`` when it is not set.
    package static func serverURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["STROBE_TEST_POSTGRES_URL"] else { throw NoTestServer() }
        return url
    }
}

/// Why a PostgreSQL test cannot run: no server was given.
package struct NoTestServer: Error, CustomStringConvertible {
    /// An error saying so.
    package init() {}

    /// How to give one, or how to leave PostgreSQL out.
    package var description: String {
        """
        STROBE_TEST_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. Run them under \
        scripts/with-postgres.sh (or `make test-history`), which start a throwaway server, or set \
        STROBE_TEST_POSTGRES_URL=postgres://USER@/DATABASE?host=SOCKETDIR yourself; set \
        STROBE_TEST_SKIP_POSTGRES=1 to test only SQLite.
        """
    }
}
