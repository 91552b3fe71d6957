import Foundation
import StrobeFlameGraph
import StrobeStatistics
import StrobeToolFormatting

/// A comparison of traces as text, JSON and a self-contained HTML page.
extension TraceComparison {
    /// `+12.3% [+10.1, +14.6]`, or `—` without an estimate.
    static func shiftText(_ measure: MeasureChange?) -> String {
        guard let measure else { return "—" }
        if measure.verdict == .missing { return measure.baselineCount == 0 ? "new" : "gone" }
        guard let shift = measure.shift else { return "—" }
        func percent(_ ratio: Double) -> String { String(format: "%+.1f", (ratio - 1) * 100) }
        return "\(percent(shift.ratio))% [\(percent(shift.lower)), \(percent(shift.upper))]"
    }

    /// `1.20 ms → 1.50 ms`.
    static func medians(_ measure: MeasureChange?) -> String {
        guard let measure else { return "—" }
        return HumanFormat.duration(measure.baselineMedian) + " → " + HumanFormat.duration(measure.candidateMedian)
    }

    /// `+1.20 ms`, `-3.4 samples`: an amount per instance in `unit`.
    static func amount(_ value: Double, _ unit: FlameUnit, signed: Bool = false) -> String {
        if value == 0, !signed { return "0" }
        let sign = signed && value >= 0 ? "+" : ""
        return sign + (unit == .nanoseconds ? HumanFormat.duration(value) : HumanFormat.fixed(value) + " samples")
    }

    /// The headline: how many names changed, or that none did.
    public var headline: String {
        let changed = intervals.filter { Self.order($0).0 == 0 }
        guard !changed.isEmpty else { return "no interval changed (\(intervals.count) names compared)" }
        let listed = changed.prefix(3).map { "\($0.name) \(Self.verdictWord($0))" }.joined(separator: ", ")
        return "\(changed.count) of \(intervals.count) interval names changed: \(listed)"
            + (changed.count > 3 ? " and \(changed.count - 3) more" : "")
    }

    /// "slower", "faster", or what changed when the duration did not
    /// ("CPU time slower").
    static func verdictWord(_ change: IntervalChange) -> String {
        if change.duration.verdict == .slower || change.duration.verdict == .faster {
            return change.duration.verdict.rawValue
        }
        for (label, measure) in [
            ("critical path", change.criticalPath), ("CPU time", change.cpuTime), ("blocked time", change.blockedTime),
        ] {
            if let measure, measure.verdict == .slower || measure.verdict == .faster {
                return "\(label) \(measure.verdict == .slower ? "longer" : "shorter")"
            }
        }
        return change.duration.verdict.rawValue
    }

    /// Per name whose critical path was asked for: `critical path of
    /// apply lens: 57.3 ms → 105 ms +84.0% [+83.1, +85.2] slower; now: lens
    /// worker 1 waits for lens worker 0`.
    var criticalPathLines: [String] {
        intervals.compactMap { change in
            guard let path = change.criticalPath else { return nil }
            var line =
                "critical path of \(change.name): \(Self.medians(path)) \(Self.shiftText(path)) \(path.verdict.rawValue)"
            if !change.newWaits.isEmpty { line += "; now: " + change.newWaits.joined(separator: ", ") }
            return line
        }
    }

    /// An aligned table per name, and under each changed name the
    /// functions whose samples inside it moved.
    public func renderText() -> String {
        var output = "strobe diff-traces: \(headline)\n"
        output += "baseline: \(baselineSources.count) trace(s), candidate: \(candidateSources.count) trace(s)\n\n"
        var table = TextTable(header: [
            "interval", "n", "duration (median)", "change [CI]", "verdict", "CPU time change", "blocked change",
        ])
        table.rightAligned = [1, 3, 5, 6]
        for change in intervals {
            table.rows.append([
                change.name, "\(change.duration.baselineCount) / \(change.duration.candidateCount)",
                Self.medians(change.duration), Self.shiftText(change.duration), Self.verdictWord(change),
                Self.shiftText(change.cpuTime), Self.shiftText(change.blockedTime),
            ])
        }
        output += table.render() + "\n"
        for line in criticalPathLines { output += line + "\n" }
        for change in intervals where !change.functions.isEmpty && Self.order(change).0 == 0 {
            let unit = change.profileUnit ?? .samples
            output += "\nfunctions inside \(change.name) (inclusive, per instance, from the CPU samples):\n"
            var functions = TextTable(header: ["function", "baseline", "candidate", "change", ""])
            functions.rightAligned = [1, 2, 3]
            for move in change.functions {
                functions.rows.append([
                    TextTable.clipped(move.function, to: 90), Self.amount(move.baseline, unit),
                    Self.amount(move.candidate, unit),
                    Self.amount(move.candidate - move.baseline, unit, signed: true), move.change.rawValue,
                ])
            }
            output += functions.render().split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
        }
        output += "\n" + methodNote + "\n"
        return output
    }

    /// How the changes were judged.
    var methodNote: String {
        "Each name's instances compared as independent samples: Hodges–Lehmann shift with its "
            + "\(Int((1 - options.alpha) * 100))% interval, Mann–Whitney p-value, Benjamini–Hochberg across every "
            + "measure; CPU and blocked time by the ratio of their means (rusage counts CPU time in clock ticks); "
            + "a change is called when its interval lies beyond ±\(HumanFormat.fixed(options.minimumEffect * 100))%. "
            + "Blocked time is an instance's duration less its thread CPU time."
    }

    /// The comparison as JSON (the flame graphs left out).
    public func renderJSON() -> String {
        struct Document: Encodable {
            var headline: String
            var baseline: [String]
            var candidate: [String]
            var intervals: [IntervalChange]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let document = Document(
            headline: headline, baseline: baselineSources, candidate: candidateSources, intervals: intervals)
        let data = (try? encoder.encode(document)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// A self-contained page: the table, then a differential flame graph
    /// per name whose instances hold samples on both sides.
    public func renderHTML() -> String {
        var html = HTMLReportPage.start(
            title: "Strobe: traces compared",
            style: "table{border-collapse:collapse;margin:1em 0}td,th{padding:3px 8px;border-bottom:1px solid #ddd;"
                + "text-align:right;white-space:nowrap}td:first-child,th:first-child{text-align:left;white-space:normal}"
                + "td.slower{color:#c62828;font-weight:600}td.faster{color:#1565c0;font-weight:600}")
        html += "<h1>\(HTMLText.escape(headline))</h1>"
        html += "<p class=\"sub\">baseline: \(HTMLText.escape(baselineSources.joined(separator: ", ")))<br>"
        html += "candidate: \(HTMLText.escape(candidateSources.joined(separator: ", ")))</p>"
        html += "<table><tr><th>interval</th><th>n</th><th>duration (median)</th><th>change [CI]</th>"
        html += "<th>verdict</th><th>CPU time change</th><th>blocked change</th></tr>"
        for change in intervals {
            let word = Self.verdictWord(change)
            let cls = word.hasSuffix("slower") || word.hasSuffix("longer") ? "slower" : word == "faster" ? "faster" : ""
            html += "<tr><td>\(HTMLText.escape(change.name))</td>"
            html += "<td>\(change.duration.baselineCount) / \(change.duration.candidateCount)</td>"
            html += "<td>\(HTMLText.escape(Self.medians(change.duration)))</td>"
            html += "<td>\(HTMLText.escape(Self.shiftText(change.duration)))</td>"
            html += "<td class=\"\(cls)\">\(HTMLText.escape(word))</td>"
            html += "<td>\(HTMLText.escape(Self.shiftText(change.cpuTime)))</td>"
            html += "<td>\(HTMLText.escape(Self.shiftText(change.blockedTime)))</td></tr>"
        }
        html += "</table>"
        for line in criticalPathLines { html += "<p>\(HTMLText.escape(line))</p>" }
        html += FlameGraphHTML.section(
            flameGraphs, heading: "CPU samples inside each interval, candidate against baseline")
        html += "<p><small>\(HTMLText.escape(methodNote))</small></p>"
        return html + HTMLReportPage.end
    }
}
