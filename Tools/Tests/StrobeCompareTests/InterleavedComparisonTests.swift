import Foundation
import StrobeProcessRunner
import StrobeResults
import StrobeSimulations
import StrobeStatistics
import Testing

@testable import StrobeCompare

/// `strobe compare`'s experiment in-process: a runner that writes results
/// files of its own instead of starting processes, and a clock that moves a
/// second per process.
@Suite struct InterleavedComparisonTests {
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
            case .counted: events.append("counted")
            }
        }
        // Looks after rounds 2, 3 and 4: decode +60% against ±2% noise
        // between processes is decided by the third (a t statistic of 1
        // or 2 degrees of freedom at an early look's level needs noise
        // under about 1%).
        let looks = events.filter { $0.hasPrefix("look ") }
        #expect(looks.prefix(3).map { $0.prefix(6) } == ["look 1", "look 2", "look 3"])
        let decidedAt = try #require(events.firstIndex { $0.hasPrefix("look ") && $0.hasSuffix(": 1/2") })
        let roundsBefore = events[..<decidedAt].filter { $0.hasPrefix("round ") || $0.hasPrefix("look ") }.count
        #expect(roundsBefore <= 3, "\(events)")
        #expect(outcome.report.tests.first { $0.test == "decode" }?.outcome == .slower)
        #expect(outcome.report.exitStatus == 1)
        // From then on only the open test runs.
        let decidedRound = roundsBefore + 1
        #expect(runner.testsAsked.prefix(decidedRound).allSatisfy { $0 == nil })
        if outcome.rounds > decidedRound {
            #expect(events.contains("measuring only encode from round \(decidedRound + 1)"), "\(events)")
            #expect(runner.testsAsked[decidedRound] == ["encode"])
        }
        // The clock is the runner's.
        #expect(outcome.elapsed == runner.seconds)
        // The coin orders the sides both ways.
        #expect(Set(runner.orders.map { $0.first! }).count == 2 || outcome.rounds < 4)
    }

    @Test func theBudgetEndsAComparisonThatCannotDecide() throws {
        let root = Self.scratch("budget")
        defer { try? FileManager.default.removeItem(atPath: root) }
        // +1% against 2% noise between processes: not decidable in 12
        // rounds (of 2 × 1.2 s).
        let runner = try SyntheticRounds(root: root, ratios: ["decode": 1.01])
        var settings = InterleavedComparison<SyntheticRounds>.Settings(budget: 29, seed: 2)
        settings.decideAll = true
        settings.adaptsIterations = false
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

    @Test func iterationsFollowTheSplitOfTheNoise() throws {
        // Processes differ by 5%, iterations within one by 0.5%, and a
        // process's start costs as much as 5 iterations: more processes of
        // fewer iterations decide sooner.
        let root = Self.scratch("few")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let few = try SyntheticRounds(root: root, ratios: ["decode": 1.01])
        few.between = 0.05
        few.within = 0.005
        var settings = InterleavedComparison<SyntheticRounds>.Settings(budget: 40, seed: 4)
        settings.decideAll = true
        var comparison = InterleavedComparison(settings: settings, runner: few, clock: { few.seconds })
        var notes: [String] = []
        _ = try comparison.run { if case .note(let line) = $0 { notes.append(line) } }
        // The noise is split from the look after 4 rounds of the 5
        // iterations asked for (with 2 processes a side the spread between
        // them has one degree of freedom).
        #expect(few.iterationsRun.prefix(4).allSatisfy { $0 == 5 })
        #expect(few.iterationsRun.last == IterationPlan.range.lowerBound, "\(few.iterationsRun)")
        #expect(notes.contains { $0.hasPrefix("2 iterations per process from round 5") }, "\(notes)")

        // Processes agree, iterations scatter by 5%, a process's start costs
        // 40 iterations: more iterations per process.
        let other = Self.scratch("many")
        defer { try? FileManager.default.removeItem(atPath: other) }
        let many = try SyntheticRounds(root: other, ratios: ["decode": 1.01])
        many.between = 0.001
        many.within = 0.05
        many.startSeconds = 4
        settings.budget = 200
        var second = InterleavedComparison(settings: settings, runner: many, clock: { many.seconds })
        _ = try second.run()
        #expect((many.iterationsRun.last ?? 0) > 10, "\(many.iterationsRun)")
    }

    @Test func suiteProcessesAreGivenTheOptionsOfTheirRound() throws {
        let root = Self.scratch("options")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let rounds = try ProcessRounds(
            directory: root, commands: [.baseline: "true", .candidate: "true"], mode: .suite, iterations: 3,
            warmup: 0, timeout: 10, profile: true)
        let options = rounds.suiteOptions(.candidate, round: 7, tests: ["apply lens", "a.b"])
        #expect(options.resultsDirectory == root + "/candidate")
        #expect(options.iterations == 3 && options.round == 7 && options.warmup == 0)
        #expect(options.filter == "^(apply lens|a\\.b)$")
        #expect(options.profileRate == PerfSuiteOptions.defaultProfileRate)
        #expect(options.arguments.contains("--profile"))
    }

    @Test func aRoundRunsOnlyTheNamedTests() {
        #expect(ProcessRounds.exactNames(["apply lens", "a.b"]) == "^(apply lens|a\\.b)$")
        let expression = try? Regex(ProcessRounds.exactNames(["apply lens", "a.b"]))
        #expect(expression.map { "a.b".wholeMatch(of: $0) != nil } == true)
        #expect(expression.map { "axb".wholeMatch(of: $0) == nil } == true)
    }
}
