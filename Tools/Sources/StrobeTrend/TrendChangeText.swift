import StrobeResults
import StrobeStatistics
import StrobeToolFormatting

extension TrendChange {
    /// The change in the metric's own terms, with its levels: "+96
    /// allocations per iteration (14 → 110)" for one of the runner's exact
    /// counts (a difference, never a percentage; an interval only when the
    /// runs' values vary), "+14.4% instructions per iteration (272 M → 311
    /// M)" for counted instructions, "+36.0% [+30.1, +42.2] (12.3 ms → 16.8
    /// ms)" for a time or any other metric. Without the noun ("+96 per
    /// iteration (14 → 110)") when `naming` is false, beside the metric's
    /// name.
    public func changeText(naming: Bool = true) -> String {
        guard let before = levelBefore, let after = levelAfter, before.isFinite, after.isFinite else {
            return Self.percentText(change)
        }
        let levels = "(\(level(before)) → \(level(after)))"
        switch MetricKind(metric: metric, unit: unit) {
        case .exactCount:
            let (amount, noun) = countDifference(before: before, after: after)
            let told = "\(amount)\(naming ? noun : "") per iteration"
            guard !levelsRepeat else { return "\(told) \(levels)" }
            let lower = HumanFormat.signedCount(before * (change.lower - 1), unit: unit)
            let upper = HumanFormat.signedCount(before * (change.upper - 1), unit: unit)
            return "\(told) [\(lower), \(upper)] \(levels)"
        case .instructions:
            return "\(Self.signedPercent(change.ratio))%\(naming ? " instructions" : "") per iteration \(levels)"
        default:
            return "\(Self.percentText(change)) \(levels)"
        }
    }

    /// The change in a word or two, for a label: "+96 allocations",
    /// "+2.50 MiB", "+14.4%".
    public var shortChangeText: String {
        guard MetricKind(metric: metric, unit: unit) == .exactCount, let before = levelBefore,
            let after = levelAfter, before.isFinite, after.isFinite
        else { return Self.signedPercent(change.ratio) + "%" }
        let (amount, noun) = countDifference(before: before, after: after)
        return amount + noun
    }

    /// An exact count's change from `before` to `after`: the difference
    /// signed in its unit ("+96", "+5.16 MiB") and what that many are
    /// called (" allocations"; "" for bytes, whose unit the amount carries).
    func countDifference(before: Double, after: Double) -> (amount: String, noun: String) {
        let difference = after - before
        let noun =
            unit == "bytes" ? "" : MetricKind.noun(ofExactCount: metric, count: difference).map { " " + $0 } ?? ""
        return (HumanFormat.signedCount(difference, unit: unit), noun)
    }

    /// A level in the metric's unit: "12.3 ms", "2.50 MiB", "311 M", "14".
    func level(_ value: Double) -> String {
        switch MetricKind(metric: metric, unit: unit) {
        case .exactCount: return HumanFormat.count(value, unit: unit)
        default:
            if unit == "ns" || unit == "bytes" { return HumanFormat.value(value, unit: unit) }
            return abs(value) >= 1000 ? HumanFormat.scaled(value) : HumanFormat.fixed(value)
        }
    }

    /// "+10.2% [+8.1, +12.0]".
    static func percentText(_ shift: ShiftEstimate) -> String {
        "\(signedPercent(shift.ratio))% [\(signedPercent(shift.lower)), \(signedPercent(shift.upper))]"
    }

    /// A ratio as a signed percentage to one decimal: "+10.2", "-3.0".
    static func signedPercent(_ ratio: Double) -> String {
        let value = (ratio - 1) * 100
        return (value >= 0 ? "+" : "") + HumanFormat.format(value, decimals: 1)
    }
}
