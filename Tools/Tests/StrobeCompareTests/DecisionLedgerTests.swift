import Foundation
import StrobeResults
import Testing

@testable import StrobeCompare
@testable import StrobeDiff
@testable import StrobeStatistics

/// What `strobe compare` keeps between looks: a verdict stands from the
/// look that reached it, decided tests stop running, and a metric whose
/// floor the budget cannot reach is said so and measured no further.
@Suite struct DecisionLedgerTests {
    /// Rounds paired replicates of `test`/wall: the candidate `ratio` times
    /// the baseline, with noise `spread` (log scale) per round.
    static func input(_ test: String, ratio: Double, spread: Double, rounds: Int = 4, seed: UInt64)
        -> ComparisonEngine.Input
    {
        var generator = SeededGenerator(seed: seed)
        let base = (0..<rounds).map { round in
            let level = 100 * exp(spread * generator.normal())
            return Replicate(id: "b\(round)", round: round, samples: [level, level * 1.001, level * 0.999])
        }
        let cand = (0..<rounds).map { round in
            let level = 100 * ratio * exp(spread * generator.normal())
            return Replicate(id: "c\(round)", round: round, samples: [level, level * 1.001, level * 0.999])
        }
        return .init(name: "\(test)/wall", unit: "ns", better: .lower, baseline: base, candidate: cand)
    }

    static func report(_ inputs: [ComparisonEngine.Input], level: Double) -> DiffReport {
        let look = SequentialDesign.Look(number: 1, rounds: 4, alpha: level, confidence: 0.99, isFinal: false)
        return DiffReport(
            options: ComparisonOptions(), groupBy: nil, rows: ComparisonEngine.compare(inputs, look: look),
            baselineSources: [], candidateSources: [], warnings: [], samples: [:])
    }

    @Test func decidedTestsStopAndOutOfReachFloorsAreSaid() {
        let first = Self.report(
            [
                Self.input("encode", ratio: 1.87, spread: 0.01, seed: 1),
                Self.input("capture", ratio: 1, spread: 0.4, seed: 2),
                Self.input("decode", ratio: 1.15, spread: 0.06, seed: 3),
            ], level: 0.002)
        #expect(first.rows[0].verdict == .regression, "\(first.rows[0])")
        #expect(first.rows[1].verdict == .inconclusive && first.rows[2].verdict == .inconclusive)
        // Before round 6 nothing is set aside: a few rounds' spread is too
        // rough to give up on a metric.
        var early = DecisionLedger()
        #expect(early.record(first, rounds: 4, plannedRounds: 12).openTests == ["capture", "decode"])
        var ledger = DecisionLedger()
        // encode is decided; capture's ±2% floor under ±40% noise per side
        // is out of a 12-round budget's reach, said at the look after round
        // 6; decode is still worth measuring.
        let (kept, open) = ledger.record(first, rounds: 6, plannedRounds: 12)
        #expect(open == ["decode"], "\(open)")
        let line = kept.warnings.first { $0.hasPrefix("set aside after round 6 as out of this budget's reach") }
        #expect(line != nil, "\(kept.warnings)")
        #expect(line?.contains(": capture/wall (the budget shows about ±") == true, "\(line ?? "")")
        #expect(line?.hasSuffix("--decide-all keeps measuring them.") == true)

        // A later look does not re-judge encode, whatever its data say now.
        let later = Self.report(
            [
                Self.input("encode", ratio: 1.0, spread: 0.01, seed: 4),
                Self.input("capture", ratio: 1, spread: 0.4, seed: 5),
                Self.input("decode", ratio: 1.15, spread: 0.06, seed: 6),
            ], level: 0.002)
        let (again, _) = ledger.record(later, rounds: 9, plannedRounds: 12)
        #expect(again.rows[0].verdict == .regression)
        #expect(again.tests.first { $0.test == "encode" }?.outcome == .slower)

        // With --decide-all nothing is set aside.
        var everything = DecisionLedger()
        everything.decideAll = true
        let (_, all) = everything.record(first, rounds: 9, plannedRounds: 18)
        #expect(all == ["capture", "decode"])
    }

    /// A few rounds' spread is rough: a metric is set aside only when even
    /// the optimistic reading of its rounds needs more than the plan holds,
    /// not when the plain reading does.
    @Test func onlyWhatEvenAnOptimisticReadingCannotReachIsSetAside() throws {
        let report = Self.report([Self.input("load", ratio: 1, spread: 0.02, seed: 11)], level: 0.002)
        let row = try #require(report.rows.first)
        #expect(row.verdict == .inconclusive)
        let plain = try #require(DecisionLedger.roundsToDecide(row))
        let optimistic = try #require(DecisionLedger.roundsToDecide(row, optimistic: true))
        #expect(optimistic < plain / 1.5, "plain \(plain), optimistic \(optimistic)")
        // A plan between the two readings keeps the metric; one short of
        // the optimistic reading sets it aside.
        let between = Int(((plain + optimistic) / 2).rounded())
        var ledger = DecisionLedger()
        #expect(ledger.record(report, rounds: 6, plannedRounds: between).openTests == ["load"])
        var short = DecisionLedger()
        let (said, open) = short.record(report, rounds: 6, plannedRounds: Int(optimistic.rounded(.down)) - 1)
        #expect(open.isEmpty)
        #expect(said.warnings.contains { $0.hasPrefix("set aside after round 6") })
    }

    @Test func aRoundRunsOnlyTheNamedTests() {
        #expect(ProcessRounds.exactNames(["apply lens", "a.b"]) == "^(apply lens|a\\.b)$")
        let expression = try? Regex(ProcessRounds.exactNames(["apply lens", "a.b"]))
        #expect(expression.map { "a.b".wholeMatch(of: $0) != nil } == true)
        #expect(expression.map { "axb".wholeMatch(of: $0) == nil } == true)
    }
}
