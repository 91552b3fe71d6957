import Foundation
import Testing

@testable import StrobeStatistics
@testable import StrobeTrend

/// The title of a commit range names the causes of its changes as words
/// read: "the code's", "the machine's", and "cause undetermined".
@Suite struct TrendRangeTitleTests {
    static func change(_ metric: String, cause: StepCause) -> TrendChange {
        let step = HistoryStep(
            metric: "apply lens/\(metric)", lastBefore: 5, firstAfter: 6,
            change: ShiftEstimate(ratio: 1.3, lower: 1.1, upper: 1.5, confidence: 0.95), pValue: 1e-3, level: 0.01,
            direction: .regression, status: .confirmed, runsBefore: 6, runsAfter: 14)
        return TrendChange(
            suite: "LensPipeline", test: "apply lens", metric: metric, unit: "ns",
            step: AttributedStep(host: "", step: step, cause: cause, reason: "a reason"),
            lastBefore: TrendRunReference(run: "a", commit: "2bf317f5a4", time: 0, slot: 5),
            firstAfter: TrendRunReference(run: "b", commit: "9d77f4fdb2", time: 1, slot: 6), commits: [],
            moreCommits: 0, confirm: [], mark: nil)
    }

    @Test func anUndeterminedCauseReadsAsAWordAndNotAPossessive() {
        let alone = TrendReport.rangeTitle([Self.change("wall", cause: .undetermined)])
        #expect(alone == "1 change at 2bf317f5a4..9d77f4fdb2, cause undetermined", "\(alone)")
        let mixed = TrendReport.rangeTitle([
            Self.change("wall", cause: .code), Self.change("interval:lens apply:max", cause: .undetermined),
        ])
        #expect(mixed == "2 changes at 2bf317f5a4..9d77f4fdb2, 1 the code's, 1 undetermined", "\(mixed)")
        let code = TrendReport.rangeTitle([Self.change("wall", cause: .code)])
        #expect(code == "1 change at 2bf317f5a4..9d77f4fdb2, the code's", "\(code)")
    }
}
