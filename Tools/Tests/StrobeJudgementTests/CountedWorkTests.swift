import Foundation
import StrobeResults
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement
@testable import StrobeStatistics

/// The counts decide what they cover: once a CPU-bound test's instructions
/// and allocations are decided, its time needs no decision ("work
/// unchanged", or the counts' verdict with the time as measured); a test
/// that waits is measured until its time is decided.
@Suite struct CountedWorkTests {
    /// One test's sides over `rounds` rounds of 5 iterations: a wall time
    /// with `noise` per process (log scale), of which the CPU time is
    /// `busy` (1: CPU-bound), and constant instruction and allocation
    /// counts, the candidate's instructions `instructions` times the
    /// baseline's.
    static func sides(
        test: String = "sort", rounds: Int = 2, noise: Double = 0.2, busy: Double = 0.98, candidateBusy: Double? = nil,
        instructions: Double = 1, switches: Double? = nil, reportOnly: Bool = false, framesOver: Bool = false,
        seed: UInt64 = 5
    ) -> (SampleSet, SampleSet) {
        var generator = SeededGenerator(seed: seed)
        var sets = [SampleSet(), SampleSet()]
        for index in 0..<2 {
            for round in 1...rounds {
                let level = 2e7 * exp(noise * generator.normal())
                let wall = (0..<5).map { _ in level * exp(0.01 * generator.normal()) }
                var metrics: [(String, String, [Double])] = [
                    ("wall", "ns", wall),
                    ("process.cpu", "ns", wall.map { $0 * (index == 1 ? candidateBusy ?? busy : busy) }),
                    ("instructions", "count", Array(repeating: 4e7 * (index == 1 ? instructions : 1), count: 5)),
                    ("allocations", "count", Array(repeating: 12, count: 5)),
                ]
                if let switches {
                    metrics.append(("thread.context_switches.voluntary", "count", Array(repeating: switches, count: 5)))
                }
                if reportOnly { metrics.append(("process.cpu.user", "ns", wall.map { $0 * busy })) }
                if framesOver {
                    // A value the test reports: frames over their budget,
                    // which a loaded machine's slow iterations raise.
                    let frames = (0..<5).map { _ in max(0, (2 + 2 * generator.normal()).rounded()) }
                    metrics.append(("frames over budget", "frames", frames))
                }
                let run = (index == 0 ? "b" : "c") + "\(round)"
                sets[index].series += metrics.map { metric, unit, samples in
                    SampleSet.Series(
                        metric: "\(test)/\(metric)", unit: unit, better: .lower, samples: samples, dimensions: [:],
                        source: run, run: run, round: round)
                }
            }
        }
        return (sets[0], sets[1])
    }

    static func look(_ number: Int = 1, rounds: Int = 2) -> SequentialDesign.Look {
        var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 40, firstLook: 2)
        var look = design.look(number: 1, rounds: 2, final: false)
        for next in stride(from: 2, through: number, by: 1) {
            look = design.look(number: next, rounds: rounds, final: false)
        }
        return look
    }

    static func judged(_ sides: (SampleSet, SampleSet), look: SequentialDesign.Look = look()) throws -> DiffReport {
        try Judgement.compare(baseline: sides.0, candidate: sides.1, look: look)
    }

    @Test func aCPUBoundTestWithUnchangedCountsNeedsNoDecidedTime() throws {
        let report = try Self.judged(Self.sides())
        let wall = try #require(report.rows.first { $0.name == "sort/wall" })
        #expect(wall.verdict == .inconclusive, "20% noise per process cannot decide a 2% floor in 2 rounds")
        #expect(CountedWork.waits(test: "sort", group: "", in: report) == false)
        var ledger = DecisionLedger()
        let (kept, open) = ledger.record(report, rounds: 8, plannedRounds: 40)
        #expect(open.isEmpty, "\(open)")
        let settled = try #require(kept.rows.first { $0.name == "sort/wall" })
        #expect(settled.settledByCounts == .unchanged && settled.verdict == .inconclusive)
        #expect(kept.undecided.isEmpty)
        #expect(kept.settled.count == 2, "wall and process.cpu")
        let verdict = try #require(kept.tests.first)
        #expect(verdict.outcome == .unchanged)
        #expect(verdict.unchangedWork == "instructions ±0.0%, allocations ±0")
        #expect(
            verdict.decision.hasPrefix("work unchanged (instructions ±0.0%, allocations ±0); time undecided (wall "),
            "\(verdict.decision)")
        #expect(
            kept.headline == "1 test's work unchanged, time undecided: sort (instructions ±0.0%, allocations ±0)",
            "\(kept.headline)")
        #expect(kept.metricCounts.contains("0 inconclusive, 2 times left to the counts"), "\(kept.metricCounts)")
        #expect(kept.exitStatus == 0)
        // Every format says the same: the settled times are marked, and
        // none is listed as what a longer budget would decide.
        let text = kept.renderText()
        #expect(text.contains("inconclusive (left to the counts)") && !text.contains("\ninconclusive:\n"), "\(text)")
        #expect(kept.renderMarkdown().contains("work unchanged, time undecided: sort"))
        #expect(kept.renderHTML().contains("work unchanged, time undecided: sort"))
        #expect(kept.renderJSON().contains("\"settledByCounts\" : \"unchanged\""))
    }

    @Test func aTestThatWaitsIsMeasuredUntilItsTimeIsDecided() throws {
        // Half of each iteration is off the CPU: a sleep or a lock.
        let report = try Self.judged(Self.sides(busy: 0.5))
        #expect(CountedWork.waits(test: "sort", group: "", in: report) == true)
        var ledger = DecisionLedger()
        let (kept, open) = ledger.record(report, rounds: 2, plannedRounds: 40)
        #expect(open == ["sort"])
        // Its CPU time is time spent executing, which the unchanged counts
        // cover; its wall time holds the waiting and is measured on.
        #expect(kept.settled.map(\.name) == ["sort/process.cpu"])
        #expect(kept.rows.first { $0.name == "sort/wall" }?.settledByCounts == nil)
        #expect(kept.tests.first?.outcome == .undecided)
    }

    @Test func aTestThatWaitsEndsOnceItsWallTimeIsDecided() throws {
        // A sleep that grew by a fifth of the wall time, the work (40% of
        // it) the same: the wall time is decided at once; the CPU time,
        // which a neighbour moved by -20% and +30% in alternate rounds, is
        // settled by the counts, so the test ends.
        var (baseline, candidate) = Self.sides(rounds: 8, noise: 0.002, busy: 0.4)
        candidate.series = candidate.series.map { series in
            var series = series
            if series.metric == "sort/wall" { series.samples = series.samples.map { $0 * 1.2 } }
            if series.metric == "sort/process.cpu" {
                series.samples = series.samples.map { $0 * ((series.round ?? 0) % 2 == 1 ? 0.8 : 1.3) }
            }
            return series
        }
        let report = try Self.judged((baseline, candidate), look: Self.look(4, rounds: 8))
        #expect(report.rows.first { $0.name == "sort/wall" }?.verdict == .regression)
        #expect(report.rows.first { $0.name == "sort/process.cpu" }?.verdict == .inconclusive)
        var ledger = DecisionLedger()
        let (kept, open) = ledger.record(report, rounds: 8, plannedRounds: 40)
        #expect(open.isEmpty, "\(open)")
        #expect(kept.rows.first { $0.name == "sort/process.cpu" }?.settledByCounts == .unchanged)
        #expect(kept.tests.first?.outcome == .slower)
        var measuredToTheEnd = DecisionLedger()
        measuredToTheEnd.decidesTimes = true
        let measured = measuredToTheEnd.record(report, rounds: 8, plannedRounds: 40).report
        #expect(measured.rows.first { $0.name == "sort/process.cpu" }?.settledByCounts == nil)
    }

    /// A test whose counts regressed is a regression whatever else it
    /// measures: a value it reports (frames over their budget, noisy on a
    /// loaded machine) is kept as measured, waiting or not, and the test
    /// ends. Counts that improved settle its times only: the value it
    /// reports may still be a regression, and is measured on.
    @Test func countsThatRegressedSettleEveryOtherMetricOfTheTest() throws {
        for (busy, switches) in [(0.98, nil), (0.4, 1.0)] as [(Double, Double?)] {
            let report = try Self.judged(
                Self.sides(busy: busy, instructions: 1.02, switches: switches, framesOver: true))
            let frames = try #require(report.rows.first { $0.name == "sort/frames over budget" })
            #expect(frames.gates && frames.verdict == .inconclusive)
            var ledger = DecisionLedger()
            let (kept, open) = ledger.record(report, rounds: 2, plannedRounds: 40)
            #expect(open.isEmpty, "\(open)")
            #expect(kept.rows.first { $0.name == "sort/frames over budget" }?.settledByCounts == .changed)
            #expect(kept.rows.first { $0.name == "sort/wall" }?.settledByCounts == .changed)
            #expect(kept.tests.first?.outcome == .slower)
            #expect(kept.exitStatus == 1)
        }
        let improved = try Self.judged(Self.sides(instructions: 0.98, framesOver: true))
        var ledger = DecisionLedger()
        let (kept, open) = ledger.record(improved, rounds: 2, plannedRounds: 40)
        #expect(open == ["sort"])
        #expect(kept.rows.first { $0.name == "sort/wall" }?.settledByCounts == .changed)
        #expect(kept.rows.first { $0.name == "sort/frames over budget" }?.settledByCounts == nil)
    }

    @Test func preemptionByANeighbourIsNotWaiting() {
        // Four of five iterations lost a third of their wall time to a
        // neighbour's process; the least-preempted one ran on the CPU.
        let wall = [30.0, 30, 20.4, 30, 30]
        let cpu = [20.0, 20, 20, 20, 20]
        let share = CountedWork.busiestShare(wall: wall, cpu: cpu)
        #expect(share.map { abs($0 - 20 / 20.4) < 1e-9 } == true)
        // Every iteration off the CPU for a quarter of its time waits.
        #expect((CountedWork.busiestShare(wall: [40, 40], cpu: [30, 30]) ?? 1) < 1 - JudgementDefaults.waitingShare)
        #expect(CountedWork.busiestShare(wall: [], cpu: [1]) == nil)
    }

    /// At a load of 20 on 2 cores a CPU-bound test spends most of its wall
    /// time preempted, but its thread never blocks: it does not wait. One
    /// that sleeps blocks each iteration, however busy the machine.
    @Test func theMeasuringThreadsVoluntarySwitchesTellWaiting() throws {
        let preempted = try Self.judged(Self.sides(busy: 0.3, switches: 0))
        #expect(CountedWork.waits(test: "sort", group: "", in: preempted) == false)
        var ledger = DecisionLedger()
        #expect(ledger.record(preempted, rounds: 2, plannedRounds: 40).openTests.isEmpty)
        let sleeping = try Self.judged(Self.sides(busy: 0.95, switches: 1))
        #expect(CountedWork.waits(test: "sort", group: "", in: sleeping) == true)
    }

    /// A measuring thread that joins two busy workers blocks in every
    /// iteration, but the process computes all the while: with the same
    /// parallelism on both sides the counts settle its time. Where a lock
    /// runs the workers one after another (the same instructions, half the
    /// parallelism), the time is measured.
    @Test func aTestThatJoinsItsBusyWorkersIsCPUBoundUnlessItsParallelismMoved() throws {
        let parallel = try Self.judged(Self.sides(busy: 1.9, switches: 1))
        #expect(CountedWork.waits(test: "sort", group: "", in: parallel) == false)
        var ledger = DecisionLedger()
        let (kept, open) = ledger.record(parallel, rounds: 2, plannedRounds: 40)
        #expect(open.isEmpty, "\(open)")
        #expect(kept.tests.first?.outcome == .unchanged)
        let serialized = try Self.judged(Self.sides(busy: 1.9, candidateBusy: 1.0, switches: 1))
        #expect(CountedWork.waits(test: "sort", group: "", in: serialized) == true)
        // Within the tolerance, the parallelism agrees; past it, it moved.
        let close = try Self.judged(Self.sides(busy: 1.9, candidateBusy: 1.9 * 1.04, switches: 1))
        #expect(CountedWork.waits(test: "sort", group: "", in: close) == false)
        let moved = try Self.judged(Self.sides(busy: 1.9, candidateBusy: 1.9 * 1.07, switches: 1))
        #expect(CountedWork.waits(test: "sort", group: "", in: moved) == true)
        // Joining workers that wait too (a sleep in each) is waiting.
        let sleepingWorkers = try Self.judged(Self.sides(busy: 0.6, switches: 1))
        #expect(CountedWork.waits(test: "sort", group: "", in: sleepingWorkers) == true)
        // Without the thread's figures (an asynchronous block): the same.
        #expect(CountedWork.waits(test: "sort", group: "", in: try Self.judged(Self.sides(busy: 1.9))) == false)
        let serialTasks = try Self.judged(Self.sides(busy: 1.9, candidateBusy: 1.0))
        #expect(CountedWork.waits(test: "sort", group: "", in: serialTasks) == true)
    }

    @Test func changedCountsGiveTheVerdictWithTheTimeAsMeasured() throws {
        let report = try Self.judged(Self.sides(instructions: 1.02))
        var ledger = DecisionLedger()
        let (kept, open) = ledger.record(report, rounds: 2, plannedRounds: 40)
        #expect(open.isEmpty)
        #expect(kept.rows.first { $0.name == "sort/wall" }?.settledByCounts == .changed)
        let verdict = try #require(kept.tests.first)
        #expect(verdict.outcome == .slower)
        #expect(verdict.unchangedWork == nil)
        #expect(verdict.decision.hasPrefix("regression (instructions +2.0%"), "\(verdict.decision)")
        #expect(verdict.decision.contains("time as measured: wall "), "\(verdict.decision)")
        #expect(kept.exitStatus == 1)
    }

    @Test func decideTimesKeepsTheOldBehaviour() throws {
        let report = try Self.judged(Self.sides())
        var ledger = DecisionLedger()
        ledger.decidesTimes = true
        let (kept, open) = ledger.record(report, rounds: 2, plannedRounds: 40)
        #expect(open == ["sort"])
        #expect(kept.settled.isEmpty && kept.tests.first?.outcome == .undecided)
        let policy = try ComparisonPolicy.parse("decide-times: true\n", file: "policy.yml")
        #expect(policy.decidesTimes == true)
        #expect(throws: DiffError.self) { try ComparisonPolicy.parse("decide-times: often\n", file: "policy.yml") }
    }

    @Test func aSettledTimeKeepsTheNumbersOfItsLook() throws {
        var ledger = DecisionLedger()
        let first = try Self.judged(Self.sides())
        let (kept, _) = ledger.record(first, rounds: 2, plannedRounds: 40)
        let wall = try #require(kept.rows.first { $0.name == "sort/wall" })
        // A later look on other data does not re-judge the settled time.
        let later = try Self.judged(Self.sides(rounds: 3, noise: 0.001, seed: 9), look: Self.look(2, rounds: 3))
        let (again, open) = ledger.record(later, rounds: 3, plannedRounds: 40)
        #expect(open.isEmpty)
        #expect(again.rows.first { $0.name == "sort/wall" } == wall)
    }

    @Test func withoutAnInstructionCountTheTimeIsMeasured() throws {
        var (baseline, candidate) = Self.sides()
        baseline.series.removeAll { $0.metric.hasSuffix("/instructions") }
        candidate.series.removeAll { $0.metric.hasSuffix("/instructions") }
        var ledger = DecisionLedger()
        let (_, open) = ledger.record(try Self.judged((baseline, candidate)), rounds: 2, plannedRounds: 40)
        #expect(open == ["sort"], "allocations alone do not say the work is the same")
    }

    @Test func aDiffLeadsWithTheCountsWhereTheTimeIsUndecided() throws {
        // No sequential comparison: the time stays undecided, but the
        // headline says what the counts decided.
        let (baseline, candidate) = Self.sides()
        let report = try Judgement.compare(baseline: baseline, candidate: candidate)
        #expect(report.tests.first?.outcome == .undecided)
        #expect(!report.headline.contains("inconclusive"), "\(report.headline)")
        #expect(report.headline.hasPrefix("1 test's work unchanged, time undecided: sort"), "\(report.headline)")
    }

    /// A time settled at the first look on a noisy machine carries that
    /// look's interval, from four pairs as wide as [−100%, +10¹²%]: every
    /// format says "not measured far enough" instead, the JSON keeps the
    /// numbers and marks them; a settled time whose interval sizes its
    /// change keeps its numbers.
    @Test func aSettledTimeWhoseIntervalSizesNothingIsNotMeasuredFarEnough() throws {
        var ledger = DecisionLedger()
        let (wide, open) = ledger.record(try Self.judged(Self.sides(noise: 0.5)), rounds: 2, plannedRounds: 40)
        #expect(open.isEmpty)
        let wall = try #require(wide.rows.first { $0.name == "sort/wall" })
        let shift = try #require(wall.shift)
        #expect(wall.settledByCounts == .unchanged && wall.notMeasuredFarEnough == true, "\(shift)")
        let upper = DiffReport.percent(shift.upper)
        for rendered in [wide.renderText(), wide.renderMarkdown(), wide.renderHTML()] {
            #expect(rendered.contains("not measured far enough"))
            #expect(!rendered.contains(upper), "\(upper) in \(rendered)")
        }
        #expect(
            wide.tests.first?.decision
                == "work unchanged (instructions ±0.0%, allocations ±0); time undecided (wall not measured far "
                + "enough, process.cpu not measured far enough)", "\(wide.tests.first?.decision ?? "")")
        let json = wide.renderJSON()
        #expect(json.contains("\"notMeasuredFarEnough\" : true") && json.contains("\"upper\" : "), "\(json)")

        var quiet = DecisionLedger()
        var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 40, firstLook: 6)
        let (sized, _) = quiet.record(
            try Self.judged(Self.sides(rounds: 6, noise: 0.03), look: design.look(number: 1, rounds: 6, final: false)),
            rounds: 6, plannedRounds: 40)
        let measured = try #require(sized.rows.first { $0.name == "sort/wall" })
        #expect(measured.settledByCounts == .unchanged && measured.notMeasuredFarEnough == nil, "\(measured.shift!)")
        #expect(sized.renderText().contains(DiffReport.change(measured)) && !sized.renderText().contains("far enough"))
    }

    /// A reported-only time of the same early look: its interval sizes
    /// nothing either, and no format prints it as if it did.
    @Test func aReportedOnlyRowWhoseIntervalSizesNothingIsNotMeasuredFarEnough() throws {
        var ledger = DecisionLedger()
        let (wide, _) = ledger.record(
            try Self.judged(Self.sides(noise: 0.5, reportOnly: true)), rounds: 2, plannedRounds: 40)
        let user = try #require(wide.rows.first { $0.name == "sort/process.cpu.user" })
        let shift = try #require(user.shift)
        #expect(!user.gates && user.verdict == .inconclusive && !SizedInterval.sizes(shift), "\(shift)")
        #expect(DiffReport.change(user) == SizedInterval.text)
        let upper = DiffReport.percent(shift.upper)
        for rendered in [wide.renderText(), wide.renderMarkdown(), wide.renderHTML()] {
            #expect(!rendered.contains(upper), "\(upper) in \(rendered)")
        }
        #expect(wide.renderJSON().contains("\"upper\" : "))
    }

    @Test func anIntervalSizesItsChangeWithinAFactorOfTwo() {
        func sizes(_ ratio: Double, _ lower: Double, _ upper: Double) -> Bool {
            SizedInterval.sizes(ShiftEstimate(ratio: ratio, lower: lower, upper: upper, confidence: 0.999))
        }
        #expect(sizes(1.004, 0.97, 1.04))
        #expect(sizes(2.5, 2.4, 2.6), "a large change measured closely is sized")
        #expect(sizes(1, 0.5, 2), "the factor itself is inside")
        // The demo's capture frame: −33.9% [−100.0, +1666640036481.4].
        #expect(!sizes(0.661, 0.661 * 0.661 / 1.666640036482e10, 1.666640036482e10))
        #expect(!sizes(1.1, 0.6, 2.3))
        #expect(!sizes(1, 0, 1.5) && !sizes(1, 0.9, .infinity))
    }
}
