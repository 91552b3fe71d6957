import Foundation
import StrobeJudgement
import StrobeStatistics
import StrobeToolFormatting

extension FleetReport {
    /// The report as a self-contained HTML page (no script, nothing fetched):
    /// per metric and percentile a plot of each group's estimate with its
    /// 95% interval, the versions along the axis and one line per group
    /// (device class) when comparing, then the tables of the text report.
    package func renderHTML() -> String {
        var html =
            HTMLReportPage.start(title: "Fleet percentiles", style: Self.pageStyle) + "\n<h1>Fleet percentiles</h1>\n"
        html += "<p class=\"headline\"><strong>\(HTMLText.escape(headline))</strong></p>\n"
        var subtitle =
            "Each plot shows a group's percentile as a dot and its 95% confidence interval as the bar through it; "
            + "the intervals treat the session as the unit."
        if let compared {
            subtitle +=
                " \(compared[1]) against \(compared[0]) by \(versionKey); verdicts at α \(alpha), "
                + "Benjamini–Hochberg across the report."
        }
        if !filters.isEmpty { subtitle += " Only sessions where \(Self.describe(filters))." }
        html += "<p class=\"sub\">\(HTMLText.escape(subtitle))</p>\n"
        for metric in metrics {
            html += "<h2>\(HTMLText.escape((metric.kind == "counter" ? "counter " : "") + metric.name))</h2>\n"
            let direction = Self.direction(metric)
            html +=
                "<p class=\"note direction\">"
                + "\(HTMLText.escape(direction.prefix(1).uppercased() + direction.dropFirst())).</p>\n"
            let series = seriesNames(metric)
            html +=
                "<div class=\"legend\">"
                + series.enumerated().map { index, name in
                    HTMLReportPage.legendEntry(colour: Self.palette[index % Self.palette.count], label: name)
                }.joined() + "</div>\n<div class=\"plots\">\n"
            for index in (metric.groups.first?.percentiles ?? []).indices {
                html += plot(metric, percentile: index, series: series)
            }
            html += "</div>\n" + tables(metric)
        }
        return html + HTMLReportPage.end
    }

    /// The page's own rules, beside the shared ones of
    /// ``HTMLReportPage``: notes, plots side by side, tables.
    static let pageStyle = """
        .note{color:#6e6e73;font-size:12px;margin:-4px 0 12px}
        .plots{display:flex;flex-wrap:wrap;gap:12px}
        .plot{background:#fff;border:1px solid #e3e3e8;border-radius:10px;padding:10px 12px 4px}
        .plot h3{font-size:14px;margin:0 0 4px}
        table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #e3e3e8;margin:12px 0}
        td,th{padding:6px 9px;border-bottom:1px solid #e3e3e8;text-align:left;font-size:13px}
        th{background:#fafafc;color:#6e6e73;font-size:12px}td.num{text-align:right;white-space:nowrap}
        .legend{display:flex;gap:14px;flex-wrap:wrap;font-size:12px;margin:4px 0 8px}

        """

    static let palette = ["#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f", "#5d4037", "#9e9d24"]

    /// A group's series (its values other than the version) and its place on
    /// the axis (the version, or one place for all).
    private func placement(_ group: Group) -> (series: String, x: String) {
        let values = compared == nil ? group.values : Array(group.values.dropLast())
        let series = values.isEmpty ? "all sessions" : values.joined(separator: ", ")
        return (series, compared == nil ? "" : group.values.last ?? "")
    }

    private func seriesNames(_ metric: Metric) -> [String] {
        var names: [String] = []
        for group in metric.groups where !names.contains(placement(group).series) {
            names.append(placement(group).series)
        }
        return names
    }

    private func value(_ value: Double, _ metric: Metric) -> String {
        metric.kind == "interval" ? HumanFormat.duration(value) : HumanFormat.value(value, unit: nil)
    }

    private func plot(_ metric: Metric, percentile index: Int, series: [String]) -> String {
        let frame = SVGPlotFrame(width: 300, height: 220, left: 64, right: 14, top: 10, bottom: 28)
        let points = metric.groups.map { ($0, placement($0), $0.percentiles[index]) }
        let xs = compared ?? [""]
        var low = points.map(\.2.lower).min() ?? 0
        var high = points.map(\.2.upper).max() ?? 1
        if high <= low { (low, high) = (low * 0.9, high * 1.1 + 1e-9) }
        let pad = (high - low) * 0.08
        // Durations and most counters are never negative: no axis below 0.
        low = low >= 0 ? max(0, low - pad) : low - pad
        high += pad
        func x(_ label: String, _ seriesIndex: Int) -> Double {
            let slot = frame.dataWidth / Double(xs.count)
            let base = frame.left + slot * (Double(xs.firstIndex(of: label) ?? 0) + 0.5)
            // Groups side by side, so their intervals do not hide each other.
            return base + (Double(seriesIndex) - Double(series.count - 1) / 2)
                * min(10, slot / Double(series.count + 1))
        }
        func y(_ value: Double) -> Double { frame.y(value, low: low, high: high) }
        let name = "P" + String(Int((metric.groups.first?.percentiles[index].probability ?? 0) * 100))
        var svg = "<div class=\"plot\"><h3>\(name)</h3>"
        svg +=
            "<svg class=\"fleet-plot\" width=\"\(Int(frame.width))\" height=\"\(Int(frame.height))\" "
            + "viewBox=\"0 0 \(Int(frame.width)) \(Int(frame.height))\" role=\"img\" "
            + "aria-label=\"\(HTMLText.escape(metric.name)) \(name)\">"
        svg += frame.axes
        for tick in 0...3 {
            let value = low + (high - low) * Double(tick) / 3
            svg +=
                "<text x=\"\(frame.left - 6)\" y=\"\(SVGPlotFrame.format(y(value) + 4))\" text-anchor=\"end\">"
                + "\(HTMLText.escape(self.value(value, metric)))</text>"
        }
        for label in xs where !label.isEmpty {
            svg +=
                "<text x=\"\(SVGPlotFrame.format(x(label, (series.count - 1) / 2)))\" y=\"\(frame.height - 10)\" "
                + "text-anchor=\"middle\">\(HTMLText.escape(label))</text>"
        }
        for (seriesIndex, seriesName) in series.enumerated() {
            let color = Self.palette[seriesIndex % Self.palette.count]
            let mine = points.filter { $0.1.series == seriesName }
            if mine.count > 1 {
                let line = mine.map {
                    "\(SVGPlotFrame.format(x($0.1.x, seriesIndex))),\(SVGPlotFrame.format(y($0.2.estimate)))"
                }
                .joined(separator: " ")
                svg +=
                    "<polyline class=\"series\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\" "
                    + "points=\"\(line)\"/>"
            }
            for (group, place, estimate) in mine {
                let px = SVGPlotFrame.format(x(place.x, seriesIndex))
                svg +=
                    "<line class=\"ci\" x1=\"\(px)\" y1=\"\(SVGPlotFrame.format(y(estimate.lower)))\" x2=\"\(px)\" "
                    + "y2=\"\(SVGPlotFrame.format(y(estimate.upper)))\" stroke=\"\(color)\" stroke-width=\"2\"/>"
                svg +=
                    "<circle class=\"point\" cx=\"\(px)\" cy=\"\(SVGPlotFrame.format(y(estimate.estimate)))\" r=\"4\" "
                    + "fill=\"\(color)\" data-series=\"\(HTMLText.escape(seriesName))\">"
                let interval = "[\(value(estimate.lower, metric)), \(value(estimate.upper, metric))]"
                let weighted = group.weighted ? ", weighted by 1/sampling probability" : ""
                let title =
                    "\(seriesName) \(place.x): \(value(estimate.estimate, metric)) \(interval), "
                    + "\(group.sessions) sessions\(weighted)"
                svg += "<title>\(HTMLText.escape(title))</title></circle>"
            }
        }
        return svg + "</svg></div>\n"
    }

    private func tables(_ metric: Metric) -> String {
        var header = by
        if compared != nil { header.append(versionKey) }
        let names = (metric.groups.first?.percentiles ?? []).map { "P" + String(Int($0.probability * 100)) }
        header += ["sessions", "events"] + names.map { "\($0) [95% CI]" }
        var html = "<table><tr>" + header.map { "<th>\(HTMLText.escape($0))</th>" }.joined() + "</tr>\n"
        for group in metric.groups {
            html += "<tr>" + group.values.map { "<td>\(HTMLText.escape($0))</td>" }.joined()
            html += "<td class=\"num\">\(group.sessions)</td><td class=\"num\">\(group.events)</td>"
            html +=
                group.percentiles.indices.map { index in
                    let percentile = group.percentiles[index]
                    let text =
                        group.tailEvents(index) >= SessionQuantiles.minimumTailEvents
                        ? "\(value(percentile.estimate, metric)) "
                            + "[\(value(percentile.lower, metric)), \(value(percentile.upper, metric))]"
                        : "≈\(value(percentile.estimate, metric))"
                    return "<td class=\"num\">\(HTMLText.escape(text))</td>"
                }.joined() + "</tr>\n"
        }
        html += "</table>\n"
        if let note = weightingNote(metric) { html += "<p class=\"note weighted\">\(HTMLText.escape(note))</p>\n" }
        if let note = thinTailNote(metric) { html += "<p class=\"note thin-tail\">\(HTMLText.escape(note))</p>\n" }
        guard let changes = metric.changes else { return html }
        html +=
            "<table class=\"changes\"><tr>"
            + (by + names.map { "\($0) change [interval]" } + ["verdict"]).map {
                "<th>\(HTMLText.escape($0))</th>"
            }.joined() + "</tr>\n"
        for group in changes {
            html += "<tr>" + group.values.map { "<td>\(HTMLText.escape($0))</td>" }.joined()
            if group.changes.isEmpty {
                html += names.map { _ in "<td class=\"num\">-</td>" }.joined() + "<td>too few sessions</td></tr>\n"
                continue
            }
            for change in group.changes {
                html +=
                    "<td class=\"num \(change.verdict.rawValue)\">\(HTMLText.escape(Self.changeCell(change)))</td>"
            }
            let overall = Self.overall(group.changes)
            html += "<td class=\"\(overall)\">\(overall)</td></tr>\n"
        }
        html += "</table>\n"
        for note in [intervalNote, sessionsNote(changes)].compactMap({ $0 }) {
            html += "<p class=\"note\">\(HTMLText.escape(note))</p>\n"
        }
        return html
    }
}
