import Foundation
import StrobeFlameGraph
import StrobeHistory
import StrobeStatistics
import StrobeToolFormatting

extension TrendReport {
    /// The colours of the groups, in order (Tableau 10).
    static let palette = [
        "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac", "#e15759",
    ]

    /// The dashboard's own rules, beside the shared ones of
    /// ``HTMLReportPage``: cards, tables, plots, changes.
    static let dashboardStyle = """
        :root{--ink:#1d1d1f;--muted:#6e6e73;--rule:#e3e3e8}
        .cards{display:flex;gap:12px;flex-wrap:wrap;margin:0 0 8px}
        .card{background:#fff;border:1px solid var(--rule);border-radius:10px;padding:10px 16px;min-width:120px}
        .card b{display:block;font-size:22px}
        .card span{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
        table{border-collapse:collapse;width:100%;background:#fff;border:1px solid var(--rule);border-radius:10px;
        overflow:hidden}
        td,th{padding:7px 10px;border-bottom:1px solid var(--rule);text-align:left;vertical-align:top;
        font-size:13px}
        th{background:#fafafc;color:var(--muted);font-weight:600;font-size:12px}
        td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
        code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
        .tag{display:inline-block;padding:1px 7px;border-radius:9px;font-size:12px;font-weight:600;color:#fff}
        .plot{background:#fff;border:1px solid var(--rule);border-radius:10px;padding:12px 14px 6px;margin:0 0 16px}
        .plot h3{font-size:14px;margin:0 0 2px}.plot p{margin:0 0 4px;color:var(--muted);font-size:12px}
        svg .grid{stroke:#efeff4}
        details{background:#fff;border:1px solid var(--rule);border-radius:10px;padding:8px 14px;margin:0 0 10px}
        summary{cursor:pointer;font-weight:600}
        pre{background:#f6f6f8;padding:8px 10px;border-radius:6px;overflow-x:auto;font-size:12px}
        .notes li{color:var(--muted)}
        .legend{display:flex;gap:16px;flex-wrap:wrap;font-size:12px;color:#48484a;margin:2px 0 6px}
        .legend i{vertical-align:-1px}
        .legend i.hollow{background:#fff!important;border:2px solid #888;width:7px;height:7px}
        .legend i.line{border-radius:0;width:14px;height:0;border-top:2px dashed #888;vertical-align:3px}

        """

    /// The colour of a change by its cause and direction.
    static func colour(_ change: TrendChange) -> String {
        switch change.cause {
        case .code: return change.direction == .regression ? "#c62828" : "#2e7d32"
        case .machine: return "#616161"
        case .undetermined: return "#a86b00"
        }
    }

    /// A self-contained dashboard: the changes in a table, then a plot per
    /// series (every run a point, a colour per group, reference runs hollow;
    /// each change a dashed line labelled with its commit range and cause,
    /// with the levels on either side), and `flameGraphs` (the
    /// differential flame graphs of the code's changes,
    /// ``flameGraphs(runs:window:)``) after the table. Inline SVG, CSS and
    /// the flame graphs' script only: nothing fetched.
    public func renderHTML(flameGraphs: [DifferentialFlameGraph] = []) -> String {
        var html = HTMLReportPage.start(title: "Performance history", style: Self.dashboardStyle)
        html += "<h1>Performance history</h1>"
        html += "<p class=\"sub\">\(HTMLText.escape(source)) · \(runCount) runs"
        if let reference {
            html += " · reference: <code>\(HTMLText.escape(reference))</code> (\(referenceRunCount) runs)"
        }
        html += " · \(order) order</p>"
        let code = changes.filter { $0.cause == .code }
        html += "<div class=\"cards\">"
        html += "<div class=\"card\"><b>\(series.count)</b><span>series</span></div>"
        html +=
            "<div class=\"card\"><b class=\"regression\">\(code.filter { $0.direction == .regression }.count)</b><span>"
            + "code regressions</span></div>"
        html +=
            "<div class=\"card\"><b class=\"improvement\">\(code.filter { $0.direction == .improvement }.count)</b>"
            + "<span>code improvements</span></div>"
        html +=
            "<div class=\"card\"><b>\(changes.filter { $0.cause == .machine }.count)</b><span>machine's</span></div>"
        html +=
            "<div class=\"card\"><b>\(changes.filter { $0.cause == .undetermined }.count)</b><span>undetermined</span>"
            + "</div>"
        html += "</div>"
        html += "<h2>Changes</h2>"
        if changes.isEmpty {
            html += "<p>No series changed.</p>"
        } else {
            html +=
                "<table class=\"changes\"><tr><th>series</th><th>where</th><th>change [95% CI]</th><th>p</th><th>"
                + "status</th><th>cause</th><th>commits</th></tr>"
            for (index, change) in changes.enumerated() {
                html +=
                    "<tr class=\"change\"><td><a href=\"#plot-\(plotIndex(change))\">"
                    + "\(HTMLText.escape(change.series))</a></td>"
                html += "<td>\(HTMLText.escape(change.group.isEmpty ? "—" : change.group))</td>"
                html +=
                    "<td class=\"num \(change.direction.rawValue)\">"
                    + "\(HTMLText.escape(change.changeText()))</td>"
                html +=
                    "<td class=\"num\">\(Self.pValue(change.pValue))</td><td>"
                    + "\(HTMLText.escape(change.status.description))"
                if let mark = change.mark { html += "<br><small>\(HTMLText.escape(Self.markText(mark)))</small>" }
                html +=
                    "</td><td><span class=\"tag\" style=\"background:\(Self.colour(change))\">"
                    + "\(change.cause.rawValue)</span></td>"
                html +=
                    "<td><a href=\"#change-\(index)\"><code>\(HTMLText.escape(change.shortRange))</code></a></td></tr>"
            }
            html += "</table>"
        }
        if !suiteChanges.isEmpty {
            html += "<h2>Whole suites</h2><ul>"
            for change in suiteChanges { html += "<li>\(HTMLText.escape(Self.suiteLine(change)))</li>" }
            html += "</ul>"
        }
        html += FlameGraphHTML.section(flameGraphs, heading: "Differential flame graphs of the code's changes")
        html += "<h2>Series</h2>"
        // Changed series first, then the others, each in suite/test order.
        let changed = Set(changes.map(\.series))
        let ordered = series.indices.sorted { a, b in
            (changed.contains(series[a].name) ? 0 : 1, a) < (changed.contains(series[b].name) ? 0 : 1, b)
        }
        for index in ordered {
            html += plot(index)
        }
        if !changes.isEmpty {
            html += "<h2>Each change</h2>"
            for (index, change) in changes.enumerated() {
                html +=
                    "<details id=\"change-\(index)\"><summary>\(HTMLText.escape(change.series)) <code>"
                    + "\(HTMLText.escape(change.shortRange))</code>: "
                html +=
                    "<span class=\"\(change.direction.rawValue)\">\(change.direction.rawValue)</span>, the "
                    + "\(change.cause.rawValue)'s</summary>"
                html +=
                    "<p>\(HTMLText.escape(Self.runsLine(change)))</p><p>Cause: \(HTMLText.escape(change.reason))</p>"
                if !change.commits.isEmpty {
                    html += "<p>Commits:</p><pre>\(HTMLText.escape(change.commits.joined(separator: "\n")))"
                    html += change.moreCommits > 0 ? "\n… and \(change.moreCommits) more</pre>" : "</pre>"
                }
                if !change.confirm.isEmpty {
                    html += "<p>Confirm it:</p><pre>\(HTMLText.escape(change.confirm.joined(separator: "\n")))</pre>"
                }
                html += "<p>Then: <code>\(HTMLText.escape(Self.markCommand(change)))</code></p></details>"
            }
        }
        if !notes.isEmpty {
            html +=
                "<h2>Notes</h2><ul class=\"notes\">" + notes.map { "<li>\(HTMLText.escape($0))</li>" }.joined()
                + "</ul>"
        }
        html += "<p class=\"sub\"><small>\(HTMLText.escape(methodLine))</small></p>"
        return html + HTMLReportPage.end
    }

    /// The index of the plot of `change`'s series.
    private func plotIndex(_ change: TrendChange) -> Int {
        series.firstIndex { $0.name == change.series } ?? 0
    }

    /// The plot of series `index`: a section with its title, legend and SVG.
    private func plot(_ index: Int) -> String {
        let item = series[index]
        let own = changes.filter { $0.series == item.name }
        let frame = SVGPlotFrame(width: 960, height: 250, left: 78, right: 16, top: 34, bottom: 40)
        let values = item.points.map(\.value)
        guard var low = values.min(), var high = values.max() else { return "" }
        if high == low {
            // A constant series sits in the middle of its plot, not on its axis.
            let pad = max(abs(low) * 0.05, low == 0 ? 1 : abs(low) * 1e-6)
            low -= pad
            high += pad
        }
        let ticks = Self.niceTicks(low: low, high: high)
        let minimum = min(low, ticks.first ?? low)
        let maximum = max(high, ticks.last ?? high)
        let span = maximum > minimum ? maximum - minimum : max(abs(maximum), 1)
        let plotWidth = frame.dataWidth
        let slotWidth = plotWidth / Double(max(item.slots.count, 1))
        func x(_ slot: Double) -> Double { frame.left + (slot + 0.5) * slotWidth }
        func y(_ value: Double) -> Double { frame.y(value, low: minimum, high: minimum + span) }
        let f = SVGPlotFrame.format
        // Durations and sizes carry their unit on every tick (1.2 ms, 3 MiB);
        // other units are named once, beside the metric.
        let unitName = item.unit.isEmpty || item.unit == "ns" || item.unit == "bytes" ? "" : " (\(item.unit))"
        var html = "<section class=\"plot\" id=\"plot-\(index)\" data-series=\"\(HTMLText.escape(item.name))\">"
        html +=
            "<h3>\(HTMLText.escape(item.suite)) · \(HTMLText.escape(item.test)) · "
            + "\(HTMLText.escape(item.metric))\(HTMLText.escape(unitName))</h3>"
        html +=
            "<p>\(item.better.rawValue) is better · \(item.slots.count) \(order == "commit" ? "commits" : "positions")"
        html += own.isEmpty ? " · no change</p>" : " · \(own.count) change\(own.count == 1 ? "" : "s")</p>"
        html += "<div class=\"legend\">"
        for (g, group) in item.groups.enumerated() {
            html += HTMLReportPage.legendEntry(
                colour: Self.palette[g % Self.palette.count], label: group.isEmpty ? "runs" : group)
        }
        if item.points.contains(where: \.reference) { html += "<span><i class=\"hollow\"></i>reference runs</span>" }
        if !own.isEmpty { html += "<span><i class=\"line\"></i>change (commit range · cause)</span>" }
        html += "</div>"
        html +=
            "<svg class=\"trend-plot\" viewBox=\"0 0 \(Int(frame.width)) \(Int(frame.height))\" width=\"100%\" "
            + "role=\"img\" aria-label=\"\(HTMLText.escape(item.name))\">"
        // The value axis and its grid.
        for tick in ticks {
            html +=
                "<line class=\"grid\" x1=\"\(f(frame.left))\" x2=\"\(f(frame.width - frame.right))\" "
                + "y1=\"\(f(y(tick)))\" y2=\"\(f(y(tick)))\"/>"
            html +=
                "<text x=\"\(f(frame.left - 6))\" y=\"\(f(y(tick) + 4))\" text-anchor=\"end\">"
                + "\(HTMLText.escape(HumanFormat.value(tick, unit: item.unit)))</text>"
        }
        html += frame.axes
        html +=
            "<text transform=\"translate(14 \(f(frame.top + frame.dataHeight / 2))) rotate(-90)\" "
            + "text-anchor=\"middle\">"
            + "\(HTMLText.escape(item.metric + unitName))</text>"
        // The position axis: commits (or dates), about ten labels.
        let every = max(1, Int((Double(item.slots.count) / 10).rounded(.up)))
        for (slot, position) in item.slots.enumerated() where slot % every == 0 || slot == item.slots.count - 1 {
            if slot == item.slots.count - 1, slot % every != 0, slot % every < every / 2 + 1 { continue }
            let label = position.commit.isEmpty ? Self.day(position.time) : String(position.commit.prefix(7))
            html +=
                "<line class=\"axis\" x1=\"\(f(x(Double(slot))))\" x2=\"\(f(x(Double(slot))))\" "
                + "y1=\"\(f(frame.dataBottom))\" y2=\"\(f(frame.dataBottom + 4))\"/>"
            html +=
                "<text x=\"\(f(x(Double(slot))))\" y=\"\(f(frame.dataBottom + 16))\" text-anchor=\"middle\">"
                + "\(HTMLText.escape(label))</text>"
        }
        html +=
            "<text x=\"\(f(frame.left + plotWidth / 2))\" y=\"\(f(frame.height - 6))\" text-anchor=\"middle\">"
            + "\(order == "commit" ? "commit (oldest first, git order)" : "run (oldest first)")</text>"
        // The levels on either side of each change, per group.
        for (g, group) in item.groups.enumerated() {
            let groupChanges = own.filter { $0.group == group }.sorted { $0.firstAfter.slot < $1.firstAfter.slot }
            guard !groupChanges.isEmpty else { continue }
            var bounds = [0] + groupChanges.map(\.firstAfter.slot) + [item.slots.count]
            bounds = Array(Set(bounds)).sorted()
            for (start, end) in zip(bounds, bounds.dropFirst()) where end > start {
                let segment = item.points.filter {
                    !$0.reference && $0.group == group && $0.slot >= start && $0.slot < end
                }.map(\.value)
                guard !segment.isEmpty else { continue }
                let level = Quantiles.median(sorted: segment.sorted())
                html +=
                    "<line class=\"level\" stroke=\"\(Self.palette[g % Self.palette.count])\" stroke-width=\"2\" "
                    + "stroke-opacity=\".55\" "
                html +=
                    "x1=\"\(f(x(Double(start)) - slotWidth / 2))\" x2=\"\(f(x(Double(end - 1)) + slotWidth / 2))\" "
                    + "y1=\"\(f(y(level)))\" y2=\"\(f(y(level)))\"/>"
            }
        }
        // The runs.
        let radius = max(2.2, min(4.5, slotWidth / 3))
        for point in item.points {
            let g = item.groups.firstIndex(of: point.group) ?? 0
            let colour = Self.palette[g % Self.palette.count]
            let slot = item.slots[point.slot]
            let place = slot.commit.isEmpty ? Self.time(slot.time) : "commit \(slot.commit.prefix(10))"
            let title =
                "\(point.reference ? "reference " : "")run "
                + "\(point.run)\(point.group.isEmpty ? "" : " on \(point.group)"), \(place): "
                + "\(HumanFormat.value(point.value, unit: item.unit))"
            if point.reference {
                html +=
                    "<circle class=\"point reference\" data-group=\"\(HTMLText.escape(point.group))\" "
                    + "cx=\"\(f(x(Double(point.slot))))\" cy=\"\(f(y(point.value)))\" r=\"\(f(radius))\" fill=\"#fff\" "
                    + "stroke=\"\(colour)\" stroke-width=\"1.5\" opacity=\".8\"><title>"
                    + "\(HTMLText.escape(title))</title></circle>"
            } else {
                html +=
                    "<circle class=\"point\" data-group=\"\(HTMLText.escape(point.group))\" "
                    + "cx=\"\(f(x(Double(point.slot))))\" cy=\"\(f(y(point.value)))\" r=\"\(f(radius))\" "
                    + "fill=\"\(colour)\"><title>\(HTMLText.escape(title))</title></circle>"
            }
        }
        // The changes: a dashed line between the two commits, labelled.
        for (number, change) in own.enumerated() {
            let position = x(Double(change.firstAfter.slot) - 0.5)
            let colour = Self.colour(change)
            let label =
                "\(change.shortRange.split(separator: ".").map { String($0.prefix(7)) }.joined(separator: "..")) · "
                + "\(change.cause.rawValue) · \(change.shortChangeText)"
            let anchor = position > frame.left + plotWidth * 0.6 ? "end" : "start"
            let offset = anchor == "end" ? -5.0 : 5.0
            html +=
                "<g class=\"change-point\" data-cause=\"\(change.cause.rawValue)\" "
                + "data-range=\"\(HTMLText.escape(change.range))\">"
            html +=
                "<line x1=\"\(f(position))\" x2=\"\(f(position))\" y1=\"\(f(frame.top - 4))\" "
                + "y2=\"\(f(frame.dataBottom))\" stroke=\"\(colour)\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/>"
            html +=
                "<text class=\"change-label\" x=\"\(f(position + offset))\" "
                + "y=\"\(f(frame.top - 8 - Double(number % 2) * 13))\" text-anchor=\"\(anchor)\" "
                + "style=\"fill:\(colour);font-weight:600\">\(HTMLText.escape(label))</text>"
            html += "</g>"
        }
        html += "</svg></section>"
        return html
    }

    /// Four to seven round values spanning `low`...`high`.
    static func niceTicks(low: Double, high: Double) -> [Double] {
        let span = high - low
        guard span > 0, span.isFinite else { return [low] }
        let raw = span / 5
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        var ticks: [Double] = []
        var value = floor(low / step) * step
        while value <= high + step * 0.999 && ticks.count < 12 {
            ticks.append(value)
            value += step
        }
        return ticks
    }

    /// A date in UTC.
    static func day(_ nanoseconds: Int64) -> String {
        String(time(nanoseconds).prefix(10))
    }
}
