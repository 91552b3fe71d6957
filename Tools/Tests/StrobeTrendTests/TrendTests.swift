import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobeResults
import StrobeStoreTestSupport
import StrobeTrend
import Testing

/// `strobe trend` over stores made here: where each change is, its commit
/// range, code or machine, possible steps, marks, and bad input.
@Suite(.serialized) struct TrendTests {
    /// A scratch directory, removed by the caller.
    static func scratch(_ name: String = #function) throws -> String {
        let path = NSTemporaryDirectory() + "strobe-trend-\(getpid())-\(name.filter { $0.isLetter })"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// An SQLite store at `directory/history.sqlite` holding `runs`.
    static func store(_ runs: [PerfRun], in directory: String) async throws -> String {
        let path = directory + "/history.sqlite"
        let store = try await HistoryStores.open(.sqlite(path: path))
        try await store.add(runs)
        await store.close()
        return path
    }

    /// The dashboard `strobe trend --format html` writes of `store` (runs
    /// ordered by `repository`, `build=reference` the reference), in
    /// `directory`: its path and its HTML.
    static func dashboard(_ store: String, repository: String, in directory: String) throws -> (
        path: String, html: String
    ) {
        let page = directory + "/trend.html"
        let outcome = try StrobeBinary.run([
            "trend", "--history", store, "--repository", repository, "--reference", "build=reference",
            "--format", "html", "--output", page,
        ])
        guard outcome.status == 0 else { throw TrendFailed(errors: outcome.errors) }
        return (page, try String(contentsOfFile: page, encoding: .utf8))
    }

    /// The JSON report of `strobe trend ARGUMENTS`.
    static func trend(_ arguments: [String]) throws -> TrendReport {
        let outcome = try StrobeBinary.run(["trend", "--format", "json"] + arguments)
        guard outcome.status == 0 else { throw TrendFailed(errors: outcome.errors) }
        return try JSONDecoder().decode(TrendReport.self, from: Data(outcome.output.utf8))
    }

    struct TrendFailed: Error, CustomStringConvertible {
        var errors: String
        var description: String { "strobe trend failed: \(errors)" }
    }

    @Test func aFlatHistoryReportsNothing() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 11)
        let runs = (0..<30).map { history.run(night: $0, noise: &noise) }
        let store = try await Self.store(runs, in: directory)
        let report = try Self.trend(["--history", store, "--repository", history.repository])
        #expect(report.order == "commit")
        #expect(report.runCount == 30)
        #expect(report.series.count == 4)
        #expect(report.changes.isEmpty, "\(report.changes)")
        let text = try StrobeBinary.run(["trend", "--history", store, "--repository", history.repository])
        #expect(text.status == 0)
        #expect(text.output.contains("30 runs, 4 series, in commit order: no change"), "\(text.output)")
    }

    @Test func theJSONReportWritesBetterAndOlderReportsWithTheFlagStillDecode() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 12, in: directory)
        var noise = TrendNoise(state: 5)
        let store = try await Self.store((0..<12).map { history.run(night: $0, noise: &noise) }, in: directory)
        let outcome = try StrobeBinary.run([
            "trend", "--format", "json", "--history", store, "--repository", history.repository,
        ])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let json = outcome.output
        let report = try JSONDecoder().decode(TrendReport.self, from: Data(json.utf8))
        #expect(!report.series.isEmpty && report.series.allSatisfy { $0.better == .lower })
        #expect(!json.contains("lowerIsBetter"))
        // A series made higher-is-better reads so; one without the key is
        // refused, whatever other flag it carries.
        let flipped = json.replacing(#/"better"\s*:\s*"lower"/#, with: #""better" : "higher""#)
        let higher = try JSONDecoder().decode(TrendReport.self, from: Data(flipped.utf8))
        #expect(higher.series.allSatisfy { $0.better == .higher })
        let without = flipped.replacing(#/"better" : "higher"/#, with: #""lowerIsBetter" : false"#)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TrendReport.self, from: Data(without.utf8)) }
    }

    @Test func aStepInTwoTestsIsPinnedToItsCommitsAndIsTheCodes() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 12)
        var runs: [PerfRun] = []
        for night in 0..<30 {
            runs.append(
                history.run(night: night, build: "candidate", noise: &noise) { test, night in
                    (test == "a" || test == "b") && night >= 15 ? 1.15 : 1
                })
            runs.append(history.run(night: night, build: "reference", noise: &noise))
        }
        // Added in shuffled order: the store's order is by time, the trend's by commit.
        let store = try await Self.store(runs.reversed(), in: directory)
        let report = try Self.trend([
            "--history", store, "--repository", history.repository, "--reference", "build=reference",
            "--build-command", "make perf",
        ])
        #expect(report.runCount == 30 && report.referenceRunCount == 30)
        #expect(report.changes.map(\.test).sorted() == ["a", "b"], "\(report.changes)")
        for change in report.changes {
            #expect(change.lastBefore.commit == history.commits[14])
            #expect(change.firstAfter.commit == history.commits[15])
            #expect(
                change.lastBefore.run == "ci-1-candidate-night15" && change.firstAfter.run == "ci-1-candidate-night16")
            #expect(change.range == "\(history.commits[14])..\(history.commits[15])")
            #expect(change.direction == .regression && change.status == .confirmed)
            #expect(change.change.lower > 1.08 && change.change.upper < 1.22, "\(change.change)")
            #expect(change.cause == .code, "\(change.reason)")
            #expect(change.commits.count == 1 && change.commits[0].hasSuffix("night 16"), "\(change.commits)")
            #expect(
                change.confirm.contains {
                    $0.contains(
                        "worktree add --detach /tmp/strobe-confirm-\(history.commits[14].prefix(10)) "
                            + "\(history.commits[14])"
                    )
                })
            #expect(
                change.confirm.contains {
                    $0.contains("(cd /tmp/strobe-confirm-\(history.commits[15].prefix(10)) && make perf)")
                })
            #expect(change.confirm.last?.hasPrefix("strobe compare --baseline \"/tmp/strobe-confirm-") == true)
            // Both changes lie at the same commits: one comparison covers both tests.
            #expect(change.confirm.last?.contains("--filter '^(a|b)\\$'\"") == true, "\(change.confirm)")
            #expect(change.confirm.last?.contains("--metric '^(a/wall|b/wall)$' ") == true, "\(change.confirm)")
            #expect(change.confirm.last?.contains("--results-dir /tmp/strobe-confirm-") == true, "\(change.confirm)")
        }
        // Without the repository: time order, the same runs.
        let byTime = try Self.trend(["--history", store, "--reference", "build=reference"])
        #expect(byTime.order == "time")
        #expect(byTime.changes.map(\.firstAfter.run).sorted() == ["ci-1-candidate-night16", "ci-1-candidate-night16"])
    }

    /// Runs with profiles: from night 15 the slower test's profile holds a
    /// function it did not before, which the change names.
    @Test func aChangeNamesTheFunctionsNewInItsProfile() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 13)
        var runs: [PerfRun] = []
        func profiled(_ run: PerfRun, night: Int) -> PerfRun {
            var run = run
            for index in run.tests.indices {
                var builder = CallStackProfileBuilder(nanosecondsPerSample: 1_000_000)
                builder.add(["main", "Suite.work()"], samples: 60)
                builder.add(["main", "Suite.other()"], samples: 40)
                if run.tests[index].name == "a", night >= 15 {
                    builder.add(["main", "Suite.work()", "Suite.rebuildTable()"], samples: 15)
                }
                builder.finishIteration(lostSamples: 0, method: "perf_event")
                run.tests[index].profile = builder.profile
            }
            return run
        }
        for night in 0..<30 {
            runs.append(
                profiled(
                    history.run(night: night, build: "candidate", noise: &noise) { test, night in
                        test == "a" && night >= 15 ? 1.15 : 1
                    }, night: night))
            runs.append(profiled(history.run(night: night, build: "reference", noise: &noise), night: night))
        }
        let store = try await Self.store(runs, in: directory)
        let report = try Self.trend([
            "--history", store, "--repository", history.repository, "--reference", "build=reference",
        ])
        let change = try #require(report.changes.first { $0.test == "a" })
        #expect(change.newInProfile == ["Suite.rebuildTable()"], "\(report.changes)")
        // The profile's functions are not series of their own unless asked for.
        #expect(!report.series.contains { $0.metric.hasPrefix("profile:") })
        let asked = try Self.trend([
            "--history", store, "--repository", history.repository, "--reference", "build=reference", "--metric",
            "profile:Suite",
        ])
        #expect(asked.series.contains { $0.metric == "profile:Suite.work()" })
        #expect(report.renderText().contains("new in the profile: Suite.rebuildTable()"))
    }

    @Test func aStepOnOneHostOnlyIsTheMachines() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 13)
        var runs: [PerfRun] = []
        for night in 0..<30 {
            runs.append(history.run(night: night, host: "ci-1", noise: &noise))
            runs.append(
                history.run(night: night, host: "ci-2", noise: &noise) { test, night in
                    test == "a" && night >= 12 ? 1.2 : 1
                })
        }
        let store = try await Self.store(runs, in: directory)
        let report = try Self.trend(["--history", store, "--repository", history.repository])
        #expect(report.series.count == 4 && report.series.allSatisfy { $0.groups == ["ci-1", "ci-2"] })
        let change = try #require(report.changes.first, "\(report)")
        #expect(report.changes.count == 1)
        #expect(change.test == "a" && change.group == "ci-2" && change.firstAfter.slot == 12)
        #expect(change.cause == .machine, "\(change.reason)")
        #expect(change.reason.contains("on ci-2 only"), "\(change.reason)")
    }

    @Test func aStepTheReferenceMadeTooIsTheMachines() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 14)
        var runs: [PerfRun] = []
        for night in 0..<30 {
            // The machine got slower for test a from night 18: both builds.
            let slower: (String, Int) -> Double = { test, night in test == "a" && night >= 18 ? 1.2 : 1 }
            runs.append(history.run(night: night, build: "candidate", noise: &noise, factor: slower))
            runs.append(history.run(night: night, build: "reference", noise: &noise, factor: slower))
        }
        let store = try await Self.store(runs, in: directory)
        let report = try Self.trend([
            "--history", store, "--repository", history.repository, "--reference", "build=reference",
        ])
        let change = try #require(report.changes.first, "\(report)")
        #expect(report.changes.count == 1)
        #expect(change.test == "a" && change.firstAfter.slot == 18)
        #expect(change.cause == .machine && change.reason.contains("reference moved"), "\(change.reason)")
        #expect(report.codeChanges.isEmpty)
    }

    @Test func aStepInTheNewestRunsIsPossible() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // 40 nights: 3 runs at the new level among 40 is what the end test
        // needs to pass Benjamini–Hochberg over 4 series.
        let history = try NightlyHistory.make(nights: 40, in: directory)
        var noise = TrendNoise(state: 15)
        let runs = (0..<40).map { night in
            history.run(night: night, noise: &noise) { test, night in test == "c" && night >= 37 ? 1.25 : 1 }
        }
        let store = try await Self.store(runs, in: directory)
        let report = try Self.trend(["--history", store, "--repository", history.repository])
        let change = try #require(report.changes.first, "\(report)")
        #expect(report.changes.count == 1 && change.test == "c")
        #expect(change.status == .possible(runsToConfirm: 2))
        #expect(change.firstAfter.commit == history.commits[37])
        let text = try StrobeBinary.run(["trend", "--history", store, "--repository", history.repository])
        #expect(text.output.contains("possible, 2 more runs to confirm"), "\(text.output)")
    }

    @Test func thePathFormReadsResultsFiles() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 24, in: directory)
        var noise = TrendNoise(state: 16)
        for night in 0..<24 {
            let run = history.run(night: night, noise: &noise) { test, night in test == "d" && night >= 10 ? 0.8 : 1 }
            try ResultsFile.write(run, to: directory + "/night\(night).strobe-results")
        }
        let report = try Self.trend([directory, "--repository", history.repository])
        let change = try #require(report.changes.first, "\(report)")
        #expect(report.changes.count == 1 && report.runCount == 24)
        #expect(
            change.test == "d" && change.direction == .improvement && change.firstAfter.commit == history.commits[10])
        let one = try StrobeBinary.run(["trend", directory + "/night0.strobe-results"])
        #expect(one.status == 2 && one.errors.contains("a trend needs at least two runs, found 1"), "\(one.errors)")
    }

    @Test func marksShowOnTheChangesTheyName() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 17)
        let runs = (0..<30).map { night in
            history.run(night: night, noise: &noise) { test, night in test == "b" && night >= 15 ? 1.15 : 1 }
        }
        let store = try await Self.store(runs, in: directory)
        let range = "\(history.commits[14].prefix(8))..\(history.commits[15].prefix(8))"
        let mark = try StrobeBinary.run([
            "history", "mark", range, "--series", "b/wall", "--confirmed", "--note", "longer loop", "--history", store,
        ])
        #expect(mark.status == 0, "\(mark.errors)")
        let report = try Self.trend(["--history", store, "--repository", history.repository])
        let change = try #require(report.changes.first)
        #expect(change.mark?.verdict == .confirmed && change.mark?.note == "longer loop", "\(change)")
        let text = try StrobeBinary.run([
            "trend", "--history", store, "--repository", history.repository, "--format", "markdown",
        ])
        #expect(
            text.output.contains("confirmed (confirmed on") || text.output.contains("marked confirmed"),
            "\(text.output)")
        let again = try StrobeBinary.run([
            "history", "mark", range, "--series", "b/wall", "--dismissed", "--history", store,
        ])
        #expect(again.status == 0)
        #expect(try Self.trend(["--history", store]).changes.first?.mark?.verdict == .dismissed)
        let unknown = try StrobeBinary.run(["history", "mark", "deadbeef..cafe", "--confirmed", "--history", store])
        #expect(
            unknown.status == 2 && unknown.errors.contains("no run has the commit or run id \"deadbeef\""),
            "\(unknown.errors)")
        let neither = try StrobeBinary.run(["history", "mark", range, "--history", store])
        #expect(
            neither.status == 2 && neither.errors.contains("give one of --confirmed and --dismissed"),
            "\(neither.errors)")
    }

    @Test func badInputIsNamedWithExitStatusTwo() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 3, in: directory)
        var noise = TrendNoise(state: 18)
        let store = try await Self.store((0..<3).map { history.run(night: $0, noise: &noise) }, in: directory)
        let empty = directory + "/empty.sqlite"
        let opened = try await HistoryStores.open(.sqlite(path: empty))
        await opened.close()
        let cases: [([String], String)] = [
            (["--history", store, "--where", "branch"], "--where branch: write KEY=VALUE"),
            (["--history", store, "--reference", "reference"], "--reference reference: write KEY=VALUE"),
            (["--history", store, "--metric", "wall("], "--metric: \"wall(\" is not a valid regular expression"),
            (["--history", empty], "the store holds no runs"),
            (["--history", directory + "/missing.sqlite"], "missing.sqlite: no history store there"),
            (["--history", store, "--where", "device=none"], "none of its 3 runs match device=none"),
            (["--history", store, "--group-by", "host,"], "--group-by host,: a key is empty"),
            (["--history", store, "--repository", directory], "--repository \(directory): not a git repository"),
            ([], "give a store with --history STORE, or results files"),
            ([directory + "/nothing-here"], "nothing-here: no such file or directory"),
        ]
        for (arguments, message) in cases {
            let outcome = try StrobeBinary.run(["trend"] + arguments)
            #expect(outcome.status == 2, "\(arguments): \(outcome.output)")
            #expect(outcome.errors.contains(message), "\(arguments): \(outcome.errors)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/missing.sqlite"))
    }

    /// The same analysis on runs read back from each backend: PostgreSQL
    /// gives the runs and marks SQLite gives.
    @Test(arguments: StoreBackend.tested) func eachBackendGivesTheSameTrend(_ backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { test in
            let directory = try Self.scratch("backend\(backend.rawValue)")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let history = try NightlyHistory.make(nights: 30, in: directory)
            var noise = TrendNoise(state: 19)
            let runs = (0..<30).map { night in
                history.run(night: night, noise: &noise) { test, night in test == "a" && night >= 20 ? 1.2 : 1 }
            }
            let store = try await test.open()
            try await store.add(runs)
            let range = "\(history.commits[19])..\(history.commits[20])"
            try await store.addMark(HistoryMark(target: range, verdict: .dismissed, note: "first", markedAt: 1))
            try await store.addMark(HistoryMark(target: range, verdict: .confirmed, note: "second", markedAt: 2))
            let marks = try await store.marks()
            #expect(marks == [HistoryMark(target: range, verdict: .confirmed, note: "second", markedAt: 2)])
            var options = TrendOptions()
            options.commitOrder = history.commits
            let report = try TrendAnalysis.analyze(
                try await store.runs(HistoryQuery()), source: test.text, marks: marks, options: options)
            await store.close()
            let change = try #require(report.changes.first)
            #expect(report.changes.count == 1 && change.test == "a" && change.range == range)
            #expect(change.mark?.note == "second")
        }
    }
}
