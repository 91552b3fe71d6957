import Foundation
import StrobeCompare
import StrobeResults
import StrobeStatistics

/// Writes each process's results: per test, `iterationsPerProcess`
/// iterations of `wall` around 100 ms (times the candidate's ratio for
/// that test), with `between` noise between processes and `within`
/// between iterations; a process takes `startSeconds` and then
/// `iterationSeconds` per iteration (warm-up included) on the clock.
package final class SyntheticRounds: RoundRunner {
    /// Where the sides' results go.
    package let root: String
    /// Per test, the candidate's level over the baseline's.
    package let ratios: [String: Double]
    /// The spread of processes around their side's level (log scale).
    package var between = 0.02
    /// The spread of iterations around their process's level.
    package var within = 0.005
    /// A process's start, in seconds on ``seconds``.
    package var startSeconds = 0.5
    /// An iteration's seconds (warm-up included).
    package var iterationSeconds = 0.1
    package var iterationsPerProcess: Int? = 5
    /// Warm-up iterations each process runs before it measures.
    package var warmupPerProcess: Int { 2 }
    /// The clock: seconds of the processes run so far.
    package var seconds = 0.0
    /// Each round's iterations per process.
    package var iterationsRun: [Int] = []
    /// Each round's tests asked for (nil: all).
    package var testsAsked: [[String]?] = []
    /// Each round's order of the sides.
    package var orders: [[ComparisonSide]] = []
    private var generator: SeededGenerator

    /// A runner writing under `root`, its noise drawn from `seed`.
    package init(root: String, ratios: [String: Double], seed: UInt64 = 5) throws {
        generator = SeededGenerator(seed: seed)
        self.root = root
        self.ratios = ratios
        for side in ComparisonSide.allCases {
            try FileManager.default.createDirectory(
                atPath: resultsDirectory(of: side), withIntermediateDirectories: true)
        }
    }

    package func resultsDirectory(of side: ComparisonSide) -> String { "\(root)/\(side.rawValue)" }

    package var runsSelectedTests: Bool { true }

    package func runRound(_ round: Int, order: [ComparisonSide], tests: [String]?) throws(ComparisonFailure) {
        testsAsked.append(tests)
        orders.append(order)
        let count = iterationsPerProcess ?? 1
        iterationsRun.append(count)
        for side in order {
            var run = PerfRun(
                metadata: RunMetadata(suite: "synthetic", runID: "\(side.rawValue)-\(round)", round: round))
            for (test, ratio) in ratios.sorted(by: { $0.key < $1.key }) where tests?.contains(test) ?? true {
                let level = 100e6 * (side == .candidate ? ratio : 1) * exp(between * generator.normal())
                let samples = (0..<count).map { _ in level * exp(within * generator.normal()) }
                run.tests.append(
                    PerfTestResult(name: test, metrics: [PerfMetric(name: "wall", unit: "ns", samples: samples)]))
            }
            do throws(ResultsFileError) {
                try ResultsFile.write(
                    run,
                    to: "\(resultsDirectory(of: side))/round-\(round).\(ResultsFile.fileExtension)")
            } catch {
                throw ComparisonFailure(error.description)
            }
            seconds += startSeconds + Double(count + warmupPerProcess) * iterationSeconds
        }
    }
}
