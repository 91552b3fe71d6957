import Foundation

extension StepAttribution {
    /// Where the counted series of each test stepped, per host: host index
    /// to test (``testPart(of:)``) to the first runs after its steps.
    typealias CountedBoundaries = [Int: [String: [Int]]]

    /// The first run after each step of every counted series
    /// (``CountedLevels``) of `hosts`, found in `report` (its series in
    /// the order of the hosts' metrics).
    static func countedBoundaries(_ hosts: [HostHistory], report: HistoryReport) -> CountedBoundaries {
        var boundaries: CountedBoundaries = [:]
        var offset = 0
        for (hostIndex, host) in hosts.enumerated() {
            for (metric, found) in zip(host.metrics, report.series[offset..<(offset + host.metrics.count)])
            where CountedLevels.repeats(metric.values) {
                boundaries[hostIndex, default: [:]][testPart(of: metric.name), default: []] += found.steps.map(
                    \.firstAfter)
            }
            offset += host.metrics.count
        }
        return boundaries
    }

    /// `step` of a time series judged with the runs where its test's counted
    /// work stepped as known boundaries, then placed at a counted step near
    /// it (``placedAtCountedStep(_:history:countedSteps:options:)``), with
    /// a note on each; nil when the step does not hold between those
    /// boundaries.
    ///
    /// A counted series says exactly where the code's work changed. The
    /// scan, which does not know it, can split a time series a few runs
    /// away from there when some nights before the change ran slow (a
    /// heavy-tailed maximum, a busy stretch of the machine): the split then
    /// takes the code's step and those nights together. Such a split, more
    /// than ``StepDetector/placementReach`` runs from a counted step that
    /// lies among its runs, is searched for again between the counted steps
    /// around it, as a segment of its own (the seeded scan, and the end
    /// test for the last segment), at the level that admitted it; found
    /// there, it is the series' own step, estimated between those
    /// boundaries, and not found, it is not a step. The test at the counted
    /// run (``stepsAtCountedRuns(_:steps:countedAt:options:)``) then asks
    /// whether the time moved with the code.
    static func judgedBesideCountedSteps(
        _ step: HistoryStep, history: MetricHistory, countedSteps: [Int], options: StepDetectionOptions
    ) -> (step: HistoryStep, note: String?)? {
        let lower = step.firstAfter - step.runsBefore
        let upper = step.firstAfter + step.runsAfter
        let among = countedSteps.filter {
            $0 > lower && $0 < upper && abs($0 - step.firstAfter) > StepDetector.placementReach
        }
        guard !among.isEmpty else {
            return placedAtCountedStep(step, history: history, countedSteps: countedSteps, options: options)
        }
        let from = among.filter { $0 < step.firstAfter }.max() ?? lower
        let to = among.filter { $0 > step.firstAfter }.min() ?? upper
        let values = history.values
        var split: (index: Int, pValue: Double, status: StepStatus)?
        if let scan = SeededScan.best(values[from..<to], minimumSegment: options.minimumSegment),
            scan.pValue <= step.level
        {
            let index = StepDetector.place(
                values, near: scan.split, lower: from, upper: to, shortestAfter: options.minimumSegment,
                options: options)
            split = (index, scan.pValue, .confirmed)
        } else if to == values.count, let end = EndTest.test(values[from..<to], options: options),
            end.pValue <= step.level
        {
            split = (
                values.count - end.runsAfter, end.pValue,
                .possible(runsToConfirm: options.minimumSegment - end.runsAfter)
            )
        }
        guard let split,
            let judged = StepDetector.makeStep(
                history, at: split.index, lower: from, upper: to, pValue: split.pValue, level: step.level,
                status: split.status, options: options)
        else { return nil }
        let bounds = [from == lower ? nil : from, to == upper ? nil : to].compactMap { $0.map { "\($0 + 1)" } }
        return (
            judged,
            "found again between the test's counted steps (position\(bounds.count == 1 ? "" : "s") "
                + bounds.joined(separator: " and ") + "), p " + String(format: "%.2g", split.pValue)
        )
    }

    /// `step` of a time series placed at the run where a counted series of
    /// its test stepped, with a note saying so; `step` itself when no
    /// counted step is near or the time series does not move there.
    ///
    /// A counted series (instructions, allocations) repeats from process
    /// to process, so the run its level moved at is known exactly; a time
    /// series' split is placed by its noisy runs, and one slow night before
    /// the code changed (or one fast night after) can pull it a run or two
    /// away. A time step within ``StepDetector/placementReach`` runs of a
    /// counted step of the same test is moved there when the time series
    /// cannot tell the two places apart: over the step's runs, it is higher
    /// (or lower, as the step goes) after the counted run than before it (a
    /// one-sided Mann-Whitney test at the intervals' level, 1 − `confidence`:
    /// the scan has already found the step, and this only asks where it
    /// lies), and the runs between the two
    /// places fit the side the counted run gives them: either within the
    /// noise of a typical run (the absolute deviation of log values from
    /// the two sides' medians grows by no more than three times the mean
    /// deviation of one run for each run that changes side: two slow
    /// nights just before the change do not hold it back, a clean step two
    /// runs away does), or each lies within the range of the runs already on
    /// that side (the first night after the change measured low, as a later
    /// night did too), or, one run away, the test at the counted run is
    /// beyond the scan's level, `alpha`, by itself. Its change is then
    /// estimated between the runs on either side of the counted step.
    static func placedAtCountedStep(
        _ step: HistoryStep, history: MetricHistory, countedSteps: [Int], options: StepDetectionOptions
    ) -> (step: HistoryStep, note: String?) {
        let lower = step.firstAfter - step.runsBefore
        let upper = step.firstAfter + step.runsAfter
        let near = countedSteps.filter { run in
            run != step.firstAfter && abs(run - step.firstAfter) <= StepDetector.placementReach
                && run - lower >= EndTest.shortest && upper - run >= EndTest.shortest
        }
        guard !countedSteps.contains(step.firstAfter),
            let run = near.min(by: { abs($0 - step.firstAfter) < abs($1 - step.firstAfter) })
        else { return (step, nil) }
        let z = RankScan.splitStatistic(history.values[lower..<upper], split: run - lower)
        let up = step.change.ratio > 1
        let pAtRun = NormalDistribution.survival(up ? z : -z)
        guard pAtRun <= 1 - options.confidence else { return (step, nil) }
        let logs = history.values[lower..<upper].map { log($0) }
        let own = StepDetector.splitCost(logs, at: step.firstAfter - lower)
        let perRun = own / Double(logs.count)
        let fits =
            StepDetector.splitCost(logs, at: run - lower) - own <= 3 * perRun * Double(abs(run - step.firstAfter))
        // The runs that change side, and the runs of the side they join.
        let moving = history.values[min(run, step.firstAfter)..<max(run, step.firstAfter)]
        let joined =
            run < step.firstAfter ? history.values[step.firstAfter..<upper] : history.values[lower..<step.firstAfter]
        let range = joined.min().flatMap { low in joined.max().map { low...$0 } }
        let within = range.map { range in moving.allSatisfy(range.contains) } ?? false
        // One run away, a split at the counted run that is itself beyond
        // the scan's level needs no more: the code changed there, and the
        // series says so on its own; one slow night just before the change
        // (or one fast night after) pulled the scan's split to it. Two runs
        // or more at the other level are the series' own evidence.
        let adjacentAndStrong = abs(run - step.firstAfter) == 1 && pAtRun <= options.alpha
        guard fits || within || adjacentAndStrong else { return (step, nil) }
        let status: StepStatus =
            upper - run < options.minimumSegment
            ? .possible(runsToConfirm: options.minimumSegment - (upper - run))
            : step.status
        guard
            let placed = StepDetector.makeStep(
                history, at: run, lower: lower, upper: upper, pValue: step.pValue, level: step.level, status: status,
                options: options),
            placed.direction == step.direction
        else { return (step, nil) }
        return (
            placed,
            "placed at position \(run + 1), where the test's counted work stepped; its own split was position "
                + "\(step.firstAfter + 1)"
        )
    }
}

extension StepAttribution {
    /// A time step found by a test at the run where its test's counted
    /// work stepped.
    struct CountedRunStep {
        var host: Int
        var metric: Int
        var step: HistoryStep
        var note: String
    }

    /// The share of the level a test at a counted run gives to the way the
    /// counts moved the work (more work, a worse time: higher for a time,
    /// lower for a rate): 0.8. The other way keeps 0.2, so a time that
    /// improved while its instructions grew is still found.
    static let expectedDirectionShare = 0.8

    /// Whether `test`'s counted work grew (true) or shrank (false) at
    /// `run` on `host`: its instruction count where that moved there past
    /// ``CountedLevels/tolerance`` (the medians of up to three runs on each
    /// side), else the first of its other counted series that did; nil when
    /// none moved there.
    static func countedWorkGrew(_ host: HostHistory, test: String, at run: Int) -> Bool? {
        let counted = host.metrics.filter { testPart(of: $0.name) == test && CountedLevels.repeats($0.values) }
        let instructionsFirst =
            counted.filter { $0.name == instructionsSeries(of: test) }
            + counted.filter { $0.name != instructionsSeries(of: test) }
        for series in instructionsFirst where run > 0 && run < series.values.count {
            let before = Quantiles.median(sorted: series.values[max(0, run - 3)..<run].sorted())
            let after = Quantiles.median(sorted: series.values[run..<min(series.values.count, run + 3)].sorted())
            if abs(after / before - 1) > CountedLevels.tolerance { return after > before }
        }
        return nil
    }

    /// The time steps at the runs where their test's counted work stepped,
    /// where no step of the series lies within ``StepDetector/placementReach``
    /// runs of it (`steps`, the ones found so far).
    ///
    /// The scan looks for a split anywhere in a series and pays for every
    /// place it could have looked; a counted step says where to look,
    /// chosen by counts the time's noise does not touch, so one test at that
    /// run alone is a sound test with far more power: in the demo's history
    /// on a noisy host (wall ±20% from night to night) the rebuilt curve's
    /// +26% at night 11 was missed by the scan and found here. For each
    /// such series and run: the Mann-Whitney test of the runs after it
    /// against the runs before it, between the series' neighbouring steps
    /// (at least ``EndTest/shortest`` runs on each side), its normal
    /// approximation, with ``expectedDirectionShare`` of its level on the
    /// way the counts moved the work (``countedWorkGrew(_:test:at:)``; both
    /// ways alike when they say nothing); Benjamini-Hochberg over all these
    /// tests at `alpha`, a family of its own. Where the host has a reference series of the
    /// same name, the series over its reference, night by night, is tested
    /// too, and the smaller p-value of the two, doubled (Bonferroni), is the
    /// test's: the machine that slows the series on some nights slows the
    /// pinned build on the same nights, and a step of the code that the
    /// machine's busy nights before it hide in the raw series stands out
    /// against the reference (in the demo's history, a quiet host busy on
    /// the nights before the change: `lens apply:cpu` p 0.14 raw, 0.0004
    /// against the reference). Confirmed with `minimumSegment` runs after
    /// it, else possible; a change within the metric's floor is not a step.
    /// The series whose test fell short of the level, or whose change lies
    /// within the floor, come back as `untold`, with their change at that
    /// run as a step's would be measured.
    static func stepsAtCountedRuns(
        _ hosts: [HostHistory], steps: [AttributedStep], countedAt: CountedBoundaries, options: StepDetectionOptions
    ) -> (found: [CountedRunStep], untold: [TimeAtCountedStep]) {
        // `relative` says whether the series over its reference carried the
        // test (nil without a reference); `reference` is the reference's values.
        var tests:
            [(
                host: Int, metric: Int, run: Int, lower: Int, upper: Int, pValue: Double, relative: Bool?, up: Bool?,
                reference: [Double]?
            )] = []
        for (hostIndex, host) in hosts.enumerated() {
            for (metricIndex, metric) in host.metrics.enumerated() where !CountedLevels.repeats(metric.values) {
                let test = testPart(of: metric.name)
                let runs = countedAt[hostIndex]?[test] ?? []
                let own = steps.filter { $0.host == host.host && $0.step.metric == metric.name }.map(\.step.firstAfter)
                let reference = host.reference.first {
                    $0.name == metric.name && $0.values.count == metric.values.count
                        && !CountedLevels.repeats($0.values)
                }
                let relative = reference.map { reference in zip(metric.values, reference.values).map { $0 / $1 } }
                for run in Set(runs).sorted()
                where !own.contains(where: { abs($0 - run) <= StepDetector.placementReach }) {
                    let lower = own.filter { $0 < run }.max() ?? 0
                    let upper = own.filter { $0 > run }.min() ?? metric.values.count
                    guard run - lower >= EndTest.shortest, upper - run >= EndTest.shortest else { continue }
                    // More work makes the metric worse: higher for a time.
                    let grew = countedWorkGrew(host, test: test, at: run)
                    let up = grew.map { $0 == (metric.better == .lower) } ?? true
                    let share = grew == nil ? 0.5 : expectedDirectionShare
                    // The direction weighted, for the note; nil when both were alike.
                    let weighted = grew.map { _ in up }
                    let raw = RankScan.splitPValue(
                        metric.values[lower..<upper], split: run - lower, up: up, expectedShare: share)
                    guard let relative else {
                        tests.append((hostIndex, metricIndex, run, lower, upper, raw, nil, weighted, nil))
                        continue
                    }
                    let against = RankScan.splitPValue(
                        relative[lower..<upper], split: run - lower, up: up, expectedShare: share)
                    tests.append(
                        (
                            hostIndex, metricIndex, run, lower, upper, min(1, 2 * min(raw, against)), against < raw,
                            weighted, reference?.values
                        ))
                }
            }
        }
        guard !tests.isEmpty else { return ([], []) }
        let adjusted = MultipleComparisons.benjaminiHochberg(tests.map(\.pValue))
        var found: [CountedRunStep] = []
        var untold: [TimeAtCountedStep] = []
        for (test, adjustedP) in zip(tests, adjusted) {
            let history = hosts[test.host].metrics[test.metric]
            func tellUntold() {
                guard
                    let (change, runsBefore, runsAfter) = StepDetector.changeAcross(
                        history, at: test.run, lower: test.lower, upper: test.upper, options: options)
                else { return }
                // Where the machine moved too, the raw change is the code's
                // and the machine's together; the code's share is what the
                // pinned build does not explain, as a step's is.
                let overReference = test.reference.flatMap { reference in
                    StepShares.split(
                        at: test.run, runsBefore: runsBefore, runsAfter: runsAfter, confidence: change.confidence,
                        series: history.values, reference: reference)?.code
                }
                untold.append(
                    TimeAtCountedStep(
                        host: hosts[test.host].host, metric: history.name, firstAfter: test.run, change: change,
                        pValue: test.pValue, adjustedPValue: adjustedP, tests: tests.count,
                        againstReference: test.relative != nil, changeOverReference: overReference))
            }
            guard adjustedP <= options.alpha else {
                tellUntold()
                continue
            }
            let after = test.upper - test.run
            let status: StepStatus =
                after < options.minimumSegment
                ? .possible(runsToConfirm: options.minimumSegment - after) : .confirmed
            guard
                let step = StepDetector.makeStep(
                    history, at: test.run, lower: test.lower, upper: test.upper, pValue: test.pValue,
                    level: adjustedP > 0 ? options.alpha * test.pValue / adjustedP : options.alpha, status: status,
                    options: options)
            else {
                tellUntold()
                continue
            }
            let note =
                "found at position \(test.run + 1), where the test's counted work stepped: a rank test there alone"
                + (test.relative.map { overReference in
                    overReference
                        ? " of the series over its reference (the smaller p of it and of the series, doubled)"
                        : " (the smaller p of the series and of the series over its reference, doubled)"
                } ?? "")
                + (test.up.map { up in
                    ", \(Int(expectedDirectionShare * 100))% of its level on a \(up ? "rise" : "fall"), the way the "
                        + "counts moved the work"
                } ?? "") + ", p "
                + String(format: "%.2g", test.pValue)
                + " (Benjamini-Hochberg over \(tests.count) such test\(tests.count == 1 ? "" : "s"))"
            found.append(CountedRunStep(host: test.host, metric: test.metric, step: step, note: note))
        }
        return (found, untold)
    }
}
