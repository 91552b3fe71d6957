import Foundation
import StrobeResults
import StrobeStatistics
import Testing

@testable import StrobeCompare

/// `strobe compare` with simulated processes: the instructions they count
/// after round 1 are decided and told at once, before the first look, while
/// the wall times the native processes measure stay open.
@Suite struct InstructionCompareTests {
    /// Each round one native process a side (a noisy wall time alike on
    /// both sides); round 1 also a simulated one, as ``ProcessRounds`` runs
    /// it (a wall time 50 times longer, to be ignored, and the
    /// instructions, 2% more in the candidate), in counting seconds. A class, so that the comparison's clock reads the
    /// seconds its rounds took.
    final class SimulatedRounds: RoundRunner {
        let root: String
        var generator = SeededGenerator(seed: 11)
        var seconds = 0.0
        var countingSeconds = 0.0
        var runsSelectedTests: Bool { true }
        var iterationsPerProcess: Int? = 5

        init(root: String) { self.root = root }

        func resultsDirectory(of side: ComparisonSide) -> String { "\(root)/\(side.rawValue)" }

        func runRound(_ round: Int, order: [ComparisonSide], tests: [String]?) throws(ComparisonFailure) {
            for side in order {
                var processes = [(simulated: false, id: "\(side.rawValue)-\(round)")]
                if round == 1 { processes.append((true, "\(side.rawValue)-sim-\(round)")) }
                for process in processes {
                    var metadata = RunMetadata(suite: "s", runID: process.id, round: round)
                    metadata.simulated = process.simulated
                    var metrics = [
                        PerfMetric(
                            name: "wall", unit: "ns",
                            samples: (0..<5).map { _ in
                                (process.simulated ? 5e7 : 1e6) * exp(0.05 * generator.normal())
                            })
                    ]
                    if process.simulated {
                        let count = side == .candidate ? 4.08e6 : 4.0e6
                        metrics.append(
                            PerfMetric(name: "instructions", unit: "count", samples: Array(repeating: count, count: 5)))
                    }
                    let run = PerfRun(metadata: metadata, tests: [PerfTestResult(name: "decode", metrics: metrics)])
                    try? FileManager.default.createDirectory(
                        atPath: resultsDirectory(of: side), withIntermediateDirectories: true)
                    do throws(ResultsFileError) {
                        try ResultsFile.write(
                            run, to: "\(resultsDirectory(of: side))/\(process.id).\(ResultsFile.fileExtension)")
                    } catch {
                        throw ComparisonFailure(error.description)
                    }
                    seconds += 1
                    if process.simulated { countingSeconds += 1 }
                }
            }
        }
    }

    @Test func instructionsAreToldAfterRoundOneWhileWallStaysOpen() throws {
        let root = NSTemporaryDirectory() + "strobe-instructions-compare-\(getpid())"
        try? FileManager.default.removeItem(atPath: root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let runner = SimulatedRounds(root: root)
        var settings = InterleavedComparison<SimulatedRounds>.Settings(budget: 40, seed: 3)
        settings.adaptsIterations = false
        var comparison = InterleavedComparison(settings: settings, runner: runner, clock: { runner.seconds })
        var notes: [String] = []
        var looks = 0
        let outcome = try comparison.run { event in
            if case .look = event { looks += 1 }
            if case .note(let line) = event, line.contains("changed at") { notes.append(line) }
        }
        #expect(
            notes == [
                "decode changed at round 1: instructions +2.0% instructions per iteration (4.00 M → 4.08 M), "
                    + "regression"
            ])
        let instructions = try #require(outcome.report.rows.first { $0.name == "decode/instructions" })
        #expect(instructions.verdict == .regression)
        // The simulated processes' wall times never joined the native ones.
        let wall = try #require(outcome.report.rows.first { $0.name == "decode/wall" })
        #expect(wall.baseline.median < 2e6 && wall.candidate.median < 2e6)
        let verdict = try #require(outcome.report.tests.first)
        #expect(verdict.outcome == .slower && verdict.decision.hasPrefix("regression (instructions +2.0%"))
        #expect(outcome.report.exitStatus == 1)
    }
}
