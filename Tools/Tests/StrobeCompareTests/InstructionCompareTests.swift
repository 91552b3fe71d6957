import Foundation
import StrobeJudgement
import StrobeResults
import StrobeStatistics
import Testing

@testable import StrobeCompare

/// `strobe compare` with simulated processes: the instructions they count
/// before round 1 are decided and told at once, before the rounds, while
/// the wall times the native processes measure stay open.
@Suite struct InstructionCompareTests {
    /// Before round 1 one simulated process a side, as ``ProcessRounds``
    /// runs them (a wall time 50 times longer, to be ignored, and the
    /// instructions, 2% more in the candidate), in counting seconds; then
    /// each round one native process a side (a noisy wall time alike on
    /// both sides). A class, so that the comparison's clock reads the
    /// seconds its processes took.
    ///
    /// With `busy`, the native processes also write the CPU time of their
    /// threads, that share of each iteration's wall time (1: CPU-bound);
    /// `instructions` is the candidate's count over the baseline's.
    final class SimulatedRounds: RoundRunner {
        let root: String
        var generator = SeededGenerator(seed: 11)
        var seconds = 0.0
        var countingSeconds = 0.0
        var runsSelectedTests: Bool { true }
        var iterationsPerProcess: Int? = 5
        let busy: Double?
        let instructions: Double
        /// Allocations per iteration of each side, the same in every
        /// iteration of a process: in its counting process, and in every
        /// native process; nil writes none.
        let allocations: [ComparisonSide: (counting: Double, native: Double)]?

        init(
            root: String, busy: Double? = nil, instructions: Double = 1.02,
            allocations: [ComparisonSide: (counting: Double, native: Double)]? = nil
        ) {
            self.root = root
            self.busy = busy
            self.instructions = instructions
            self.allocations = allocations
        }

        func resultsDirectory(of side: ComparisonSide) -> String { "\(root)/\(side.rawValue)" }

        func countBeforeRounds(tests: [String]?) throws(ComparisonFailure) -> Bool {
            for side in ComparisonSide.allCases {
                try write(side, id: "\(side.rawValue)-sim", round: 1, simulated: true)
            }
            return true
        }

        func runRound(_ round: Int, order: [ComparisonSide], tests: [String]?) throws(ComparisonFailure) {
            for side in order { try write(side, id: "\(side.rawValue)-\(round)", round: round, simulated: false) }
        }

        private func write(_ side: ComparisonSide, id: String, round: Int, simulated: Bool) throws(ComparisonFailure) {
            var metadata = RunMetadata(suite: "s", runID: id, round: round)
            metadata.simulated = simulated
            let wall = (0..<5).map { _ in (simulated ? 5e7 : 1e6) * exp(0.05 * generator.normal()) }
            var metrics = [PerfMetric(name: "wall", unit: "ns", samples: wall)]
            if let busy, !simulated {
                metrics.append(PerfMetric(name: "process.cpu.user", unit: "ns", samples: wall.map { $0 * busy }))
                metrics.append(PerfMetric(name: "process.cpu.system", unit: "ns", samples: wall.map { _ in 0 }))
            }
            if simulated {
                let count = side == .candidate ? 4e6 * instructions : 4.0e6
                metrics.append(
                    PerfMetric(name: "instructions", unit: "count", samples: Array(repeating: count, count: 5)))
            }
            if let counts = allocations?[side] {
                let count = simulated ? counts.counting : counts.native
                metrics.append(
                    PerfMetric(name: "allocations", unit: "count", samples: Array(repeating: count, count: 5)))
            }
            let run = PerfRun(metadata: metadata, tests: [PerfTestResult(name: "decode", metrics: metrics)])
            try? FileManager.default.createDirectory(
                atPath: resultsDirectory(of: side), withIntermediateDirectories: true)
            do throws(ResultsFileError) {
                try ResultsFile.write(run, to: "\(resultsDirectory(of: side))/\(id).\(ResultsFile.fileExtension)")
            } catch {
                throw ComparisonFailure(error.description)
            }
            seconds += 1
            if simulated { countingSeconds += 1 }
        }
    }

    @Test func instructionsAreToldBeforeRoundOneWhileWallStaysOpen() throws {
        let root = NSTemporaryDirectory() + "strobe-instructions-compare-\(getpid())"
        try? FileManager.default.removeItem(atPath: root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let runner = SimulatedRounds(root: root)
        var settings = InterleavedComparison<SimulatedRounds>.Settings(budget: 40, seed: 3)
        settings.adaptsIterations = false
        var comparison = InterleavedComparison(settings: settings, runner: runner, clock: { runner.seconds })
        var events: [String] = []
        let outcome = try comparison.run { event in
            switch event {
            case .note(let line) where line.contains("changed"): events.append(line)
            case .round(let round, _): events.append("round \(round)")
            default: break
            }
        }
        // The count's verdict comes first, before any round of times.
        #expect(
            events.first
                == "decode changed before round 1: instructions +2.0% instructions per iteration (4.00 M → 4.08 M), "
                + "regression")
        #expect(events.dropFirst().allSatisfy { $0.hasPrefix("round ") })
        let instructions = try #require(outcome.report.rows.first { $0.name == "decode/instructions" })
        #expect(instructions.verdict == .regression)
        // The simulated processes' wall times never joined the native ones.
        let wall = try #require(outcome.report.rows.first { $0.name == "decode/wall" })
        #expect(wall.baseline.median < 2e6 && wall.candidate.median < 2e6)
        let verdict = try #require(outcome.report.tests.first)
        #expect(verdict.outcome == .slower && verdict.decision.hasPrefix("regression (instructions +2.0%"))
        #expect(outcome.report.exitStatus == 1)
    }

    /// A count the same in every iteration of each side's one counting
    /// process is not decided from those processes alone: a threaded test
    /// whose allocations were 3 in one process and 4 in the next (the same
    /// build) was called a regression before round 1. It is judged once
    /// native processes on both sides have counted it too.
    @Test func anExactCountOfOneProcessASideWaitsForTheRounds() throws {
        let root = NSTemporaryDirectory() + "strobe-exact-count-processes-\(getpid())"
        try? FileManager.default.removeItem(atPath: root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (name, native) in [("same build", 3.0), ("one more", 4.0)] {
            // Both: 3 in the baseline's counting process, 4 in the
            // candidate's; every native baseline process counts 3, every
            // native candidate process `native`.
            let runner = SimulatedRounds(
                root: "\(root)/\(name)", busy: 0.97, instructions: 1.0,
                allocations: [.baseline: (counting: 3, native: 3), .candidate: (counting: 4, native: native)])
            var settings = InterleavedComparison<SimulatedRounds>.Settings(budget: 40, seed: 3)
            settings.adaptsIterations = false
            var comparison = InterleavedComparison(settings: settings, runner: runner, clock: { runner.seconds })
            var toldBeforeRounds: [String] = []
            var roundsBegan = false
            let outcome = try comparison.run { event in
                switch event {
                case .round, .look: roundsBegan = true
                case .note(let line) where !roundsBegan && line.contains("allocations"): toldBeforeRounds.append(line)
                default: break
                }
            }
            #expect(toldBeforeRounds.isEmpty, "\(name): \(toldBeforeRounds)")
            let row = try #require(outcome.report.rows.first { $0.name == "decode/allocations" })
            if name == "same build" {
                // 3 and 4 in the counting processes, 3 in every native one:
                // a count that varies, judged on the processes' means.
                #expect(!row.isConstantCount, "\(name)")
                #expect(row.verdict != .regression, "\(name): \(row.verdict)")
            } else {
                // 3 in every baseline process, 4 in every candidate one.
                #expect(row.isConstantCount && row.verdict == .regression, "\(name): \(row.verdict)")
            }
        }
    }

    /// Runs a comparison of `runner` with a 40-round budget.
    static func compare(_ runner: SimulatedRounds, decidesTimes: Bool = false) throws -> (
        outcome: InterleavedComparison<SimulatedRounds>.Outcome, rounds: Int
    ) {
        var settings = InterleavedComparison<SimulatedRounds>.Settings(budget: 40, seed: 3)
        settings.adaptsIterations = false
        settings.decidesTimes = decidesTimes
        var comparison = InterleavedComparison(settings: settings, runner: runner, clock: { runner.seconds })
        let outcome = try comparison.run()
        return (outcome, outcome.rounds)
    }

    /// A CPU-bound test whose counts are decided ends after round 1, the
    /// first round that tells whether it waits, unchanged or changed; one
    /// that waits, or under --decide-times, is measured on.
    @Test func theCountsEndTheComparisonOfACPUBoundTest() throws {
        let root = NSTemporaryDirectory() + "strobe-counted-work-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (name, busy, ratio, decidesTimes, ends) in [
            ("same", 0.97, 1.0, false, true), ("more", 0.97, 1.02, false, true), ("waits", 0.5, 1.0, false, false),
            ("all", 0.97, 1.0, true, false),
        ] {
            let (outcome, rounds) = try Self.compare(
                SimulatedRounds(root: "\(root)/\(name)", busy: busy, instructions: ratio), decidesTimes: decidesTimes)
            #expect(ends ? rounds == 1 : rounds >= 2, "\(name): \(rounds) rounds")
            if ends {
                // Times kept as measured in one process a side carry no
                // caveat on judging one process: they were not judged.
                let settled = outcome.report.rows.filter { $0.settledByCounts != nil }
                #expect(!settled.isEmpty, "\(name)")
                #expect(
                    settled.allSatisfy { !$0.warnings.contains(MetricComparison.singleProcessWarning) }, "\(name)")
                // The report's line names the reported metrics that were
                // judged on one process a side, and no settled one.
                #expect(
                    outcome.report.warnings.contains(
                        InterleavedComparison<SimulatedRounds>.reportedAfterRoundOne + ": decode/process.cpu.user"),
                    "\(name): \(outcome.report.warnings)")
            }
            let verdict = try #require(outcome.report.tests.first)
            if name == "same" {
                #expect(verdict.outcome == .unchanged && verdict.decision.hasPrefix("work unchanged ("))
            }
            if name == "more" { #expect(verdict.outcome == .slower && verdict.decision.contains("time as measured")) }
        }
    }
}
