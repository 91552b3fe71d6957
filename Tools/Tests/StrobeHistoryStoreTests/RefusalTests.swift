import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobePostgres
import StrobeResults
import StrobeStoreTestSupport
import Testing

/// Input the history refuses, clearly and without storing part of it.
@Suite struct RefusalTests {
    @Test(arguments: StoreBackend.tested)
    func aFileThatDoesNotParseStoresNothingOfTheCommand(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let directory = test.directory + "/results"
            try SampleRuns.write(SampleRuns.run(id: "good", time: 1), to: directory, name: "a-good")
            let bad = directory + "/b-bad.strobe-results"
            try Data("not a results file at all".utf8).write(to: URL(fileURLWithPath: bad))
            let outcome = try StrobeBinary.run(["history", "add", directory, "--history", test.text])
            #expect(outcome.status == 2)
            #expect(outcome.errors.contains("\(bad): not a results file"), "\(outcome.errors)")
            #expect(outcome.errors.contains("bytes"), "\(outcome.errors)")
            let empty = directory + "/c-empty.strobe-results"
            #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
            #expect(throws: HistoryError.self) { try HistoryInput.load([empty]) }
            #expect(throws: HistoryError.self) { try HistoryInput.load([test.directory + "/missing"]) }
            let store = try await test.open()
            #expect(try await store.count() == 0)
            await store.close()
        }
    }

    @Test(arguments: StoreBackend.tested)
    func aMetricWhoseUnitChangedIsRefusedNamingBothUnitsAndRuns(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let store = try await test.open()
            _ = try await HistoryWriter.add(
                [RunRecord(run: SampleRuns.run(id: "in-ns", time: 1, unit: "ns"))], to: store)
            let changed = RunRecord(run: SampleRuns.run(id: "in-ms", time: 2, unit: "ms"))
            let other = RunRecord(run: SampleRuns.run(id: "fine", time: 3))
            do {
                _ = try await HistoryWriter.add([other, changed], to: store)
                Issue.record("a changed unit was accepted")
            } catch let error as HistoryError {
                #expect(error.kind == .unitChanged)
                for part in ["parse/wall", "ms", "ns", "in-ms", "in-ns"] {
                    #expect(error.message.contains(part), "\(error)")
                }
            }
            // Nothing of that call was stored, not even the run that was fine.
            #expect(try await store.count() == 1)
            // The store refuses it by itself too, in the run's transaction.
            do {
                _ = try await store.add(changed)
                Issue.record("the store accepted a changed unit")
            } catch let error as HistoryError {
                #expect(error.kind == .unitChanged && error.message.contains("in-ns"), "\(error)")
            }
            #expect(try await store.runs(HistoryQuery()).map(\.key) == ["in-ns"])
            // Two runs of one call that disagree.
            let a = RunRecord(run: SampleRuns.run(id: "x1", suite: "new", time: 4, unit: "ns"))
            let b = RunRecord(run: SampleRuns.run(id: "x2", suite: "new", time: 5, unit: "count"))
            await #expect(throws: HistoryError.self) { _ = try await HistoryWriter.add([a, b], to: store) }
            #expect(try await store.count() == 1)
            await store.close()
        }
    }

    @Test(arguments: StoreBackend.tested)
    func aStoreOfANewerSchemaIsRefusedAndLeftUnchanged(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let store = try await test.open()
            _ = try await HistoryWriter.add([RunRecord(run: SampleRuns.run(id: "kept", time: 1))], to: store)
            await store.close()
            try await test.setSchemaVersion(HistorySchema.currentVersion + 98)
            let before = try await test.snapshot()
            do {
                let opened = try await test.open()
                await opened.close()
                Issue.record("a newer store was opened")
            } catch let error as HistoryError {
                #expect(error.kind == .newerSchema)
                #expect(error.message.contains("version \(HistorySchema.currentVersion + 98)"), "\(error)")
                #expect(error.message.contains("unchanged"), "\(error)")
            }
            let outcome = try StrobeBinary.run(["history", "add", test.directory, "--history", test.text])
            #expect(outcome.status == 2)
            #expect(try await test.snapshot() == before)
        }
    }

    @Test(arguments: StoreBackend.tested)
    func aStoreOfAnOlderSchemaIsRefusedByReadsUntilUpgraded(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let store = try await test.open()
            _ = try await HistoryWriter.add([RunRecord(run: SampleRuns.run(id: "kept", time: 1))], to: store)
            await store.close()
            try await test.downgradeToVersion3()
            let before = try await test.snapshot()

            let read = try StrobeBinary.run(["history", "list", "--history", test.text])
            #expect(read.status == 2, "\(read.output)")
            #expect(
                read.errors.contains(
                    "schema is at version 3, older than this strobe's \(HistorySchema.currentVersion)"),
                "\(read.errors)")
            #expect(read.errors.contains("`strobe history upgrade --history "), "\(read.errors)")
            #expect(try await test.snapshot() == before)

            let upgrade = try StrobeBinary.run(["history", "upgrade", "--history", test.text])
            #expect(upgrade.status == 0, "\(upgrade.errors)")
            #expect(
                upgrade.output.contains("brought up to version \(HistorySchema.currentVersion)"), "\(upgrade.output)")
            let listed = try StrobeBinary.run(["history", "list", "--history", test.text])
            #expect(listed.status == 0, "\(listed.errors)")
            #expect(listed.output.contains(": 1 run, "), "\(listed.output)")

            let again = try StrobeBinary.run(["history", "upgrade", "--history", test.text])
            #expect(again.status == 0, "\(again.errors)")
            #expect(
                again.output.contains("version \(HistorySchema.currentVersion) already; nothing to upgrade"),
                "\(again.output)")
        }
    }

    @Test func upgradingAMissingStoreCreatesNothing() throws {
        let folder = NSTemporaryDirectory() + "strobe-upgrade-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outcome = try StrobeBinary.run(["history", "upgrade", "--history", folder + "/history.sqlite"])
        #expect(outcome.status == 2)
        #expect(outcome.errors.contains("no history store there"), "\(outcome.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/history.sqlite"))
    }

    @Test func anUnreachableOrWrongServerFailsQuicklyAndSaysWhy() async throws {
        let closedPort: Int = try {
            // A port that was just free: nothing listens there.
            let socket = try Socket.bindLoopback()
            defer { close(socket.descriptor) }
            return socket.port
        }()
        // A port that accepts connections (the kernel completes them) but
        // never answers: only the connect timeout ends the wait.
        let silent = try Socket.bindLoopback()
        defer { close(silent.descriptor) }
        #expect(listen(silent.descriptor, 4) == 0)
        let cases: [(url: String, says: [String])] = [
            ("postgres://strobe@127.0.0.1:\(closedPort)/db?sslmode=disable", ["cannot connect", "refused"]),
            ("postgres://strobe@/db?host=/nonexistent/socket/dir", ["cannot connect", "/nonexistent/socket/dir"]),
            (
                "postgres://strobe@127.0.0.1:\(silent.port)/db?connect_timeout=2&sslmode=disable",
                ["cannot connect", "timeout"]
            ),
        ]
        for (url, says) in cases {
            do {
                let store = try await HistoryStores.open(try HistoryLocation.parse(url))
                await store.close()
                Issue.record("\(url) opened")
            } catch let error as HistoryError {
                #expect(error.kind == .unreachable, "\(error)")
                for part in says { #expect(error.message.contains(part), "\(error)") }
                #expect(!error.message.contains("\n"), "\(error)")
            }
            // The connection alone, timed on this thread: the store's open
            // also waits for a thread of the shared pool, which suites
            // running at the same time may hold.
            let start = ContinuousClock.now
            #expect(throws: PostgresError.self) { _ = try PostgresConnection(try PostgresLocation(url: url)) }
            let took = ContinuousClock.now - start
            #expect(took < .seconds(8), "\(url) took \(took)")
        }
        // Locations refused before any connection.
        let bad = [
            "postgres://strobe:secret@host/db", "postgres://@host/db", "postgres://strobe@host/",
            "mysql://strobe@host/db",
            "postgres://strobe@host/db?port=0", "postgres://strobe@host/db?sslmode=maybe",
            "postgres://strobe@host/db?host=relative",
        ]
        for text in bad {
            #expect(throws: HistoryError.self, "\(text)") { try HistoryLocation.parse(text) }
        }
        do {
            _ = try HistoryLocation.parse("postgres://strobe:hunter2@host/db")
            Issue.record("a password in the URL was accepted")
        } catch {
            #expect(!error.message.contains("hunter2") && error.message.contains("PGPASSWORD"), "\(error)")
        }
        let socket = try HistoryLocation.parse(
            "postgres://me@/db?host=/run/pg&port=6000", environment: ["PGPASSWORD": "pw"])
        guard case .postgres(let location) = socket else {
            Issue.record("not postgres")
            return
        }
        #expect(
            location.endpoint.socketPath == "/run/pg/.s.PGSQL.6000" && location.password == "pw"
                && location.database == "db")
    }

    /// PostgreSQL only. The password part runs when the server's loopback
    /// URL and password file are known.
    @Test(.enabled(if: StoreBackend.tested.contains(.postgres)))
    func aWrongDatabaseOrPasswordIsNamed() async throws {
        let base = try StoreBackend.serverURL()
        let missing = base.replacingOccurrences(of: "/strobe_test?", with: "/no_such_database?")
        do {
            let store = try await HistoryStores.open(try HistoryLocation.parse(missing))
            await store.close()
            Issue.record("a missing database opened")
        } catch let error as HistoryError {
            #expect(error.message.contains("no_such_database") && error.message.contains("does not exist"), "\(error)")
        }
        let (tcp, passwordFile) = try StoreBackend.serverTCP()
        guard !tcp.isEmpty, !passwordFile.isEmpty else { return }
        // Over TCP, with the password from a file, then a wrong one.
        let store = try await HistoryStores.open(try HistoryLocation.parse(tcp, passwordFile: passwordFile))
        #expect(try await store.count() >= 0)
        await store.close()
        do {
            let wrong = try await HistoryStores.open(
                try HistoryLocation.parse(tcp, environment: ["PGPASSWORD": "wrong"]))
            await wrong.close()
            Issue.record("a wrong password was accepted")
        } catch let error as HistoryError {
            #expect(error.kind == .unreachable && error.message.contains("password"), "\(error)")
        }
    }
}

/// A loopback TCP socket bound to a free port, for a port nothing listens on.
struct Socket {
    var descriptor: Int32
    var port: Int

    static func bindLoopback() throws -> Socket {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Socket(descriptor: descriptor, port: Int(UInt16(bigEndian: address.sin_port)))
    }
}
