import Foundation
import Testing

@testable import StrobeStatistics

/// A time step split into the pinned reference's share and the code's, and
/// the test's counted work as evidence of the code.
@Suite struct StepSharesTests {
    typealias Levels = CountedLevelsTests

    /// The demo's history with the machine slowing at the night the code
    /// changed: from night 11 of 20 the machine makes every time 20%
    /// slower, the reference's too, and the code makes `t0` 16% slower
    /// still, its instructions 14% more. `t0/wall` is both, with shares
    /// near the truth; `t1/wall`, whose code did not change, is the
    /// machine's.
    @Test func aStepOfTheCodeAndTheMachineAtOneNightIsBothWithShares() throws {
        let machine = { (night: Int) in night >= 11 ? 1.2 : 1.0 }
        let code = { (night: Int) in night >= 11 ? 1.16 : 1.0 }
        func time(_ name: String, seed: UInt64, _ level: @escaping (Int) -> Double) -> MetricHistory {
            MetricHistory(name: name, values: Levels.times(nights: 20, sigma: 0.01, seed: seed, level: level))
        }
        func count(_ name: String, seed: UInt64, _ level: @escaping (Int) -> Double) -> MetricHistory {
            MetricHistory(name: name, values: Levels.counts(nights: 20, seed: seed, level: level))
        }
        let metrics = [
            time("t0/wall", seed: 1) { 1e7 * machine($0) * code($0) },
            time("t1/wall", seed: 2) { 2e7 * machine($0) },
            count("t0/instructions", seed: 3) { 0.98e9 * code($0) },
        ]
        let reference = [
            time("t0/wall", seed: 4) { 1e7 * machine($0) },
            time("t1/wall", seed: 5) { 2e7 * machine($0) },
            count("t0/instructions", seed: 6) { _ in 0.98e9 },
        ]
        let report = try StepAttribution.attribute([HostHistory(host: "ci", metrics: metrics, reference: reference)])
        let wall = try #require(report.steps.first { $0.step.metric == "t0/wall" })
        #expect(abs(wall.step.firstAfter - 11) <= 1)
        #expect(wall.cause == .code, "\(wall.reason)")
        let shares = try #require(wall.shares)
        #expect(shares.machineMoved && shares.codeMoved)
        #expect(abs(shares.code.ratio - 1.16) < 0.03, "\(shares.code)")
        #expect(abs(shares.machine.ratio - 1.2) < 0.03, "\(shares.machine)")
        #expect(shares.code.lower > 1.1 && shares.code.upper < 1.22, "\(shares.code)")
        #expect(shares.countedStep == "t0/instructions")
        #expect(wall.reason.hasPrefix("both: +16% ["), "\(wall.reason)")
        #expect(wall.reason.contains("the code's beyond +20% ["), "\(wall.reason)")
        let other = try #require(report.steps.first { $0.step.metric == "t1/wall" })
        #expect(other.cause == .machine, "\(other.reason)")
        #expect(other.reason.hasPrefix("the machine's: +20%"), "\(other.reason)")
        #expect(report.steps.first { $0.step.metric == "t0/instructions" }?.cause == .code)
    }

    /// A step whose shares are neither a change on its own (a waiting test
    /// whose counts held, on a busy night: the reference +15% [−1, +37],
    /// the rest +13% [−6, +34], as a busy demo's `capture frame` read) says
    /// so first: its line begins with its cause, not with a share.
    @Test func sharesThatAreNoChangeSayUndeterminedFirst() {
        func shift(_ ratio: Double, _ lower: Double, _ upper: Double) -> ShiftEstimate {
            ShiftEstimate(ratio: ratio, lower: lower, upper: upper, confidence: 0.95)
        }
        var shares = StepShares(machine: shift(1.15, 0.987, 1.37), code: shift(1.13, 0.936, 1.34))
        #expect(shares.cause == .undetermined)
        #expect(
            shares.line
                == "undetermined: the reference's +15% [−1.3, +37], beyond it +13% [−6.4, +34]; neither share is "
                + "a change on its own", "\(shares.line)")
        // The same rest beside a reference that moved is the machine's.
        shares.machine = shift(1.15, 1.05, 1.37)
        #expect(shares.cause == .machine)
        #expect(shares.line.hasPrefix("the machine's: +15% [+5.0, +37]; the code's +13%"), "\(shares.line)")
    }

    /// The demo's own shape, with the machine slowing at the night the code
    /// changed: one test (`t0`, four time metrics) whose code made it
    /// slower, one (`t1`) that did not change, times noisy enough that the
    /// code's share alone is not a change, and instructions of `t0` with no
    /// counted reference. The counted step is not the machine's (the
    /// reference's times say nothing of a count), so every time step of
    /// `t0` is at least partly the code's; the suite's step, which `t0`'s
    /// metrics would carry alone, is not the machine's excuse for them.
    @Test func countedWorkThatSteppedMakesEveryTimeOfItsTestTheCodesWhenTheMachineSlowsToo() throws {
        let machine = { (night: Int) in night >= 10 ? 1.2 : 1.0 }
        let code = { (night: Int) in night >= 10 ? 1.15 : 1.0 }
        func time(_ name: String, seed: UInt64, _ level: @escaping (Int) -> Double) -> MetricHistory {
            MetricHistory(name: name, values: Levels.times(nights: 20, sigma: 0.12, seed: seed, level: level))
        }
        let names = ["wall", "interval:lens apply:sum", "interval:lens apply:cpu", "interval:lens apply:max"]
        let metrics =
            names.enumerated().map { index, name in
                time("t0/\(name)", seed: 10 + UInt64(index)) { 2e7 * machine($0) * code($0) }
            } + [
                time("t1/wall", seed: 20) { 1e7 * machine($0) },
                // Allocations stepped too, listed first: the evidence named
                // is the instructions, as the counted view leads with them.
                MetricHistory(
                    name: "t0/allocations",
                    values: Levels.counts(nights: 20, seed: 22) { night in night >= 10 ? 20 : 14 }),
                MetricHistory(
                    name: "t0/instructions", values: Levels.counts(nights: 20, seed: 21) { 2.7e8 * code($0) }),
            ]
        let reference =
            names.enumerated().map { index, name in time("t0/\(name)", seed: 30 + UInt64(index)) { 2e7 * machine($0) } }
            + [time("t1/wall", seed: 40) { 1e7 * machine($0) }]
        let report = try StepAttribution.attribute([HostHistory(host: "ci", metrics: metrics, reference: reference)])
        let counted = try #require(report.steps.first { $0.step.metric == "t0/instructions" })
        #expect(counted.step.firstAfter == 10)
        #expect(counted.cause != .machine, "\(counted.reason)")
        #expect(report.steps.contains { $0.step.metric == "t0/allocations" && $0.step.firstAfter == 10 })
        let times = report.steps.filter {
            $0.step.metric.hasPrefix("t0/") && !["t0/instructions", "t0/allocations"].contains($0.step.metric)
        }
        #expect(!times.isEmpty)
        for step in times {
            #expect(abs(step.step.firstAfter - 10) <= 1, "\(step.step.metric)")
            #expect(step.cause == .code, "\(step.step.metric): \(step.reason)")
            #expect(step.shares?.countedStep == "t0/instructions", "\(step.step.metric): \(step.reason)")
        }
        #expect(report.suiteSteps.allSatisfy { $0.cause != .machine || $0.firstAfter != 10 }, "\(report.suiteSteps)")
    }

    /// The code's share and its interval: the series' log change less the
    /// reference's, their widths in quadrature.
    @Test func theCodesShareIsWhatTheReferenceLeaves() throws {
        let step = HistoryStep(
            metric: "t/wall", lastBefore: 9, firstAfter: 10,
            change: ShiftEstimate(ratio: 1.32, lower: 1.30, upper: 1.34, confidence: 0.95), pValue: 1e-4,
            level: 0.01, direction: .regression, status: .confirmed, runsBefore: 10, runsAfter: 10)
        // The machine ±10% night by night on both, 20% slower from night
        // 10; the code 10% slower still.
        let noise = (0..<20).map { night in 1 + 0.1 * sin(Double(night) * 2.3) }
        let reference = (0..<20).map { night in noise[night] * (night >= 10 ? 1.2 : 1.0) }
        let series = (0..<20).map { night in reference[night] * (night >= 10 ? 1.1 : 1.0) }
        let shares = try #require(StepShares.split(step, series: series, reference: reference))
        #expect(abs(shares.machine.ratio - 1.2) < 0.06, "\(shares.machine)")
        #expect(abs(shares.code.ratio - 1.1) < 1e-9, "the nightly ratio cancels the machine's noise")
        #expect(abs(shares.code.lower - 1.1) < 1e-9 && abs(shares.code.upper - 1.1) < 1e-9)
        #expect(shares.cause == .code && shares.line.hasPrefix("both: +"), "\(shares.line)")
        #expect(shares.line.contains("the code's beyond +1"), "\(shares.line)")
        // The same step with a reference that did not move is the code's.
        let flat = Array(repeating: 1.0, count: 20)
        let still = try #require(
            StepShares.split(step, series: (0..<20).map { $0 >= 10 ? 1.32 : 1 }, reference: flat))
        #expect(still.line.hasPrefix("the code's: +32%"), "\(still.line)")
        #expect(StepShares.split(step, series: flat, reference: [1, 1]) == nil, "a reference shorter than the nights")
    }
}
