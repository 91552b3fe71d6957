import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobeResults
import StrobeStoreTestSupport
import Testing

@testable import StrobeTrend

/// A night that adds a native results file and a simulated one of the same
/// commit: the store keeps the counts, and `strobe trend` finds a step of
/// the instructions at its run, the code's, naming the functions behind it.
@Suite(.serialized) struct InstructionTrendTests {
    /// The functions of test `b`'s instruction profile per iteration, before
    /// and after night 16 (index 15): `makeToneCurve` gains 17.4 M
    /// instructions, and with it its callers; `swift_retain` gains 0.5 M.
    static func functions(stepped: Bool) -> [(String, Double)] {
        let tone = stepped ? 17.4e6 : 0
        let retain = stepped ? 0.5e6 : 0
        return [
            ("NightlySuite.b()", 870e6 + tone + retain),
            ("LensKit.Lens.apply(to:)", 500e6 + tone),
            ("LensKit.Lens.makeToneCurve()", 100e6 + tone),
            ("LensKit.Lens.blend(_:_:)", 200e6),
            ("swift_retain", 20e6 + retain),
        ]
    }

    /// The simulated process of `night`: per test its instructions (5
    /// iterations, the process off by up to ±0.1%), a wall time the
    /// simulator made up, and for test `b` its instruction profile.
    static func simulatedRun(
        _ history: NightlyHistory, night: Int, build: String?, step: Bool, noise: inout TrendNoise
    ) -> PerfRun {
        var tags = ["branch": "main"]
        if let build { tags["build"] = build }
        let stepped = step && night >= 15
        let tests = ["a", "b", "c"].map { name -> PerfTestResult in
            let base = name == "b" ? functions(stepped: stepped)[0].1 : (name == "a" ? 3e8 : 6e8)
            let process = 1 + 0.001 * (2 * noise.uniform() - 1)
            var test = PerfTestResult(
                name: name,
                metrics: [
                    PerfMetric(name: "wall", unit: "ns", samples: Array(repeating: 9e7 * process, count: 5)),
                    PerfMetric(
                        name: "instructions", unit: "count", samples: Array(repeating: base * process, count: 5)),
                ])
            if name == "b" {
                let counted = functions(stepped: stepped)
                test.instructionProfile = InstructionProfile(
                    functions: counted.map(\.0), exclusive: counted.map { _ in 0 },
                    inclusive: counted.map { UInt64($0.1 * 5) }, iterations: 5,
                    total: UInt64(counted[0].1 * 5 * process))
            }
            return test
        }
        var metadata = RunMetadata(
            suite: "nightly", gitCommit: history.commits[night], host: "ci-1", os: "Linux", cpuModel: "AMD EPYC",
            coreCount: 2, buildConfiguration: "release",
            timestamp: (1_700_000_000 + Int64(night) * 86_400 + (build == "reference" ? 90 : 30)) * 1_000_000_000,
            tags: tags, runID: "ci-1-\(build ?? "build")-simulated-night\(night + 1)")
        metadata.simulated = true
        metadata.instructionSource = "simulated"
        return PerfRun(metadata: metadata, tests: tests)
    }

    /// 30 nights: per night the native and the simulated process of the
    /// build, and of the pinned reference build, whose counts never move.
    static func nights(_ history: NightlyHistory, seed: UInt64, native: Bool = true) -> [PerfRun] {
        var noise = TrendNoise(state: seed)
        var runs: [PerfRun] = []
        for night in 0..<30 {
            for build in ["candidate", "reference"] {
                if native {
                    runs.append(history.run(night: night, build: build, tests: ["a", "b", "c"], noise: &noise))
                }
                runs.append(
                    simulatedRun(history, night: night, build: build, step: build != "reference", noise: &noise))
            }
        }
        return runs
    }

    @Test(arguments: StoreBackend.tested) func aStepInInstructionsIsTheCodesAtItsRunWithItsFunctions(
        _ backend: StoreBackend
    ) async throws {
        try await ScratchStore.with(backend) { test in
            let directory = try TrendTests.scratch("instructions\(backend.rawValue)")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let history = try NightlyHistory.make(nights: 30, in: directory)
            let store = try await test.open()
            try await store.add(Self.nights(history, seed: 31))
            let runs = try await store.runs(HistoryQuery())
            await store.close()

            // The simulated runs keep their counts, not their times.
            let simulated = try #require(runs.first { $0.key == "ci-1-candidate-simulated-night1" })
            #expect(simulated.metadata.simulated && simulated.metadata.instructionSource == "simulated")
            let b = try #require(simulated.tests.first { $0.name == "b" })
            #expect(b.metrics.map(\.name).contains("instructions"))
            #expect(!b.metrics.contains { $0.name == "wall" })
            let tone = try #require(b.metrics.first { $0.name == "instructions:LensKit.Lens.makeToneCurve()" })
            #expect(abs((tone.summary.centralValue ?? 0) - 100e6) < 0.2e6)
            #expect(b.metrics.filter { $0.name.hasPrefix(RunRecord.instructionMetricPrefix) }.count == 5)

            for order in [nil, history.commits] {
                var options = TrendOptions()
                options.reference = HistoryFilter(.tag("build"), "reference")
                options.commitOrder = order
                let report = try TrendAnalysis.analyze(runs, source: test.text, options: options)
                // The native and the simulated run of a night are one position.
                #expect(report.series.allSatisfy { $0.slots.count == 30 }, "\(report.notes)")
                #expect(report.series.contains { $0.test == "b" && $0.metric == "instructions" })
                #expect(!report.series.contains { $0.metric.hasPrefix(RunRecord.instructionMetricPrefix) })
                #expect(!report.notes.contains { $0.contains("not measured at every commit") }, "\(report.notes)")
                let changes = report.changes.filter { $0.metric == "instructions" }
                #expect(changes.count == 1, "\(report.changes.map(\.series))")
                let change = try #require(changes.first)
                #expect(change.test == "b" && change.firstAfter.slot == 15 && change.lastBefore.slot == 14)
                #expect(change.cause == .code, "\(change.reason)")
                #expect(change.range == "\(history.commits[14])..\(history.commits[15])")
                #expect(abs(change.change.ratio - 887.9 / 870) < 0.002)
                #expect(
                    change.functionsThatStepped.map(\.summary) == [
                        "LensKit.Lens.makeToneCurve() +17.4 M", "swift_retain +500.0 k",
                    ])
                #expect(change.functionsThatStepped.last?.library == true)
                let adjustment = try #require(
                    report.series.first { $0.test == "b" && $0.metric == "instructions" }?.referenceAdjustments.first)
                #expect(!adjustment.used)
                let text = report.renderText()
                #expect(text.contains("functions that stepped: LensKit.Lens.makeToneCurve() +17.4 M"), "\(text)")
                #expect(text.contains("nightly/b/instructions: raw (the reference explains too little"), "\(text)")
            }
        }
    }

    /// The reference counted every third night and on the last, as the
    /// demo counts it: each other night takes its nearest count, and the
    /// note says so. Counts of the reference that stay put leave `b`'s step
    /// the code's; counts that step with it (a toolchain's change) make it
    /// the machine's.
    @Test(arguments: [false, true]) func aReferenceCountedEveryFewNightsStandsForEveryNight(
        referenceSteps: Bool
    ) async throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 34)
        var runs: [PerfRun] = []
        for night in 0..<30 {
            runs.append(history.run(night: night, build: "candidate", tests: ["a", "b", "c"], noise: &noise))
            runs.append(history.run(night: night, build: "reference", tests: ["a", "b", "c"], noise: &noise))
            runs.append(Self.simulatedRun(history, night: night, build: "candidate", step: true, noise: &noise))
            if night % 3 == 0 || night == 29 {
                runs.append(
                    Self.simulatedRun(history, night: night, build: "reference", step: referenceSteps, noise: &noise))
            }
        }
        var options = TrendOptions()
        options.reference = HistoryFilter(.tag("build"), "reference")
        options.metricPattern = "instructions$"
        let report = try TrendAnalysis.analyze(
            runs.map { HistoryRun(record: RunRecord(run: $0)) }, source: "files", options: options)
        #expect(
            report.notes.contains {
                $0.contains("the reference was not measured at every commit")
                    && $0.contains("b/instructions (11 of 30)")
            }, "\(report.notes)")
        let change = try #require(report.changes.first { $0.test == "b" && $0.metric == "instructions" })
        #expect(change.firstAfter.slot == 15)
        #expect(change.cause == (referenceSteps ? .machine : .code), "\(change.reason)")
    }

    /// A reference's values from those measured: each missing one from the
    /// nearest measured (the earlier of two as near); too few measured, none.
    @Test func aReferenceIsFilledFromItsNearestMeasurement() {
        #expect(TrendAnalysis.filledFromNearest([1, nil, nil, 4, nil, 6]) == [1, 1, 4, 4, 4, 6])
        #expect(TrendAnalysis.filledFromNearest([nil, 2, nil, 4, nil, 6]) == [2, 2, 2, 4, 4, 6])
        #expect(TrendAnalysis.filledFromNearest([1, nil, nil, nil, 5]) == nil)
        #expect(TrendAnalysis.filledFromNearest([1, 2]) == [1, 2])
    }

    @Test func instructionsAloneFindTheStep() async throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        let runs = Self.nights(history, seed: 32, native: false).map { HistoryRun(record: RunRecord(run: $0)) }
        var options = TrendOptions()
        options.reference = HistoryFilter(.tag("build"), "reference")
        let report = try TrendAnalysis.analyze(runs, source: "files", options: options)
        #expect(report.series.map(\.metric).allSatisfy { $0 == "instructions" })
        let change = try #require(report.changes.first)
        #expect(report.changes.count == 1 && change.test == "b" && change.firstAfter.slot == 15)
        #expect(change.cause == .code, "\(change.reason)")
    }

    @Test func flatInstructionsReportNothing() async throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 33)
        let runs = (0..<30).map { night in
            HistoryRun(
                record: RunRecord(
                    run: Self.simulatedRun(history, night: night, build: nil, step: false, noise: &noise)))
        }
        let report = try TrendAnalysis.analyze(runs, source: "files")
        #expect(report.series.count == 3)
        #expect(report.changes.isEmpty, "\(report.changes)")
        #expect(report.notes.allSatisfy { !$0.contains("possible change") }, "\(report.notes)")
    }
}
