import Foundation
import StrobeStatistics
import Testing

/// Counted series (instructions) step where their level moves past the
/// tolerance, and a reference adjusts a series only as far as it explains it.
@Suite struct CountedLevelsTests {
    /// Nights of an instruction count: `level` per night, each process off
    /// by up to ±0.1% (the measured spread across processes of one build).
    static func counts(nights: Int, seed: UInt64, level: (Int) -> Double) -> [Double] {
        var generator = SeededGenerator(seed: seed)
        return (0..<nights).map { night in level(night) * (1 + Double.random(in: -0.001...0.001, using: &generator)) }
    }

    /// Nights of a time: `level` per night with log-normal noise `sigma`.
    static func times(nights: Int, sigma: Double, seed: UInt64, level: (Int) -> Double) -> [Double] {
        var generator = SeededGenerator(seed: seed)
        return (0..<nights).map { night in level(night) * exp(sigma * normal(&generator)) }
    }

    static func normal(_ generator: inout SeededGenerator) -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &generator)
        let v = Double.random(in: 0..<1, using: &generator)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }

    @Test func aTwoPercentStepAtNightSixteenIsFoundThereInThatTestOnly() throws {
        // Night 16 is index 15.
        let tests = (0..<4).map { test in
            MetricHistory(
                name: "t\(test)/instructions",
                values: Self.counts(nights: 30, seed: UInt64(40 + test)) { night in
                    test == 2 && night >= 15 ? 1.02e9 : 1e9
                }, relativeFloor: 0.02)
        }
        #expect(tests.allSatisfy { CountedLevels.repeats($0.values) })
        let report = try StepDetector.detect(tests)
        #expect(report.steps.count == 1, "\(report.steps)")
        let step = try #require(report.steps.first)
        #expect(step.metric == "t2/instructions" && step.firstAfter == 15 && step.status == .confirmed)
        #expect(abs(step.change.ratio - 1.02) < 0.002)
        #expect(step.direction == .regression)
    }

    @Test(arguments: 0..<20) func thirtyFlatNightsReportNothing(seed: UInt64) throws {
        let series = (0..<5).map { test in
            MetricHistory(
                name: "t\(test)/instructions",
                values: Self.counts(nights: 30, seed: seed * 10 + UInt64(test)) { _ in 5e8 })
        }
        let report = try StepDetector.detect(series)
        #expect(report.steps.isEmpty, "\(report.steps)")
        #expect(report.series.allSatisfy { $0.possibleChange == nil })
    }

    @Test func aStepInTheLastNightsIsPossible() throws {
        let values = Self.counts(nights: 30, seed: 7) { $0 >= 27 ? 1.01e9 : 1e9 }
        let step = try #require(try StepDetector.detect([MetricHistory(name: "i", values: values)]).steps.first)
        #expect(step.firstAfter == 27 && step.status == .possible(runsToConfirm: 2))
    }

    @Test func oneProcessOutOfLineIsNoStep() throws {
        var values = Self.counts(nights: 30, seed: 8) { _ in 1e9 }
        values[12] *= 1.05
        values[20] *= 0.97
        #expect(try StepDetector.detect([MetricHistory(name: "i", values: values)]).steps.isEmpty)
    }

    /// The demo's history under load: every time of the host and its
    /// reference jump a night after the code changed, which makes the
    /// suite's step the machine's; the instruction count, whose own
    /// reference stayed put, still steps the night the code changed, as
    /// the code's.
    @Test func aCountedStepIsNotTheMachinesWhenTheWholeSuiteMoved() throws {
        let slow = { (night: Int) in night >= 12 ? 1.5 : 1.0 }
        let times = (0..<3).map { test in
            MetricHistory(
                name: "t\(test)/wall",
                values: Self.times(nights: 20, sigma: 0.01, seed: UInt64(60 + test)) { 1e7 * slow($0) })
        }
        let counted = MetricHistory(
            name: "t0/instructions", values: Self.counts(nights: 20, seed: 70) { $0 >= 10 ? 1.14e9 : 1e9 })
        let reference =
            (0..<3).map { test in
                MetricHistory(
                    name: "t\(test)/wall",
                    values: Self.times(nights: 20, sigma: 0.01, seed: UInt64(80 + test)) { 1e7 * slow($0) })
            } + [MetricHistory(name: "t0/instructions", values: Self.counts(nights: 20, seed: 90) { _ in 1e9 })]
        let report = try StepAttribution.attribute([
            HostHistory(host: "", metrics: times + [counted], reference: reference)
        ])
        let count = try #require(report.steps.first { $0.step.metric == "t0/instructions" })
        #expect(count.step.firstAfter == 10)
        #expect(count.cause == .code, "\(count.reason)")
        let wall = try #require(report.steps.first { $0.step.metric == "t1/wall" })
        #expect(wall.cause == .machine)
        #expect(!wall.reason.contains("of  moved"), "\(wall.reason)")
    }

    @Test func aCodeStepInCountsIsTheCodesWhenTheCountedReferenceStaysPut() throws {
        let metric = MetricHistory(
            name: "b/instructions", values: Self.counts(nights: 30, seed: 3) { $0 >= 15 ? 1.02e9 : 1e9 })
        let reference = MetricHistory(name: "b/instructions", values: Self.counts(nights: 30, seed: 4) { _ in 1e9 })
        let report = try StepAttribution.attribute([
            HostHistory(host: "ci-1", metrics: [metric], reference: [reference])
        ])
        let step = try #require(report.steps.first)
        #expect(report.steps.count == 1 && step.step.firstAfter == 15)
        #expect(step.cause == .code, "\(step.reason)")
        // The reference's jitter explains nothing of the counts: raw.
        #expect(report.referenceAdjustments.map(\.used) == [false])
    }

    @Test func anIndependentReferenceDoesNotHideAStepTheRawSeriesShows() throws {
        var found = 0
        var code = 0
        for seed in UInt64(0)..<20 {
            let metric = MetricHistory(
                name: "a/wall",
                values: Self.times(nights: 30, sigma: 0.02, seed: 100 + seed) { $0 >= 15 ? 1.1e6 : 1e6 },
                relativeFloor: 0.02)
            let reference = MetricHistory(
                name: "a/wall", values: Self.times(nights: 30, sigma: 0.04, seed: 200 + seed) { _ in 1e6 })
            let raw = try StepDetector.detect([metric])
            #expect(raw.steps.count == 1, "seed \(seed): \(raw.steps)")
            let report = try StepAttribution.attribute([
                HostHistory(host: "ci-1", metrics: [metric], reference: [reference])
            ])
            let adjustment = try #require(report.referenceAdjustments.first)
            #expect(adjustment.slope < 0.5, "seed \(seed): \(adjustment)")
            #expect(!adjustment.used || adjustment.adjustedNoise < adjustment.rawNoise)
            // Where the raw series alone places it (a run early at times).
            let night = try #require(raw.steps.first).firstAfter
            #expect(abs(night - 15) <= 1)
            let step = report.steps.first { $0.step.firstAfter == night && $0.step.metric == "a/wall" }
            #expect(step != nil, "seed \(seed): \(report.steps.map { ($0.step.firstAfter, $0.cause) }) \(adjustment)")
            if let step {
                found += 1
                if step.cause == .code { code += 1 }
            }
        }
        #expect(found == 20)
        // One host, a reference that did not move: the code's, but for the
        // odd night the reference's own noise looks like a move.
        #expect(code >= 18, "\(code) of 20")
    }

    @Test func aReferenceThatMovesWithTheSeriesIsUsedWithASlopeNearOne() throws {
        var generator = SeededGenerator(seed: 21)
        // The machine's noise, shared by both builds each night (5%), and
        // each process's own (0.5%); a 4% step of the code at night 16.
        let machine = (0..<30).map { _ in 0.05 * Self.normal(&generator) }
        let own = (0..<60).map { _ in 0.005 * Self.normal(&generator) }
        let metric = MetricHistory(
            name: "a/wall", values: (0..<30).map { 1e6 * ($0 >= 15 ? 1.04 : 1) * exp(machine[$0] + own[$0]) },
            relativeFloor: 0.02)
        let reference = MetricHistory(
            name: "a/wall", values: (0..<30).map { 2e6 * exp(machine[$0] + own[30 + $0]) })
        let report = try StepAttribution.attribute([
            HostHistory(host: "ci-1", metrics: [metric], reference: [reference])
        ])
        let adjustment = try #require(report.referenceAdjustments.first)
        #expect(adjustment.used)
        #expect(abs(adjustment.slope - 1) < 0.15, "\(adjustment)")
        #expect(adjustment.adjustedNoise < 0.3 * adjustment.rawNoise)
        #expect(adjustment.summary.hasPrefix("adjusted by the reference (b = "))
        let step = try #require(report.steps.first { $0.step.firstAfter == 15 }, "\(report.steps)")
        #expect(step.cause == .code, "\(step.reason)")
    }
}
