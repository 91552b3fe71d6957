import Foundation
import StrobeStatistics
import Testing

@testable import StrobeJudgement

/// The count rule: a count the same in every iteration of every process on
/// each side is decided at the first look; one that varies is judged like
/// any metric, with an absolute floor of at least one count.
@Suite struct ExactCountComparisonTests {
    /// `rounds` paired processes of `iterations` samples each, the value of
    /// an iteration given by `value(round, iteration)`.
    static func replicates(rounds: Int, iterations: Int = 5, _ value: (Int, Int) -> Double) -> [Replicate] {
        (1...rounds).map { round in
            Replicate(id: "r\(round)", round: round, samples: (0..<iterations).map { value(round, $0) })
        }
    }

    /// The first look of `strobe compare`'s defaults: after 4 of about 40
    /// planned rounds, a small share of alpha.
    static func firstLook() -> SequentialDesign.Look {
        var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 40, firstLook: 4)
        return design.look(number: 1, rounds: 4, final: false)
    }

    /// One iteration a side (a counting process's) cannot show that a count
    /// repeats: 3 against 4 is not decided as an exact change, and a count
    /// that varies says so in its warnings.
    @Test func aCountSeenOnceIsNotConstantAndAVaryingOneSaysWhy() {
        let once = ComparisonEngine.compare(
            [
                ComparisonEngine.Input(
                    name: "t/allocations", unit: "count", better: .lower,
                    baseline: Self.replicates(rounds: 1, iterations: 1) { _, _ in 3 },
                    candidate: Self.replicates(rounds: 1, iterations: 1) { _, _ in 4 }, isCount: true)
            ], look: Self.firstLook())[0]
        #expect(!once.isConstantCount)
        #expect(once.verdict != .regression)
        let varying = ComparisonEngine.compare(
            [
                ComparisonEngine.Input(
                    name: "t/allocations", unit: "count", better: .lower,
                    baseline: Self.replicates(rounds: 4) { round, iteration in round + iteration == 3 ? 4 : 3 },
                    candidate: Self.replicates(rounds: 4) { round, iteration in iteration == 4 && round == 1 ? 2 : 3 },
                    isCount: true)
            ], look: Self.firstLook())[0]
        #expect(
            varying.warnings.contains { $0.hasPrefix("the count was not exact (2 to 3 per iteration") }
                || varying.warnings.contains { $0.hasPrefix("the count was not exact (3 to 4 per iteration") },
            "\(varying.warnings)")
        #expect(varying.verdict != .regression && varying.verdict != .improvement)
    }

    @Test func aConstantCountThatChangesByOneIsDecidedAtTheFirstLook() {
        var generator = SeededGenerator(seed: 7)
        let look = Self.firstLook()
        #expect(look.alpha < 0.01)
        let wall = { (_: Int, _: Int) in 1e6 * exp(0.05 * generator.normal()) }
        let inputs = [
            ComparisonEngine.Input(
                name: "t/allocations", unit: "count", better: .lower,
                baseline: Self.replicates(rounds: 4) { _, _ in 12 },
                candidate: Self.replicates(rounds: 4) { _, _ in 13 },
                isCount: true),
            ComparisonEngine.Input(
                name: "t/wall", unit: "ns", better: .lower, baseline: Self.replicates(rounds: 4, wall),
                candidate: Self.replicates(rounds: 4, wall)),
        ]
        let rows = ComparisonEngine.compare(inputs, look: look)
        let allocations = rows[0]
        #expect(allocations.verdict == .regression)
        #expect(allocations.test.method == .exact)
        #expect(allocations.difference == 1)
        #expect(allocations.isCount && allocations.isConstantCount)
        #expect(allocations.absoluteFloor == 0)
        // The times of the same test are still undecided at this look.
        #expect(rows[1].verdict == .inconclusive)
        // One fewer is an improvement, as surely.
        var fewer = inputs[0]
        fewer.candidate = Self.replicates(rounds: 4) { _, _ in 11 }
        #expect(ComparisonEngine.compare([fewer], look: look)[0].verdict == .improvement)
    }

    @Test func anEqualConstantCountIsUnchangedAtOnce() {
        let input = ComparisonEngine.Input(
            name: "t/allocations", unit: "count", better: .lower,
            baseline: Self.replicates(rounds: 4) { _, _ in 12 }, candidate: Self.replicates(rounds: 4) { _, _ in 12 },
            isCount: true)
        let row = ComparisonEngine.compare([input], look: Self.firstLook())[0]
        #expect(row.verdict == .unchanged)
        #expect(row.test.method == .exact)
        // A count of zero on both sides too.
        var zero = input
        zero.baseline = Self.replicates(rounds: 4) { _, _ in 0 }
        zero.candidate = zero.baseline
        #expect(ComparisonEngine.compare([zero], look: Self.firstLook())[0].verdict == .unchanged)
    }

    @Test func aPolicysAbsoluteFloorStillHoldsForAConstantCount() {
        let input = ComparisonEngine.Input(
            name: "t/allocations", unit: "count", better: .lower,
            baseline: Self.replicates(rounds: 4) { _, _ in 12 }, candidate: Self.replicates(rounds: 4) { _, _ in 14 },
            absoluteFloor: 2, isCount: true)
        #expect(ComparisonEngine.compare([input], look: Self.firstLook())[0].verdict == .unchanged)
    }

    @Test func aVaryingCountIsJudgedWithAFloorOfOneCount() {
        // Each process's count varies (10 or 11 per iteration); the
        // candidate adds exactly one in every iteration of 12 rounds.
        let base = Self.replicates(rounds: 12) { round, iteration in 10 + Double((round + iteration) % 2) }
        let plusOne = Self.replicates(rounds: 12) { round, iteration in 11 + Double((round + iteration) % 2) }
        let plusThree = Self.replicates(rounds: 12) { round, iteration in 13 + Double((round + iteration) % 2) }
        let count = ComparisonEngine.Input(
            name: "t/allocations", unit: "count", better: .lower, baseline: base, candidate: plusOne, isCount: true)
        let row = ComparisonEngine.compare([count])[0]
        #expect(row.test.method != .exact)
        #expect(row.absoluteFloor == MetricDefaults.countFloor)
        #expect(!row.isConstantCount)
        #expect(row.verdict == .unchanged)
        // The same data as a metric that is not a count: +10% is a change.
        var plain = count
        plain.isCount = false
        #expect(ComparisonEngine.compare([plain])[0].verdict == .regression)
        // Three more per iteration clear the floor.
        var larger = count
        larger.candidate = plusThree
        #expect(ComparisonEngine.compare([larger])[0].verdict == .regression)
    }

    @Test func aCountThatTakesOneOfTwoValuesIsComparedByItsMean() {
        // Each iteration counts 36 or 50 (work that races another thread),
        // alike on both sides: the processes' medians flip between the two
        // values, their means move far less.
        var generator = SeededGenerator(seed: 11)
        let flip = { (_: Int, _: Int) -> Double in generator.uniform() < 0.4 ? 50 : 36 }
        let input = ComparisonEngine.Input(
            name: "t/allocations", unit: "count", better: .lower, baseline: Self.replicates(rounds: 100, flip),
            candidate: Self.replicates(rounds: 100, flip), isCount: true)
        let row = ComparisonEngine.compare([input])[0]
        #expect(row.test.method == .pairedRounds)
        #expect(row.verdict != .regression && row.verdict != .improvement)
        var medians = input
        medians.isCount = false
        let medianRow = ComparisonEngine.compare([medians])[0]
        #expect(
            row.test.replicateSpread < 0.6 * medianRow.test.replicateSpread,
            "\(row.test.replicateSpread) vs \(medianRow.test.replicateSpread)")
        // The center is the mean count per iteration, about 36 + 0.4 × 14.
        #expect(abs(row.candidate.mean - 41.6) < 1)
    }

    @Test func aComparisonRoundTripsAndOneWithoutItsCountFlagIsRefused() throws {
        let input = ComparisonEngine.Input(
            name: "t/allocations", unit: "count", better: .lower,
            baseline: Self.replicates(rounds: 2) { _, _ in 3 }, candidate: Self.replicates(rounds: 2) { _, _ in 4 },
            isCount: true)
        let row = ComparisonEngine.compare([input])[0]
        // The report's own strategy for the infinite degrees of freedom of
        // an exact comparison.
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let data = try encoder.encode(row)
        #expect(try decoder.decode(MetricComparison.self, from: data) == row)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["isCount"] as? Bool == true)
        object.removeValue(forKey: "isCount")
        #expect(throws: DecodingError.self) {
            try decoder.decode(MetricComparison.self, from: JSONSerialization.data(withJSONObject: object))
        }
    }
}
