import Foundation
import StrobeHistory
import StrobeStatistics

// What a change says of a test's functions: those new in its CPU profile,
// and those whose counted instructions stepped with it.
extension TrendAnalysis {
    /// The prefix of a metric that is one function of a test's profile
    /// (`profile:` for sampled CPU time, `instructions:` for counted
    /// instructions), or nil.
    static func functionPrefix(of metric: String) -> String? {
        [RunRecord.profileMetricPrefix, RunRecord.instructionMetricPrefix].first { metric.hasPrefix($0) }
    }

    /// Whether `pattern` names a function's metric by its `prefix`: it
    /// matches the metric's name, and no longer matches once the prefix is
    /// gone.
    static func asksForFunctions(_ pattern: Regex<AnyRegexOutput>?, metric: String, prefix: String) -> Bool {
        guard let pattern else { return false }
        let bare = String(metric.dropFirst(prefix.count))
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

    /// The most functions a change names.
    static let functionsNamed = 10

    /// The functions of `test` whose counted instructions per iteration
    /// (`instructions:` metrics) stepped at `firstAfter` in group `group`:
    /// the median of the `window` positions before against that of the
    /// `window` from it, apart by more than ``CountedLevels/tolerance`` (a
    /// function at under a kept share of the test in most positions of a
    /// side counts 0 there). A caller gives way to a function of fewer
    /// instructions whose change matches its own within 10%, the callee
    /// that carries it (inclusive counts hold a callee's change in every
    /// caller). Library frames last, then the largest changes first; at
    /// most ``functionsNamed``.
    static func functionsThatStepped(
        _ cohort: Cohort, table: FunctionTable, group: String, test: String, firstAfter: Int, window: Int
    ) -> [FunctionStep] {
        guard let g = cohort.groups.firstIndex(of: group), firstAfter > 0 else { return [] }
        func level(_ slots: ArraySlice<Double?>) -> Double {
            let present = slots.compactMap { $0 }
            guard !present.isEmpty, 2 * present.count >= slots.count else { return 0 }
            return Quantiles.median(sorted: present.sorted())
        }
        var stepped: [FunctionStep] = []
        for (function, groups) in table.functions(of: test) where g < groups.count {
            let series = groups[g]
            guard firstAfter < series.count else { continue }
            let before = level(series[max(0, firstAfter - window)..<firstAfter])
            let after = level(series[firstAfter..<min(series.count, firstAfter + window)])
            guard before > 0 || after > 0 else { continue }
            if before > 0, after > 0, abs(log(after / before)) <= CountedLevels.tolerance { continue }
            stepped.append(FunctionStep(function: function, before: before, after: after))
        }
        let named = stepped.filter { caller in
            !stepped.contains { callee in
                callee.function != caller.function
                    && max(callee.before, callee.after) < max(caller.before, caller.after)
                    && (callee.difference > 0) == (caller.difference > 0)
                    && abs(caller.difference - callee.difference) <= 0.1 * abs(caller.difference)
            }
        }
        return Array(
            named.sorted {
                ($0.library ? 1 : 0, -abs($0.difference), $0.function)
                    < ($1.library ? 1 : 0, -abs($1.difference), $1.function)
            }.prefix(functionsNamed))
    }
}

/// Each test's counted instructions per function, per group and position:
/// the `instructions:` metrics of a cohort's runs, read once.
struct FunctionTable {
    /// By test, then function: per group, per position, the median of the
    /// position's runs that counted it.
    private var values: [String: [String: [[Double?]]]] = [:]

    /// The table of `cohort`, whose metrics `names` lists, read from `table`.
    init(
        _ cohort: TrendAnalysis.Cohort, names: [(test: String, metric: String)], table: TrendAnalysis.ValueTable,
        columns: [String: Int]
    ) {
        let prefix = RunRecord.instructionMetricPrefix
        for name in names where name.metric.hasPrefix(prefix) {
            guard let column = columns["\(name.test)/\(name.metric)"] else { continue }
            values[name.test, default: [:]][String(name.metric.dropFirst(prefix.count))] = cohort.runs.map { group in
                group.map { runs in TrendAnalysis.median(runs.map { table.value($0, column: column) }) }
            }
        }
    }

    /// The functions counted in `test`, each with its values per group and position.
    func functions(of test: String) -> [String: [[Double?]]] { values[test] ?? [:] }
}
