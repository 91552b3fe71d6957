import Foundation
import StrobeStatistics
import Testing

@testable import StrobeJudgement

/// A time metric whose processes of one side differ by a factor of two or
/// more is said to have noise that is not stationary.
@Suite struct NonStationaryNoiseTests {
    static func side(_ centers: [Double]) -> [Replicate] {
        centers.enumerated().map { index, center in
            Replicate(
                id: "p\(index)", round: index + 1, samples: [center * 0.99, center, center * 1.01])
        }
    }

    static func input(_ base: [Double], _ cand: [Double], unit: String = "ns") -> ComparisonEngine.Input {
        ComparisonEngine.Input(
            name: "decode/wall", unit: unit, better: .lower, baseline: side(base), candidate: side(cand))
    }

    @Test func aProcessTwiceAsSlowAsAnotherIsSaid() throws {
        let rows = ComparisonEngine.compare([Self.input([167e6, 344e6, 170e6, 172e6], [171e6, 169e6, 175e6, 168e6])])
        let row = try #require(rows.first)
        let note = row.warnings.first { $0.hasPrefix("the noise is not stationary") }
        #expect(note?.contains("one baseline process took 2.1× as long as another") == true, "\(row.warnings)")
    }

    @Test func steadyProcessesAndCountsSayNothing() throws {
        let steady = ComparisonEngine.compare([Self.input([167e6, 180e6, 170e6], [171e6, 175e6, 168e6])])
        #expect(steady.first?.warnings.contains { $0.hasPrefix("the noise is not stationary") } == false)
        let counts = ComparisonEngine.compare([Self.input([1, 5, 2], [3, 1, 6], unit: "count")])
        #expect(counts.first?.warnings.contains { $0.hasPrefix("the noise is not stationary") } == false)
    }
}
