import Foundation
import StrobeJudgement
import StrobeStatistics
import StrobeToolFormatting

extension DiffReport {
    /// A sample value in its unit, for people.
    static func value(_ value: Double, unit: String) -> String {
        guard value.isFinite else { return "-" }
        return HumanFormat.value(value, unit: unit == "ns" ? "ns" : unit == "bytes" ? "bytes" : nil)
            + (unit == "ns" || unit == "bytes" || unit.isEmpty || unit == "count" ? "" : " \(unit)")
    }

    /// "+14.2% [+11.0, +17.5]"; for a constant count, "+1 allocation per
    /// iteration (12 → 13)" (``MetricDefaults/exactCountChange(_:)``); for a
    /// settled time, or any inconclusive row, whose interval does not size
    /// its change, "not measured far enough" (``SizedInterval``): an early
    /// look's [−100%, +inf] says nothing. The JSON keeps the numbers.
    static func change(_ row: MetricComparison) -> String {
        if let count = MetricDefaults.exactCountChange(row) { return count }
        if row.notMeasuredFarEnough == true { return SizedInterval.text }
        guard let shift = row.shift else { return "-" }
        if row.verdict == .inconclusive, !SizedInterval.sizes(shift) { return SizedInterval.text }
        return "\(percent(shift.ratio))% [\(percent(shift.lower)), \(percent(shift.upper))]"
    }

    /// "+14.2" for a ratio of 1.142.
    static func percent(_ ratio: Double) -> String {
        let value = (ratio - 1) * 100
        return (value >= 0 ? "+" : "") + HumanFormat.format(value, decimals: 1)
    }

    static func pValue(_ value: Double) -> String {
        value < 0.0001 ? "<0.0001" : HumanFormat.format(value, decimals: 4)
    }

    /// "regression", "inconclusive (report only)", "inconclusive (left to
    /// the counts)" for a time its test's counted work settled, "regression
    /// (by its waits)" for a critical path its waits decided.
    static func verdictText(_ row: MetricComparison, markdown: Bool = false) -> String {
        var text = row.verdict == .regression && markdown ? "**regression**" : row.verdict.rawValue
        if row.verdict == .inconclusive, row.test.method == .iterations { text += " (1 process on a side)" }
        if row.settledByCounts != nil { text += " (left to the counts)" }
        if row.decidedByWaits == true { text += " (by its waits)" }
        if !row.gates { text += " (report only)" }
        return text
    }

    /// "8 pairs", "5 / 5", "1 / 1 (iter.)".
    static func replicatesText(_ row: MetricComparison) -> String {
        switch row.test.method {
        case .pairedRounds: return "\(row.test.baselineReplicates) pairs"
        case .iterations: return "\(row.test.baselineReplicates) / \(row.test.candidateReplicates) (iter.)"
        case .processes, .exact: return "\(row.test.baselineReplicates) / \(row.test.candidateReplicates)"
        }
    }

    /// What an inconclusive row saw and what would decide it:
    /// "+1.2% [-3.1, +5.6] reaches past the ±2.0% floor (noise ±4.1% per
    /// round, 12 rounds); would decide it: a longer --max-time (about 3× the
    /// rounds so far)".
    public static func undecidedExplanation(_ row: MetricComparison) -> String {
        var seen: String
        let floor = HumanFormat.format(row.relativeFloor * 100, decimals: 1)
        let percent = (row.shift?.confidence ?? 0) * 100
        // 99.97%, not a rounded 100.0%.
        let decimals = percent >= 99.9 && percent < 100 ? max(1, Int(-log10(100 - percent)) + 2) : 1
        let confidence = HumanFormat.format(percent, decimals: decimals)
        let rounds = min(row.test.baselineReplicates, row.test.candidateReplicates)
        let unit = row.test.method == .pairedRounds ? "rounds" : "processes per side"
        if row.shift != nil {
            seen = "\(change(row)) (\(confidence)% interval) reaches past the ±\(floor)% floor"
        } else {
            let absolute = row.absoluteFloor > 0 ? "±" + value(row.absoluteFloor, unit: row.unit) : "zero"
            seen =
                "a difference of \(signed(row.difference, unit: row.unit)) "
                + "[\(signed(row.differenceLower, unit: row.unit)), \(signed(row.differenceUpper, unit: row.unit))] "
                + "reaches past the \(absolute) floor"
        }
        var facts: [String] = []
        if row.test.logScale, row.test.method == .pairedRounds || row.test.method == .processes {
            let noise = (exp(row.test.replicateSpread) - 1) * 100
            let per = row.test.method == .pairedRounds ? "round" : "process"
            facts.append("noise ±\(HumanFormat.format(noise, decimals: noise >= 10 ? 0 : 1))% per \(per)")
        }
        if row.test.method != .iterations { facts.append("\(rounds) \(unit)") }
        if !facts.isEmpty { seen += " (" + facts.joined(separator: ", ") + ")" }
        let advice = row.advice.map { item -> String in
            switch item {
            case .moreIterations:
                let share =
                    row.iterationNoiseShare.map {
                        " (\(Int(($0 * 100).rounded()))% of the noise is within processes)"
                    } ?? ""
                return "more iterations per process (--iterations)\(share)"
            case .longerBudget:
                guard let needed = row.roundsNeeded, rounds > 0 else { return "a longer --max-time" }
                let factor = Int((Double(rounds + needed) / Double(rounds)).rounded(.up))
                return "a longer --max-time (about \(max(factor, 2))× the rounds so far)"
            case .quieterMachine:
                return "a quieter machine, or a wider floor for this metric in the policy"
            }
        }
        return advice.isEmpty ? seen : seen + "; would decide it: " + advice.joined(separator: ", or ")
    }

    static func signed(_ number: Double, unit: String) -> String {
        (number >= 0 ? "+" : "") + value(number, unit: unit)
    }

    /// One line per test with an inconclusive gated metric: the first such
    /// metric (its wall time when undecided) explained, the others named.
    var undecidedLines: [(metric: String, explanation: String)] {
        var order: [String] = []
        var byTest: [String: [MetricComparison]] = [:]
        for row in rows where row.gates && row.verdict == .inconclusive && row.settledByCounts == nil {
            let key = MetricDefaults.testPart(of: row.name) + (row.group.isEmpty ? "" : " [\(row.group)]")
            if byTest[key] == nil { order.append(key) }
            byTest[key, default: []].append(row)
        }
        return order.map { key in
            let undecided = byTest[key] ?? []
            let first = undecided[0]
            var explanation = Self.undecidedExplanation(first)
            let others = undecided.dropFirst().map { MetricDefaults.metricPart(of: $0.name) }
            if !others.isEmpty { explanation += " (also inconclusive: \(others.joined(separator: ", ")))" }
            return (first.name + (first.group.isEmpty ? "" : " [\(first.group)]"), explanation)
        }
    }

    private var percentileKeys: [String] {
        options.percentiles.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }
    }

    /// The rows a summary table shows: every gated row, and the report-only
    /// rows that moved or could not tell; the others are named after it.
    var tableRows: [MetricComparison] { rows.filter { $0.gates || $0.verdict != .unchanged } }

    /// The report-only rows left out of the summary tables (unchanged), as
    /// "also reported, unchanged: 21 metrics (process.cpu.user, … and 4
    /// more)"; nil when there are none.
    var quietRowsLine: String? {
        let quiet = rows.filter { !$0.gates && $0.verdict == .unchanged }
        guard !quiet.isEmpty else { return nil }
        var seen = Set<String>()
        let names = quiet.map { MetricDefaults.metricPart(of: $0.name) }.filter { seen.insert($0).inserted }
        let shown = names.prefix(4).joined(separator: ", ") + (names.count > 4 ? " and \(names.count - 4) more" : "")
        return "also reported, unchanged: \(names.count) metric\(names.count == 1 ? "" : "s") (\(shown))"
    }

    /// "decode, encode and load ran on one thread: their thread.* metrics
    /// are the process.* ones"; nil when no test was folded.
    var foldedLine: String? {
        guard !foldedTests.isEmpty else { return nil }
        let names =
            foldedTests.count == 1
            ? foldedTests[0] : foldedTests.dropLast().joined(separator: ", ") + " and " + foldedTests.last!
        let their = foldedTests.count == 1 ? "its" : "their"
        return "\(names) ran on one thread: \(their) thread.* metrics are shown as the process.* ones"
    }

    /// The test column of a row: its test's name on the first row of that
    /// test, blank below it, and blank for a metric that names no test (a
    /// CSV column), which the metric column names.
    static func testColumn(_ rows: [MetricComparison]) -> [String] {
        var previous: String?
        return rows.map { row in
            guard row.name.contains("/") else {
                previous = nil
                return ""
            }
            let test = MetricDefaults.testPart(of: row.name)
            let key = test + "\u{0}" + row.group
            defer { previous = key }
            return key == previous ? "" : test
        }
    }

    /// The widest a text report is drawn: columns are dropped, least
    /// needed first, until its table fits (the JSON keeps every number).
    public static let textWidth = 120

    /// The aligned terminal table, headed by the per-test summary; ANSI
    /// colours on the verdicts when `colour` is set. The table fits `width`
    /// columns: the per-side sample counts go first, then the high
    /// percentiles, then the adjusted p-value.
    public func renderText(colour: Bool = false, width: Int = DiffReport.textWidth) -> String {
        let shown = tableRows
        // Each column: its header, its cells, and the order it is dropped
        // in when the table is too wide (0: never).
        var columns: [(header: String, cells: [String], drop: Int, right: Bool)] = []
        let tests = Self.testColumn(shown)
        columns.append(("test", tests, 0, false))
        columns.append(("metric", shown.map { MetricDefaults.metricPart(of: $0.name) }, 0, false))
        if let groupBy { columns.append((groupBy, shown.map(\.group), 0, false)) }
        columns.append(("runs", shown.map(Self.replicatesText), 0, true))
        columns.append(("n base", shown.map { String($0.baseline.count) }, 1, true))
        columns.append(("n cand", shown.map { String($0.candidate.count) }, 1, true))
        for (index, key) in percentileKeys.enumerated() {
            let drop = index == 0 ? 0 : 1 + percentileKeys.count - index
            columns.append(
                (
                    "p\(key) base", shown.map { Self.value($0.baseline.percentiles[key] ?? .nan, unit: $0.unit) }, drop,
                    true
                ))
            columns.append(
                (
                    "p\(key) cand", shown.map { Self.value($0.candidate.percentiles[key] ?? .nan, unit: $0.unit) },
                    drop, true
                ))
        }
        columns.append(("change [CI]", shown.map(Self.change), 0, true))
        columns.append(("p (adj.)", shown.map { Self.pValue($0.adjustedPValue) }, percentileKeys.count + 2, true))
        columns.append(("verdict", shown.map { Self.verdictText($0) }, 0, false))
        func draw(_ kept: [(header: String, cells: [String], drop: Int, right: Bool)]) -> String {
            var table = TextTable(
                header: kept.map(\.header), rightAligned: Set(kept.indices.filter { kept[$0].right }))
            for row in shown.indices { table.rows.append(kept.map { $0.cells[row] }) }
            return table.render()
        }
        var kept = columns
        var text = draw(kept)
        for step in 1...(percentileKeys.count + 2) {
            guard text.split(separator: "\n").contains(where: { $0.count > width }) else { break }
            kept.removeAll { $0.drop == step }
            text = draw(kept)
        }
        if colour {
            // Only the verdict, the last cell, is coloured: a log that shows
            // the escape codes raw keeps its columns.
            let colours: [Verdict: String] = [
                .regression: "\u{1B}[31m", .improvement: "\u{1B}[32m", .inconclusive: "\u{1B}[33m",
            ]
            text = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
                guard index >= 2, index - 2 < shown.count, let code = colours[shown[index - 2].verdict] else {
                    return String(line)
                }
                let verdict = Self.verdictText(shown[index - 2])
                guard line.hasSuffix(verdict) else { return String(line) }
                return line.dropLast(verdict.count) + code + verdict + "\u{1B}[0m"
            }.joined(separator: "\n")
        }
        var output = headline + "\n" + metricCounts + "\n"
        if let originLine { output += Self.wrap(originLine, width: width, indent: "  ") + "\n" }
        for test in changedTests {
            output += Self.wrap("  " + test.decisionLine, width: width, indent: "    ") + "\n"
            if let path = test.criticalPath {
                output += Self.wrap("    " + path, width: width, indent: "      ") + "\n"
            }
        }
        output += "\n" + text + "\n"
        if let quietRowsLine { output += quietRowsLine + "\n" }
        output += functionsText(width: width)
        let undecided = undecidedLines
        if !undecided.isEmpty {
            output +=
                "\ninconclusive:\n"
                + undecided.map { Self.wrap("  \($0.metric): \($0.explanation)", width: width, indent: "    ") }
                .joined(separator: "\n") + "\n"
        }
        var notes: [String] = []
        if let foldedLine { notes.append("note: " + foldedLine) }
        if let listed = Self.contradictingMedians(shown) {
            notes.append(
                "note: the percentile columns are of all samples; where the medians point the other way from the "
                    + "change (\(listed)), the test compared the median of each side's process summaries (for a "
                    + "count that varies, each process's mean), and the processes of a side differ")
        }
        notes += warnings.map { "warning: " + $0 }
        if !notes.isEmpty {
            output += "\n" + notes.map { Self.wrap($0, width: width, indent: "  ") }.joined(separator: "\n") + "\n"
        }
        return output
    }

    /// The slower and faster tests, each shown by its decision line (the
    /// metric that decided it and the verdicts of its other gated metrics:
    /// "decode: regression (instructions +1.9% per iteration (4.12 M →
    /// 4.20 M); wall inconclusive)") and under it what its critical path
    /// now crosses, where that changed.
    var changedTests: [TestVerdict] { tests.filter { $0.outcome == .slower || $0.outcome == .faster } }

    /// `text` broken at spaces into lines of at most `width` characters
    /// (a longer word stands alone), the lines after the first indented.
    static func wrap(_ text: String, width: Int, indent: String) -> String {
        let lead = String(text.prefix { $0 == " " })
        var lines: [String] = []
        var line = lead
        var lineHasWord = false
        for word in text.dropFirst(lead.count).split(separator: " ") {
            if lineHasWord, line.count + 1 + word.count > width {
                lines.append(line)
                line = indent + word
            } else {
                line += (lineHasWord ? " " : "") + word
            }
            lineHasWord = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    /// Markdown for a pull-request comment: the verdict and one line per
    /// test that changed, short enough to read in the conversation; the
    /// table, what is inconclusive, the warnings and the method follow
    /// folded under `<details>`.
    public func renderMarkdown(reportLink: String? = nil) -> String {
        let regressions = gatedRegressions.count
        var lines: [String] = []
        lines.append(
            regressions > 0 ? "### :red_circle: Strobe: \(headline)" : "### :green_circle: Strobe: \(headline)")
        lines.append("")
        lines.append(metricCounts)
        if let originLine {
            lines.append("")
            lines.append("_\(originLine)_")
        }
        let changed = changedTests
        if !changed.isEmpty {
            lines.append("")
            for test in changed.prefix(Self.testsListed) {
                lines.append("- **\(test.outcome == .slower ? "slower" : "faster")**: \(test.decisionLine)")
                if let path = test.criticalPath { lines.append("  - \(path)") }
            }
            if changed.count > Self.testsListed {
                lines.append("- and \(changed.count - Self.testsListed) more, in the table below")
            }
            for (verdict, functions) in changedTestFunctions.prefix(Self.testsListed) {
                lines += functionsMarkdown(verdict, functions)
            }
            if let reportLink, !changedTestFunctions.isEmpty {
                lines.append("")
                lines.append(
                    "Where in the call tree the time moved: [differential flame graphs](\(reportLink)) "
                        + "in the HTML report.")
            }
        }
        let reportOnly = rows.filter { !$0.gates && ($0.verdict == .regression || $0.verdict == .improvement) }
        if !reportOnly.isEmpty {
            lines.append("")
            lines.append(
                "Reported, not gated: "
                    + reportOnly.prefix(3).map { "`\($0.name)` \(Self.change($0)) \($0.verdict.rawValue)" }.joined(
                        separator: ", ") + (reportOnly.count > 3 ? " and \(reportOnly.count - 3) more" : "") + ".")
        }
        lines.append("")
        lines.append("<details><summary>Every metric, what is inconclusive, and how it was judged</summary>")
        lines.append("")
        var header = ["test", "metric"]
        if let groupBy { header.append(groupBy) }
        header += ["runs", "n", "median", "p90", "change [CI]", "p (adj.)", "verdict"]
        let textColumns = groupBy == nil ? 2 : 3
        lines.append("| " + header.joined(separator: " | ") + " |")
        lines.append("|" + header.indices.map { $0 < textColumns ? "---" : "---:" }.joined(separator: "|") + "|")
        let shown = tableRows
        for (row, test) in zip(shown, Self.testColumn(shown)) {
            var cells = [test, "`\(MetricDefaults.metricPart(of: row.name))`"]
            if groupBy != nil { cells.append(row.group) }
            cells.append(Self.replicatesText(row))
            cells.append("\(row.baseline.count) / \(row.candidate.count)")
            cells.append(Self.centralValues(row))
            cells.append(
                "\(Self.value(row.baseline.p90, unit: row.unit)) → \(Self.value(row.candidate.p90, unit: row.unit))")
            cells.append(Self.change(row))
            cells.append(Self.pValue(row.adjustedPValue))
            cells.append(Self.verdictText(row, markdown: true))
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        if let centersNote = Self.centersNote(shown) {
            lines.append("")
            lines.append(centersNote.replacingOccurrences(of: "* ", with: "\\* ", options: .anchored))
        }
        if let quietRowsLine {
            lines.append("")
            lines.append(quietRowsLine.prefix(1).uppercased() + quietRowsLine.dropFirst() + ".")
        }
        let undecided = undecidedLines
        if !undecided.isEmpty {
            lines.append("")
            lines.append("**Inconclusive**")
            lines.append("")
            lines += undecided.map { "- `\($0.metric)`: \($0.explanation)" }
        }
        if foldedLine != nil || !warnings.isEmpty {
            lines.append("")
            if let foldedLine { lines.append("> \(foldedLine)") }
            lines += warnings.map { "> :warning: \($0)" }
        }
        lines.append("")
        lines.append("<sub>\(methodNote)</sub>")
        lines.append("")
        lines.append("</details>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The changed tests a pull-request comment lists before its details.
    static let testsListed = 8

    /// One sentence on how the verdicts were reached.
    public var methodNote: String {
        let gated = rows.filter(\.gates).count
        var note =
            "Each process (run) is a replicate: its iterations are summarised by their median (or minimum, "
            + "where the policy says so), and processes "
            + "are compared by a t-test on log values, paired by round when rounds are given. "
            + "Benjamini–Hochberg across \(gated) gated metrics at α \(Self.level(rows.first?.level ?? options.alpha)),"
            + " "
            + "noise floor \(HumanFormat.format(options.minimumEffect * 100, decimals: 1))% unless the policy sets "
            + "another; unchanged means the equivalence interval lies inside the floors; resource counts are reported, "
            + "not gated, unless "
            + "the policy gates them."
        if let look {
            note +=
                " Sequential look \(look.number) after \(look.rounds) rounds (alpha spent over the looks, Lan–DeMets)."
        }
        return note
    }

    /// A level for people: `0.01`, `0.0025`, `1.2e-05`, no trailing zeros.
    static func level(_ value: Double) -> String {
        guard value >= 0.0001 else { return String(format: "%.2g", value) }
        return String(format: "%g", (value * 1e6).rounded() / 1e6)
    }

    /// JSON with every number.
    public func renderJSON() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        guard let data = try? encoder.encode(self) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
