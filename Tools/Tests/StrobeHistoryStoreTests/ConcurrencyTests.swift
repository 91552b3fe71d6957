import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobeResults
import StrobeStoreTestSupport
import Testing

/// Many writers at once, and a writer killed in the middle of a run.
@Suite struct ConcurrencyTests {
    @Test(arguments: StoreBackend.tested)
    func eightWritersLoseNothingAndDoubleNothing(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            // The writers open the new store together: they migrate it once.
            let writers = 8
            let own = 12
            let shared = (0..<6).map {
                RunRecord(run: SampleRuns.run(id: "shared-\($0)", time: Int64(1000 + $0), metrics: 20))
            }
            let counts = try await withThrowingTaskGroup(of: HistoryWriter.Counts.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        let store = try await test.open()
                        var records = (0..<own).map {
                            RunRecord(
                                run: SampleRuns.run(id: "w\(writer)-\($0)", time: Int64(writer * 100 + $0), metrics: 20)
                            )
                        }
                        records += shared
                        var generator = SystemRandomNumberGenerator()
                        records.shuffle(using: &generator)
                        var total = HistoryWriter.Counts()
                        for record in records {
                            switch try await store.add(record) {
                            case .added: total.added += 1
                            case .alreadyStored: total.alreadyStored += 1
                            }
                        }
                        await store.close()
                        return total
                    }
                }
                var sum = HistoryWriter.Counts()
                for try await counts in group {
                    sum.added += counts.added
                    sum.alreadyStored += counts.alreadyStored
                }
                return sum
            }
            #expect(counts.added == writers * own + shared.count)
            #expect(counts.alreadyStored == (writers - 1) * shared.count)
            let store = try await test.open()
            #expect(try await store.count() == writers * own + shared.count)
            let runs = try await store.runs(HistoryQuery())
            #expect(Set(runs.map(\.key)).count == writers * own + shared.count)
            #expect(runs.allSatisfy { $0.tests.count == 1 && $0.tests[0].metrics.count == 20 })
            await store.close()
        }
    }

    @Test(arguments: StoreBackend.tested)
    func aWriterKilledInsideItsTransactionLeavesNoPartOfTheRun(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let setup = try await test.open()
            _ = try await setup.add(RunRecord(run: SampleRuns.run(id: "before", time: 1)))
            await setup.close()

            let run = SampleRuns.run(id: "killed", time: 2, metrics: 50)
            let file = try SampleRuns.write(run, to: test.directory + "/input")
            let pause = test.directory + "/paused"
            guard FileManager.default.isExecutableFile(atPath: StrobeBinary.path) else {
                throw StrobeBinary.StrobeNotBuilt(path: StrobeBinary.path)
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: StrobeBinary.path)
            process.arguments = ["history", "add", file, "--history", test.text]
            process.environment = ProcessInfo.processInfo.environment.merging(["STROBE_HISTORY_TEST_PAUSE_FILE": pause])
            { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(60)
            while !FileManager.default.fileExists(atPath: pause) && Date() < deadline && process.isRunning {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            #expect(FileManager.default.fileExists(atPath: pause), "the writer never reached its pause")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)

            let store = try await test.open()
            #expect(try await store.count() == 1)
            #expect(try await store.runs(HistoryQuery()).map(\.key) == ["before"])
            // Its tests and tags are gone too: adding it again stores all of it
            // (a row left behind would collide with the new ones).
            #expect(try await store.add(RunRecord(run: run)) == .added)
            let back = try await store.runs(HistoryQuery(filters: [HistoryFilter(.commit, "c2")], includeSamples: true))
            #expect(back.map(\.perfRun) == [run])
            await store.close()
        }
    }
}
