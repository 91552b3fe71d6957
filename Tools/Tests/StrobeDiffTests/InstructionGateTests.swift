import Foundation
import StrobeResults
import Testing

@testable import StrobeCompare
@testable import StrobeDiff
@testable import StrobeJudgement
@testable import StrobeStatistics

/// The `instructions` metric: gated by default, judged as a deterministic
/// count within its tolerance, named as the metric that decided a test, and
/// counted by simulated processes that carry no times.
@Suite struct InstructionGateTests {
    /// `rounds` processes per side of one test "apply lens": a noisy wall
    /// time alike on both sides and an instruction count of `base` and
    /// `cand` per iteration, each iteration off by up to `wobble`.
    static func sides(
        rounds: Int = 4, base: Double = 4.0e6, cand: Double, wobble: Double = 0.0003, seed: UInt64 = 5
    ) -> (SampleSet, SampleSet) {
        var generator = SeededGenerator(seed: seed)
        var sets = [SampleSet(), SampleSet()]
        for (index, side) in ["baseline", "candidate"].enumerated() {
            for round in 1...rounds {
                let run = "\(side)-\(round)"
                func series(_ metric: String, _ unit: String, _ samples: [Double]) -> SampleSet.Series {
                    .init(
                        metric: "apply lens/\(metric)", unit: unit, better: .lower, samples: samples, dimensions: [:],
                        source: "\(run).strobe-results", run: run, round: round)
                }
                let count = index == 0 ? base : cand
                sets[index].series += [
                    series("wall", "ns", (0..<5).map { _ in 2e6 * exp(0.05 * generator.normal()) }),
                    series(
                        "instructions", "count",
                        (0..<5).map { iteration in count * (1 + wobble * Double((iteration + round) % 3 - 1)) }),
                ]
            }
        }
        return (sets[0], sets[1])
    }

    static func firstLook() -> SequentialDesign.Look {
        var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 40, firstLook: 4)
        return design.look(number: 1, rounds: 4, final: false)
    }

    @Test func instructionsGateWithTheirOwnFloorAndTolerance() {
        #expect(MetricDefaults.gates("apply lens/instructions"))
        let settings = ComparisonPolicy().settings(for: "apply lens/instructions", unit: "count")
        #expect(settings.relativeFloor == MetricDefaults.instructionFloor)
        #expect(settings.countTolerance == MetricDefaults.instructionTolerance)
        #expect(ComparisonPolicy().settings(for: "apply lens/wall", unit: "ns").countTolerance == nil)
    }

    @Test func aTestDecidedByInstructionsWithWallInconclusiveIsARegression() throws {
        let (baseline, candidate) = Self.sides(cand: 4.08e6)
        let report = try Judgement.compare(baseline: baseline, candidate: candidate, look: Self.firstLook())
        let instructions = try #require(report.rows.first { $0.name == "apply lens/instructions" })
        #expect(instructions.verdict == .regression && instructions.gates)
        #expect(DiffReport.change(instructions) == "+2.0% instructions per iteration (4.00 M → 4.08 M)")
        let wall = try #require(report.rows.first { $0.name == "apply lens/wall" })
        #expect(wall.verdict == .inconclusive)
        let verdict = try #require(report.testVerdicts.first)
        #expect(verdict.outcome == .slower)
        #expect(verdict.metric == "apply lens/instructions")
        let decision = "regression (instructions +2.0% per iteration (4.00 M → 4.08 M); wall inconclusive)"
        #expect(verdict.decision == decision)
        #expect(report.renderText().contains("apply lens: " + decision), "\(report.renderText())")
        #expect(report.renderMarkdown().contains("- **slower**: apply lens: " + decision))
        #expect(report.renderHTML().contains("apply lens: regression (instructions +2.0% per iteration"))
        #expect(report.renderJSON().contains("\"decision\" : \"" + decision))
        #expect(report.exitStatus == 1)
        // strobe compare tells the decided instructions at the look.
        var counts = DecidedCounts()
        let lines = counts.newLines(in: report, at: "at look 1")
        #expect(
            lines == [
                "apply lens changed at look 1: instructions +2.0% instructions per iteration (4.00 M → 4.08 M), "
                    + "regression"
            ])
        #expect(counts.newLines(in: report, at: "at look 1").isEmpty)
    }

    @Test func fewerInstructionsAreAnImprovementAndASmallMoveIsUnchanged() throws {
        for (count, expected) in [(3.9e6, Verdict.improvement), (4.01e6, .unchanged)] {
            let (baseline, candidate) = Self.sides(cand: count)
            let report = try Judgement.compare(baseline: baseline, candidate: candidate, look: Self.firstLook())
            let row = try #require(report.rows.first { $0.name == "apply lens/instructions" })
            #expect(row.verdict == expected)
            #expect(row.test.method == .exact)
            // strobe compare tells the instructions' verdict either way.
            var counts = DecidedCounts()
            let told = counts.newLines(in: report, at: "before round 1")
            let expectedLine =
                expected == .unchanged
                ? "apply lens unchanged before round 1: instructions +0.2% instructions per iteration (4.00 M → 4.01 M)"
                : "apply lens changed before round 1: instructions −2.5% instructions per iteration (4.00 M → 3.90 M), "
                    + "improvement"
            #expect(told == [expectedLine])
        }
    }

    @Test func aPolicyFloorForInstructionsOverridesTheDefault() throws {
        let (baseline, candidate) = Self.sides(cand: 4.08e6)
        let policy = try ComparisonPolicy.parse(
            "metrics:\n  - match: instructions$\n    relative-floor: 3%\n", file: "policy.yml")
        let report = try Judgement.compare(
            baseline: baseline, candidate: candidate, policy: policy, look: Self.firstLook())
        let row = try #require(report.rows.first { $0.name == "apply lens/instructions" })
        #expect(row.verdict == .unchanged)
    }

    @Test func aCountThatSpreadsPastTheToleranceIsWarnedAbout() throws {
        let (baseline, candidate) = Self.sides(cand: 4.08e6, wobble: 0.01)
        let report = try Judgement.compare(baseline: baseline, candidate: candidate, look: Self.firstLook())
        let row = try #require(report.rows.first { $0.name == "apply lens/instructions" })
        #expect(row.test.method == .pairedRounds)
        #expect(report.warnings.contains { $0.contains("not deterministic") && $0.contains("instructions") })
    }

    /// A results file of one test with times, exact counts and
    /// instructions; `simulated` marks it as a callgrind process.
    static func run(_ id: String, round: Int, simulated: Bool, instructions: Double) -> PerfRun {
        var metadata = RunMetadata(suite: "s", runID: id, round: round)
        metadata.simulated = simulated
        metadata.instructionSource = simulated ? "simulated" : "hardware"
        let wall = simulated ? 9e7 : 2e6
        let test = PerfTestResult(
            name: "t",
            metrics: [
                PerfMetric(name: "wall", unit: "ns", samples: [wall, wall]),
                PerfMetric(name: "process.cpu.user", unit: "ns", samples: [wall, wall]),
                PerfMetric(name: "process.cpu.system", unit: "ns", samples: [0, 0]),
                PerfMetric(name: "process.context_switches.voluntary", unit: "count", samples: [3, 4]),
                PerfMetric(name: "interval:decode:sum", unit: "ns", samples: [wall / 2, wall / 2]),
                PerfMetric(name: "allocations", unit: "count", samples: [12, 12]),
                PerfMetric(name: "instructions", unit: "count", samples: [instructions, instructions]),
            ])
        return PerfRun(metadata: metadata, tests: [test])
    }

    @Test func simulatedRunsAreCountOnlyReplicates() {
        var set = SampleSet()
        set.add(Self.run("sim", round: 1, simulated: true, instructions: 4e6), source: "sim.strobe-results")
        #expect(Set(set.series.map(\.metric)) == ["t/allocations", "t/instructions"])
        #expect(set.series.allSatisfy { $0.simulated })
        set.add(Self.run("native", round: 1, simulated: false, instructions: 4.1e6), source: "native.strobe-results")
        let wall = set.series.filter { $0.metric == "t/wall" }
        #expect(wall.map(\.run) == ["native"])
    }

    @Test func simulatedInstructionsAreComparedWhereASideHasBoth() throws {
        var sides = [SampleSet(), SampleSet()]
        for (index, counted) in [4.0e6, 4.1e6].enumerated() {
            for round in 1...3 {
                // The CPU counts a few more than the simulation on both sides.
                sides[index].add(
                    Self.run("n\(index)\(round)", round: round, simulated: false, instructions: counted * 1.01),
                    source: "n\(index)\(round)")
                sides[index].add(
                    Self.run("s\(index)\(round)", round: round, simulated: true, instructions: counted),
                    source: "s\(index)\(round)")
            }
        }
        let report = try Judgement.compare(baseline: sides[0], candidate: sides[1], look: Self.firstLook())
        let row = try #require(report.rows.first { $0.name == "t/instructions" })
        #expect(row.baseline.median == 4.0e6 && row.candidate.median == 4.1e6)
        #expect(row.isWithinCountTolerance && row.verdict == .regression)
        let wall = try #require(report.rows.first { $0.name == "t/wall" })
        #expect(wall.baseline.median == 2e6)
    }
}
