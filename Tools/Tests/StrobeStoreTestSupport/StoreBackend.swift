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
        // The script's errors go to a file: the server it starts keeps a
        // pipe open for as long as it runs.
        let log = directory + ".log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        guard FileManager.default.createFile(atPath: log, contents: nil), let errors = FileHandle(forWritingAtPath: log)
        else { return .failure(NoTestServer(reason: "\(log) could not be written")) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, "start", directory]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        do {
            try process.run()
        } catch {
            return .failure(NoTestServer(reason: "\(script) did not run: \(error)"))
        }
        process.waitUntilExit()
        try? errors.close()
        let message = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        clusterDirectory.withLock { $0 = directory }
        atexit { TestServer.stopCluster() }
        guard process.terminationStatus == 0,
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
        let words: [String] = ["/bin/bash", script, "stop", directory]
        var arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var child: pid_t = 0
        guard posix_spawn(&child, "/bin/bash", nil, nil, &arguments, environ) == 0 else { return }
        var status: Int32 = 0
        _ = waitpid(child, &status, 0)
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
