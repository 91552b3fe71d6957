import Foundation
import StrobeFlameGraph
import StrobeHistory
import StrobeHistoryStore
import StrobeResults
import StrobeStatistics
import StrobeStoreTestSupport
import Testing

/// Runs go in and come back out unchanged, once each.
@Suite struct RoundTripTests {
    @Test(arguments: StoreBackend.tested)
    func addedRunsReadBackAsTheyWereWithTheirSummaries(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let store = try await test.open()
            let runs = SampleRuns.varied
            let counts = try await HistoryWriter.add(runs.map { RunRecord(run: $0) }, to: store)
            #expect((counts.added, counts.alreadyStored) == (3, 0))
            let read = try await store.runs(HistoryQuery(includeSamples: true))
            // Oldest first.
            #expect(read.map(\.metadata.timestamp) == [5, 10, 20].map { Int64($0) * 1_000_000_000 })
            let byTime = runs.sorted { $0.metadata.timestamp < $1.metadata.timestamp }
            #expect(read.map(\.perfRun) == byTime)
            #expect(read[0].key.hasPrefix("sha256:") && read[0].key.count == 7 + 64)
            #expect(read[2].branch == "feature/x")

            // A process per run: one median and minimum per metric.
            let wall = try #require(read[1].tests[0].metrics.first { $0.name == "wall" })
            #expect(wall.summary.medians == [ReplicateSummary.median.value(of: wall.samples)])
            #expect(wall.summary.minimums == [wall.samples.min()!])
            #expect(read[1].tests[2].metrics[0].summary.medians.isEmpty)
            // Launches: a process per sample.
            let launched = read[2].tests[0].metrics[0]
            #expect(launched.summary.medians == launched.samples)

            // Without samples, the summaries alone.
            let light = try await store.runs(HistoryQuery())
            #expect(
                light.map { $0.tests.flatMap(\.metrics).map(\.summary) }
                    == read.map { $0.tests.flatMap(\.metrics).map(\.summary) })
            #expect(light.allSatisfy { $0.tests.flatMap(\.metrics).allSatisfy(\.samples.isEmpty) })
            await store.close()
        }
    }

    @Test(arguments: StoreBackend.tested)
    func aProfiledTestsStacksReadBackWhenAskedFor(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let store = try await test.open()
            var run = SampleRuns.run(id: "profiled", time: 1)
            // 40 samples of 1 ms over 4 iterations: 10 ms per iteration.
            run.tests[0].profile = CallStackProfile(
                functions: ["main", "render", "blur", "makeToneCurve()"],
                stacks: [.init(frames: [0, 1, 2], samples: 30), .init(frames: [0, 1, 3], samples: 10)],
                nanosecondsPerSample: 1_000_000, iterations: 4, method: "perf_event")
            let record = RunRecord(run: run)
            #expect(
                record.stacks[0] == [
                    FlameStack(frames: ["main", "render", "blur"], amount: 7_500_000),
                    FlameStack(frames: ["main", "render", "makeToneCurve()"], amount: 2_500_000),
                ])
            #expect(record.stacks.dropFirst().allSatisfy { $0.isEmpty })
            _ = try await HistoryWriter.add([record], to: store)
            let read = try await store.runs(HistoryQuery(includeStacks: true))
            #expect(read.first?.tests.map(\.stacks) == record.stacks)
            #expect(read.first?.tests.map(\.stacks) == HistoryRun(record: record).tests.map(\.stacks))
            // Not asked for, not read.
            let light = try await store.runs(HistoryQuery())
            #expect(light.first?.tests.allSatisfy(\.stacks.isEmpty) == true)
            await store.close()
        }
    }

    @Test func storedStacksThatAreNotAnArrayOfFramesAreRefused() {
        #expect(
            HistoryTest.decodeStacks("[{\"amount\":1,\"frames\":[\"a\"]}]") == [FlameStack(frames: ["a"], amount: 1)])
        #expect(HistoryTest.decodeStacks("{}") == nil)
        #expect(HistoryTest.decodeStacks("[{\"amount\":\"x\"}]") == nil)
    }

    @Test func aRunWithoutARunIDIsKeyedByTheSHA256OfItsFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strobe-key-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = SampleRuns.run(id: "", time: 7)
        let path = try SampleRuns.write(run, to: directory)
        // sha256sum, not the code under test, digests the file.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let digest = try #require(printed.split(separator: " ").first.map(String.init))
        #expect(digest.count == 64)
        #expect(RunRecord(run: run).key == "sha256:" + digest)
        #expect(RunRecord(run: try ResultsFile.read(path)).key == "sha256:" + digest)
        #expect(RunRecord(run: SampleRuns.run(id: "", time: 8)).key != "sha256:" + digest)
    }

    @Test(arguments: StoreBackend.tested)
    func addingARunTwiceStoresItOnce(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let store = try await test.open()
            let records = SampleRuns.varied.map { RunRecord(run: $0) }
            let first = try await HistoryWriter.add(records, to: store)
            let second = try await HistoryWriter.add(records + [records[0]], to: store)
            #expect((first.added, first.alreadyStored) == (3, 0))
            #expect((second.added, second.alreadyStored) == (0, 4))
            #expect(try await store.count() == 3)
            #expect(try await store.runs(HistoryQuery()).count == 3)
            await store.close()

            // Through the command: the files, added twice.
            let directory = test.directory + "/results"
            for run in SampleRuns.varied { try SampleRuns.write(run, to: directory) }
            try SampleRuns.write(SampleRuns.run(id: "run-new", time: 30), to: directory)
            let again = try StrobeBinary.run(["history", "add", directory, "--history", test.text])
            #expect(again.status == 0, "\(again.errors)")
            #expect(again.output.contains("1 added, 3 already stored"), "\(again.output)")
        }
    }

    @Test(arguments: StoreBackend.tested)
    func filtersSelectByColumnAndTag(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let store = try await test.open()
            var runs: [PerfRun] = []
            for index in 0..<12 {
                runs.append(
                    SampleRuns.run(
                        id: "r\(index)", suite: index % 2 == 0 ? "even" : "odd", time: Int64(100 - index),
                        tags: ["branch": index < 6 ? "main" : "dev", "device": "d\(index % 3)"]))
            }
            _ = try await HistoryWriter.add(runs.map { RunRecord(run: $0) }, to: store)
            func keys(_ filters: [String]) async throws -> [String] {
                try await store.runs(HistoryQuery(filters: filters.map { try HistoryFilter(parsing: $0) })).map(\.key)
            }
            #expect(try await keys(["suite=even"]) == ["r10", "r8", "r6", "r4", "r2", "r0"])
            #expect(try await keys(["branch=main", "device=d1"]) == ["r4", "r1"])
            #expect(
                try await keys(["host=host-1"])
                    == runs.filter { $0.metadata.host == "host-1" }.sorted {
                        $0.metadata.timestamp < $1.metadata.timestamp
                    }.map(\.metadata.runID))
            #expect(try await keys(["commit=c95"]) == ["r5"])
            #expect(try await keys(["device=none"]).isEmpty)
            // The value may hold `=`; the key may not be empty.
            #expect(try HistoryFilter(parsing: "label=a=b").value == "a=b")
            #expect(throws: StrobeHistory.HistoryError.self) { try HistoryFilter(parsing: "=main") }
            await store.close()
        }
    }

    @Test(arguments: StoreBackend.tested)
    func exportedResultsAddBackAsTheSameRuns(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let input = test.directory + "/input"
            for run in SampleRuns.varied { try SampleRuns.write(run, to: input) }
            let added = try StrobeBinary.run(["history", "add", input, "--history", test.text])
            #expect(
                added.status == 0 && added.output.contains("3 added, 0 already stored"),
                "\(added.output)\(added.errors)")

            let exported = test.directory + "/exported"
            let export = try StrobeBinary.run([
                "history", "export", "--history", test.text, "--format", "results", "--output", exported,
            ])
            #expect(export.status == 0, "\(export.errors)")
            let files = try FileManager.default.contentsOfDirectory(atPath: exported).filter {
                $0.hasSuffix(".strobe-results")
            }
            #expect(files.count == 3)
            // Every file is the run it was, field for field.
            let original = Set(SampleRuns.varied)
            let back = Set(try files.map { try ResultsFile.read(exported + "/" + $0) })
            #expect(back == original)
            let readd = try StrobeBinary.run(["history", "add", exported, "--history", test.text])
            #expect(readd.output.contains("0 added, 3 already stored"), "\(readd.output)\(readd.errors)")

            // Into a new store: the same runs, the same keys.
            let other = try await ScratchStore.make(.sqlite)
            defer { Task { await other.remove() } }
            let copied = try StrobeBinary.run(["history", "add", exported, "--history", other.text])
            #expect(copied.status == 0)
            let store = try await test.open()
            let copy = try await other.open()
            let a = try await store.runs(HistoryQuery(includeSamples: true))
            let b = try await copy.runs(HistoryQuery(includeSamples: true))
            #expect(a.map(\.key) == b.map(\.key))
            #expect(a.map(\.perfRun) == b.map(\.perfRun))

            // Filtered CSV: a row per sample of the runs kept.
            let csvPath = test.directory + "/main.csv"
            let csv = try StrobeBinary.run([
                "history", "export", "--history", test.text, "--where", "branch=main", "--format", "csv", "--output",
                csvPath,
            ])
            #expect(csv.status == 0, "\(csv.errors)")
            let lines = try String(contentsOfFile: csvPath, encoding: .utf8).split(separator: "\n")
            #expect(
                lines.first
                    == "suite,test,metric,unit,better,run,round,iteration,value,commit,branch,timestamp_ns,device")
            let mainSamples = SampleRuns.varied.filter { $0.metadata.tags["branch"] == "main" }
                .flatMap(\.tests).flatMap(\.metrics).map(\.samples.count).reduce(0, +)
            #expect(lines.count == 1 + mainSamples)
            await store.close()
            await copy.close()
        }
    }
}
