import Foundation
import StrobeResults
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement
@testable import StrobeStatistics

/// What a report prints must agree with itself: an estimate lies inside its
/// own interval, and inputs that do not differ at all are unchanged.
@Suite struct HonestNumbersTests {
    /// Frames over budget per process: small counts, most processes 0 or 1.
    static func counts(_ values: [[Double]], rounds: Bool) -> [Replicate] {
        values.enumerated().map { index, samples in
            Replicate(id: "p\(index)", round: rounds ? index : nil, samples: samples)
        }
    }

    @Test func aCountsEstimateLiesInsideItsInterval() {
        // Medians of the processes: baseline 0 everywhere but one, candidate
        // mostly 1; the medians' difference (1) and the mean shift (about
        // 0.5) differ, and the report must quote the one its interval is for.
        let base = Self.counts([[0, 0, 0], [0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 1, 0]], rounds: true)
        let cand = Self.counts([[1, 1, 0], [0, 0, 0], [1, 1, 1], [0, 1, 1], [1, 0, 1], [0, 0, 0]], rounds: true)
        let row = ComparisonEngine.compare([
            .init(name: "frames over budget", unit: "count", better: .lower, baseline: base, candidate: cand)
        ])[0]
        #expect(row.shift == nil, "a zero baseline has no ratio")
        #expect(
            row.differenceLower <= row.difference && row.difference <= row.differenceUpper,
            "\(row.difference) [\(row.differenceLower), \(row.differenceUpper)]")
        let report = DiffReport(
            options: ComparisonOptions(), groupBy: nil, rows: [row], baselineSources: [], candidateSources: [],
            warnings: [], samples: [:])
        #expect(report.renderJSON().contains("\"difference\""))
    }

    @Test(arguments: [true, false]) func identicalInputsAreUnchanged(_ rounds: Bool) {
        // The same processes on both sides: a count that is 0 in some and 1
        // in others, so that the baseline's median is 0 and no ratio exists.
        let values: [[Double]] = [[0, 0, 1], [1, 1, 0], [0, 0, 0], [0, 1, 1], [0, 0, 0]]
        let side = Self.counts(values, rounds: rounds)
        let wall = ProcessLevelTests.replicates([100, 104, 98, 101, 99], rounds: rounds)
        let rows = ComparisonEngine.compare([
            .init(name: "frames over budget", unit: "count", better: .lower, baseline: side, candidate: side),
            .init(name: "wall", unit: "ns", better: .lower, baseline: wall, candidate: wall),
        ])
        if rounds {
            // Paired by round, identical processes differ by exactly zero.
            for row in rows {
                #expect(row.verdict == .unchanged, "\(row.name): \(row.verdict) \(row.difference)")
                #expect(row.difference == 0)
            }
        } else {
            // Unpaired, the count's interval is not exactly zero, but its
            // estimate is, and no side is called worse.
            #expect(rows.allSatisfy { $0.verdict != .regression && $0.verdict != .improvement })
            #expect(rows[0].difference == 0)
        }
    }
}
