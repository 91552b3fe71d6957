import Foundation
import StrobeDiff
import StrobeFleet
import StrobeJudgement
import StrobeSimulations
import StrobeStatistics
import Testing

/// The fleet report's intervals treat the session as the unit: they cover
/// the true percentile about as often as they claim, where intervals that
/// count every event as independent would not; comparisons raise few false
/// regressions and find a real one. (The full rates are in `make bench
/// fleet`; these are smaller runs with looser bounds.)
@Suite struct SessionQuantileTests {
    @Test func intervalsCoverTheTruePercentileAboutAsOftenAsTheyClaim() {
        var simulation = FleetSimulation()
        simulation.sessions = 200
        let coverage = simulation.coverage(trials: 300, seed: 42)
        for (p, rate) in coverage.sorted(by: { $0.key < $1.key }) {
            #expect(rate >= 0.9 && rate <= 0.99, "P\(Int(p * 100)): \(rate)")
        }
    }

    @Test func anIntervalOfIndependentEventsWouldBeFarTooNarrow() {
        // The same data with every event its own session: the interval
        // shrinks by about the square root of the events per session.
        var generator = SeededGenerator(seed: 3)
        let simulation = FleetSimulation()
        let sessions = simulation.sessionSketches(generator: &generator)
        var pooled = QuantileSketch()
        for session in sessions { pooled.merge(session) }
        let clustered = SessionQuantiles.estimate(sessions: sessions, probabilities: [0.9])[0]
        #expect(clustered.lower < clustered.estimate && clustered.estimate < clustered.upper)
        #expect(clustered.sessions == 500 && clustered.events == pooled.count)
        #expect(clustered.logStandardError > 0.01 && clustered.logStandardError < 0.05, "\(clustered.logStandardError)")
    }

    @Test func reportsRaiseFewFalseRegressionsAndFindARealOne() {
        var simulation = FleetSimulation()
        simulation.sessions = 300
        let aa = simulation.study(reports: 60, slowdown: 0, seed: 7)
        #expect(aa.methodFalseRegressionReports <= 0.05)
        #expect(aa.oracleFalseRegressionReports <= 0.05)
        #expect(aa.comparisonsPerReport == 18)
        #expect(aa.methodPower == 0 && aa.oraclePower == 0)
        let ab = simulation.study(reports: 40, slowdown: 0.15, seed: 8)
        #expect(ab.methodPower >= 0.8, "\(ab.methodPower)")
        #expect(ab.methodFalseRegressionReports <= 0.05)
    }

    /// The oracle reads the exact pooled percentile and knows its true
    /// standard error: the method's intervals claim about that spread, its
    /// estimates spread about as much, and it finds about as many
    /// regressions.
    @Test func theMethodIsCloseToTheOracleOnTheSameData() {
        var simulation = FleetSimulation()
        simulation.sessions = 300
        let study = simulation.study(reports: 60, slowdown: 0.1, seed: 9)
        for p in simulation.probabilities {
            let claimed = study.claimedLogError[p] ?? 0
            let exact = study.exactLogSpread[p] ?? 0
            let method = study.methodLogSpread[p] ?? 0
            #expect(claimed > 0.8 * exact && claimed < 1.25 * exact, "P\(Int(p * 100)): \(claimed) against \(exact)")
            #expect(method > 0.8 * exact && method < 1.25 * exact, "P\(Int(p * 100)): \(method) against \(exact)")
            #expect((study.sketchLogError[p] ?? 1) < 0.01)
        }
        #expect(study.oraclePower > 0.3 && study.oraclePower < 1, "\(study.oraclePower)")
        #expect(abs(study.methodPower - study.oraclePower) < 0.15, "\(study.methodPower) against \(study.oraclePower)")
    }

    @Test func verdictsFollowDiffsRules() {
        func estimate(_ value: Double, error: Double) -> SessionQuantileEstimate {
            SessionQuantileEstimate(
                probability: 0.9, estimate: value, lower: value * exp(-1.96 * error), upper: value * exp(1.96 * error),
                confidence: 0.95, logStandardError: error, sessions: 500, events: 20_000)
        }
        let changes = SessionQuantiles.compare([
            .init(baseline: estimate(100, error: 0.01), candidate: estimate(120, error: 0.01)),
            .init(baseline: estimate(100, error: 0.01), candidate: estimate(80, error: 0.01)),
            .init(baseline: estimate(100, error: 0.002), candidate: estimate(100.2, error: 0.002)),
            .init(baseline: estimate(100, error: 0.2), candidate: estimate(110, error: 0.2)),
            .init(baseline: estimate(100, error: 0.01), candidate: estimate(80, error: 0.01), better: .higher),
        ])
        #expect(changes.map(\.verdict) == [.regression, .improvement, .unchanged, .inconclusive, .regression])
        #expect(abs(changes[0].shift.ratio - 1.2) < 1e-9)
        #expect(changes[0].shift.lower < 1.2 && changes[0].shift.upper > 1.2)
        #expect(changes[0].adjustedPValue >= changes[0].pValue)
    }

    /// A percentile that few events reach is not judged: P99 of 30 events
    /// (one per session) is their largest, and its interval means nothing.
    @Test func aTailThatFewEventsReachIsNotJudged() {
        func estimate(_ value: Double, probability: Double, events: UInt64) -> SessionQuantileEstimate {
            SessionQuantileEstimate(
                probability: probability, estimate: value, lower: value * exp(-1.96 * 0.05),
                upper: value * exp(1.96 * 0.05), confidence: 0.95, logStandardError: 0.05, sessions: 30, events: events)
        }
        let changes = SessionQuantiles.compare([
            .init(
                baseline: estimate(100, probability: 0.99, events: 30),
                candidate: estimate(60, probability: 0.99, events: 30)),
            .init(
                baseline: estimate(100, probability: 0.9, events: 30),
                candidate: estimate(60, probability: 0.9, events: 30)),
            .init(
                baseline: estimate(100, probability: 0.5, events: 30),
                candidate: estimate(60, probability: 0.5, events: 30)),
            .init(
                baseline: estimate(100, probability: 0.99, events: 5_000),
                candidate: estimate(60, probability: 0.99, events: 5_000)),
        ])
        #expect(changes.map(\.verdict) == [.inconclusive, .inconclusive, .improvement, .improvement])
        #expect(changes[0].adjustedPValue == 1 && changes[1].adjustedPValue == 1)
    }
}
