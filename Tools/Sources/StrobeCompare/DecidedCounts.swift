import StrobeDiff
import StrobeJudgement
import StrobeStatistics

/// The exact counts (allocations, retains) and instruction counts that a
/// look of `strobe compare` found changed, each told once, as soon as it is
/// decided: a count that is the same in every iteration on each side, or
/// instructions that repeat within their tolerance, are decided at the
/// first look, while the same test's times may need many more rounds.
struct DecidedCounts {
    private var told: Set<String> = []

    /// Lines for the count changes of `report` not told before:
    /// "apply lens changed at look 1: allocations +1 allocation per
    /// iteration (12 → 13), regression".
    mutating func newLines(in report: DiffReport, look: SequentialDesign.Look) -> [String] {
        var lines: [String] = []
        for row in report.rows where row.verdict == .regression || row.verdict == .improvement {
            guard let change = MetricDefaults.exactCountChange(row) else { continue }
            let key = row.name + "\u{0}" + row.group
            guard told.insert(key).inserted else { continue }
            let test = MetricDefaults.testPart(of: row.name) + (row.group.isEmpty ? "" : " [\(row.group)]")
            let only = row.gates ? "" : " (report only)"
            lines.append(
                "\(test) changed at look \(look.number): \(MetricDefaults.metricPart(of: row.name)) \(change), "
                    + "\(row.verdict.rawValue)\(only)")
        }
        return lines
    }
}
