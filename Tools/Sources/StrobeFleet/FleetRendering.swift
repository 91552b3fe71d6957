import Foundation
import StrobeJudgement
import StrobeStatistics
import StrobeToolFormatting

extension FleetReport {
    /// The report as aligned text tables (`markdown`: Markdown tables),
    /// its headline first.
    package func render(markdown: Bool = false) -> String {
        var sections: [String] = [markdown ? "**\(headline)**" : headline]
        let filterLine = filters.isEmpty ? "" : " where " + Self.describe(filters)
        for metric in metrics {
            let title =
                "\(metric.kind == "counter" ? "counter " : "")\(metric.name)\(filterLine) (\(Self.direction(metric)))"
            var header = by
            if compared != nil { header.append(versionKey) }
            header += ["sessions", "events"] + percentileNames.map { "\($0) [95% CI]" }
            var rows: [[String]] = []
            var thin = false
            for group in metric.groups {
                rows.append(
                    group.values + [String(group.sessions), String(group.events)]
                        + group.percentiles.indices.map { index in
                            let percentile = group.percentiles[index]
                            guard group.tailEvents(index) >= SessionQuantiles.minimumTailEvents else {
                                thin = true
                                return "≈\(value(percentile.estimate, metric))"
                            }
                            return
                                "\(value(percentile.estimate, metric)) [\(value(percentile.lower, metric)), "
                                + "\(value(percentile.upper, metric))]"
                        })
            }
            let thinNote =
                thin
                ? "≈: fewer than \(Int(SessionQuantiles.minimumTailEvents)) events beyond the percentile in the group; "
                    + "an estimate with no interval that could be trusted." : nil
            sections.append(
                table(
                    title: title, header: header, rows: rows, markdown: markdown,
                    numeric: by.count + (compared == nil ? 0 : 1))
                    + [thinNote, weightingNote(metric), thinTailNote(metric)].compactMap { $0 }.map {
                        (markdown ? "\n\n" : "\n") + $0
                    }.joined())
            if let changes = metric.changes, let compared {
                var changeHeader = by
                changeHeader += percentileNames.map { "\($0) change [interval]" } + ["verdict"]
                var changeRows: [[String]] = []
                for group in changes {
                    guard !group.changes.isEmpty else {
                        changeRows.append(group.values + percentileNames.map { _ in "-" } + ["too few sessions"])
                        continue
                    }
                    changeRows.append(group.values + group.changes.map(Self.changeCell) + [Self.overall(group.changes)])
                }
                let notes = [intervalNote, sessionsNote(changes)].compactMap { $0 }
                sections.append(
                    table(
                        title:
                            "\(metric.name): \(compared[1]) against \(compared[0]) (α \(alpha), Benjamini–Hochberg "
                            + "across the report)",
                        header: changeHeader, rows: changeRows, markdown: markdown, numeric: by.count)
                        + notes.map { (markdown ? "\n\n" : "\n") + $0 }.joined())
            }
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    /// The report's verdict in one line: with a comparison, the changes
    /// found (naming the regressions), else what was measured.
    package var headline: String {
        let sessions = metrics.map { $0.groups.reduce(0) { $0 + $1.sessions } }.max() ?? 0
        guard let compared else {
            return "Fleet: \(metrics.count) metric\(metrics.count == 1 ? "" : "s") over \(sessions) sessions"
                + (by.isEmpty ? "" : ", by \(by.joined(separator: ", "))")
        }
        var counts: [Verdict: Int] = [:]
        var regressions: [String] = []
        var improvements: [String] = []
        for metric in metrics {
            for group in metric.changes ?? [] {
                for change in group.changes {
                    counts[change.verdict, default: 0] += 1
                    let name =
                        "\(metric.name) \(Self.percentileName(change.baseline.probability))"
                        + (group.values.isEmpty ? "" : " (\(group.values.joined(separator: " ")))")
                        + " \(Self.percent(change.shift.change))"
                    if change.verdict == .regression { regressions.append(name) }
                    if change.verdict == .improvement { improvements.append(name) }
                }
            }
        }
        let total = counts.values.reduce(0, +)
        var parts: [String] = []
        if !regressions.isEmpty {
            parts.append(
                "\(regressions.count) regression\(regressions.count == 1 ? "" : "s"): " + Self.shortList(regressions))
        }
        if !improvements.isEmpty {
            parts.append(
                "\(improvements.count) improvement\(improvements.count == 1 ? "" : "s"): "
                    + Self.shortList(improvements))
        }
        for verdict in [Verdict.unchanged, .inconclusive] where counts[verdict, default: 0] > 0 {
            parts.append("\(counts[verdict]!) \(verdict.rawValue)")
        }
        let judged = metrics.flatMap { ($0.changes ?? []).flatMap(\.changes).filter(\.judged).map(\.verdict) }
        let all = Verdict.combined(judged)
        let verdict = all == .regression ? "slower" : all == .improvement ? "faster" : "no regression"
        return "Fleet \(compared[1]) against \(compared[0]): \(verdict) — "
            + (parts.isEmpty ? "nothing to compare" : parts.joined(separator: "; "))
            + " (of \(total) percentile change\(total == 1 ? "" : "s"), \(sessions) sessions)"
    }

    /// The first three names, then how many more.
    static func shortList(_ names: [String]) -> String {
        names.prefix(3).joined(separator: ", ") + (names.count > 3 ? " and \(names.count - 3) more" : "")
    }

    /// "+8.3% [+0.9%, +16.3%] regression"; a change not judged shows no
    /// interval.
    static func changeCell(_ change: SessionQuantileChange) -> String {
        guard change.judged else { return "\(percent(change.shift.change)) not judged" }
        func bound(_ ratio: Double) -> String { String(percent(ratio - 1).dropLast()) }
        return
            "\(percent(change.shift.change)) [\(bound(change.shift.lower)), \(bound(change.shift.upper))]"
            + (change.verdict == .unchanged || change.verdict == .inconclusive ? "" : " \(change.verdict.rawValue)")
    }

    /// What the changes' intervals are: their level, and why it is not 95%.
    var intervalNote: String? {
        guard
            let confidence = metrics.lazy.compactMap({ $0.changes }).joined().flatMap(\.changes)
                .first(where: \.judged)?.shift.confidence
        else { return nil }
        return "Intervals at \(HumanFormat.fixed(confidence * 100))%, the level of the judgement "
            + "(Benjamini–Yekutieli's for the changes Benjamini–Hochberg selects at α \(alpha)): an interval "
            + "excludes 0 exactly when its change is significant. \"not judged\": too few events beyond the percentile."
    }

    /// How many sessions per version would decide the inconclusive changes
    /// of a metric; nil when none is inconclusive.
    func sessionsNote(_ changes: [GroupChange]) -> String? {
        let needed = changes.flatMap(\.changes).compactMap(\.sessionsNeeded)
        guard let most = needed.max() else { return nil }
        return "Inconclusive: about \(most) sessions per version would decide a change the size of the floor."
    }

    /// The report as JSON.
    package func renderJSON() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    }

    /// A sentence naming the groups whose percentiles are weighted by the
    /// inverse of the sessions' sampling probabilities, or nil when none is.
    func weightingNote(_ metric: Metric) -> String? {
        let weighted = metric.groups.filter(\.weighted)
        guard !weighted.isEmpty else { return nil }
        let names = weighted.map { group in
            let name = group.values.isEmpty ? "all sessions" : group.values.joined(separator: " ")
            let low = group.samplingProbabilities.first ?? 0
            let high = group.samplingProbabilities.last ?? 0
            return "\(name) (π \(String(format: "%g", low)) to \(String(format: "%g", high)))"
        }
        return "Weighted percentiles: each session counts 1/π, the inverse of the probability π that sampled it "
            + "(Horvitz–Thompson), where a group's probabilities differ: \(names.joined(separator: ", "))."
    }

    /// Which way the metric gets better and what said so:
    /// `higher is better by policy rule "fps"`, `lower is better by default`.
    static func direction(_ metric: Metric) -> String {
        "\(metric.better.rawValue) is better " + (metric.betterRule.map { "by policy rule \"\($0)\"" } ?? "by default")
    }

    /// When comparing, a sentence naming the weighted groups' percentiles
    /// whose changes were not judged because their effective events beyond
    /// the percentile (``StrobeStatistics/SessionQuantileEstimate/tailEvents``)
    /// are too few; nil when there are none.
    func thinTailNote(_ metric: Metric) -> String? {
        guard compared != nil else { return nil }
        var thin: [String] = []
        for group in metric.groups where group.weighted {
            for (index, percentile) in group.percentiles.enumerated() {
                let effective = group.tailEvents(index)
                guard effective < SessionQuantiles.minimumTailEvents else { continue }
                let name = group.values.isEmpty ? "all sessions" : group.values.joined(separator: " ")
                thin.append(
                    "\(name) \(Self.percentileName(percentile.probability)) (\(String(format: "%.1f", effective)))")
            }
        }
        guard !thin.isEmpty else { return nil }
        return
            "Not judged, fewer than \(Int(SessionQuantiles.minimumTailEvents)) effective events beyond the percentile "
            + "(Kish's (Σw)²/Σw² over the weighted events beyond it): \(thin.joined(separator: ", "))."
    }

    private var percentileNames: [String] {
        (metrics.first?.groups.first?.percentiles ?? []).map { Self.percentileName($0.probability) }
    }

    /// `P90` for 0.9, `P99.9` for 0.999.
    static func percentileName(_ probability: Double) -> String {
        let value = probability * 100
        return "P" + (value == value.rounded() ? String(Int(value)) : HumanFormat.fixed(value))
    }

    private func value(_ value: Double, _ metric: Metric) -> String {
        metric.kind == "interval" ? HumanFormat.duration(value) : HumanFormat.value(value, unit: nil)
    }

    static func percent(_ fraction: Double) -> String {
        String(format: "%+.1f%%", fraction * 100)
    }

    /// A group's judged percentiles' verdicts taken together, as `strobe
    /// diff` takes a test's gated metrics
    /// (``StrobeJudgement/Verdict/combined(_:)``): regression, else
    /// inconclusive, else improvement, else unchanged. A change not judged
    /// (too few events beyond it) carries no verdict, as a report-only
    /// metric does not in `strobe diff`; a group with none judged is
    /// inconclusive.
    static func overall(_ changes: [SessionQuantileChange]) -> String {
        let judged = changes.filter(\.judged)
        return Verdict.combined((judged.isEmpty ? changes : judged).map(\.verdict)).rawValue
    }

    private func table(title: String, header: [String], rows: [[String]], markdown: Bool, numeric: Int) -> String {
        if markdown {
            var lines = ["### \(title)", "", "| " + header.joined(separator: " | ") + " |"]
            lines.append("|" + header.indices.map { $0 >= numeric ? " ---: |" : " --- |" }.joined())
            for row in rows { lines.append("| " + row.joined(separator: " | ") + " |") }
            return lines.joined(separator: "\n")
        }
        var table = TextTable(header: header, rightAligned: Set(numeric..<header.count))
        table.rows = rows
        return title + "\n" + table.render()
    }
}
