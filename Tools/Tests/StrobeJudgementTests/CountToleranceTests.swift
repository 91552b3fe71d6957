import Foundation
import StrobeStatistics
import Testing

@testable import StrobeJudgement

/// The tolerance rule: a counted metric (instructions) whose sides each
/// spread within the tolerance is decided at the first look by the ratio of
/// their centers against the relative floor; one that spreads wider is
/// tested like a time, with a warning.
@Suite struct CountToleranceTests {
    /// `rounds` paired processes of 5 iterations, each iteration
    /// `center × (1 + wobble × a pattern in [−1, 1])`.
    static func side(rounds: Int = 4, center: Double, wobble: Double) -> [Replicate] {
        (1...rounds).map { round in
            Replicate(
                id: "r\(round)", round: round,
                samples: (0..<5).map { iteration in
                    center * (1 + wobble * (Double((round * 7 + iteration * 3) % 5) / 2 - 1))
                })
        }
    }

    static func input(base: [Replicate], cand: [Replicate], floor: Double? = 0.005) -> ComparisonEngine.Input {
        ComparisonEngine.Input(
            name: "t/instructions", unit: "count", better: .lower, baseline: base, candidate: cand,
            relativeFloor: floor, countTolerance: 0.002)
    }

    static func firstLook() -> SequentialDesign.Look {
        var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 40, firstLook: 4)
        return design.look(number: 1, rounds: 4, final: false)
    }

    @Test func aCountWithinToleranceIsDecidedAtTheFirstLook() throws {
        let base = Self.side(center: 4.12e6, wobble: 0.0005)
        let rows = ComparisonEngine.compare(
            [
                Self.input(base: base, cand: Self.side(center: 4.20e6, wobble: 0.0005)),
                Self.input(base: base, cand: Self.side(center: 4.00e6, wobble: 0.0005)),
                Self.input(base: base, cand: Self.side(center: 4.13e6, wobble: 0.0005)),
            ], look: Self.firstLook())
        #expect(rows.map(\.verdict) == [.regression, .improvement, .unchanged])
        for row in rows {
            #expect(row.test.method == .exact)
            #expect(row.isWithinCountTolerance)
            #expect(try #require(row.countSpread) <= 0.002)
            #expect(row.warnings.isEmpty)
        }
        let shift = try #require(rows[0].shift)
        #expect(abs(shift.change - (4.20 / 4.12 - 1)) < 1e-9)
        #expect(shift.lower == shift.ratio && shift.upper == shift.ratio)
    }

    @Test func aPolicysFloorOverridesTheDefault() {
        let base = Self.side(center: 4.12e6, wobble: 0)
        let cand = Self.side(center: 4.20e6, wobble: 0)
        // +1.9% against a 3% floor: unchanged, at once.
        let row = ComparisonEngine.compare([Self.input(base: base, cand: cand, floor: 0.03)], look: Self.firstLook())[0]
        #expect(row.verdict == .unchanged)
        #expect(row.relativeFloor == 0.03)
        // The same change with no tolerance is an exact count: any difference.
        var exact = Self.input(base: base, cand: cand, floor: 0.03)
        exact.countTolerance = nil
        #expect(ComparisonEngine.compare([exact], look: Self.firstLook())[0].verdict == .regression)
    }

    @Test func aSpreadPastTheToleranceFallsBackAndWarns() throws {
        let base = Self.side(center: 4.12e6, wobble: 0.01)
        let cand = Self.side(center: 4.20e6, wobble: 0.01)
        let row = ComparisonEngine.compare([Self.input(base: base, cand: cand)], look: Self.firstLook())[0]
        #expect(row.test.method == .pairedRounds)
        #expect(!row.isWithinCountTolerance)
        let spread = try #require(row.countSpread)
        #expect(spread > 0.002)
        let warning = try #require(row.warnings.first { $0.contains("not deterministic") })
        #expect(warning.contains("2.0%") && warning.contains("0.20% tolerance"), "\(warning)")
    }

    @Test func relativeSpreadReadsMaxOverMin() {
        let spread = ReplicateTest.relativeSpread([Replicate(id: "a", samples: [100, 101, 100.5])]) ?? 0
        #expect(abs(spread - 0.01) < 1e-12)
        #expect(ReplicateTest.relativeSpread([Replicate(id: "a", samples: [7, 7])]) == 0)
        #expect(ReplicateTest.relativeSpread([Replicate(id: "a", samples: [0, 3])]) == .infinity)
        #expect(ReplicateTest.relativeSpread([]) == nil)
    }
}
