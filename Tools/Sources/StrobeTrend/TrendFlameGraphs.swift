import StrobeFlameGraph
import StrobeHistory

// The differential flame graph of each change the code made: the profiled
// runs after the step against those before it.
extension TrendReport {
    /// The most positions on either side of a change whose runs a graph
    /// averages.
    public static let flameGraphWindow = 5

    /// One differential flame graph per test, group and commit range where
    /// the code changed a metric (``codeChanges``) and runs on both sides
    /// carry the test's CPU stacks (``HistoryTest/stacks``, from runs with
    /// `--profile`), in the order of the changes.
    ///
    /// The baseline is the mean of the stacks of the group's runs at up to
    /// `window` positions before the change, the candidate the same from
    /// the change on; neither side reaches past another change of the same
    /// series. In commit order the runs of every series of the test at
    /// those commits count, so that a step of counted instructions (from
    /// simulated runs, which carry no profile) is drawn from the profiled
    /// runs of the same commits. A frame's change counts when it is at
    /// least a quarter of ``relativeFloor`` of the baseline's whole CPU time
    /// per iteration.
    /// Functions the change brought into the profile, and those whose
    /// counted instructions stepped with it, carry that as a note.
    public func flameGraphs(runs: [HistoryRun], window: Int = flameGraphWindow) -> [DifferentialFlameGraph] {
        let byKey = Dictionary(runs.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let seriesByName = Dictionary(series.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var drawn: Set<String> = []
        var graphs: [DifferentialFlameGraph] = []
        for change in codeChanges {
            let place = "\(change.suite)/\(change.test)/\(change.group)/\(change.range)"
            guard !drawn.contains(place), let series = seriesByName[change.series] else { continue }
            // Neither side reaches past the series' other changes.
            let others = changes.filter { $0.series == change.series && $0.group == change.group && $0 != change }
            let lowest = others.map(\.firstAfter.slot).filter { $0 <= change.lastBefore.slot }.max() ?? 0
            let highest = others.map(\.firstAfter.slot).filter { $0 > change.firstAfter.slot }.min() ?? Int.max
            let before = max(lowest, change.lastBefore.slot - window + 1)...change.lastBefore.slot
            let after = change.firstAfter.slot...min(highest - 1, change.firstAfter.slot + window - 1)
            let baselineRuns = stacks(of: change, in: series, slots: before, runs: byKey)
            let candidateRuns = stacks(of: change, in: series, slots: after, runs: byKey)
            guard !baselineRuns.isEmpty, !candidateRuns.isEmpty else { continue }
            drawn.insert(place)
            let baseline = FlameStack.mean(of: baselineRuns)
            let candidate = FlameStack.mean(of: candidateRuns)
            let total = baseline.reduce(0) { $0 + $1.amount }
            let metrics = codeChanges.filter {
                $0.suite == change.suite && $0.test == change.test && $0.group == change.group
                    && $0.range == change.range
            }
            let what = metrics.map { "\($0.metric) \($0.changeText(naming: false))" }.joined(separator: ", ")
            var graph = DifferentialFlameGraph(
                title: "\(change.test)\(change.group.isEmpty ? "" : " on \(change.group)") at \(change.shortRange) "
                    + "— the code's: \(what) (\(baselineRuns.count) runs before, \(candidateRuns.count) after)",
                unit: .nanoseconds, baseline: baseline, candidate: candidate, floor: relativeFloor / 4 * total)
            for metric in metrics {
                for function in metric.newInProfile {
                    graph.notes[function] = "new in the test's profile from this change"
                }
                for step in metric.functionsThatStepped where graph.notes[step.function] == nil {
                    graph.notes[step.function] = "counted instructions per iteration: \(step.summary)"
                }
            }
            graphs.append(graph)
        }
        return graphs
    }

    /// The stacks of `change`'s test in the runs of its group at `slots` of
    /// `series`, one list per run that has them. In commit order a slot is
    /// a commit, and every series of the test counts: a counted series
    /// (simulated runs, no profile) steps at the commit where the profiled
    /// runs of the same test show what changed. In time order, the series'
    /// own runs.
    private func stacks(
        of change: TrendChange, in series: TrendSeries, slots: ClosedRange<Int>, runs: [String: HistoryRun]
    ) -> [[FlameStack]] {
        let commits = Set(slots.compactMap { series.slots.indices.contains($0) ? series.slots[$0].commit : nil })
        var keys: [String] = []
        if order == "commit", !commits.contains("") {
            for other in self.series where other.suite == change.suite && other.test == change.test {
                for point in other.points where point.group == change.group && !point.reference {
                    if other.slots.indices.contains(point.slot), commits.contains(other.slots[point.slot].commit) {
                        keys.append(point.run)
                    }
                }
            }
        } else {
            keys = series.points.filter { $0.group == change.group && !$0.reference && slots.contains($0.slot) }
                .map(\.run)
        }
        var seen: Set<String> = []
        return keys.filter { seen.insert($0).inserted }
            .compactMap { runs[$0]?.tests.first { $0.name == change.test }?.stacks }
            .filter { !$0.isEmpty }
    }
}
