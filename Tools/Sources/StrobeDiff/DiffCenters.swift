import StrobeJudgement

/// The central values a report prints beside each change. They are the
/// medians of all samples, unless those point the other way from the change
/// the test estimated (a count whose processes differ: minor faults 22 →
/// 15.5 beside "+28.8%"): then the cell shows the centers the test compared,
/// marked, and a note says why the medians differ.
extension DiffReport {
    /// Whether the medians of all samples of `row` point the other way
    /// from the change its test estimated.
    static func mediansContradict(_ row: MetricComparison) -> Bool {
        let estimate = row.shift.map { $0.ratio - 1 } ?? row.difference
        let pooled = row.candidate.median - row.baseline.median
        return estimate * pooled < 0
    }

    /// "22 → 15.5", or, where those medians point against the estimate, the
    /// centers the test compared, marked: "12 → 15.5 *".
    static func centralValues(_ row: MetricComparison) -> String {
        if mediansContradict(row), let base = row.baselineCenter, let cand = row.candidateCenter {
            return "\(value(base, unit: row.unit)) → \(value(cand, unit: row.unit)) *"
        }
        return "\(value(row.baseline.median, unit: row.unit)) → \(value(row.candidate.median, unit: row.unit))"
    }

    /// The rows of `shown` whose medians point against their estimate,
    /// each with those medians: "a/process.faults.minor 22 → 15.5"; nil
    /// when none does.
    static func contradictingMedians(_ shown: [MetricComparison]) -> String? {
        let marked = shown.filter { mediansContradict($0) && $0.baselineCenter != nil && $0.candidateCenter != nil }
        guard !marked.isEmpty else { return nil }
        return marked.map { row in
            let name = row.group.isEmpty ? row.name : "\(row.name) [\(row.group)]"
            return "\(name) \(value(row.baseline.median, unit: row.unit)) → "
                + "\(value(row.candidate.median, unit: row.unit))"
        }.joined(separator: ", ")
    }

    /// Why a marked row shows the test's centers, for a table whose cells
    /// are ``centralValues(_:)``; nil when no row of `shown` is marked.
    static func centersNote(_ shown: [MetricComparison]) -> String? {
        contradictingMedians(shown).map { listed in
            "* the centers the test compared: the median of each side's process summaries (for a count that "
                + "varies, each process's mean). The medians of all samples point the other way, since the "
                + "processes of a side differ: \(listed)."
        }
    }
}
