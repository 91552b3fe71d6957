import Foundation
import StrobeProcessRunner
import StrobeResults
import StrobeStatistics
import Testing

@testable import StrobeCompare

/// `strobe compare`'s experiment in-process: a runner that writes results
/// files of its own instead of starting processes, and a clock that moves a
/// second per process.
@Suite struct InterleavedComparisonTests {
    /// Writes each process's results: per test, 5 iterations of `wall`
    /// around 100 ms (times the candidate's ratio for that test), with 2%
    /// noise between processes.
    final class SyntheticRounds: RoundRunner {
        let root: String
        let ratios: [String: Double]
        var seconds = 0.0
        var testsAsked: [[String]?] = []
        var orders: [[ComparisonSide]] = []
        private var generator = SeededGenerator(seed: 5)

        init(root: String, ratios: [String: Double]) throws {
            self.root = root
            self.ratios = ratios
            for side in ComparisonSide.allCases {
                try FileManager.default.createDirectory(
                    atPath: resultsDirectory(of: side), withIntermediateDirectories: true)
            }
        }

        func resultsDirectory(of side: ComparisonSide) -> String { "\(root)/\(side.rawValue)" }

        var runsSelectedTests: Bool { true }

        func runRound(_ round: Int, order: [ComparisonSide], tests: [String]?) throws(ComparisonFailure) {
            testsAsked.append(tests)
            orders.append(order)
            for side in order {
                var run = PerfRun(
                    metadata: RunMetadata(suite: "synthetic", runID: "\(side.rawValue)-\(round)", round: round))
                for (test, ratio) in ratios.sorted(by: { $0.key < $1.key }) where tests?.contains(test) ?? true {
                    let level = 100e6 * (side == .candidate ? ratio : 1) * exp(0.02 * generator.normal())
                    let samples = (0..<5).map { _ in level * exp(0.005 * generator.normal()) }
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
                seconds += 1
            }
        }
    }

    static func scratch(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "strobe-interleaved-\(name)-\(getpid())"
        try? FileManager.default.removeItem(atPath: path)
        return path
    }

    @Test func aLargeChangeIsDecidedAtTheFirstLookAndDecidedTestsStopRunning() throws {
        let root = Self.scratch("decided")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let runner = try SyntheticRounds(root: root, ratios: ["decode": 1.6, "encode": 1.0])
        var comparison = InterleavedComparison(
            settings: .init(budget: 60, seed: 1), runner: runner, clock: { runner.seconds })
        var events: [String] = []
        let outcome = try comparison.run { event in
            switch event {
            case .round(let round, _): events.append("round \(round)")
            case .look(let look, let decided, let gated, _): events.append("look \(look.number): \(decided)/\(gated)")
            case .note(let line): events.append(line)
            }
        }
        // decode +60% is decided at the first look, after 4 rounds.
        #expect(events.prefix(4) == ["round 1", "round 2", "round 3", "look 1: 1/2"])
        #expect(outcome.report.tests.first { $0.test == "decode" }?.outcome == .slower)
        #expect(outcome.report.exitStatus == 1)
        // From then on only the open test runs.
        #expect(runner.testsAsked.prefix(4).allSatisfy { $0 == nil })
        if outcome.rounds > 4 {
            #expect(events.contains("measuring only encode from round 5"))
            #expect(runner.testsAsked[4] == ["encode"])
        }
        // The clock is the runner's: two processes a round, a second each.
        #expect(outcome.elapsed == Double(2 * outcome.rounds))
        // The coin orders the sides both ways.
        #expect(Set(runner.orders.map { $0.first! }).count == 2 || outcome.rounds < 4)
    }

    @Test func theBudgetEndsAComparisonThatCannotDecide() throws {
        let root = Self.scratch("budget")
        defer { try? FileManager.default.removeItem(atPath: root) }
        // +1% against 2% noise between processes: not decidable in 12 rounds.
        let runner = try SyntheticRounds(root: root, ratios: ["decode": 1.01])
        var settings = InterleavedComparison<SyntheticRounds>.Settings(budget: 24, seed: 2)
        settings.decideAll = true
        var comparison = InterleavedComparison(settings: settings, runner: runner, clock: { runner.seconds })
        let outcome = try comparison.run()
        #expect(outcome.rounds == 12)
        #expect(outcome.report.look?.isFinal == true)
        #expect(outcome.report.exitStatus == 0)
    }

    @Test func unreadableResultsStopTheComparisonWithTheirFile() throws {
        let root = Self.scratch("unreadable")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let runner = try SyntheticRounds(root: root, ratios: ["decode": 1.0])
        #expect(
            FileManager.default.createFile(
                atPath: runner.resultsDirectory(of: .baseline) + "/junk.strobe-results", contents: Data("hello".utf8)))
        var comparison = InterleavedComparison(
            settings: .init(budget: 60, seed: 3), runner: runner, clock: { runner.seconds })
        let failure = #expect(throws: ComparisonFailure.self) { _ = try comparison.run() }
        #expect(failure?.message.contains("junk.strobe-results") == true)
    }

    @Test func suiteProcessesAreGivenTheOptionsOfTheirRound() throws {
        let root = Self.scratch("options")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let rounds = try ProcessRounds(
            directory: root, commands: [.baseline: "true", .candidate: "true"], mode: .suite, iterations: 3,
            warmup: 0, timeout: 10, profile: true)
        let options = rounds.suiteOptions(.candidate, round: 7, tests: ["apply lens", "a.b"])
        #expect(options.output == root + "/candidate")
        #expect(options.iterations == 3 && options.round == 7 && options.warmup == 0)
        #expect(options.filter == "^(apply lens|a\\.b)$")
        #expect(options.profileRate == PerfSuiteOptions.defaultProfileRate)
        #expect(options.arguments.contains("--profile"))
    }
}
