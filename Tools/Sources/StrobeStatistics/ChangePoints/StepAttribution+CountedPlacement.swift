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
    /// one-sided Mann-Whitney test at `alpha`), and the runs between the two
    /// places fit the levels the counted run gives them about as well as a
    /// typical run fits its own: the absolute deviation of log values from
    /// the two sides' medians grows by no more than the mean deviation of
    /// one run for each run that changes side. Its change is then estimated
    /// between the runs on either side of the counted step.
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
        guard NormalDistribution.survival(up ? z : -z) <= options.alpha else { return (step, nil) }
        let logs = history.values[lower..<upper].map { log($0) }
        let own = StepDetector.splitCost(logs, at: step.firstAfter - lower)
        let perRun = own / Double(logs.count)
        guard StepDetector.splitCost(logs, at: run - lower) - own <= perRun * Double(abs(run - step.firstAfter))
        else { return (step, nil) }
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
            "placed at run \(run), where the test's counted work stepped; its own split was run \(step.firstAfter)"
        )
    }
}
