import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The stores the store, fleet and server tests run against: SQLite always,
/// PostgreSQL unless `STROBE_TEST_SKIP_POSTGRES=1` (the server is
/// ``TestServer/shared``).
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

    /// The test server's URL (a Unix socket).
    ///
    /// Without a server, the calling test is cancelled and reported as
    /// skipped with the reason, unless `STROBE_REQUIRE_POSTGRES=1` (as
    /// `make test` sets it), which makes it fail instead.
    ///
    /// - Throws: ``NoTestServer`` when there is no server and one is required.
    package static func serverURL() throws -> String { try server().url }

    /// The test server over loopback TCP, with the file holding its password.
    ///
    /// - Throws: as ``serverURL()``.
    package static func serverTCP() throws -> (url: String, passwordFile: String) {
        let server = try server()
        return (server.tcpURL, server.passwordFile)
    }

    private static func server() throws -> TestServer.Endpoint {
        switch TestServer.shared {
        case .success(let endpoint): return endpoint
        case .failure(let missing):
            if ProcessInfo.processInfo.environment["STROBE_REQUIRE_POSTGRES"] == "1" { throw missing }
            try Test.cancel(Comment(rawValue: missing.reason))
        }
    }
}

extension TestServer {
    /// Where the test server listens.
    package struct Endpoint: Sendable {
        /// The Unix-socket URL of the database `strobe_test`.
        package var url: String
        /// The loopback URL, where `strobe` logs in with a password.
        package var tcpURL: String
        /// The file holding that password.
        package var passwordFile: String
    }

    /// The server of this test process: the one `STROBE_TEST_POSTGRES_URL`
    /// names (as `scripts/with-postgres.sh` sets it), or else a throwaway
    /// cluster started once with `scripts/postgres.sh` when PostgreSQL's
    /// server programs are installed, stopped and removed when the process
    /// exits.
    package static let shared: Result<Endpoint, NoTestServer> = {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["STROBE_TEST_POSTGRES_URL"] {
            return .success(
                Endpoint(
                    url: url, tcpURL: environment["STROBE_TEST_POSTGRES_TCP_URL"] ?? "",
                    passwordFile: environment["STROBE_TEST_POSTGRES_PASSWORD_FILE"] ?? ""))
        }
        return startCluster()
    }()

    /// The repository's `scripts/postgres.sh`.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/postgres.sh").path

    private static func startCluster() -> Result<Endpoint, NoTestServer> {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard
            versions.contains(where: {
                FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb")
            })
        else {
            return .failure(
                NoTestServer(
                    reason: "PostgreSQL's server programs are not installed (no /usr/lib/postgresql/*/bin/initdb)"))
        }
        let directory = "/tmp/strobe-pg-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        // The script's output goes to a file, since the server it starts
        // keeps what it inherits open; and it runs through posix_spawn, not
        // Foundation's Process, whose wait needs a run loop this global's
        // initializer may not give it.
        let log = directory + ".log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let status = run(["/bin/bash", script, "start", directory], output: log)
        let message = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        clusterDirectory.withLock { $0 = directory }
        atexit { TestServer.stopCluster() }
        guard status == 0,
            let url = try? String(contentsOfFile: directory + "/url", encoding: .utf8),
            let tcpURL = try? String(contentsOfFile: directory + "/tcp-url", encoding: .utf8)
        else {
            return .failure(NoTestServer(reason: "\(script) start failed: \(message)"))
        }
        return .success(
            Endpoint(
                url: url.trimmingCharacters(in: .whitespacesAndNewlines),
                tcpURL: tcpURL.trimmingCharacters(in: .whitespacesAndNewlines), passwordFile: directory + "/password"))
    }

    private static let clusterDirectory = Mutex<String?>(nil)

    private static func stopCluster() {
        guard let directory = clusterDirectory.withLock({ $0 }) else { return }
        _ = run(["/bin/bash", script, "stop", directory], output: "/dev/null")
    }

    /// Runs `arguments` with its output and errors in the file `output`;
    /// returns its exit status, or -1 when it did not start.
    private static func run(_ arguments: [String], output: String) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var words: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for word in words { free(word) } }
        var child: pid_t = 0
        guard posix_spawn(&child, arguments[0], &actions, nil, &words, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(child, &status, 0) == -1, errno == EINTR {}
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }
}

/// Why a PostgreSQL test cannot run: no server was given and none could be
/// started.
package struct NoTestServer: Error, CustomStringConvertible {
    /// What is missing.
    package var reason: String

    /// An error with the reason.
    package init(reason: String) { self.reason = reason }

    /// The reason, and how to give a server or leave PostgreSQL out.
    package var description: String {
        """
        No PostgreSQL server for the tests: \(reason). Install Debian's postgresql (the tests then start a \
        throwaway cluster), run them under scripts/with-postgres.sh, or set \
        STROBE_TEST_POSTGRES_URL=postgres://USER@/DATABASE?host=SOCKETDIR; STROBE_TEST_SKIP_POSTGRES=1 tests only \
        SQLite.
        """
    }
}
