import Foundation
import StrobeStatistics
import Testing

@Suite struct StepAttributionTests {
    /// A suite of `metrics` series of 50 nights on one host; `shift` gives
    /// each metric's level at a night.
    func suite(
        _ name: String, metrics: Int = 10, seed: UInt64, shift: (Int, Int) -> Double = { _, _ in 1 }
    ) -> [MetricHistory] {
        (0..<metrics).map { metric in
            let values = processHistory(runs: 50, sigma: 0.03, seed: seed &* 31 &+ UInt64(metric)) { shift(metric, $0) }
            return MetricHistory(name: "\(name)\(metric)", values: values)
        }
    }

    @Test func aStepOnEveryHostWithAStillReferenceIsTheCodes() throws {
        let codeStep: (Int, Int) -> Double = { metric, night in metric == 2 && night >= 25 ? 1.15 : 1 }
        let hosts = (0..<3).map { host in
            HostHistory(
                host: "host\(host)", metrics: suite("m", seed: 10 + UInt64(host), shift: codeStep),
                reference: suite("m", seed: 20 + UInt64(host)))
        }
        let report = try StepAttribution.attribute(hosts)
        let attributed = report.steps
        #expect(report.suiteSteps.isEmpty)
        #expect(attributed.count == 3)
        #expect(attributed.allSatisfy { $0.cause == .code && $0.step.metric == "m2" && $0.step.firstAfter == 25 })
        // The shares lead, the evidence follows.
        #expect(attributed.first?.reason.hasPrefix("the code's: +") == true, "\(attributed)")
        #expect(
            attributed.first?.reason.hasSuffix("(on every host at position 26 ± 1; the reference did not move)") == true
        )
    }

    /// The machine moves the nightly and the reference alike each night by
    /// ±15%; the nightly build is 12% slower from night 12 of 24. In the
    /// raw series the machine's noise hides the step; over the reference it
    /// stands out, and it is the code's.
    @Test func aStepHiddenByTheMachinesNoiseIsFoundAgainstTheReference() throws {
        var generator = SeededGenerator(seed: 77)
        let machine = (0..<24).map { _ in exp(0.15 * generator.normal()) }
        let nightly = (0..<24).map { night in
            100 * machine[night] * (night >= 12 ? 1.12 : 1) * exp(0.015 * generator.normal())
        }
        let reference = (0..<24).map { night in 100 * machine[night] * exp(0.015 * generator.normal()) }
        let raw = try StepDetector.detect([MetricHistory(name: "decode", values: nightly)])
        #expect(raw.steps.isEmpty, "the raw series alone shows no step")
        let report = try StepAttribution.attribute([
            HostHistory(
                host: "ci", metrics: [MetricHistory(name: "decode", values: nightly)],
                reference: [MetricHistory(name: "decode", values: reference)])
        ])
        let step = try #require(report.steps.first)
        #expect(report.steps.count == 1)
        #expect(step.cause == .code && step.step.metric == "decode")
        #expect(abs(step.step.firstAfter - 12) <= 1)
        #expect(step.reason.hasPrefix("the code's: +"), "\(step.reason)")
        #expect(step.reason.contains("(against the reference: decode moved at position"))
        #expect(abs(step.step.change.ratio - 1.12) < 0.04)
    }

    /// A step too weak for the level is said as possible, where it is, with
    /// the runs that would confirm it; a flat series says nothing.
    @Test func aChangeShortOfTheLevelIsSaidAsPossible() throws {
        var told = 0
        var near = 0
        for seed in UInt64(1)...40 {
            let values = processHistory(runs: 20, sigma: 0.04, seed: seed) { $0 >= 10 ? 1.05 : 1 }
            let found = try StepDetector.detect([MetricHistory(name: "load", values: values, relativeFloor: 0.01)])
            let series = try #require(found.series.first)
            guard let possible = series.possibleChange else { continue }
            told += 1
            #expect(series.steps.isEmpty)
            #expect(series.adjustedPValue > 0.01 && series.adjustedPValue <= 0.05)
            if abs(possible.firstAfter - 10) <= 3 { near += 1 }
            #expect(possible.runsToConfirm >= 1 && possible.runsToConfirm < 1000)
        }
        #expect(told >= 3, "\(told) of 40 weak steps told as possible")
        // Placed within 3 runs of the step in most; a weak step is placed
        // loosely.
        #expect(near * 4 >= told * 3, "\(near) of \(told) placed within 3 runs")
        var flatTold = 0
        for seed in UInt64(101)...140 {
            let values = processHistory(runs: 20, sigma: 0.04, seed: seed)
            let found = try StepDetector.detect([MetricHistory(name: "load", values: values, relativeFloor: 0.01)])
            if found.series.first?.possibleChange != nil { flatTold += 1 }
        }
        // Within five times the level: about 5% of flat series.
        #expect(flatTold <= 6, "\(flatTold) of 40 flat series told as possible")
    }

    @Test func aStepOnOneHostOnlyIsTheMachines() throws {
        let hosts = (0..<3).map { host in
            HostHistory(
                host: "host\(host)",
                metrics: suite("m", seed: 30 + UInt64(host)) { metric, night in
                    host == 1 && metric == 4 && night >= 30 ? 1.2 : 1
                })
        }
        let attributed = try StepAttribution.attribute(hosts).steps
        #expect(attributed.map(\.host) == ["host1"])
        #expect(attributed.first?.cause == .machine)
        #expect(attributed.first?.reason == "on host1 only; 2 other hosts did not move")
    }

    @Test func aStepOnSomeHostsIsUndetermined() throws {
        let hosts = (0..<3).map { host in
            HostHistory(
                host: "host\(host)",
                // Seed 36's ten metrics happen to sit higher together after
                // night 33 (every one of them), which is a suite step.
                metrics: suite("m", seed: 45 + UInt64(host)) { metric, night in
                    host < 2 && metric == 4 && night >= 30 ? 1.2 : 1
                })
        }
        let attributed = try StepAttribution.attribute(hosts).steps
        #expect(attributed.count == 2)
        #expect(attributed.allSatisfy { $0.cause == .undetermined && $0.reason == "on 2 of 3 hosts" })
    }

    @Test func aWholeSuiteShiftWithTheReferenceIsTheMachines() throws {
        // Every metric 4% slower from night 20: too little for most metrics
        // alone at σ 3%, plain in the suite's index.
        let machine: (Int, Int) -> Double = { _, night in night >= 20 ? 1.04 : 1 }
        let host = HostHistory(
            host: "ci-1", metrics: suite("m", seed: 40, shift: machine), reference: suite("m", seed: 41, shift: machine)
        )
        let report = try StepAttribution.attribute([host])
        let suiteStep = try #require(report.suiteSteps.first)
        #expect(report.suiteSteps.count == 1)
        #expect(abs(suiteStep.firstAfter - 20) <= 1)
        #expect(suiteStep.cause == .machine)
        #expect(
            suiteStep.reason
                == "every metric of ci-1 moved at position \(suiteStep.firstAfter + 1) and the reference moved with them"
        )
        #expect(abs(suiteStep.medianChange - 0.04) < 0.02)
        #expect(report.steps.count >= 5)
        #expect(report.steps.allSatisfy { $0.cause == .machine && abs($0.step.firstAfter - 20) <= 5 })
        // The same shift with a reference that stayed put is the code's.
        let still = HostHistory(
            host: "ci-1", metrics: suite("m", seed: 40, shift: machine), reference: suite("m", seed: 41))
        let code = try StepAttribution.attribute([still])
        #expect(code.suiteSteps.map(\.cause) == [.code])
        #expect(code.steps.allSatisfy { $0.cause == .code })
    }

    @Test func ratesThatDropWithTheReferenceAreTheMachines() throws {
        // Throughputs (higher is better) 6% lower from night 25 on, the
        // reference's with them: a slower machine, whatever the direction.
        let slower: (Int, Int) -> Double = { _, night in night >= 25 ? 0.94 : 1 }
        let rates = { (metrics: [MetricHistory]) in
            metrics.map { metric in
                MetricHistory(name: metric.name, values: metric.values, better: .higher)
            }
        }
        let host = HostHistory(
            host: "ci-2", metrics: rates(suite("fps", seed: 60, shift: slower)),
            reference: rates(suite("calibration", seed: 61, shift: slower)))
        let report = try StepAttribution.attribute([host])
        let suiteStep = try #require(report.suiteSteps.first)
        #expect(abs(suiteStep.firstAfter - 25) <= 1)
        #expect(suiteStep.cause == .machine)
        #expect(suiteStep.medianChange > 0.03, "worse is positive: \(suiteStep.medianChange)")
        #expect(!report.steps.isEmpty)
        #expect(report.steps.allSatisfy { $0.cause == .machine && $0.step.direction == .regression })
        // One metric, judged by the reference's index: its rise is the rate's fall.
        let single = HostHistory(
            host: "ci-3", metrics: rates(suite("fps", metrics: 1, seed: 62) { _, night in night >= 25 ? 0.85 : 1 }),
            reference: rates(suite("calibration", seed: 61, shift: slower)))
        let alone = try StepAttribution.attribute([single])
        #expect(alone.suiteSteps.isEmpty)
        #expect(alone.steps.map(\.cause) == [.machine])
        #expect(alone.steps.first?.reason == "the reference moved at position 26 ± 1")
    }

    @Test func oneHostIsJudgedByItsReferenceAlone() throws {
        let codeStep: (Int, Int) -> Double = { metric, night in metric == 0 && night >= 25 ? 1.15 : 1 }
        let still = HostHistory(
            host: "a", metrics: suite("m", seed: 50, shift: codeStep), reference: suite("m", seed: 51))
        let stillSteps = try StepAttribution.attribute([still]).steps
        #expect(stillSteps.map(\.cause) == [.code])
        #expect(stillSteps.first?.reason.hasSuffix("(the reference did not move at position 26 ± 1)") == true)
        let moved = HostHistory(
            host: "a", metrics: suite("m", seed: 50, shift: codeStep),
            reference: suite("m", seed: 51, shift: codeStep))
        let movedSteps = try StepAttribution.attribute([moved]).steps
        #expect(movedSteps.map(\.cause) == [.machine])
        #expect(movedSteps.first?.reason.hasPrefix("the machine's: +") == true, "\(movedSteps)")
        #expect(movedSteps.first?.reason.hasSuffix("(the reference moved at position 26 ± 1)") == true)
        let alone = HostHistory(host: "a", metrics: suite("m", seed: 50, shift: codeStep))
        #expect(try StepAttribution.attribute([alone]).steps.map(\.cause) == [.undetermined])
    }

    @Test func misalignedOrRepeatedHostsAreErrors() {
        let short = HostHistory(host: "b", metrics: [MetricHistory(name: "m0", values: [1, 2, 3])])
        let long = HostHistory(host: "a", metrics: [MetricHistory(name: "m0", values: [1, 2, 3, 4])])
        #expect(throws: SeriesAnalysisError.lengthMismatch(host: "b", metric: "m0", expected: 4, found: 3)) {
            try StepAttribution.attribute([long, short])
        }
        #expect(throws: SeriesAnalysisError.duplicateHost("a")) { try StepAttribution.attribute([long, long]) }
        let bad = HostHistory(
            host: "c", metrics: [], reference: [MetricHistory(name: "calibration", values: [1, .infinity])])
        #expect(throws: SeriesAnalysisError.notFinite(metric: "calibration", run: 1)) {
            try StepAttribution.attribute([bad])
        }
    }
}
