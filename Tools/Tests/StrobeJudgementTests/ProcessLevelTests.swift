import Foundation
import StrobeProcessRunner
import StrobeResults
import StrobeSimulations
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement
@testable import StrobeStatistics

/// The rules of the process-level gate, each on a small fixed input.
@Suite struct ProcessLevelTests {
    /// Replicates whose iterations sit tightly around the given medians.
    static func replicates(_ medians: [Double], rounds: Bool = false, spread: Double = 0.001, seed: UInt64 = 1)
        -> [Replicate]
    {
        var generator = SeededGenerator(seed: seed)
        return medians.enumerated().map { index, median in
            Replicate(
                id: "p\(index)", round: rounds ? index : nil,
                samples: (0..<6).map { _ in median * exp(spread * generator.normal()) })
        }
    }

    @Test func theProcessIsTheReplicate() {
        // Five processes per side of one build: tight iterations, process
        // medians spread by ±6%. Pooled iterations look very different.
        let base = Self.replicates([100, 110, 95, 105, 100], seed: 1)
        let cand = Self.replicates([106, 99, 112, 104, 108], seed: 2)
        let pooled = RankTests.mannWhitney(base.flatMap(\.samples), cand.flatMap(\.samples))
        #expect(pooled.pValue < 0.05)
        let row = ComparisonEngine.compare([
            .init(name: "wall", unit: "ns", better: .lower, baseline: base, candidate: cand)
        ])[0]
        #expect(row.test.method == .processes)
        #expect(row.test.baselineReplicates == 5)
        #expect(row.verdict == .inconclusive)
        #expect(row.adjustedPValue > 0.2)
        #expect((row.roundsNeeded ?? 0) > 1)
    }

    @Test func pairedRoundsCancelSharedDrift() {
        // The machine drifts by ±15% from round to round; the candidate is 5%
        // slower than the baseline of its own round.
        let drift = [1.0, 1.15, 0.9, 1.1, 0.85, 1.05, 0.95, 1.2]
        let noise = [0.002, -0.003, 0.001, 0.0, -0.002, 0.003, -0.001, 0.002]
        let base = Self.replicates(drift.map { 100 * $0 }, rounds: true, seed: 3)
        let cand = Self.replicates(zip(drift, noise).map { 105 * $0 * (1 + $1) }, rounds: true, seed: 4)
        let paired = ComparisonEngine.compare([
            .init(name: "wall", unit: "ns", better: .lower, baseline: base, candidate: cand)
        ])[0]
        #expect(paired.test.method == .pairedRounds)
        #expect(paired.verdict == .regression)
        #expect(abs((paired.shift?.ratio ?? 0) - 1.05) < 0.005)
        // The same processes without rounds: the drift is noise again.
        let unpaired = ComparisonEngine.compare([
            .init(
                name: "wall", unit: "ns", better: .lower,
                baseline: base.map { Replicate(id: $0.id, samples: $0.samples) },
                candidate: cand.map { Replicate(id: $0.id, samples: $0.samples) })
        ])[0]
        #expect(unpaired.test.method == .processes)
        #expect(unpaired.verdict == .inconclusive)
    }

    @Test func theMinimumSeesThroughInterference() {
        // Every process runs at 100 (baseline) or 104 (candidate) when left
        // alone; interference adds 20–120% to a third of the iterations.
        var generator = SeededGenerator(seed: 21)
        func process(_ id: String, _ base: Double, round: Int) -> Replicate {
            Replicate(
                id: id, round: round,
                samples: (0..<5).map { _ in
                    base * exp(0.002 * generator.normal())
                        * (generator.uniform() < 0.33 ? 1.2 + generator.uniform() : 1)
                })
        }
        let base = (0..<12).map { process("b\($0)", 100, round: $0) }
        let cand = (0..<12).map { process("c\($0)", 104, round: $0) }
        let median = ComparisonEngine.compare([
            .init(name: "wall", unit: "ns", better: .lower, baseline: base, candidate: cand)
        ])[0]
        let minimum = ComparisonEngine.compare([
            .init(
                name: "wall", unit: "ns", better: .lower, baseline: base, candidate: cand, summary: .minimum)
        ])[0]
        #expect(minimum.verdict == .regression)
        #expect(abs((minimum.shift?.ratio ?? 0) - 1.04) < 0.01)
        #expect(minimum.test.replicateSpread < median.test.replicateSpread / 3)
        #expect(minimum.summary == .minimum)
    }

    @Test func directionIsHonoured() {
        let base = Self.replicates([60, 61, 59, 60, 60.5], seed: 5)
        let cand = Self.replicates([50, 50.5, 49.5, 50.2, 49.8], seed: 6)
        let lower = ComparisonEngine.compare([
            .init(name: "fps", unit: "count", better: .lower, baseline: base, candidate: cand)
        ])[0]
        #expect(lower.verdict == .improvement)
        let higher = ComparisonEngine.compare([
            .init(name: "fps", unit: "count", better: .higher, baseline: base, candidate: cand)
        ])[0]
        #expect(higher.verdict == .regression)
    }

    @Test func aChangeFromZeroIsJudgedByItsAbsoluteSize() {
        let zeros = (0..<4).map { Replicate(id: "b\($0)", samples: [0, 0, 0]) }
        let fives = (0..<4).map { Replicate(id: "c\($0)", samples: [5, 5, 5]) }
        let flagged = ComparisonEngine.compare([
            .init(name: "faults.major", unit: "count", better: .lower, baseline: zeros, candidate: fives)
        ])[0]
        #expect(flagged.test.method == .exact)
        #expect(flagged.shift == nil || flagged.verdict == .regression)
        #expect(flagged.verdict == .regression)
        #expect(flagged.difference == 5)
        let tolerated = ComparisonEngine.compare([
            .init(
                name: "faults.major", unit: "count", better: .lower, baseline: zeros, candidate: fives,
                absoluteFloor: 10)
        ])[0]
        #expect(tolerated.verdict == .unchanged)
        // With spread: 0 on every baseline run, 3–7 on the candidate's.
        let noisy = (0..<6).map { Replicate(id: "c\($0)", samples: [3 + Double($0 % 5), 4 + Double($0 % 3)]) }
        let zeroBaseline = (0..<6).map { Replicate(id: "b\($0)", samples: [0, 0]) }
        let row = ComparisonEngine.compare([
            .init(name: "faults.major", unit: "count", better: .lower, baseline: zeroBaseline, candidate: noisy)
        ])[0]
        #expect(row.shift == nil)
        #expect(row.verdict == .regression)
    }

    @Test func deterministicCountsIgnoreTheRelativeFloor() {
        let base = (0..<3).map { Replicate(id: "b\($0)", samples: [1000, 1000]) }
        let cand = (0..<3).map { Replicate(id: "c\($0)", samples: [1015, 1015]) }
        let row = ComparisonEngine.compare([
            .init(name: "allocations", unit: "count", better: .lower, baseline: base, candidate: cand)
        ])[0]
        #expect(row.test.method == .exact)
        #expect(row.verdict == .regression)
        let same = ComparisonEngine.compare([
            .init(name: "allocations", unit: "count", better: .lower, baseline: base, candidate: base)
        ])[0]
        #expect(same.verdict == .unchanged)
    }

    @Test func aSingleProcessFallsBackToIterationsAndSaysSo() {
        var generator = SeededGenerator(seed: 9)
        let base = (0..<30).map { _ in 100 * exp(0.03 * generator.normal()) }
        let cand = (0..<30).map { _ in 115 * exp(0.03 * generator.normal()) }
        let row = ComparisonEngine.compare([
            .init(name: "wall", unit: "ns", better: .lower, baseline: base, candidate: cand)
        ])[0]
        #expect(row.test.method == .iterations)
        #expect(row.verdict == .regression)
        #expect(row.warnings.contains { $0.contains("single process") })
    }

    @Test func inconclusiveSaysWhatItSawAndWhatWouldDecideIt() {
        // ±7% noise between rounds against a 2% floor: far more rounds than
        // a budget gives, so the advice is a quieter machine.
        let base = Self.replicates([100, 108, 93, 104], rounds: true, seed: 10)
        let cand = Self.replicates([103, 96, 110, 99], rounds: true, seed: 11)
        let row = ComparisonEngine.compare([
            .init(name: "t/wall", unit: "ns", better: .lower, baseline: base, candidate: cand)
        ])[0]
        #expect(row.verdict == .inconclusive)
        #expect((row.roundsNeeded ?? 0) >= 10)
        #expect(row.advice == [.quieterMachine])
        let report = DiffReport(
            options: ComparisonOptions(), groupBy: nil, rows: [row], baselineSources: [], candidateSources: [],
            warnings: [],
            samples: [:])
        let text = report.renderText()
        #expect(!text.contains("more rounds"))
        #expect(text.contains("1 test inconclusive: t"))
        // Long lines are wrapped at 120 columns; read them whole.
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 120 }, "\(text)")
        let flat = text.replacingOccurrences(of: "\n    ", with: " ")
        #expect(flat.contains("t/wall: ") && flat.contains("reaches past the ±2.0% floor (noise ±"))
        #expect(flat.contains("4 rounds); would decide it: a quieter machine, or a wider floor"))
        // Noise that a few times the rounds would average away: a longer budget.
        let differences = [0.03, -0.01, 0.025, 0.0, 0.02, -0.005, 0.015, 0.01]
        let closeBase = Self.replicates(Array(repeating: 100, count: 8), rounds: true, seed: 13)
        let closeCand = Self.replicates(differences.map { 100 * exp($0) }, rounds: true, seed: 14)
        let close = ComparisonEngine.compare([
            .init(
                name: "t/wall", unit: "ns", better: .lower, baseline: closeBase, candidate: closeCand)
        ])[0]
        #expect(close.verdict == .inconclusive)
        #expect(close.advice == [.longerBudget])
        #expect(DiffReport.undecidedExplanation(close).contains("a longer --max-time (about "))
        // Processes whose own iterations are the noise: more iterations.
        let noisyBase = Self.replicates(Array(repeating: 100, count: 6), rounds: true, spread: 0.05, seed: 15)
        let noisyCand = Self.replicates(Array(repeating: 100, count: 6), rounds: true, spread: 0.05, seed: 16)
        let noisy = ComparisonEngine.compare([
            .init(
                name: "t/wall", unit: "ns", better: .lower, baseline: noisyBase, candidate: noisyCand)
        ])[0]
        #expect(noisy.verdict == .inconclusive)
        #expect(noisy.advice.first == .moreIterations)
        #expect((noisy.iterationNoiseShare ?? 0) > 0.5)
    }
}

@Suite struct PolicyTests {
    static let text = """
        alpha: 0.005
        relative-floor: 3%
        metrics:
          - match: "wall$"
            relative-floor: 5%
          - match: "fps"
            better: higher
          - match: "faults"
            absolute-floor: 2
            gate: false
          - match: "wall$"
            summary: minimum
        """

    @Test func rulesApplyInFileOrder() throws {
        let policy = try ComparisonPolicy.parse(Self.text, file: "policy.yml")
        #expect(policy.alpha == 0.005)
        #expect(policy.relativeFloor == 0.03)
        #expect(policy.settings(for: "apply lens/wall").relativeFloor == 0.05)
        #expect(policy.settings(for: "apply lens/wall").summary == .minimum)
        #expect(policy.settings(for: "apply lens/cpu").summary == .median)
        #expect(policy.settings(for: "game/fps").better == .higher)
        #expect(policy.settings(for: "apply lens/faults.major") == .init(absoluteFloor: 2, gates: false))
        #expect(policy.settings(for: "other") == .init())
        let options = policy.options(overriding: ComparisonOptions(), alpha: nil, minimumEffect: 0.01)
        #expect(options.alpha == 0.005 && options.minimumEffect == 0.01)
    }

    @Test func errorsNameTheFileAndLine() {
        let cases: [(String, String)] = [
            ("metrics:\n  - match: x\n    colour: red\n", "policy.yml: line 3: unknown key `colour`"),
            ("metrics:\n  - better: higher\n", "policy.yml: line 2: a rule without `match`"),
            ("metrics:\n  - match: \"(\"\n", "policy.yml: line 2: `match` \"(\" is not a valid regular expression"),
            ("relative-floor: lots\n", "policy.yml: line 1: `relative-floor` must be a percentage"),
            ("metrics:\n  - match: x\n    better: sideways\n", "policy.yml: line 3: `better` must be lower or higher"),
            ("alpha: [1\n", "policy.yml: not valid YAML"),
            ("metrics:\n  - match: x\n    summary: mode\n", "policy.yml: line 3: `summary` must be median or minimum"),
        ]
        for (text, prefix) in cases {
            do {
                _ = try ComparisonPolicy.parse(text, file: "policy.yml")
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.hasPrefix(prefix), "\(error.description)")
            }
        }
    }

    @Test func reportOnlyMetricsNeverFailTheGate() throws {
        let policy = try ComparisonPolicy.parse(Self.text, file: "policy.yml")
        var baseline = SampleSet()
        var candidate = SampleSet()
        for process in 0..<4 {
            baseline.series.append(
                .init(
                    metric: "t/faults.minor", unit: "count", better: .lower, samples: [10, 10], dimensions: [:],
                    source: "b",
                    run: "b\(process)"))
            candidate.series.append(
                .init(
                    metric: "t/faults.minor", unit: "count", better: .lower, samples: [20, 20], dimensions: [:],
                    source: "c",
                    run: "c\(process)"))
        }
        let report = try Judgement.compare(baseline: baseline, candidate: candidate, policy: policy)
        #expect(report.rows[0].verdict == .regression)
        #expect(report.rows[0].gates == false)
        #expect(report.exitStatus == 0)
        #expect(report.renderText().contains("(report only)"))
    }
}

@Suite struct ReplicateInputTests {
    @Test func csvRunAndRoundColumnsMakeReplicatesAndPairs() throws {
        var lines = ["metric,value,run,round"]
        for round in 0..<4 {
            for iteration in 0..<3 { lines.append("wall,\(100 + round * 10 + iteration),r\(round),\(round)") }
        }
        let series = try CSVSamples.parse(text: lines.joined(separator: "\n"), file: "base.csv")
        #expect(series.count == 4)
        #expect(series.allSatisfy { $0.samples.count == 3 })
        #expect(series.map(\.round) == [0, 1, 2, 3])
        #expect(Set(series.map(\.run)).count == 4)
        #expect(throws: DiffError.self) {
            try CSVSamples.parse(text: "metric,value,round\nwall,1,x\n", file: "bad.csv")
        }
        // Without a run column the file is one run.
        let single = try CSVSamples.parse(text: "metric,value\nwall,1\nwall,2\n", file: "one.csv")
        #expect(single.count == 1 && single[0].run == "one.csv")
    }

    @Test func resultsFilesKeepTheirRunAndRound() throws {
        var metadata = RunMetadata(suite: "s", runID: "host-1-2-ab", round: 3)
        metadata.samplesAreLaunches = false
        let run = PerfRun(
            metadata: metadata,
            tests: [PerfTestResult(name: "t", metrics: [PerfMetric(name: "wall", unit: "ns", samples: [1, 2, 3])])])
        let decoded = try ResultsFile.decode(ResultsFile.encode(run), path: "x")
        #expect(decoded.metadata.runID == "host-1-2-ab")
        #expect(decoded.metadata.round == 3)
        #expect(decoded.metadata.samplesAreLaunches == false)
        let csv = ResultsCSV.render(decoded)
        #expect(csv.hasPrefix("suite,test,metric,unit,better,run,round,iteration,value"))
        #expect(csv.contains(",host-1-2-ab,3,0,1.0"))
        var launches = run
        launches.metadata.samplesAreLaunches = true
        launches.metadata.round = nil
        let path = NSTemporaryDirectory() + "strobe-launches-\(getpid()).strobe-results"
        try ResultsFile.write(launches, to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let set = try SampleSet.load([path])
        #expect(set.series.count == 3)
        #expect(Set(set.series.map(\.run)).count == 3)
    }
}

@Suite struct SequentialDesignTests {
    @Test func looksSpendAtMostAlpha() {
        // Geometric looks, at least every fifth of the plan: 4, 6, 9, 13,
        // 19, 25 and the planned 30 rounds, an equal share of alpha each.
        var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 30)
        #expect(design.plannedLooks == [4, 6, 9, 13, 19, 25, 30])
        #expect(
            SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 100).plannedLooks == [
                4, 6, 9, 13, 19, 28, 42, 62, 82, 100,
            ])
        // From a first look after 2 rounds (`strobe compare`'s default),
        // each of rounds 2, 3 and 4 is looked at.
        #expect(
            SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 30, firstLook: 2).plannedLooks == [
                2, 3, 4, 6, 9, 13, 19, 25, 30,
            ])
        var spent = 0.0
        var looks: [SequentialDesign.Look] = []
        for rounds in 1...30 where design.looks(afterRound: rounds) {
            let look = design.look(number: looks.count + 1, rounds: rounds, final: false)
            spent += look.alpha
            looks.append(look)
        }
        #expect(looks.map(\.rounds) == [4, 6, 9, 13, 19, 25, 30])
        #expect(abs(spent - 0.01) < 1e-12)
        #expect(looks.last?.isFinal == true && looks.dropLast().allSatisfy { !$0.isFinal })
        #expect(looks.allSatisfy { abs($0.alpha - 0.01 / 7) < 1e-12 })
        #expect(looks[0].confidence < 1 && looks[0].confidence > 0.95)
        // A budget that runs out early spends the rest at its last look.
        var short = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 30)
        let first = short.look(number: 1, rounds: 4, final: false)
        let last = short.look(number: 2, rounds: 5, final: true)
        #expect(abs(first.alpha + last.alpha - 0.01) < 1e-12 && last.isFinal)
        // The previous schedule, kept for comparison: a look every fifth of
        // the plan, O'Brien–Fleming-type spending (almost nothing early).
        var previous = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 40, schedule: .fractionOfPlan)
        #expect(previous.plannedLooks == [4, 12, 20, 28, 36, 40])
        let early = previous.look(number: 1, rounds: 4, final: false)
        #expect(early.alpha < 1e-6)
        #expect(abs(SequentialDesign.spending(0.01, at: 0.5) - 0.000269) < 0.00001)
        // A plan raised between looks (rounds grew shorter) spends a share
        // of what is left at every look, and the looks still add up to
        // alpha.
        var grown = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 10, firstLook: 2)
        var levels = [grown.look(number: 1, rounds: 2, final: false), grown.look(number: 2, rounds: 3, final: false)]
        grown.plannedRounds = 60
        levels.append(grown.look(number: 3, rounds: 4, final: false))
        levels.append(grown.look(number: 4, rounds: 6, final: true))
        #expect(levels.allSatisfy { $0.alpha > 0 && $0.confidence <= 1 }, "\(levels)")
        #expect(abs(levels.reduce(0) { $0 + $1.alpha } - 0.01) < 1e-12)
    }

    /// At an early look the intervals' own confidence is far above the
    /// look's level; a change found there is shown with the interval of the
    /// test that found it, which then leaves out "no change".
    @Test func aChangeFoundAtAnEarlyLookIsShownWithAnIntervalThatExcludesNoChange() throws {
        var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 30)
        let look = design.look(number: 1, rounds: 4, final: false)
        #expect(look.confidence > 0.9999)
        let input = ComparisonEngine.Input(
            name: "apply lens", unit: "ns", better: .lower,
            baseline: ProcessLevelTests.replicates([100, 104, 97, 101], seed: 3),
            candidate: ProcessLevelTests.replicates([128, 135, 122, 131], seed: 4))
        let row = try #require(ComparisonEngine.compare([input], look: look).first)
        #expect(row.verdict == .regression)
        let shift = try #require(row.shift)
        #expect(shift.lower > 1, "the interval [\(shift.lower), \(shift.upper)] crosses no change")
        #expect(abs(shift.confidence - (1 - look.alpha)) < 1e-12)
        #expect(row.differenceLower > 0)
        // The same rows compared at once keep their 95% interval.
        let fixed = try #require(ComparisonEngine.compare([input]).first)
        #expect(fixed.shift?.confidence == 0.95)
    }

    /// Three tests' wall and CPU time, 2% process noise, every test 60%
    /// slower: the first look, after 4 of 30 planned rounds, decides.
    @Test func aLargeChangeIsDecidedAtTheFirstLook() throws {
        var generator = SeededGenerator(seed: 5)
        var baseline = SampleSet()
        var candidate = SampleSet()
        for round in 1...4 {
            for side in 0..<2 {
                let factor = exp(0.02 * generator.normal()) * (side == 1 ? 1.6 : 1)
                for test in ["decode", "encode", "load"] {
                    for metric in ["wall", "process.cpu"] {
                        let series = SampleSet.Series(
                            metric: "\(test)/\(metric)", unit: "ns", better: .lower,
                            samples: (0..<5).map { _ in 1e8 * factor * exp(0.01 * generator.normal()) },
                            dimensions: [:],
                            source: "s", run: "\(side)-\(round)", round: round)
                        if side == 0 { baseline.series.append(series) } else { candidate.series.append(series) }
                    }
                }
            }
        }
        var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 30)
        #expect(design.looks(afterRound: 4))
        let look = design.look(number: 1, rounds: 4, final: false)
        let report = try Judgement.compare(baseline: baseline, candidate: candidate, look: look)
        #expect(report.undecided.isEmpty, "\(report.renderText())")
        #expect(report.gatedRegressions.count == 6)
        #expect(report.headline.hasPrefix("3 tests slower: decode +6"))
    }

    /// Simulated comparisons as `strobe compare` runs them: a 20% change
    /// under 2% process noise is caught within a few rounds.
    @Test func aTwentyPercentChangeIsCaughtWithinAFewRounds() {
        var simulation = DetectorSimulation()
        simulation.metricsPerSuite = 6
        let design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 30)
        let outcome = simulation.runSequential(suites: 60, processSigma: 0.02, slowdown: 0.20, design: design, seed: 31)
        #expect(outcome.power == 1)
        #expect(outcome.medianDetectionRounds <= 6, "\(outcome.detectionRounds)")
    }

    /// Sequential A/A experiments with process noise, stopping at the first
    /// look where every metric is decided: the false-alarm rate stays at
    /// most alpha.
    @Test func stoppingEarlyKeepsTheFalseAlarmRate() throws {
        var generator = SeededGenerator(seed: 77)
        var alarms = 0
        let experiments = 300
        for _ in 0..<experiments {
            var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 20)
            var baseline = SampleSet()
            var candidate = SampleSet()
            var raised = false
            var looks = 0
            for round in 1...20 {
                for side in 0..<2 {
                    let factor = exp(0.08 * generator.normal())
                    for metric in 0..<5 {
                        let series = SampleSet.Series(
                            metric: "m\(metric)", unit: "ns", better: .lower,
                            samples: (0..<4).map { _ in 100 * factor * exp(0.03 * generator.normal()) },
                            dimensions: [:],
                            source: "s", run: "\(side)-\(round)", round: round)
                        if side == 0 { baseline.series.append(series) } else { candidate.series.append(series) }
                    }
                }
                guard design.looks(afterRound: round) else { continue }
                looks += 1
                let look = design.look(number: looks, rounds: round, final: round == 20)
                let report = try Judgement.compare(baseline: baseline, candidate: candidate, look: look)
                if !report.gatedRegressions.isEmpty { raised = true }
                if report.undecided.isEmpty || raised { break }
            }
            if raised { alarms += 1 }
        }
        #expect(alarms <= 6, "\(alarms) of \(experiments) A/A experiments raised a regression")
    }
}

/// The process-level bar: measured false-alarm figures through the same
/// code path as `strobe diff`.
@Suite struct ProcessLevelQualityTests {
    @Test func processNoiseDoesNotRaiseFalseAlarms() {
        for paired in [false, true] {
            var simulation = DetectorSimulation()
            simulation.replication = .processes(count: 5, iterations: 6, processSigma: 0.10, paired: paired)
            let outcome = simulation.run(suites: 300, noise: .logNormal(sigma: 0.05), slowdown: 0, seed: 301)
            #expect(
                outcome.suitesWithFalseAlarm <= 3, "paired \(paired): \(outcome.suitesWithFalseAlarm) of 300 suites")
        }
        // What pooling did: the same data judged as independent iterations.
        var pooled = DetectorSimulation()
        pooled.replication = .processes(count: 5, iterations: 6, processSigma: 0.10, paired: false)
        pooled.poolIterations = true
        #expect(
            pooled.run(suites: 100, noise: .logNormal(sigma: 0.05), slowdown: 0, seed: 302).suitesWithFalseAlarm >= 10)
    }
}
