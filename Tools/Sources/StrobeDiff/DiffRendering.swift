import Foundation
import StrobeFormatting
import StrobeStatistics

extension DiffReport {
    /// A sample value in its unit, for people.
    static func value(_ value: Double, unit: String) -> String {
        guard value.isFinite else { return "-" }
        return HumanFormat.value(value, unit: unit == "ns" ? "ns" : unit == "bytes" ? "bytes" : nil)
            + (unit == "ns" || unit == "bytes" || unit.isEmpty || unit == "count" ? "" : " \(unit)")
    }

    /// "+14.2% [+11.0, +17.5]"; for a constant count, "+1 allocation per
    /// iteration (12 → 13)" (``MetricDefaults/exactCountChange(_:)``).
    static func change(_ row: MetricComparison) -> String {
        if let count = MetricDefaults.exactCountChange(row) { return count }
        guard let shift = row.shift else { return "-" }
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

    /// "regression", "inconclusive (report only)".
    static func verdictText(_ row: MetricComparison, markdown: Bool = false) -> String {
        var text = row.verdict == .regression && markdown ? "**regression**" : row.verdict.rawValue
        if row.verdict == .inconclusive, row.test.method == .iterations { text += " (1 process on a side)" }
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
        let confidence = HumanFormat.format((row.shift?.confidence ?? 0) * 100, decimals: 1)
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
            facts.append(
                "noise ±\(HumanFormat.format(noise, decimals: noise >= 10 ? 0 : 1))% per \(row.test.method == .pairedRounds ? "round" : "process")"
            )
        }
        if row.test.method != .iterations { facts.append("\(rounds) \(unit)") }
        if !facts.isEmpty { seen += " (" + facts.joined(separator: ", ") + ")" }
        let advice = row.advice.map { item -> String in
            switch item {
            case .moreIterations:
                let share =
                    row.iterationNoiseShare.map { " (they make \(Int(($0 * 100).rounded()))% of the noise)" } ?? ""
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
        for row in rows where row.gates && row.verdict == .inconclusive {
            let key = MetricDefaults.testPart(of: row.name) + (row.group.isEmpty ? "" : " [\(row.group)]")
            if byTest[key] == nil { order.append(key) }
            byTest[key, default: []].append(row)
        }
        return order.map { key in
            let undecided = byTest[key] ?? []
            let first = undecided[0]
            var explanation = Self.undecidedExplanation(first)
            let others = undecided.dropFirst().map { MetricDefaults.metricPart(of: $0.name) }
            if !others.isEmpty { explanation += " (also undecided: \(others.joined(separator: ", ")))" }
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
        return "also reported, unchanged: \(quiet.count) metric\(quiet.count == 1 ? "" : "s") (\(shown))"
    }

    /// "decode, encode and load ran on one thread: their thread.* metrics
    /// are the process.* ones"; nil when no test was folded.
    var foldedLine: String? {
        guard !foldedTests.isEmpty else { return nil }
        let names =
            foldedTests.count == 1
            ? foldedTests[0] : foldedTests.dropLast().joined(separator: ", ") + " and " + foldedTests.last!
        return
            "\(names) ran on one thread: \(foldedTests.count == 1 ? "its" : "their") thread.* metrics are shown as the process.* ones"
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

    /// The aligned terminal table, headed by the per-test summary; ANSI
    /// colours on the verdicts when `colour` is set.
    public func renderText(colour: Bool = false) -> String {
        var header = ["test", "metric"]
        if let groupBy { header.append(groupBy) }
        header += ["runs", "n base", "n cand"]
        for key in percentileKeys { header += ["p\(key) base", "p\(key) cand"] }
        header += ["change [CI]", "p (adj.)", "verdict"]
        let firstNumeric = groupBy == nil ? 2 : 3
        var table = TextTable(header: header, rightAligned: Set(firstNumeric..<(header.count - 1)))
        let shown = tableRows
        for (row, test) in zip(shown, Self.testColumn(shown)) {
            var cells = [test, MetricDefaults.metricPart(of: row.name)]
            if groupBy != nil { cells.append(row.group) }
            cells += [Self.replicatesText(row), String(row.baseline.count), String(row.candidate.count)]
            for key in percentileKeys {
                cells += [
                    Self.value(row.baseline.percentiles[key] ?? .nan, unit: row.unit),
                    Self.value(row.candidate.percentiles[key] ?? .nan, unit: row.unit),
                ]
            }
            cells += [Self.change(row), Self.pValue(row.adjustedPValue), Self.verdictText(row)]
            table.rows.append(cells)
        }
        var text = table.render()
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
        var output = headline + "\n" + metricCounts + "\n\n" + text + "\n"
        if let quietRowsLine { output += quietRowsLine + "\n" }
        let undecided = undecidedLines
        if !undecided.isEmpty {
            output +=
                "\nundecided:\n" + undecided.map { "  \($0.metric): \($0.explanation)" }.joined(separator: "\n") + "\n"
        }
        var notes: [String] = []
        if let foldedLine { notes.append("note: " + foldedLine) }
        notes += warnings.map { "warning: " + $0 }
        if !notes.isEmpty { output += "\n" + notes.joined(separator: "\n") + "\n" }
        return output
    }

    /// Markdown for a pull-request comment: the per-test summary first, then
    /// the table, then what is undecided, warnings and the method.
    public func renderMarkdown() -> String {
        let regressions = gatedRegressions.count
        var lines: [String] = []
        lines.append(
            regressions > 0 ? "### :red_circle: Strobe: \(headline)" : "### :green_circle: Strobe: \(headline)")
        lines.append("")
        lines.append(metricCounts)
        lines.append("")
        let flagged = rows.filter { $0.verdict == .regression || $0.verdict == .improvement }
        for row in flagged {
            let group = row.group.isEmpty ? "" : " (\(row.group))"
            let only = row.gates ? "" : " (report only)"
            lines.append(
                "- **\(row.verdict.rawValue)**\(only) `\(row.name)`\(group): \(Self.change(row)), median \(Self.value(row.baseline.median, unit: row.unit)) → \(Self.value(row.candidate.median, unit: row.unit))"
            )
        }
        if !flagged.isEmpty { lines.append("") }
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
            cells.append(
                "\(Self.value(row.baseline.median, unit: row.unit)) → \(Self.value(row.candidate.median, unit: row.unit))"
            )
            cells.append(
                "\(Self.value(row.baseline.p90, unit: row.unit)) → \(Self.value(row.candidate.p90, unit: row.unit))")
            cells.append(Self.change(row))
            cells.append(Self.pValue(row.adjustedPValue))
            cells.append(Self.verdictText(row, markdown: true))
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        if let quietRowsLine {
            lines.append("")
            lines.append(quietRowsLine.prefix(1).uppercased() + quietRowsLine.dropFirst() + ".")
        }
        let undecided = undecidedLines
        if !undecided.isEmpty {
            lines.append("")
            lines.append("**Undecided**")
            lines += undecided.map { "- `\($0.metric)`: \($0.explanation)" }
        }
        if foldedLine != nil || !warnings.isEmpty {
            lines.append("")
            if let foldedLine { lines.append("> \(foldedLine)") }
            lines += warnings.map { "> :warning: \($0)" }
        }
        lines.append("")
        lines.append("<sub>\(methodNote)</sub>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// One sentence on how the verdicts were reached.
    public var methodNote: String {
        let gated = rows.filter(\.gates).count
        var note =
            "Each process (run) is a replicate: its iterations are summarised by their median (or minimum, "
            + "where the policy says so), and processes "
            + "are compared by a t-test on log values, paired by round when rounds are given. Benjamini–Hochberg across "
            + "\(gated) gated metrics at \(HumanFormat.format(rows.first?.level ?? options.alpha, decimals: 5)), noise floor "
            + "\(HumanFormat.format(options.minimumEffect * 100, decimals: 1))% unless the policy sets another; unchanged "
            + "means the equivalence interval lies inside the floors; resource counts are reported, not gated, unless "
            + "the policy gates them."
        if let look {
            note +=
                " Sequential look \(look.number) after \(look.rounds) rounds (alpha spent over the looks, Lan–DeMets)."
        }
        return note
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
