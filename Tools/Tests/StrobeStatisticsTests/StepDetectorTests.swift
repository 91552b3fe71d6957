import Foundation
import StrobeDiff
import Testing

@testable import StrobeStatistics

/// Per-run values of a metric: each run a process with its own log-normal
/// factor (σ `sigma`), times `level(run)`; with `slowShare`, that share of
/// the processes is `slowFactor` times slower.
func processHistory(
    runs: Int, sigma: Double, seed: UInt64, slowShare: Double = 0, slowFactor: Double = 1,
    level: (Int) -> Double = { _ in 1 }
) -> [Double] {
    var generator = SeededGenerator(seed: seed)
    return (0..<runs).map { run in
        let slow = generator.uniform() < slowShare ? slowFactor : 1
        return 100 * level(run) * slow * exp(sigma * generator.normal())
    }
}

@Suite struct StepDetectorTests {
    @Test func flatSeriesYieldNothing() throws {
        let histories = (0..<20).map { metric in
            MetricHistory(name: "m\(metric)", values: processHistory(runs: 60, sigma: 0.05, seed: 100 + UInt64(metric)))
        }
        let report = try StepDetector.detect(histories)
        #expect(report.steps.isEmpty)
        #expect(report.series.count == 20)
        #expect(report.series.allSatisfy { $0.adjustedPValue > 0.01 })
    }

    @Test func bimodalFlatSeriesYieldNothing() throws {
        for seed in UInt64(0)..<10 {
            let values = processHistory(runs: 60, sigma: 0.05, seed: 200 + seed, slowShare: 0.5, slowFactor: 2)
            #expect(Set(values.map { $0 > 150 }).count == 2, "the series must be bimodal")
            let report = try StepDetector.detect([MetricHistory(name: "bimodal", values: values)])
            #expect(report.steps.isEmpty, "seed \(seed)")
        }
    }

    @Test func aClearStepIsPlacedExactly() throws {
        let values = processHistory(runs: 40, sigma: 0.02, seed: 3) { $0 < 25 ? 1 : 1.2 }
        let report = try StepDetector.detect([MetricHistory(name: "frame", values: values)])
        let step = try #require(report.steps.first)
        #expect(report.steps.count == 1)
        #expect(step.lastBefore == 24)
        #expect(step.firstAfter == 25)
        #expect(step.status == .confirmed)
        #expect(step.direction == .regression)
        #expect(abs(step.change.ratio - 1.2) < 0.03)
        #expect(step.change.lower < 1.2 && step.change.upper > 1.2)
        #expect(step.pValue <= step.level)
        #expect(step.runsBefore == 25 && step.runsAfter == 15)
    }

    /// Four runs after a doubling (a change near the end of the history):
    /// the scan needs five runs a side, so its split falls a run early, and
    /// placement brings it back to where the level moved, possible until a
    /// fifth run comes.
    @Test(arguments: 0..<10) func aStepFourRunsBeforeTheEndIsPlacedThereAndPossible(seed: UInt64) throws {
        let values = processHistory(runs: 30, sigma: 0.003, seed: 40 + seed) { $0 < 26 ? 1 : 2 }
        let report = try StepDetector.detect([MetricHistory(name: "releases", values: values)])
        let step = try #require(report.steps.first, "seed \(seed)")
        #expect(report.steps.count == 1)
        #expect((step.lastBefore, step.firstAfter) == (25, 26), "seed \(seed)")
        #expect(step.status == .possible(runsToConfirm: 1))
        #expect(step.change.lower > 1.9, "no run of the old level counted after it: \(step.change)")
        // With a fifth run after it, the same step is confirmed.
        let longer = processHistory(runs: 31, sigma: 0.003, seed: 40 + seed) { $0 < 26 ? 1 : 2 }
        let confirmed = try #require(
            try StepDetector.detect([MetricHistory(name: "releases", values: longer)]).steps.first)
        #expect((confirmed.firstAfter, confirmed.status) == (26, .confirmed))
    }

    /// The demo's fourteen nights of a count of releases per iteration (the
    /// median of each night's processes), doubled at night 11: the step is
    /// between nights 10 and 11, not a night early.
    @Test func theDemosReleasesStepAtNightEleven() throws {
        let values = [158.5, 158.5, 158.5, 158.5, 158, 159, 158.5, 158.5, 158.5, 159, 319, 318, 318, 318.5]
        let step = try #require(try StepDetector.detect([MetricHistory(name: "releases", values: values)]).steps.first)
        #expect((step.lastBefore, step.firstAfter) == (9, 10))
        #expect(step.status == .possible(runsToConfirm: 1))
    }

    @Test func directionFollowsTheMetric() throws {
        let up = processHistory(runs: 40, sigma: 0.02, seed: 4) { $0 < 20 ? 1 : 1.15 }
        let down = processHistory(runs: 40, sigma: 0.02, seed: 5) { $0 < 20 ? 1 : 0.85 }
        let report = try StepDetector.detect([
            MetricHistory(name: "time up", values: up, better: .lower),
            MetricHistory(name: "rate up", values: up, better: .higher),
            MetricHistory(name: "time down", values: down, better: .lower),
            MetricHistory(name: "rate down", values: down, better: .higher),
        ])
        #expect(
            report.series.map { $0.steps.map(\.direction) } == [
                [.regression], [.improvement], [.improvement], [.regression],
            ])
    }

    @Test func aStepInTheLastRunsIsPossibleUntilConfirmed() throws {
        let level: (Int) -> Double = { $0 < 37 ? 1 : 1.3 }
        let recent = processHistory(runs: 40, sigma: 0.02, seed: 12, level: level)
        let report = try StepDetector.detect([MetricHistory(name: "startup", values: recent)])
        let step = try #require(report.steps.first)
        #expect(report.steps.count == 1)
        #expect(step.firstAfter == 37)
        #expect(step.status == .possible(runsToConfirm: 2))
        #expect(step.status.description == "possible, 2 more runs to confirm")
        let later = processHistory(runs: 42, sigma: 0.02, seed: 12, level: level)
        let confirmed = try StepDetector.detect([MetricHistory(name: "startup", values: later)])
        #expect(confirmed.steps.map(\.firstAfter) == [37])
        #expect(confirmed.steps.first?.status == .confirmed)
    }

    @Test func twoSlowProcessesAtTheEndAreNoStep() throws {
        var values = processHistory(runs: 40, sigma: 0.03, seed: 7)
        values[38] *= 2
        values[39] *= 2
        #expect(try StepDetector.detect([MetricHistory(name: "m", values: values)]).steps.isEmpty)
    }

    @Test func minimumSegmentIsRespected() throws {
        // Level changes at runs 8, 25 and 40: 8 runs before the first.
        let level: (Int) -> Double = { run in run < 8 ? 1.5 : run < 25 ? 1 : run < 40 ? 1.3 : 1 }
        let values = processHistory(runs: 60, sigma: 0.01, seed: 8, level: level)
        for minimum in [5, 8, 10] {
            var options = StepDetectionOptions()
            options.minimumSegment = minimum
            let steps = try StepDetector.detect([MetricHistory(name: "m", values: values)], options: options).steps
            let bounds = [0] + steps.map(\.firstAfter) + [values.count]
            #expect(zip(bounds, bounds.dropFirst()).allSatisfy { $1 - $0 >= minimum }, "minimum \(minimum): \(bounds)")
            if minimum <= 8 {
                #expect(bounds == [0, 8, 25, 40, 60], "minimum \(minimum)")
            } else {
                // Ranks cannot split 8 runs at 1.5 and 17 at 1 from 15 at 1.3.
                #expect(!bounds.contains(8) && bounds.contains(40), "minimum \(minimum): \(bounds)")
            }
        }
    }

    @Test func aRegressionAndItsFixAreBothFound() throws {
        let values = processHistory(runs: 60, sigma: 0.03, seed: 11) { $0 >= 22 && $0 < 34 ? 1.15 : 1 }
        let steps = try StepDetector.detect([MetricHistory(name: "m", values: values)]).steps
        // Run 34 is a process 2.9σ slow: the fix may be placed one run late.
        #expect(steps.count == 2)
        #expect(steps.first?.firstAfter == 22)
        #expect(abs((steps.last?.firstAfter ?? 0) - 34) <= 1)
        #expect(steps.map(\.direction) == [.regression, .improvement])
    }

    @Test func aStepWithinTheFloorIsNotReported() throws {
        let values = processHistory(runs: 60, sigma: 0.005, seed: 9) { $0 < 30 ? 1 : 1.03 }
        #expect(try StepDetector.detect([MetricHistory(name: "m", values: values)]).steps.count == 1)
        let floored = MetricHistory(name: "m", values: values, relativeFloor: 0.05)
        #expect(try StepDetector.detect([floored]).steps.isEmpty)
    }

    @Test func aDeterministicCountThatStepsIsFound() throws {
        let values = (0..<30).map { $0 < 18 ? 1000.0 : 1015.0 }
        let step = try #require(
            try StepDetector.detect([MetricHistory(name: "allocations", values: values)]).steps.first)
        #expect(step.firstAfter == 18)
        #expect(abs(step.change.ratio - 1.015) < 1e-9)
    }

    @Test func badInputIsNamed() {
        #expect(throws: SeriesAnalysisError.emptySeries(metric: "empty")) {
            try StepDetector.detect([MetricHistory(name: "empty", values: [])])
        }
        #expect(throws: SeriesAnalysisError.notFinite(metric: "nan", run: 2)) {
            try StepDetector.detect([MetricHistory(name: "nan", values: [1, 2, .nan, 4])])
        }
        #expect(throws: SeriesAnalysisError.notPositive(metric: "zero", run: 1, value: 0)) {
            try StepDetector.detect([MetricHistory(name: "zero", values: [1, 0, 3])])
        }
        #expect(throws: SeriesAnalysisError.notPositive(metric: "negative", run: 0, value: -1)) {
            try StepDetector.detect([MetricHistory(name: "negative", values: [-1, 2, 3])])
        }
        #expect(throws: SeriesAnalysisError.invalidFloor(metric: "m", floor: -0.1)) {
            try StepDetector.detect([MetricHistory(name: "m", values: [1, 2], relativeFloor: -0.1)])
        }
        var options = StepDetectionOptions()
        options.alpha = 1.5
        #expect(throws: SeriesAnalysisError.invalidOption(name: "alpha", value: 1.5, expected: "0 < alpha < 1")) {
            try StepDetector.detect([MetricHistory(name: "m", values: [1, 2])], options: options)
        }
        let error = SeriesAnalysisError.notPositive(metric: "zero", run: 1, value: 0)
        #expect(
            error.description
                == "metric \"zero\", run 1: the value 0.0 is not positive (changes are ratios, taken on logs)")
    }

    @Test func shortAndEmptyFamiliesReportNothing() throws {
        #expect(try StepDetector.detect([]).series.isEmpty)
        #expect(try StepDetector.detect([MetricHistory(name: "one run", values: [5])]).steps.isEmpty)
    }

    /// The scan's p-value on flat series: at most its level, and not so
    /// conservative that it wastes most of it.
    @Test func theScanHoldsItsLevelOnFlatSeries() {
        var generator = SeededGenerator(seed: 10)
        let trials = 3000
        var rejected = 0
        for _ in 0..<trials {
            let values = (0..<60).map { _ in exp(0.05 * generator.normal()) }
            if let scan = RankScan.scan(values[...], minimumSegment: 5), scan.pValue <= 0.05 { rejected += 1 }
        }
        let rate = Double(rejected) / Double(trials)
        #expect(rate <= 0.05 && rate >= 0.015, "rate \(rate)")
    }

    @Test func theExactRankSumDistributionCountsSubsets() {
        // Ranks 1…10 (doubled): the three largest are one subset of C(10, 3) = 120.
        let distribution = RankSumDistribution(scores: (1...10).map { $0 * 2 }, largest: 3)
        #expect(abs(distribution.twoSidedPValue(k: 3, observed: 2 * (8 + 9 + 10)) - 2.0 / 120) < 1e-12)
        #expect(abs(distribution.twoSidedPValue(k: 3, observed: 2 * (1 + 2 + 4)) - 4.0 / 120) < 1e-12)
        #expect(distribution.twoSidedPValue(k: 1, observed: 10) == 1)
    }
}
