import Foundation
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
/// at least ``ComparisonEngine/countFloor``.
extension MetricDefaults {
    /// Each count metric with the singular and plural of what it counts.
    static let exactCountNouns: [String: (one: String, many: String)] = [
        "allocations": ("allocation", "allocations"),
        "allocations.bytes": ("byte", "bytes"),
        "allocations.remaining": ("remaining allocation", "remaining allocations"),
        "retains": ("retain", "retains"),
        "releases": ("release", "releases"),
    ]

    /// The count that gates by default: the allocations. The bytes, the
    /// remaining allocations, retains and releases are reported; a policy
    /// can gate them.
    static let gatedExactCounts: Set<String> = ["allocations"]

    /// Whether `name` (`TEST/METRIC` or `METRIC`) is one of the runner's
    /// exact counts.
    public static func isExactCount(_ name: String) -> Bool {
        exactCountNouns[metricPart(of: name)] != nil
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
        guard row.isConstantCount else { return nil }
        let before = row.baseline.median
        let after = row.candidate.median
        guard before.isFinite, after.isFinite else { return nil }
        let difference = after - before
        let size = abs(difference)
        let nouns = naming ? exactCountNouns[metricPart(of: row.name)] : nil
        let noun = nouns.map { " " + (size == 1 ? $0.one : $0.many) } ?? ""
        let sign = difference > 0 ? "+" : difference < 0 ? "−" : "±"
        return "\(sign)\(whole(size))\(noun) per iteration (\(whole(before)) → \(whole(after)))"
    }

    /// A count as a whole number ("12", "1048576").
    static func whole(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : HumanFormat.format(value, decimals: 1)
    }
}
