import Foundation
import Testing

@testable import StrobeStatistics

/// A time step is placed where the test's counted work stepped, and the
/// raw and the reference-adjusted series tell it once.
@Suite struct CountedPlacementTests {
    /// The medians of a demo history (AMD EPYC, family 25 model 17, load
    /// 0.6–3): 20 nights of `apply lens`, the code rebuilding its tone curve
    /// from night 11 (index 10). Night 9 was slow for both builds and night
    /// 10 slow for the reference alone, so the nightly series, by its runs,
    /// steps at night 9.
    static let nightly = [
        13.5, 13.8, 13.6, 15.7, 16.0, 13.6, 13.7, 14.4, 22.7, 14.1,
        31.3, 20.0, 22.7, 26.4, 18.3, 18.6, 28.7, 22.4, 18.7, 23.8,
    ].map { $0 * 1e6 }
    static let reference = [
        13.6, 16.1, 17.7, 13.8, 16.1, 14.1, 16.0, 15.1, 16.4, 22.9,
        21.6, 14.1, 14.2, 18.5, 15.3, 14.4, 19.9, 16.2, 13.8, 16.3,
    ].map { $0 * 1e6 }

    static func instructions(_ level: (Int) -> Double) -> MetricHistory {
        MetricHistory(
            name: "apply lens/instructions", values: CountedLevelsTests.counts(nights: 20, seed: 7, level: level))
    }

    /// One host whose series `name` (milliseconds, one value a night) runs
    /// beside a pinned reference of the same name, with the test's
    /// instructions stepping 14.4% at night 11 (index 10).
    static func hostWithReference(_ name: String, nightly: [Double], reference: [Double]) -> HostHistory {
        HostHistory(
            host: "ci",
            metrics: [
                MetricHistory(name: name, values: nightly.map { $0 * 1e6 }),
                instructions { $0 >= 10 ? 3.107e8 : 2.715e8 },
            ],
            reference: [MetricHistory(name: name, values: reference.map { $0 * 1e6 })])
    }

    /// The steps found in `apply lens/wall` with `values`, on one host with
    /// no reference, beside the test's instructions stepping 14.4% at run
    /// `countedAt` (no instructions when nil).
    static func wallSteps(_ values: [Double], countedAt: Int?) throws -> [AttributedStep] {
        let wall = MetricHistory(name: "apply lens/wall", values: values)
        let counted = countedAt.map { at in [instructions { $0 >= at ? 3.107e8 : 2.715e8 }] } ?? []
        return try StepAttribution.attribute([HostHistory(host: "ci", metrics: [wall] + counted)]).steps.filter {
            $0.step.metric == "apply lens/wall"
        }
    }

    /// `values` split at run `ownSplit` by themselves, and at run 10, where
    /// the test's counted work stepped, beside it, saying where their own
    /// split was.
    static func expectPlacedAtTheCountedRun(_ values: [Double], ownSplit: Int) throws {
        let alone = try wallSteps(values, countedAt: nil)
        #expect(alone.first?.step.firstAfter == ownSplit, "its own split: \(alone.map(\.step.firstAfter))")
        let step = try #require(try wallSteps(values, countedAt: 10).first)
        #expect(step.step.firstAfter == 10, "\(step.reason)")
        #expect(step.reason.contains("its own split was position \(ownSplit + 1)"), "\(step.reason)")
    }

    @Test func aTimeStepIsPlacedAtTheNightTheCountedWorkStepped() throws {
        let host = HostHistory(
            host: "ci",
            metrics: [
                MetricHistory(name: "apply lens/interval:lens apply:sum", values: Self.nightly),
                Self.instructions { $0 >= 10 ? 3.107e8 : 2.715e8 },
            ],
            reference: [MetricHistory(name: "apply lens/interval:lens apply:sum", values: Self.reference)])
        let report = try StepAttribution.attribute([host])
        let time = report.steps.filter { $0.step.metric == "apply lens/interval:lens apply:sum" }
        #expect(time.count == 1, "one change, told once: \(time.map { ($0.step.firstAfter, $0.reason) })")
        let step = try #require(time.first)
        #expect(step.step.firstAfter == 10, "\(step.reason)")
        #expect(step.cause == .code, "\(step.reason)")
        #expect(step.step.change.ratio > 1.3, "\(step.step.change)")
        let counted = try #require(report.steps.first { $0.step.metric == "apply lens/instructions" })
        #expect(counted.step.firstAfter == 10)
    }

    @Test func withoutCountedWorkTheTimeStepStaysWhereItsRunsPutIt() throws {
        let host = HostHistory(
            host: "ci",
            metrics: [MetricHistory(name: "apply lens/interval:lens apply:sum", values: Self.nightly)],
            reference: [MetricHistory(name: "apply lens/interval:lens apply:sum", values: Self.reference)])
        let report = try StepAttribution.attribute([host])
        let time = report.steps.filter { $0.step.metric == "apply lens/interval:lens apply:sum" }
        #expect(time.count == 1, "the raw and the adjusted series tell one change once: \(time.map(\.reason))")
        #expect(time.allSatisfy { !$0.reason.contains("counted work") })
    }

    @Test func aCountedStepOfAnotherTestOrFarAwayMovesNothing() throws {
        // A clean time step at night 6 (index 5); instructions of another
        // test step at index 7, and this test's own at index 15.
        let times = CountedLevelsTests.times(nights: 20, sigma: 0.01, seed: 3) { $0 >= 5 ? 1.3e7 : 1e7 }
        let host = HostHistory(
            host: "ci",
            metrics: [
                MetricHistory(name: "apply lens/wall", values: times),
                MetricHistory(
                    name: "other/instructions",
                    values: CountedLevelsTests.counts(nights: 20, seed: 4) { $0 >= 7 ? 2e8 : 1e8 }),
                Self.instructions { $0 >= 15 ? 3.1e8 : 2.7e8 },
            ])
        let report = try StepAttribution.attribute([host])
        let wall = try #require(report.steps.first { $0.step.metric == "apply lens/wall" })
        #expect(wall.step.firstAfter == 5, "\(wall.reason)")
        #expect(!wall.reason.contains("counted work"), "\(wall.reason)")
    }

    @Test func aCountedStepNearATimeSeriesThatDidNotMoveThereLeavesItsStep() throws {
        // The time steps at index 10, the counted work at 12: the two runs
        // between sit at the new level, far beyond the old level's noise,
        // so the time series tells its own night and the step stays there.
        let times = CountedLevelsTests.times(nights: 20, sigma: 0.005, seed: 9) { $0 >= 10 ? 1.3e7 : 1e7 }
        let wall = try #require(try Self.wallSteps(times, countedAt: 12).first)
        #expect(wall.step.firstAfter == 10, "\(wall.reason)")
    }

    /// A 20% step at index 10 in a time with 12% noise from night to
    /// night: the scan over every split misses it in this history, and the
    /// test at the run where the counted work stepped finds it.
    @Test func aTimeStepTheScanMissesIsFoundAtTheNightTheCountedWorkStepped() throws {
        let wall = CountedLevelsTests.times(nights: 20, sigma: 0.12, seed: 503) { $0 >= 10 ? 1.2e7 : 1e7 }
        let without = try StepAttribution.attribute([
            HostHistory(host: "ci", metrics: [MetricHistory(name: "apply lens/wall", values: wall)])
        ])
        #expect(without.steps.isEmpty, "the scan alone: \(without.steps.map { ($0.step.firstAfter, $0.reason) })")
        let step = try #require(try Self.wallSteps(wall, countedAt: 10).first)
        #expect(step.step.firstAfter == 10 && step.step.direction == .regression, "\(step.reason)")
        #expect(step.step.status == .confirmed)
        #expect(step.cause == .code, "\(step.reason)")
        #expect(step.reason.contains("found at position 11, where the test's counted work stepped"), "\(step.reason)")
    }

    /// A time series that did not move, beside counted work that stepped:
    /// the test at the counted run holds its level.
    @Test func aFlatTimeBesideACountedStepIsRarelyCalledAStep() throws {
        var found = 0
        let histories = 400
        for seed in 0..<histories {
            let flat = CountedLevelsTests.times(nights: 20, sigma: 0.1, seed: 1000 + UInt64(seed)) { _ in 1e7 }
            if try !Self.wallSteps(flat, countedAt: 10).isEmpty { found += 1 }
        }
        // At alpha 0.01 the scan and the targeted test together call about
        // 2% of flat series a step; 16 of 400 or more happens less than once
        // in a hundred such runs of this test when that holds.
        #expect(found < 16, "\(found) of \(histories) flat series called a step")
    }

    /// The first night after the change measured low, within what a later
    /// night of the new level measured too: the time series' own split is a
    /// night late, and the counted step places it.
    @Test func aLowFirstNightAfterTheChangeIsPlacedWithTheCountedStep() throws {
        let before = [12.1, 12.4, 12.4, 12.5, 12.3, 12.7, 11.8, 12.4, 12.7, 12.9]
        let after = [13.9, 20.0, 17.9, 18.4, 13.8, 17.7, 22.0, 22.4, 25.6, 21.9]
        let wall = (before + after).map { $0 * 1e6 }
        try Self.expectPlacedAtTheCountedRun(wall, ownSplit: 11)
    }

    /// A demo history (AMD EPYC, family 25 model 17) whose nightly build ran
    /// slow on the two nights before the change (nights 9 and 10, 21.7 and
    /// 29.1 ms): the time series' own split is two runs early, and the
    /// counted step at night 11 places it.
    @Test func twoSlowNightsBeforeTheChangeDoNotHoldItBack() throws {
        let wall = [
            16.8, 15.2, 10.5, 10.9, 14.2, 12.7, 16.3, 16.1, 21.7, 29.1,
            29.4, 25.9, 21.2, 17.4, 13.7, 18.0, 16.9, 18.9, 18.4, 20.2,
        ].map { $0 * 1e6 }
        try Self.expectPlacedAtTheCountedRun(wall, ownSplit: 8)
    }

    /// A demo history (Intel Xeon, family 6 model 207, load 1.3; each night
    /// the median of three processes): the nightly build's `lens apply`
    /// time ran at the new level one night before the change (night 10,
    /// 30.4 ms, processes 30, 30 and 25 ms), the reference did not. The
    /// split at night 11, where the counted work stepped, is beyond the
    /// level by itself, so the step is placed there.
    @Test func oneSlowNightBeforeTheChangeDoesNotHoldItBackWhenTheCountedRunIsAStepByItself() throws {
        let sum = [
            23.8, 26.4, 23.0, 24.7, 21.6, 21.2, 22.3, 20.9, 20.2, 30.4,
            37.0, 28.9, 38.0, 29.1, 27.2, 29.9, 28.2, 37.6, 27.2, 36.8,
        ].map { $0 * 1e6 }
        try Self.expectPlacedAtTheCountedRun(sum, ownSplit: 9)
    }

    /// A demo history (Intel Xeon, family 6 model 207, load 1.3–1.5; each
    /// night the median of two processes of ten iterations): the host was
    /// busy on nights 1–10 and quiet after, slowing both builds on the same
    /// nights, so the nightly build's `lens apply` CPU time rose by the
    /// code's +35% from night 11 against a first half as slow (raw rank
    /// test at night 11: p 0.14). Over its reference, night by night, the
    /// series steps there clearly, and the step is found at the counted run.
    @Test func aStepTheMachinesBusyNightsHideIsFoundAgainstTheReferenceAtTheCountedRun() throws {
        let name = "apply lens/interval:lens apply:cpu"
        let host = Self.hostWithReference(
            name,
            nightly: [
                13.85, 21.08, 17.48, 20.18, 13.65, 13.57, 17.99, 16.68, 21.17, 16.70,
                19.98, 18.17, 19.79, 18.57, 18.81, 18.63, 18.97, 18.88, 18.58, 18.01,
            ],
            reference: [
                13.87, 18.09, 13.59, 17.41, 14.09, 13.54, 16.16, 21.70, 18.90, 15.74,
                12.45, 13.06, 14.56, 12.83, 15.00, 15.33, 12.82, 12.48, 14.53, 12.61,
            ])
        let report = try StepAttribution.attribute([host])
        let steps = report.steps.filter { $0.step.metric == name }
        #expect(steps.count == 1, "\(steps.map(\.reason)) \(report.timesAtCountedSteps)")
        let step = try #require(steps.first)
        #expect(step.step.firstAfter == 10)
        #expect(step.cause == .code, "\(step.reason)")
        #expect(step.reason.contains("of the series over its reference"), "\(step.reason)")
        // Without the reference, the raw series alone does not reach the
        // level there: told as untold, with its p-value.
        let alone = try StepAttribution.attribute([HostHistory(host: "ci", metrics: host.metrics)])
        #expect(!alone.steps.contains { $0.step.metric == name })
        #expect(alone.timesAtCountedSteps.contains { $0.metric == name && !$0.againstReference })
    }

    /// A demo history on a busy host (AMD EPYC, family 25 model 17, one
    /// core busy, load 3.1–3.4; each night the median of two processes of
    /// ten iterations): the pinned reference ran about 20% faster from
    /// night 10 on while the code's rebuilt curve slowed the nightly build
    /// from night 11, so the raw wall time barely moved there (+6%) and the
    /// test at the counted run fell short of the level. Its untold record
    /// carries the change over the reference, the code's part, which the
    /// note gives beside the raw change.
    @Test func aTimeTheCountedStepLeftUntoldCarriesItsChangeOverTheReference() throws {
        let name = "apply lens/wall"
        let host = Self.hostWithReference(
            name,
            nightly: [
                21.29, 23.38, 16.03, 27.25, 24.30, 22.67, 27.43, 23.62, 25.91, 24.49,
                21.28, 20.03, 26.29, 27.98, 27.59, 23.43, 32.65, 26.79, 21.59, 25.82,
            ],
            reference: [
                19.53, 17.14, 19.14, 27.62, 24.63, 24.78, 23.56, 24.15, 19.38, 15.99,
                15.65, 15.49, 17.75, 16.15, 19.76, 23.96, 21.76, 20.61, 16.56, 17.04,
            ])
        let report = try StepAttribution.attribute([host])
        #expect(!report.steps.contains { $0.step.metric == name }, "\(report.steps.map(\.reason))")
        let untold = try #require(report.timesAtCountedSteps.first { $0.metric == name })
        #expect(untold.firstAfter == 10)
        #expect(untold.againstReference)
        #expect(abs(untold.change.change) < 0.15, "raw \(untold.change)")
        let over = try #require(untold.changeOverReference)
        #expect(over.change > 0.2 && over.lower > 1, "over the reference \(over)")
        // Without a reference there is no such part.
        let alone = try StepAttribution.attribute([HostHistory(host: "ci", metrics: host.metrics)])
        let raw = try #require(alone.timesAtCountedSteps.first { $0.metric == name })
        #expect(raw.changeOverReference == nil)
    }

    /// A heavy-tailed maximum (Intel Xeon, family 6 model 207, load
    /// 0.8–2.4): nights 7, 8 and 10 ran long before the code changed at
    /// night 11 (index 10), so the scan splits at night 7, taking the code's
    /// step and those nights together. Judged between the counted steps
    /// (nights 1–10 alone), nights 7–10 are not a step: no step is told
    /// away from night 11, where a reference alone called night 7 the code's.
    @Test func aTimeSplitFarFromTheCountedStepIsJudgedBetweenTheCountedSteps() throws {
        let maximum = [
            1.45, 1.53, 1.55, 1.45, 2.20, 1.60, 3.26, 3.40, 1.88, 3.49,
            2.32, 1.89, 3.51, 2.31, 3.82, 1.80, 3.52, 2.43, 2.22, 3.28,
        ].map { $0 * 1e6 }
        let referenceValues = [
            1.58, 1.65, 2.12, 3.27, 4.34, 1.56, 1.91, 2.01, 1.44, 1.76,
            1.91, 1.25, 1.94, 2.82, 1.58, 3.14, 1.54, 1.75, 1.98, 1.96,
        ].map { $0 * 1e6 }
        let name = "apply lens/interval:lens apply:max"
        let series = MetricHistory(name: name, values: maximum)
        let instructions = Self.instructions { $0 >= 10 ? 3.107e8 : 2.715e8 }
        let reference = [MetricHistory(name: name, values: referenceValues)]
        let report = try StepAttribution.attribute([
            HostHistory(host: "ci", metrics: [series, instructions], reference: reference)
        ])
        let far = report.steps.filter { $0.step.metric == name && abs($0.step.firstAfter - 10) > 1 }
        #expect(far.isEmpty, "\(far.map { ($0.step.firstAfter, $0.reason) })")
        // Without the counts, the scan's own split is told, the code's.
        let uncounted = try StepAttribution.attribute([HostHistory(host: "ci", metrics: [series], reference: reference)]
        )
        #expect(uncounted.steps.contains { $0.step.metric == name && $0.step.firstAfter < 8 && $0.cause == .code })
    }

    /// A time series that steps at night 9 of 30 by itself (the machine
    /// changed), while the test's counted work stepped at night 21 and its
    /// time did not move there: judged between the counted steps, the
    /// machine's step holds, at its own night, and is estimated within
    /// nights 1–20.
    @Test func aTimeStepOfItsOwnHoldsBetweenTheCountedSteps() throws {
        let values = CountedLevelsTests.times(nights: 30, sigma: 0.03, seed: 11) { $0 >= 8 ? 1.3e7 : 1e7 }
        let wall = MetricHistory(name: "apply lens/wall", values: values)
        let instructions = MetricHistory(
            name: "apply lens/instructions",
            values: CountedLevelsTests.counts(nights: 30, seed: 3) { $0 >= 20 ? 3.107e8 : 2.715e8 })
        let steps = try StepAttribution.attribute([HostHistory(host: "ci", metrics: [wall, instructions])]).steps
            .filter { $0.step.metric == "apply lens/wall" }
        #expect(steps.count == 1, "\(steps.map { ($0.step.firstAfter, $0.reason) })")
        let step = try #require(steps.first)
        #expect(step.step.firstAfter == 8, "\(step.reason)")
        #expect(step.step.firstAfter + step.step.runsAfter <= 20, "estimated within nights 1–20: \(step.step)")
        #expect(step.reason.contains("found again between the test's counted steps (position 21)"), "\(step.reason)")
        #expect(abs(step.step.change.ratio - 1.3) < 0.03, "\(step.step.change)")
    }

    /// A demo history with one core busy (Intel Xeon, family 6 model 207,
    /// load 2.5–2.9): the nightly build's `apply lens` times per night in
    /// milliseconds, the reference's beside them, the code's instructions
    /// 14.4% more from night 11 (index 10). The times rose 10–20% there in
    /// noise of ±20%.
    static let busy: [String: (nightly: [Double], reference: [Double])] = [
        "wall": (
            nightly: [
                27.62, 19.11, 22.74, 24.04, 21.82, 20.82, 26.64, 25.51, 29.58, 27.10,
                35.97, 35.06, 33.85, 23.92, 32.40, 24.49, 26.75, 26.43, 25.21, 23.84,
            ],
            reference: [
                23.13, 20.48, 27.60, 24.51, 22.33, 19.76, 23.40, 27.60, 28.58, 26.89,
                29.06, 29.39, 26.22, 23.16, 24.89, 29.98, 30.92, 20.37, 22.99, 13.51,
            ]
        ),
        "interval:lens apply:sum": (
            nightly: [
                42.24, 30.68, 33.26, 34.71, 31.87, 30.78, 38.86, 37.80, 46.16, 40.30,
                58.33, 56.08, 54.65, 36.91, 51.08, 37.71, 44.63, 42.28, 37.50, 37.52,
            ],
            reference: [
                35.60, 29.79, 43.62, 37.81, 32.66, 29.76, 36.69, 42.68, 41.94, 41.92,
                45.20, 45.76, 39.93, 34.52, 37.52, 44.39, 48.27, 30.04, 34.86, 19.26,
            ]
        ),
        "interval:lens apply:max": (
            nightly: [
                6.06, 5.40, 5.74, 5.73, 5.63, 5.69, 5.87, 5.83, 6.08, 5.86,
                7.75, 6.41, 6.45, 6.40, 6.67, 5.69, 6.32, 6.60, 5.97, 5.91,
            ],
            reference: [
                5.83, 5.36, 5.89, 5.73, 5.51, 5.48, 5.85, 6.74, 6.01, 6.09,
                6.18, 6.62, 5.75, 5.53, 5.57, 5.99, 7.23, 5.52, 5.60, 2.53,
            ]
        ),
        "interval:lens apply:cpu": (
            nightly: [
                23.55, 13.90, 17.62, 18.02, 15.33, 17.40, 20.23, 21.40, 23.54, 19.78,
                26.93, 28.84, 29.89, 18.85, 23.97, 20.44, 21.12, 22.57, 20.61, 18.98,
            ],
            reference: [
                19.89, 14.54, 21.30, 21.54, 17.79, 16.41, 20.30, 22.25, 22.43, 19.90,
                22.04, 22.59, 19.66, 15.56, 17.35, 20.23, 21.76, 15.39, 16.39, 9.29,
            ]
        ),
    ]

    /// The busy history's time steps at night 11, its instructions moving
    /// from `before` to `after` there.
    static func busyStepsAtTheCountedRun(before: Double, after: Double) throws -> [AttributedStep] {
        let names = busy.keys.sorted()
        let host = HostHistory(
            host: "ci",
            metrics: names.map { MetricHistory(name: "apply lens/\($0)", values: busy[$0]!.nightly.map { $0 * 1e6 }) }
                + [instructions { $0 >= 10 ? after : before }],
            reference: names.map {
                MetricHistory(name: "apply lens/\($0)", values: busy[$0]!.reference.map { $0 * 1e6 })
            })
        return try StepAttribution.attribute([host]).steps.filter {
            $0.step.metric != "apply lens/instructions" && $0.step.firstAfter == 10
        }
    }

    /// The counts say which way the work moved: the test at the counted run
    /// gives 80% of its level to a rise of the times when the instructions
    /// grew. Tested both ways alike, the busy history's rise is found in no
    /// series (the smallest p 0.003 of four, Benjamini–Hochberg); weighted,
    /// in the CPU time. The same rise beside instructions that fell is
    /// against the counts' way, and is not found.
    @Test func theTestAtACountedRunLooksFirstTheWayTheCountsMovedTheWork() throws {
        let grew = try Self.busyStepsAtTheCountedRun(before: 2.715e8, after: 3.107e8)
        let cpu = try #require(grew.first { $0.step.metric == "apply lens/interval:lens apply:cpu" })
        #expect(cpu.cause == .code, "\(cpu.reason)")
        #expect(cpu.step.direction == .regression, "\(cpu.step)")
        #expect(cpu.reason.contains("80% of its level on a rise, the way the counts moved the work"), "\(cpu.reason)")
        let fell = try Self.busyStepsAtTheCountedRun(before: 3.107e8, after: 2.715e8)
        #expect(fell.isEmpty, "\(fell.map { ($0.step.metric, $0.reason) })")
    }
}
