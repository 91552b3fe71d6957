import StrobeJudgement

/// The exact counts (allocations, retains) and instruction counts that a
/// look of `strobe compare` found changed, and the instruction counts it
/// found unchanged, each told once, as soon as it is decided: a count that
/// is the same in every iteration on each side, or instructions that repeat within their tolerance, are decided at the
/// first look, while the same test's times may need many more rounds.
struct DecidedCounts {
    private var told: Set<String> = []

    /// Lines for the count changes of `report` not told before:
    /// "apply lens changed at look 1: allocations +1 allocation per
    /// iteration (12 → 13), regression"; `moment` is when ("at look 1", or
    /// "before round 1" for the counts of the counting processes).
    mutating func newLines(in report: DiffReport, at moment: String) -> [String] {
        var lines: [String] = []
        for row in report.rows {
            // Instructions found unchanged are told too: that is the
            // count's verdict, whatever the times go on to say.
            let unchanged = row.verdict == .unchanged && row.gates && MetricDefaults.isInstructions(row.name)
            guard row.verdict == .regression || row.verdict == .improvement || unchanged,
                let change = MetricDefaults.exactCountChange(row)
            else { continue }
            let key = row.name + "\u{0}" + row.group
            guard told.insert(key).inserted else { continue }
            let test = MetricDefaults.testPart(of: row.name) + (row.group.isEmpty ? "" : " [\(row.group)]")
            let only = row.gates ? "" : " (report only)"
            if unchanged {
                lines.append("\(test) unchanged \(moment): \(MetricDefaults.metricPart(of: row.name)) \(change)")
                continue
            }
            lines.append(
                "\(test) changed \(moment): \(MetricDefaults.metricPart(of: row.name)) \(change), "
                    + "\(row.verdict.rawValue)\(only)")
        }
        return lines
    }
}
