import Foundation
import StrobeStatistics

/// Gathers a report's caveats into one line per kind, naming the metrics
/// and the tests they concern briefly instead of listing every row.
enum WarningGroups {
    /// One caveat about one metric, or about the whole comparison.
    struct Item: Hashable {
        /// What is wrong.
        var caveat: String
        /// The metric concerned (`TEST/METRIC`); nil for the comparison.
        var metric: String?
        /// Its group.
        var group: String = ""
    }

    /// The caveats of the rows: a single process on a side (any row), and a
    /// baseline whose center is not positive (gated rows that changed or
    /// could not be told: report-only counts that are zero are judged by
    /// their floor, and an unchanged count of zero, the demo's frames over
    /// budget, has no percentage to miss).
    /// Noise that is not stationary is one line for the comparison, with
    /// the largest factor between two processes of a side, naming the
    /// metrics; a report-only metric below its absolute floor (a CPU-time
    /// split of a few hundred microseconds) is not among them.
    static func caveats(of rows: [MetricComparison]) -> [Item] {
        var items: [Item] = []
        var factor = 0.0
        var unsteady: [MetricComparison] = []
        for row in rows {
            for warning in row.warnings
            where (row.gates && row.verdict != .unchanged) || !warning.hasPrefix(MetricComparison.zeroBaselineWarning) {
                if warning.hasPrefix(nonStationary) {
                    if !row.gates, max(row.baseline.median, row.candidate.median) < row.absoluteFloor { continue }
                    factor = max(factor, Self.factor(in: warning) ?? 0)
                    unsteady.append(row)
                    continue
                }
                items.append(Item(caveat: warning, metric: row.name, group: row.group))
            }
        }
        guard !unsteady.isEmpty else { return items }
        let largest = factor > 0 ? " (up to \(String(format: "%.1f", factor))× between two processes of a side)" : ""
        let caveat =
            "the noise is not stationary\(largest): the machine's speed changed during the comparison, and these "
            + "verdicts rest on the pairing by round"
        return items + unsteady.map { Item(caveat: caveat, metric: $0.name, group: $0.group) }
    }

    /// The start of a row's note on noise that is not stationary.
    static let nonStationary = "the noise is not stationary"

    /// The factor "2.1" of "… took 2.1× as long as another …"; nil when
    /// the note has none.
    static func factor(in note: String) -> Double? {
        guard let took = note.range(of: "took "), let times = note[took.upperBound...].firstIndex(of: "×") else {
            return nil
        }
        return Double(note[took.upperBound..<times])
    }

    /// One line per caveat, in the order they first appear: "CAVEAT: wall,
    /// process.cpu (3 metrics) of decode, encode".
    static func render(_ items: [Item]) -> [String] {
        var order: [String] = []
        var metrics: [String: [Item]] = [:]
        for item in items {
            if metrics[item.caveat] == nil { order.append(item.caveat) }
            metrics[item.caveat, default: []].append(item)
        }
        return order.map { caveat in
            let concerned = (metrics[caveat] ?? []).filter { $0.metric != nil }
            guard !concerned.isEmpty else { return caveat }
            func unique(_ values: [String]) -> [String] {
                var seen = Set<String>()
                return values.filter { seen.insert($0).inserted }
            }
            func listed(_ values: [String], noun: String) -> String {
                let shown = values.prefix(3).joined(separator: ", ")
                return values.count > 3 ? "\(shown) and \(values.count - 3) more \(noun)" : shown
            }
            if concerned.count == 1, let metric = concerned[0].metric {
                return "\(caveat): \(metric)\(concerned[0].group.isEmpty ? "" : " [\(concerned[0].group)]")"
            }
            let names = unique(concerned.compactMap { $0.metric.map(MetricDefaults.metricPart(of:)) })
            let tests = unique(
                concerned.compactMap { item in
                    item.metric.map { MetricDefaults.testPart(of: $0) + (item.group.isEmpty ? "" : " [\(item.group)]") }
                })
            let metricText = listed(names, noun: "metrics")
            if tests.count == 1, tests[0] == names.first, names.count == 1 { return "\(caveat): \(metricText)" }
            return "\(caveat): \(metricText) of \(listed(tests, noun: "tests"))"
        }
    }
}
