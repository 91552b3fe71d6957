import Foundation
import StrobeResults
import StrobeStatistics
import StrobeToolFormatting

/// The runner's exact counts of a measure block (`allocations`,
/// `allocations.bytes`, `allocations.remaining`, `retains`, `releases`):
/// which of them gate by default, what one of each is called, and how a
/// change of a constant count reads.
///
/// A count that is the same in every iteration of every process on each
/// side is compared as it is (``ComparisonMethod/exact``): a difference is
/// decided at the first look, and equal values are "unchanged" at once. The
/// report says `+1 allocation per iteration (12 → 13)`, never a percentage.
/// A count that varies is judged like any metric, with an absolute floor of
/// at least ``MetricDefaults/countFloor``.
extension MetricDefaults {
    /// The count that gates by default: the allocations. The bytes, the
    /// remaining allocations, retains and releases are reported; a policy
    /// can gate them.
    static let gatedExactCounts: Set<String> = ["allocations"]

    /// Whether `name` (`TEST/METRIC` or `METRIC`) is one of the runner's
    /// exact counts.
    public static func isExactCount(_ name: String) -> Bool {
        kind(of: name) == .exactCount
    }

    /// Whether `name` is an exact count that is reported but does not gate
    /// by default.
    static func isReportedExactCount(_ name: String) -> Bool {
        isExactCount(name) && !gatedExactCounts.contains(metricPart(of: name))
    }

    /// "+1 allocation per iteration (12 → 13)" for a count compared as it
    /// is (the same value in every iteration on each side), "±0 allocations
    /// per iteration (12 → 12)" when both sides agree; without the noun
    /// ("+1 per iteration (12 → 13)") when `naming` is false, beside the
    /// metric's name. Nil for any other row.
    ///
    /// A counted metric judged within its tolerance (the instructions)
    /// reads as a percentage of its medians instead: "+1.9% instructions per
    /// iteration (4.12 M → 4.20 M)" (see ``toleratedCountChange(_:naming:)``).
    public static func exactCountChange(_ row: MetricComparison, naming: Bool = true) -> String? {
        if let tolerated = toleratedCountChange(row, naming: naming) { return tolerated }
        guard row.isCount else { return nil }
        guard row.isConstantCount else { return varyingCountChange(row, naming: naming) }
        let before = row.baseline.median
        let after = row.candidate.median
        guard before.isFinite, after.isFinite else { return nil }
        let difference = after - before
        let noun = naming ? self.noun(row, size: abs(difference)) : ""
        return "\(signed(difference, row))\(noun) per iteration (\(amount(before, row)) → \(amount(after, row)))"
    }

    /// "+96 allocations per iteration [+90, +101] (12.0 K → 12.1 K)" for an
    /// exact count that varies: the difference of the centers the test
    /// compared (each process's mean) with its interval, in the count's
    /// unit, never a percentage, and no interval where its ends read as one
    /// number; without the noun when `naming` is false.
    static func varyingCountChange(_ row: MetricComparison, naming: Bool) -> String? {
        guard let before = row.baselineCenter, let after = row.candidateCenter, before.isFinite, after.isFinite,
            row.difference.isFinite
        else { return nil }
        let noun = naming ? self.noun(row, size: abs(row.difference)) : ""
        let lower = signed(row.differenceLower, row)
        let upper = signed(row.differenceUpper, row)
        // An interval of no width as written says nothing the estimate
        // does not: every process of each side counted the same.
        let interval = lower == upper ? "" : "[\(lower), \(upper)] "
        return "\(signed(row.difference, row))\(noun) per iteration \(interval)"
            + "(\(amount(before, row)) → \(amount(after, row)))"
    }

    /// The change of a counted row in its unit, short, as a test's summary
    /// names it: "±0", "+96", "+2.50 MiB", and for instructions "+2.0%";
    /// nil for a row that is not counted work.
    public static func countChangeAmount(_ row: MetricComparison) -> String? {
        if row.isWithinCountTolerance, let shift = row.shift {
            let digits = String(format: "%.1f", abs(shift.change * 100))
            return (digits == "0.0" ? "±" : shift.change > 0 ? "+" : "−") + digits + "%"
        }
        guard row.isCount else { return nil }
        if row.isConstantCount { return signed(row.candidate.median - row.baseline.median, row) }
        return row.difference.isFinite ? signed(row.difference, row) : nil
    }

    /// " allocation", " allocations" after a count of `size`; "" for bytes,
    /// whose unit the amount carries, and for a metric with no noun.
    static func noun(_ row: MetricComparison, size: Double) -> String {
        guard row.unit != "bytes", let noun = MetricKind.noun(ofExactCount: metricPart(of: row.name), count: size)
        else { return "" }
        return " " + noun
    }

    /// "+96", "−2.50 MiB", "±0": a difference of a count in its unit.
    static func signed(_ difference: Double, _ row: MetricComparison) -> String {
        HumanFormat.signedCount(difference, unit: row.unit)
    }

    /// A count in its unit: "12", "12.5" for a mean, "16 B" or "2.50 MiB"
    /// for bytes.
    static func amount(_ value: Double, _ row: MetricComparison) -> String {
        HumanFormat.count(value, unit: row.unit)
    }
}
