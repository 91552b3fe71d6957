import Foundation
import StrobeHistory
import StrobeResults
import StrobeStatistics

/// Finds the changes in a history of runs: one series per suite, test,
/// metric and group (host by default), each run one value (its processes'
/// summary, as `strobe diff` compares them), runs in commit order when the
/// repository is known, else in time order; steps by ``StepDetector`` and
/// their cause by ``StepAttribution``, across the groups and against the
/// reference runs.
///
/// In git order a series' position is a commit: the runs of one commit on
/// one host are one value (their median), so that a change always lies
/// between two commits. In time order each run is a position, unless
/// several groups must be aligned (then commits are). Runs without a commit
/// are positions of their own. When there
/// are several groups, a suite's series are aligned on the commits every
/// group measured (attribution compares them commit by commit); a group
/// that shares too few commits with the others is analysed alone.
public enum TrendAnalysis {
    /// The report of `runs` (oldest first or in any order), with `marks`
    /// shown on the changes they name.
    ///
    /// With no reference named, runs that a tag splits into interleaved
    /// builds (``InterleavedBuilds``) take the pinned build's runs as the
    /// reference, saying so in the notes, or are refused.
    ///
    /// - Throws: ``HistoryError`` of kind ``HistoryError/Kind/badArgument``
    ///   for a metric pattern that is not a regular expression, a grouping
    ///   key that is empty, or interleaved builds with no pinned one.
    public static func analyze(
        _ runs: [HistoryRun], source: String, marks: [HistoryMark] = [], options: TrendOptions = TrendOptions()
    ) throws(HistoryError) -> TrendReport {
        let pattern: Regex<AnyRegexOutput>?
        do {
            pattern = try options.metricPattern.map { try Regex($0) }
        } catch {
            throw HistoryError(
                .badArgument, "--metric \"\(options.metricPattern ?? "")\": not a regular expression: \(error)")
        }
        if let keys = options.groupBy, keys.contains(where: \.isEmpty) {
            throw HistoryError(
                .badArgument,
                "--group-by \(keys.joined(separator: ",")): a key is empty; write e.g. host or host,device")
        }
        var options = options
        var notes: [String] = []
        if options.reference == nil {
            let splits = InterleavedBuilds.find(in: runs, ignoring: Set(options.groupBy ?? []))
            if let split = splits.first(where: { $0.pinnedValue != nil }), let pinned = split.pinnedValue {
                options.reference = HistoryFilter(.tag(split.key), pinned)
                notes.append(
                    "reference runs: \(split.key)=\(pinned), found by their tag (the runs differ in \(split.summary)); "
                        + "--reference KEY=VALUE names another")
            } else if let split = splits.first, let example = split.values.last?.value {
                throw HistoryError(
                    .badArgument,
                    "the runs differ in their tag \(split.summary), interleaved in time: a trend over both mixes two "
                        + "builds. Name the pinned one with --reference \(split.key)=VALUE (e.g. --reference "
                        + "\(split.key)=\(example)), keep one with --where \(split.key)=VALUE, or give each its own "
                        + "series with --group-by \(split.key)")
            }
        }
        let reference = runs.filter { run in options.reference.map { $0.matches(run) } ?? false }
        let analysed = runs.filter { run in !(options.reference.map { $0.matches(run) } ?? false) }
        let keys = options.groupBy ?? (Set(analysed.map(\.metadata.host)).count > 1 ? ["host"] : [])
        if options.groupBy == nil, !keys.isEmpty {
            notes.append("one series per host: the runs come from \(Set(analysed.map(\.metadata.host)).count) hosts")
        }
        let order = CommitOrder(options.commitOrder ?? [])
        let unknown = Set(analysed.map(\.metadata.gitCommit).filter { order.position(of: $0) == nil })
        let byCommit = options.commitOrder != nil && unknown.isEmpty
        if options.commitOrder != nil, !unknown.isEmpty {
            let example = unknown.sorted().first.map { $0.isEmpty ? "(none)" : String($0.prefix(12)) } ?? ""
            notes.append(
                "ordered by time: \(unknown.count) commit\(unknown.count == 1 ? " is" : "s are") not in the repository "
                    + "(e.g. \(example))"
            )
        }
        var report = TrendReport(
            source: source, order: byCommit ? "commit" : "time", runCount: analysed.count,
            referenceRunCount: reference.count,
            reference: options.reference?.description, alpha: options.detection.alpha,
            relativeFloor: options.relativeFloor,
            series: [], changes: [], suiteChanges: [], notes: notes)
        let suites = analysed.reduce(into: [String]()) {
            if !$0.contains($1.metadata.suite) { $0.append($1.metadata.suite) }
        }
        for suite in suites.sorted() {
            let suiteRuns = analysed.filter { $0.metadata.suite == suite }
            let suiteReference = reference.filter { $0.metadata.suite == suite }
            for cohort in cohorts(
                suiteRuns, suite: suite, keys: keys, order: byCommit ? order : nil, options: options,
                notes: &report.notes)
            {
                try analyze(
                    cohort, suite: suite, reference: suiteReference, keys: keys, pattern: pattern, marks: marks,
                    options: options, into: &report)
            }
        }
        return report
    }

    // MARK: One cohort

    /// A metric of a cohort: its values per group and slot.
    private struct Series {
        var test: String
        var metric: String
        var unit: String
        var better: MetricDirection
        /// Its column in the cohort's ``ValueTable``.
        var column: Int
        var values: [[Double]]

        var name: String { "\(test)/\(metric)" }
    }

    /// The value of every metric of some runs (the median of each run's
    /// processes' summaries), found by run key and metric column: built
    /// once per cohort, so that reading a series searches nothing.
    struct ValueTable {
        private var rows: [String: [Double?]] = [:]

        /// The values of `runs` for the metrics `columns` names
        /// (`TEST/METRIC` to column).
        init(_ runs: [HistoryRun], columns: [String: Int]) {
            rows.reserveCapacity(runs.count)
            for run in runs where rows[run.key] == nil {
                var row = [Double?](repeating: nil, count: columns.count)
                for test in run.tests {
                    for metric in test.metrics {
                        if let column = columns["\(test.name)/\(metric.name)"], row[column] == nil {
                            row[column] = metric.summary.centralValue
                        }
                    }
                }
                rows[run.key] = row
            }
        }

        /// The value of column `column` in `run`, or nil.
        func value(_ run: HistoryRun, column: Int) -> Double? {
            rows[run.key]?[column] ?? nil
        }
    }

    /// Per test of `columns`, the CPU share of each position's native runs
    /// (the median over them of the process's user and system CPU time
    /// over the wall time); a test measured so at every position only.
    static func cpuShares(
        _ columns: [(test: String, wall: Int, user: Int, system: Int)], runs: [[HistoryRun]], table: ValueTable
    ) -> [String: [Double]] {
        var shares: [String: [Double]] = [:]
        for column in columns {
            let values = runs.map { runs in
                median(
                    runs.filter { !$0.metadata.simulated }.map { run -> Double? in
                        guard let wall = table.value(run, column: column.wall), wall > 0,
                            let user = table.value(run, column: column.user),
                            let system = table.value(run, column: column.system)
                        else { return nil }
                        return (user + system) / wall
                    })
            }
            if values.allSatisfy({ $0 != nil }) { shares[column.test] = values.map { $0! } }
        }
        return shares
    }

    /// The median of the values present, or nil when none is: the runs of
    /// one position may measure different metrics (a native run times the
    /// code, a simulated one counts its instructions).
    static func median(_ values: [Double?]) -> Double? {
        let present = values.compactMap { $0 }
        return present.isEmpty ? nil : Quantiles.median(sorted: present.sorted())
    }

    /// The reference's values at every position from those measured,
    /// each missing one taken from the nearest position measured (the
    /// earlier of two as near); nil when fewer than
    /// ``minimumReferenceMeasurements`` were measured.
    ///
    /// A pinned reference build measures the machine, which moves slowly
    /// against a night's noise, and its counted work (instructions), which
    /// moves only with the toolchain or the system: counting it every night
    /// doubles the cost of the counted runs, so a team may count it every
    /// few nights. A machine's step between two measurements then shows
    /// half way between them.
    static func filledFromNearest(_ measured: [Double?]) -> [Double]? {
        let positions = measured.indices.filter { measured[$0] != nil }
        guard positions.count >= minimumReferenceMeasurements || positions.count == measured.count else { return nil }
        return measured.indices.map { index in
            // The nearest position measured, the earlier of two as near.
            let nearest = positions.min { (abs($0 - index), $0) < (abs($1 - index), $1) }
            return measured[index] ?? measured[nearest!]!
        }
    }

    /// The fewest positions at which a reference must be measured to stand
    /// for every position: 3 (a step of it between two of them is then
    /// seen against a level on either side).
    static let minimumReferenceMeasurements = 3

    private static func analyze(
        _ cohort: Cohort, suite: String, reference: [HistoryRun], keys: [String], pattern: Regex<AnyRegexOutput>?,
        marks: [HistoryMark], options: TrendOptions, into report: inout TrendReport
    ) throws(HistoryError) {
        let label = cohort.groups.count == 1 && !cohort.groups[0].isEmpty ? "\(suite) on \(cohort.groups[0])" : suite
        guard cohort.slots.count >= 2 else {
            report.notes.append(
                "\(label): \(cohort.slots.count) commit\(cohort.slots.count == 1 ? "" : "s"): a trend needs at least "
                    + "two"
            )
            return
        }
        // The metrics, in the order the runs list them.
        var names: [(test: String, metric: String, unit: String, better: MetricDirection)] = []
        var seen = Set<String>()
        for group in cohort.runs {
            for runs in group {
                for run in runs {
                    for test in run.tests {
                        for metric in test.metrics where seen.insert("\(test.name)/\(metric.name)").inserted {
                            names.append((test.name, metric.name, metric.unit, metric.better))
                        }
                    }
                }
            }
        }
        var columns: [String: Int] = [:]
        for (column, name) in names.enumerated() { columns["\(name.test)/\(name.metric)"] = column }
        let table = ValueTable(Array(cohort.runs.joined().joined()) + reference, columns: columns)
        let functionTable = FunctionTable(
            cohort, names: names.map { ($0.test, $0.metric) }, table: table, columns: columns)
        var series: [Series] = []
        // Counted work (instructions, allocations) of the tests whose
        // series --metric chose, left out by it: not reported, but the
        // night its level moved places and explains their time steps.
        var evidence: [Series] = []
        var partial: [String] = []
        var notPositive: [String] = []
        for (column, name) in names.enumerated() {
            let full = "\(name.test)/\(name.metric)"
            let chosen = pattern.map { (try? $0.firstMatch(in: full)) != nil } ?? true
            // A profile's functions (sampled or counted) are told beside
            // the changes, not as series of their own, unless --metric asks
            // for them by name.
            if let prefix = Self.functionPrefix(of: name.metric),
                !chosen || !Self.asksForFunctions(pattern, metric: name.metric, prefix: prefix)
            {
                continue
            }
            let values = cohort.runs.map { group in
                group.map { runs in median(runs.map { table.value($0, column: column) }) }
            }
            let present = values.joined().filter { $0 != nil }.count
            let total = cohort.slots.count * cohort.groups.count
            if !chosen {
                let counted = values.map { $0.compactMap { $0 } }
                // Every value present, and each group's a counted level
                // (which also holds every value finite and positive).
                if present == total, counted.allSatisfy(CountedLevels.repeats) {
                    evidence.append(
                        Series(
                            test: name.test, metric: name.metric, unit: name.unit, better: name.better,
                            column: column, values: counted))
                }
                continue
            }
            if present < total {
                partial.append("\(full) (\(present) of \(total))")
                continue
            }
            let flat = values.map { $0.map { $0! } }
            if flat.joined().contains(where: { !$0.isFinite || $0 <= 0 }) {
                notPositive.append(full)
                continue
            }
            series.append(
                Series(
                    test: name.test, metric: name.metric, unit: name.unit, better: name.better,
                    column: column, values: flat))
        }
        if !partial.isEmpty {
            report.notes.append("\(label): not measured at every commit, left out: " + partial.joined(separator: ", "))
        }
        if !notPositive.isEmpty {
            report.notes.append(
                "\(label): a value of zero or less (changes are ratios), left out: "
                    + notPositive.joined(separator: ", "))
        }
        guard !series.isEmpty else { return }
        let chosenTests = Set(series.map(\.test))
        evidence.removeAll { !chosenTests.contains($0.test) }
        // The reference runs of each group, matched to the slots: those of
        // the same commit, else the nearest in time.
        var referenceRuns: [[[HistoryRun]]] = []
        for group in cohort.groups {
            let own = reference.filter { groupName($0, keys: keys) == group }
            let ownByCommit = Dictionary(grouping: own, by: \.metadata.gitCommit)
            referenceRuns.append(
                cohort.slots.enumerated().map { index, slot in
                    guard !own.isEmpty else { return [] }
                    if !slot.commit.isEmpty, let same = ownByCommit[slot.commit] { return same }
                    // The nearest native run and the nearest simulated one.
                    let time = cohort.runs.flatMap { $0[index] }.map(\.metadata.timestamp).min() ?? slot.time
                    return [false, true].compactMap { simulated in
                        own.filter { $0.metadata.simulated == simulated }.min {
                            abs($0.metadata.timestamp - time) < abs($1.metadata.timestamp - time)
                        }
                    }
                })
        }
        let floor = options.relativeFloor
        var sparseReferences: [String] = []
        // Each chosen test's wall and CPU columns: whether it computed or
        // waited over a step (a time step with its instructions unchanged
        // is the code's only when it waited).
        let cpuColumns = chosenTests.sorted().compactMap { test -> (test: String, wall: Int, user: Int, system: Int)? in
            guard let wall = columns["\(test)/\(MetricKind.wallName)"],
                let user = columns["\(test)/\(MetricKind.cpuUserName)"],
                let system = columns["\(test)/\(MetricKind.cpuSystemName)"]
            else { return nil }
            return (test, wall, user, system)
        }
        let hosts = cohort.groups.indices.map { g in
            let metrics = (series + evidence).map {
                MetricHistory(
                    name: $0.name, values: $0.values[g], better: $0.better, relativeFloor: floor)
            }
            let references: [MetricHistory] =
                referenceRuns[g].allSatisfy(\.isEmpty)
                ? []
                // The evidence's counted references too: a counted step is
                // judged by the reference's count alone (the machine's
                // speed moves the reference's times, never a count).
                : (series + evidence).compactMap { item in
                    let measured = referenceRuns[g].map { runs in
                        median(runs.map { table.value($0, column: item.column) }).flatMap {
                            $0.isFinite && $0 > 0 ? $0 : nil
                        }
                    }
                    guard let values = Self.filledFromNearest(measured) else { return nil }
                    let count = measured.compactMap { $0 }.count
                    if count < measured.count, !evidence.contains(where: { $0.name == item.name }) {
                        sparseReferences.append("\(item.name) (\(count) of \(measured.count))")
                    }
                    return MetricHistory(
                        name: item.name, values: values, better: item.better, relativeFloor: floor)
                }
            return HostHistory(
                host: cohort.groups[g], metrics: metrics, reference: references,
                cpuShares: Self.cpuShares(cpuColumns, runs: cohort.runs[g], table: table))
        }
        if !sparseReferences.isEmpty {
            report.notes.append(
                "\(label): the reference was not measured at every commit; each other commit takes its nearest "
                    + "measurement: " + sparseReferences.joined(separator: ", "))
        }
        let attribution: AttributionReport
        do {
            attribution = try StepAttribution.attribute(hosts, options: options.detection)
        } catch {
            throw HistoryError(.badArgument, "\(label): \(error.description)")
        }
        // The plots.
        for item in series {
            var points: [TrendPoint] = []
            for (g, group) in cohort.groups.enumerated() {
                for (slot, runs) in cohort.runs[g].enumerated() {
                    for run in runs {
                        if let value = table.value(run, column: item.column) {
                            points.append(
                                TrendPoint(slot: slot, group: group, value: value, run: run.key, reference: false))
                        }
                    }
                    for run in referenceRuns[g][slot] {
                        if let value = table.value(run, column: item.column) {
                            points.append(
                                TrendPoint(slot: slot, group: group, value: value, run: run.key, reference: true))
                        }
                    }
                }
            }
            report.series.append(
                TrendSeries(
                    suite: suite, test: item.test, metric: item.metric, unit: item.unit,
                    better: item.better,
                    groups: cohort.groups, slots: cohort.slots, points: points,
                    referenceAdjustments: attribution.referenceAdjustments.filter { $0.metric == item.name }))
        }
        func runs(group: String, before: Int, after: Int) -> (TrendRunReference, TrendRunReference) {
            let g = cohort.groups.firstIndex(of: group) ?? 0
            let last = cohort.runs[g][before].last!
            let first = cohort.runs[g][after].first!
            return (
                TrendRunReference(
                    run: last.key, commit: last.metadata.gitCommit, time: last.metadata.timestamp, slot: before),
                TrendRunReference(
                    run: first.key, commit: first.metadata.gitCommit, time: first.metadata.timestamp, slot: after)
            )
        }
        let first = report.changes.count
        for found in attribution.steps {
            guard let item = series.first(where: { $0.name == found.step.metric }) else { continue }
            let (before, after) = runs(group: found.host, before: found.step.lastBefore, after: found.step.firstAfter)
            let name = "\(suite)/\(item.test)/\(item.metric)"
            let mark =
                marks.last { mark in
                    !mark.series.isEmpty
                        && mark.matches(
                            before: (before.commit, before.run), after: (after.commit, after.run), series: name)
                }
                ?? marks.last { mark in
                    mark.series.isEmpty
                        && mark.matches(
                            before: (before.commit, before.run), after: (after.commit, after.run), series: name)
                }
            var change = TrendChange(
                suite: suite, test: item.test, metric: item.metric, unit: item.unit, step: found,
                lastBefore: before, firstAfter: after, commits: [], moreCommits: 0,
                confirm: options.confirm.lines(
                    suite: suite, test: item.test, metric: item.metric, before: before.commit, after: after.commit),
                mark: mark)
            let values = item.values[cohort.groups.firstIndex(of: found.host) ?? 0]
            let start = max(0, found.step.firstAfter - found.step.runsBefore)
            let end = min(values.count, found.step.firstAfter + found.step.runsAfter)
            let old = Array(values[start..<found.step.firstAfter])
            let new = Array(values[found.step.firstAfter..<end])
            if !old.isEmpty, !new.isEmpty {
                change.levelBefore = Quantiles.median(sorted: old.sorted())
                change.levelAfter = Quantiles.median(sorted: new.sorted())
                change.levelsRepeat = Set(old).count == 1 && Set(new).count == 1
            }
            change.newInProfile = Self.newInProfile(
                cohort, group: found.host, test: item.test, firstAfter: found.step.firstAfter)
            change.functionsThatStepped = Self.functionsThatStepped(
                cohort, table: functionTable, group: found.host, test: item.test, firstAfter: found.step.firstAfter,
                window: options.detection.minimumSegment)
            report.changes.append(change)
        }
        // The changes of one range of commits on one group share a recipe:
        // one pair of worktrees and one comparison over all their tests.
        let byRange = Dictionary(grouping: report.changes.indices.dropFirst(first)) { index in
            let change = report.changes[index]
            return [change.group, change.lastBefore.commit, change.firstAfter.commit]
        }
        for indices in byRange.values where indices.count > 1 {
            let change = report.changes[indices[0]]
            let recipe = options.confirm.lines(
                suite: suite, series: indices.sorted().map { (report.changes[$0].test, report.changes[$0].metric) },
                before: change.lastBefore.commit, after: change.firstAfter.commit)
            for index in indices { report.changes[index].confirm = recipe }
        }
        // What the evidence points to without reaching the level, said
        // rather than left out.
        for possible in attribution.possibleChanges {
            guard let item = series.first(where: { $0.name == possible.metric }),
                possible.change.firstAfter >= 1, possible.change.firstAfter < cohort.slots.count
            else { continue }
            let (_, first) = runs(
                group: possible.host, before: possible.change.firstAfter - 1, after: possible.change.firstAfter)
            let commit = first.commit.isEmpty ? "" : " (commit \(first.commit.prefix(8)))"
            let on = possible.host.isEmpty ? "" : " on \(possible.host)"
            let more = possible.change.runsToConfirm
            report.notes.append(
                "possible change: \(suite)/\(item.test)/\(item.metric)\(on) at position \(possible.change.firstAfter + 1)"
                    + commit + (possible.againstReference ? ", against the reference" : "")
                    + String(
                        format: ", adjusted p %.3g above the level %.3g", possible.change.adjustedPValue,
                        options.detection.alpha)
                    + "; about \(more) more run\(more == 1 ? "" : "s") at its new level to confirm")
        }
        // Where a test's counted work stepped and its times did not: how
        // far each moved there, one line per test and run.
        let told = attribution.timesAtCountedSteps.compactMap { time in
            series.first { $0.name == time.metric }.map { (item: $0, time: time) }
        }
        let untold = Dictionary(grouping: told) { [$0.time.host, $0.item.test, String($0.time.firstAfter)] }
        for key in untold.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let times = untold[key]!
            guard let first = times.first, first.time.firstAfter >= 1, first.time.firstAfter < cohort.slots.count
            else { continue }
            let (_, after) = runs(
                group: first.time.host, before: first.time.firstAfter - 1, after: first.time.firstAfter)
            let commit = after.commit.isEmpty ? "" : " (commit \(after.commit.prefix(8)))"
            let on = first.time.host.isEmpty ? "" : " on \(first.time.host)"
            let measured = times.map { item, time in
                "\(item.metric) \(TrendChange.percentText(time.change)) ("
                    + (time.changeOverReference.map { "over its reference \(TrendChange.percentText($0)), " } ?? "")
                    + String(format: "p %.2g)", time.pValue)
            }
            report.notes.append(
                "\(suite)/\(first.item.test)\(on): its counted work stepped at position \(first.time.firstAfter + 1)\(commit); "
                    + "its time did not step there beyond its noise: " + measured.joined(separator: ", ")
                    + "; rank tests there alone"
                    + (times.contains { $0.time.againstReference }
                        ? " (with the reference: the smaller p of the series and of the series over its reference, "
                            + "doubled)" : "")
                    + String(
                        format: ", Benjamini-Hochberg over %d at the level %.3g", first.time.tests,
                        options.detection.alpha))
        }
        for found in attribution.suiteSteps {
            let (before, after) = runs(group: found.host, before: found.lastBefore, after: found.firstAfter)
            report.suiteChanges.append(
                TrendSuiteChange(suite: suite, step: found, lastBefore: before, firstAfter: after))
        }
    }
}
