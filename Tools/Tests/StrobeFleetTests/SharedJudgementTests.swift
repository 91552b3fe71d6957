import Foundation
import StrobeStatistics
import Testing

@testable import StrobeFleet
@testable import StrobeJudgement

/// `strobe fleet` judges by the rules `strobe diff` judges by: a group's
/// percentiles are taken together as a test's metrics are, and the
/// sessions that would decide a change come from the same power
/// arithmetic as the rounds that would.
@Suite struct SharedJudgementTests {
    /// P90 of `sessions` sessions per side at `value`, with a log standard
    /// error of `error`.
    static func estimate(_ value: Double, probability: Double = 0.9, error: Double = 0.02, sessions: Int = 400)
        -> SessionQuantileEstimate
    {
        SessionQuantileEstimate(
            probability: probability, estimate: value, lower: value * exp(-1.96 * error),
            upper: value * exp(1.96 * error), confidence: 0.95, logStandardError: error, sessions: sessions,
            events: 40_000)
    }

    @Test func aGroupWithAnImprovementAndAnOpenPercentileIsInconclusive() {
        // P50 20% faster, decided; P99 3% faster with a wide interval, open.
        let changes = SessionQuantiles.compare([
            .init(baseline: Self.estimate(100, probability: 0.5), candidate: Self.estimate(80, probability: 0.5)),
            .init(
                baseline: Self.estimate(100, probability: 0.99, error: 0.2),
                candidate: Self.estimate(97, probability: 0.99, error: 0.2)),
        ])
        #expect(changes.map(\.verdict) == [.improvement, .inconclusive])
        // A test whose wall time improved while its CPU time is open is
        // undecided in strobe diff; the fleet's group says the same.
        #expect(FleetReport.overall(changes) == Verdict.inconclusive.rawValue)
        #expect(Verdict.combined(changes.map(\.verdict)) == .inconclusive)
        #expect(TestVerdict.Outcome(Verdict.combined(changes.map(\.verdict))) == .undecided)
        // A regression anywhere is the group's verdict; all unchanged is
        // unchanged.
        #expect(Verdict.combined([.improvement, .inconclusive, .regression]) == .regression)
        #expect(Verdict.combined([.unchanged, .improvement]) == .improvement)
        #expect(Verdict.combined([Verdict]()) == .unchanged)
    }

    @Test func sessionsNeededIsTheRoundsNeededOfTheSameNoise() throws {
        // A paired comparison of 12 rounds whose one-round spread is 5%,
        // at the worst-case level of 4 gated metrics at α 0.01.
        let spread = 0.05
        let rounds = 12
        let test = ReplicateTestResult(
            method: .pairedRounds, logScale: true, estimate: 0.01, standardError: spread / Double(rounds).squareRoot(),
            degreesOfFreedom: Double(rounds - 1), statistic: 1, pValue: 0.5, baselineReplicates: rounds,
            candidateReplicates: rounds, replicateSpread: spread)
        let more = try #require(
            ComparisonEngine.roundsNeeded(
                test, shift: nil, relativeFloor: 0.02, absoluteFloor: 0, level: 0.01 / 4, power: 0.8))
        // The same noise as a fleet's: the standard error of the change
        // with 12 sessions a side, four comparisons in the family.
        let sessions = try #require(
            SessionQuantiles.sessionsNeeded(
                error: spread / Double(rounds).squareRoot(), sessions: rounds, relativeFloor: 0.02, alpha: 0.01,
                comparisons: 4))
        #expect(sessions == rounds + more, "fleet \(sessions), diff \(rounds) + \(more)")
        let direct = DecisionPower.replicatesToDetect(log(1.02), spread: spread, level: 0.01 / 4)
        #expect(sessions == Int(direct.rounded(.up)), "\(direct)")
    }
}
