import Foundation
import StrobeFlameGraph
import StrobeJudgement
import StrobeStatistics
import StrobeToolFormatting

extension DiffReport {
    /// A self-contained HTML page: the summary, the table, and per metric a
    /// plot of every baseline and candidate sample (jittered dots over a box
    /// from p25 to p75 with the median), on a log scale when they spread wide;
    /// after the functions, the differential flame graphs `flameGraphs`
    /// (see ``flameGraphs(baseline:candidate:)``).
    public func renderHTML(flameGraphs: [DifferentialFlameGraph] = []) -> String {
        var html = """
            <!doctype html><html><head><meta charset="utf-8"><title>Strobe diff</title>
            <style>
            body{font:14px -apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em;color:#1d1d1f}
            table{border-collapse:collapse;margin:1em 0;max-width:100%}
            td,th{padding:4px 8px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
            td:first-child,th:first-child,td.metric,th:nth-child(2){text-align:left}
            td:first-child,td.metric,td.pair,td.change,td.verdict{white-space:normal}
            td:first-child{min-width:6em}td.metric{overflow-wrap:anywhere;min-width:8em}td.pair{min-width:6em}
            td.change{min-width:9em}td.verdict,th:last-child{text-align:left}td.verdict{min-width:12em}
            .regression{color:#c62828;font-weight:600}.improvement{color:#2e7d32;font-weight:600}
            .inconclusive{color:#a86b00}.plot{margin:1.5em 0}
            .warn{color:#a86b00}h1{font-size:22px;overflow-wrap:anywhere}h2{font-size:15px;margin:1.2em 0 .3em}
            h3{font-size:14px;margin:1em 0 .2em}
            table.functions td:first-child{overflow-wrap:anywhere;min-width:16em;max-width:30em}
            table.functions td:last-child{white-space:normal}
            </style></head><body>
            """
        html += "<h1>\(HTMLText.escape(headline))</h1>"
        html += "<p>\(HTMLText.escape(metricCounts))</p>"
        if let originLine { html += "<p class=\"origin\">\(HTMLText.escape(originLine))</p>" }
        let changed = changedTests
        if !changed.isEmpty {
            html += "<ul class=\"tests\">"
            for test in changed {
                html += "<li>\(HTMLText.escape(test.decisionLine))"
                if let path = test.criticalPath { html += "<br><span class=\"path\">\(HTMLText.withCode(path))</span>" }
                html += "</li>"
            }
            html += "</ul>"
        }
        if let foldedLine { html += "<p>\(HTMLText.escape(foldedLine))</p>" }
        for warning in warnings { html += "<p class=\"warn\">&#9888; \(HTMLText.escape(warning))</p>" }
        html += "<table><tr><th>test</th><th>metric</th><th>runs</th><th>n</th><th>median</th><th>p90</th>"
        html += "<th>change [CI]</th><th>p (adj.)</th><th>verdict</th></tr>"
        for (row, test) in zip(rows, Self.testColumn(rows)) {
            let metric = MetricDefaults.metricPart(of: row.name) + (row.group.isEmpty ? "" : " [\(row.group)]")
            html += "<tr><td>\(HTMLText.escape(test))</td><td class=\"metric\">\(HTMLText.escape(metric))</td>"
            html += "<td>\(HTMLText.escape(Self.replicatesText(row)))</td>"
            html += "<td>\(row.baseline.count) / \(row.candidate.count)</td>"
            html += "<td class=\"pair\">\(Self.pairHTML(Self.centralValues(row)))</td>"
            let p90 =
                Self.value(row.baseline.p90, unit: row.unit) + " → " + Self.value(row.candidate.p90, unit: row.unit)
            html += "<td class=\"pair\">\(Self.pairHTML(p90))</td>"
            html += "<td class=\"change\">\(HTMLText.escape(Self.change(row)))</td>"
            html += "<td>\(Self.pValue(row.adjustedPValue))</td>"
            html += "<td class=\"verdict \(row.verdict.rawValue)\">\(HTMLText.escape(Self.verdictText(row)))</td></tr>"
        }
        html += "</table>"
        if let centersNote = Self.centersNote(rows) { html += "<p><small>\(HTMLText.escape(centersNote))</small></p>" }
        html += functionsHTML()
        html += FlameGraphHTML.section(flameGraphs, heading: "Differential flame graphs")
        let undecided = undecidedLines
        if !undecided.isEmpty {
            html += "<h2>Inconclusive</h2><ul>"
            for line in undecided {
                html += "<li><b>\(HTMLText.escape(line.metric))</b>: \(HTMLText.escape(line.explanation))</li>"
            }
            html += "</ul>"
        }
        var flat: [String] = []
        for row in rows {
            let key = Self.sampleKey(row.name, row.group)
            guard let values = samples[key] else { continue }
            let title = row.group.isEmpty ? row.name : "\(row.name) [\(row.group)]"
            // A metric that is 0 in every sample on both sides has nothing to
            // plot: it is named below instead of drawn as a line of zeros.
            guard (values.baseline + values.candidate).contains(where: { $0 != 0 }) else {
                flat.append(title)
                continue
            }
            let verdict = "<span class=\"\(row.verdict.rawValue)\">\(HTMLText.escape(Self.verdictText(row)))</span>"
            html += "<div class=\"plot\"><h2>\(HTMLText.escape(title)) — \(verdict) "
            html += "\(HTMLText.escape(Self.change(row)))</h2>"
            html += Self.plot(baseline: values.baseline, candidate: values.candidate, unit: row.unit)
            html += "</div>"
        }
        if !flat.isEmpty {
            html +=
                "<p class=\"zeros\">0 in every sample on both sides, not plotted: "
                + "\(HTMLText.escape(flat.joined(separator: ", "))).</p>"
        }
        html += "<p><small>\(HTMLText.escape(methodNote))</small></p>"
        return html + "</body></html>\n"
    }

    /// "91.3 ms → 120 ms" as HTML that wraps only after the arrow.
    static func pairHTML(_ text: String) -> String {
        text.components(separatedBy: " → ").map { HTMLText.escape($0).replacingOccurrences(of: " ", with: "&nbsp;") }
            .joined(separator: " → ")
    }

    /// An inline SVG strip plot of both sides on a shared axis.
    static func plot(baseline: [Double], candidate: [Double], unit: String) -> String {
        let all = (baseline + candidate).filter(\.isFinite)
        guard let low = all.min(), let high = all.max() else { return "" }
        let width = 720.0
        let left = 90.0
        let right = 20.0
        let useLog = low > 0 && high / low > 20
        func position(_ value: Double) -> Double {
            let span: Double
            let offset: Double
            if useLog {
                span = log(high) - log(low)
                offset = log(value) - log(low)
            } else {
                span = high - low
                offset = value - low
            }
            return left + (span > 0 ? offset / span : 0.5) * (width - left - right)
        }
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"150\" role=\"img\">"
        var generator = SeededGenerator(seed: UInt64(all.count))
        for (index, (label, values, colour)) in [
            ("baseline", baseline, "#1565c0"), ("candidate", candidate, "#e65100"),
        ].enumerated() {
            let center = 35.0 + Double(index) * 55
            svg += "<text x=\"0\" y=\"\(Int(center + 4))\" font-size=\"12\">\(label)</text>"
            let sorted = values.sorted()
            if !sorted.isEmpty {
                let q1 = position(Quantiles.quantile(sorted: sorted, 0.25))
                let q3 = position(Quantiles.quantile(sorted: sorted, 0.75))
                let median = position(Quantiles.median(sorted: sorted))
                svg += "<rect x=\"\(f(q1))\" y=\"\(f(center - 14))\" width=\"\(f(max(q3 - q1, 1)))\" height=\"28\""
                svg += " fill=\"\(colour)\" fill-opacity=\"0.12\" stroke=\"\(colour)\"/>"
                svg += "<line x1=\"\(f(median))\" x2=\"\(f(median))\" y1=\"\(f(center - 16))\""
                svg += " y2=\"\(f(center + 16))\" stroke=\"\(colour)\" stroke-width=\"2.5\"/>"
            }
            for value in values where value.isFinite {
                let y = center + (generator.uniform() - 0.5) * 22
                svg += "<circle cx=\"\(f(position(value)))\" cy=\"\(f(y))\" r=\"2.6\""
                svg += " fill=\"\(colour)\" fill-opacity=\"0.55\"/>"
            }
        }
        svg += "<line x1=\"\(Int(left))\" x2=\"\(Int(width - right))\" y1=\"128\" y2=\"128\" stroke=\"#999\"/>"
        for tick in 0...4 {
            let fraction = Double(tick) / 4
            let value = useLog ? exp(log(low) + fraction * (log(high) - log(low))) : low + fraction * (high - low)
            let x = position(value)
            let label = HTMLText.escape(DiffReport.value(value, unit: unit))
            svg += "<text x=\"\(f(x))\" y=\"144\" font-size=\"11\" text-anchor=\"middle\">\(label)</text>"
        }
        return svg + "</svg>"
    }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }
}
