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
                "ordered by time: \(unknown.count) commit\(unknown.count == 1 ? " is" : "s are") not in the repository (e.g. \(example))"
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

    // MARK: Positions and groups

    /// Runs of one suite analysed together: their groups, and per group the
    /// runs at each slot.
    struct Cohort {
        var slots: [TrendSlot]
        var groups: [String]
        /// runs[group][slot]: the group's runs at that slot, oldest first.
        var runs: [[[HistoryRun]]]
    }

    /// The cohorts of a suite's runs: one when the groups share enough
    /// commits (or there is one group), else one per group.
    static func cohorts(
        _ runs: [HistoryRun], suite: String, keys: [String], order: CommitOrder?, options: TrendOptions,
        notes: inout [String]
    ) -> [Cohort] {
        var groups: [String] = []
        var byGroup: [String: [HistoryRun]] = [:]
        for run in runs {
            let group = groupName(run, keys: keys)
            if byGroup[group] == nil { groups.append(group) }
            byGroup[group, default: []].append(run)
        }
        groups.sort()
        // A position is a commit in git order, and in time order when
        // several groups must be aligned; else each run is one.
        let byCommit = order != nil || groups.count > 1
        func slotKey(_ run: HistoryRun) -> String {
            byCommit && !run.metadata.gitCommit.isEmpty ? run.metadata.gitCommit : "run:" + run.key
        }
        // Every slot of the suite, in order.
        var first: [String: (time: Int64, commit: String)] = [:]
        for run in runs {
            let key = slotKey(run)
            if let seen = first[key], seen.time <= run.metadata.timestamp { continue }
            first[key] = (run.metadata.timestamp, run.metadata.gitCommit)
        }
        let ordered = first.keys.sorted { a, b in
            if let order, let pa = order.position(of: first[a]!.commit), let pb = order.position(of: first[b]!.commit),
                pa != pb
            {
                return pa < pb
            }
            return (first[a]!.time, a) < (first[b]!.time, b)
        }
        func cohort(_ members: [String], slots: [String]) -> Cohort {
            let index = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($1, $0) })
            var table = members.map { _ in Array(repeating: [HistoryRun](), count: slots.count) }
            for (g, group) in members.enumerated() {
                for run in byGroup[group] ?? [] {
                    if let slot = index[slotKey(run)] { table[g][slot].append(run) }
                }
                for slot in table[g].indices {
                    table[g][slot].sort { ($0.metadata.timestamp, $0.key) < ($1.metadata.timestamp, $1.key) }
                }
            }
            return Cohort(
                slots: slots.map { TrendSlot(commit: first[$0]!.commit, time: first[$0]!.time) }, groups: members,
                runs: table)
        }
        guard groups.count > 1 else { return [cohort(groups, slots: ordered)] }
        let slotsOf = byGroup.mapValues { Set($0.map(slotKey)) }
        let shared = ordered.filter { key in groups.allSatisfy { slotsOf[$0]!.contains(key) } }
        if shared.count >= 2 * options.detection.minimumSegment {
            let sharedKeys = Set(shared)
            let left = runs.filter { !sharedKeys.contains(slotKey($0)) }.count
            if left > 0 {
                notes.append(
                    "\(suite): \(left) run\(left == 1 ? "" : "s") at commits not measured by every one of \(groups.joined(separator: ", ")) left out (series are aligned commit by commit)"
                )
            }
            return [cohort(groups, slots: shared)]
        }
        notes.append(
            "\(suite): \(groups.joined(separator: ", ")) share \(shared.count) commit\(shared.count == 1 ? "" : "s"); each is analysed alone, so no step is compared across them"
        )
        return groups.map { group in
            cohort([group], slots: ordered.filter { slotsOf[group]!.contains($0) })
        }
    }

    /// The values of `run` for `keys`, joined: its group's name.
    /// Whether `pattern` names a `profile:` metric by its prefix: it matches
    /// the metric's name, and no longer matches once the prefix is gone.
    static func asksForProfile(_ pattern: Regex<AnyRegexOutput>?, metric: String) -> Bool {
        guard let pattern else { return false }
        let bare = String(metric.dropFirst(RunRecord.profileMetricPrefix.count))
        let matches = { (text: String) in ((try? pattern.firstMatch(in: text)) ?? nil) != nil }
        return matches(metric) && !matches(bare)
    }

    /// The functions of `test`'s stored profile in at least three quarters
    /// of the positions from `firstAfter` on and in at most a quarter of
    /// those before it, in group `group`: shares, not every position, so
    /// that a change placed a run early or late still names them.
    static func newInProfile(_ cohort: Cohort, group: String, test: String, firstAfter: Int) -> [String] {
        guard let g = cohort.groups.firstIndex(of: group), firstAfter > 0, firstAfter < cohort.runs[g].count
        else { return [] }
        func functions(_ runs: [HistoryRun]) -> Set<String> {
            Set(
                runs.flatMap { run in
                    run.tests.filter { $0.name == test }.flatMap(\.metrics).map(\.name)
                        .filter { $0.hasPrefix(RunRecord.profileMetricPrefix) }
                })
        }
        let positions = cohort.runs[g].map(functions)
        func shares(_ sets: ArraySlice<Set<String>>) -> [String: Double] {
            var counts: [String: Int] = [:]
            for set in sets { for name in set { counts[name, default: 0] += 1 } }
            return counts.mapValues { Double($0) / Double(max(sets.count, 1)) }
        }
        let before = shares(positions[..<firstAfter])
        let after = shares(positions[firstAfter...])
        return after.filter { $0.value >= 0.75 && (before[$0.key] ?? 0) <= 0.25 }.keys.sorted()
            .map { String($0.dropFirst(RunRecord.profileMetricPrefix.count)) }
    }

    static func groupName(_ run: HistoryRun, keys: [String]) -> String {
        keys.map { key -> String in
            switch key {
            case "host": return run.metadata.host
            case "branch": return run.branch
            case "os": return run.metadata.os
            case "cpu": return run.metadata.cpuModel
            case "build": return run.metadata.tags["build"] ?? run.metadata.buildConfiguration
            case "suite": return run.metadata.suite
            default: return run.metadata.tags[key] ?? "(no \(key))"
            }
        }.joined(separator: ", ")
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

    /// The median of `values`, or nil when one is missing.
    private static func median(_ values: [Double?]) -> Double? {
        guard !values.isEmpty else { return nil }
        var present: [Double] = []
        for value in values {
            guard let value else { return nil }
            present.append(value)
        }
        return Quantiles.median(sorted: present.sorted())
    }

    private static func analyze(
        _ cohort: Cohort, suite: String, reference: [HistoryRun], keys: [String], pattern: Regex<AnyRegexOutput>?,
        marks: [HistoryMark], options: TrendOptions, into report: inout TrendReport
    ) throws(HistoryError) {
        let label = cohort.groups.count == 1 && !cohort.groups[0].isEmpty ? "\(suite) on \(cohort.groups[0])" : suite
        guard cohort.slots.count >= 2 else {
            report.notes.append(
                "\(label): \(cohort.slots.count) commit\(cohort.slots.count == 1 ? "" : "s"): a trend needs at least two"
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
        var series: [Series] = []
        var partial: [String] = []
        var notPositive: [String] = []
        for (column, name) in names.enumerated() {
            let full = "\(name.test)/\(name.metric)"
            if let pattern, (try? pattern.firstMatch(in: full)) == nil { continue }
            // A profile's functions are told beside the changes, not as
            // series of their own, unless --metric asks for them by name.
            if name.metric.hasPrefix(RunRecord.profileMetricPrefix),
                !Self.asksForProfile(pattern, metric: name.metric)
            {
                continue
            }
            let values = cohort.runs.map { group in
                group.map { runs in median(runs.map { table.value($0, column: column) }) }
            }
            let present = values.joined().filter { $0 != nil }.count
            let total = cohort.slots.count * cohort.groups.count
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
                    let time = cohort.runs.flatMap { $0[index] }.map(\.metadata.timestamp).min() ?? slot.time
                    let nearest = own.min { abs($0.metadata.timestamp - time) < abs($1.metadata.timestamp - time) }!
                    return [nearest]
                })
        }
        let floor = options.relativeFloor
        let hosts = cohort.groups.indices.map { g in
            let metrics = series.map {
                MetricHistory(
                    name: $0.name, values: $0.values[g], better: $0.better, relativeFloor: floor)
            }
            let references: [MetricHistory] =
                referenceRuns[g].allSatisfy(\.isEmpty)
                ? []
                : series.compactMap { item in
                    let values = referenceRuns[g].map { runs in
                        median(runs.map { table.value($0, column: item.column) })
                    }
                    guard values.allSatisfy({ $0 != nil && $0!.isFinite && $0! > 0 }) else { return nil }
                    return MetricHistory(
                        name: item.name, values: values.map { $0! }, better: item.better,
                        relativeFloor: floor)
                }
            return HostHistory(host: cohort.groups[g], metrics: metrics, reference: references)
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
                    groups: cohort.groups, slots: cohort.slots, points: points))
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
            change.newInProfile = Self.newInProfile(
                cohort, group: found.host, test: item.test, firstAfter: found.step.firstAfter)
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
                "possible change: \(suite)/\(item.test)/\(item.metric)\(on) at run \(possible.change.firstAfter)"
                    + commit + (possible.againstReference ? ", against the reference" : "")
                    + String(
                        format: ", adjusted p %.3g above the level %.3g", possible.change.adjustedPValue,
                        options.detection.alpha)
                    + "; about \(more) more run\(more == 1 ? "" : "s") at its new level to confirm")
        }
        for found in attribution.suiteSteps {
            let (before, after) = runs(group: found.host, before: found.lastBefore, after: found.firstAfter)
            report.suiteChanges.append(
                TrendSuiteChange(suite: suite, step: found, lastBefore: before, firstAfter: after))
        }
    }
}

/// The repository's commits in order, found by full hash or by a prefix
/// of at least 4 hex digits.
struct CommitOrder {
    private let position: [String: Int]
    private let sorted: [String]

    init(_ commits: [String]) {
        position = Dictionary(commits.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        sorted = commits.sorted()
    }

    /// The position of `commit` (full or abbreviated), or nil.
    func position(of commit: String) -> Int? {
        if let exact = position[commit] { return exact }
        guard commit.count >= 4 else { return nil }
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < commit { low = middle + 1 } else { high = middle }
        }
        guard low < sorted.count, sorted[low].hasPrefix(commit) else { return nil }
        return position[sorted[low]]
    }
}
