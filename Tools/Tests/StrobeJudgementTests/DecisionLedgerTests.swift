import Foundation
import StrobeResults
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement
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

    /// Paired rounds of `test`/wall whose candidate is `ratio(round)` times
    /// the baseline, with 1% noise per round.
    static func input(_ test: String, rounds: Int, seed: UInt64, ratio: (Int) -> Double) -> ComparisonEngine.Input {
        var generator = SeededGenerator(seed: seed)
        var base: [Replicate] = []
        var cand: [Replicate] = []
        for round in 0..<rounds {
            let level = 15e6 * exp(0.01 * generator.normal())
            base.append(Replicate(id: "b\(round)", round: round, samples: [level, level * 1.001, level * 0.999]))
            let other = 15e6 * ratio(round) * exp(0.01 * generator.normal())
            cand.append(Replicate(id: "c\(round)", round: round, samples: [other, other * 1.001, other * 0.999]))
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
        let plain = try #require(DecisionPower.roundsToDecide(row))
        let optimistic = try #require(DecisionPower.roundsToDecide(row, optimistic: true))
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

    /// A waiting test's wall decided faster in its first 42 rounds, while
    /// the machine made the baseline's shorter sleep last longer, then 15%
    /// slower in the 52 rounds after, as the code made it: the interval of
    /// all 94 rounds no longer overlaps the decided one, and the decision
    /// is withdrawn for good. On a steady machine it stands.
    @Test func aDecidedTimeThatLaterRoundsContradictIsWithdrawn() {
        let early = Self.report([Self.input("handoff", rounds: 42, seed: 7) { _ in 0.954 }], level: 0.0006)
        #expect(early.rows[0].verdict == .improvement, "\(early.rows[0])")
        var ledger = DecisionLedger()
        _ = ledger.record(early, rounds: 42, plannedRounds: 200)
        let later = Self.report(
            [Self.input("handoff", rounds: 94, seed: 7) { $0 < 42 ? 0.954 : 1.15 }], level: 0.0006)
        let (report, open) = ledger.record(later, rounds: 94, plannedRounds: 200)
        let row = report.rows[0]
        #expect(row.verdict == .inconclusive, "\(row)")
        #expect(open.isEmpty, "a withdrawn decision keeps no test running: \(open)")
        let warning = row.warnings.first { $0.hasPrefix("the machine changed during the comparison") }
        #expect(warning?.contains("decided improvement at 42 rounds (-4.") == true, "\(row.warnings)")
        #expect(warning?.hasSuffix("the intervals do not overlap, so the decision is withdrawn") == true)
        // Never decided again, whatever later rounds say.
        let last = Self.report(
            [Self.input("handoff", rounds: 140, seed: 7) { $0 < 42 ? 0.954 : 1.15 }], level: 0.0006)
        #expect(ledger.record(last, rounds: 140, plannedRounds: 200).report.rows[0].verdict == .inconclusive)

        var steady = DecisionLedger()
        _ = steady.record(early, rounds: 42, plannedRounds: 200)
        let same = Self.report([Self.input("handoff", rounds: 94, seed: 7) { _ in 0.954 }], level: 0.0006)
        #expect(steady.record(same, rounds: 94, plannedRounds: 200).report.rows[0].verdict == .improvement)
    }
}
