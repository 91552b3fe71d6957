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

    /// "+14.2% [+11.0, +17.5]".
    static func change(_ row: MetricComparison) -> String {
        guard let shift = row.shift else { return "-" }
        func percent(_ ratio: Double) -> String {
            let value = (ratio - 1) * 100
            return (value >= 0 ? "+" : "") + HumanFormat.format(value, decimals: 1)
        }
        return "\(percent(shift.ratio))% [\(percent(shift.lower)), \(percent(shift.upper))]"
    }

    static func pValue(_ value: Double) -> String {
        value < 0.0001 ? "<0.0001" : HumanFormat.format(value, decimals: 4)
    }

    /// "inconclusive (~4 more rounds)", "regression (report only)".
    static func verdictText(_ row: MetricComparison, markdown: Bool = false) -> String {
        var text = row.verdict == .regression && markdown ? "**regression**" : row.verdict.rawValue
        if row.verdict == .inconclusive {
            if let needed = row.roundsNeeded, needed > 500 {
                // Say why: the noise of one round against the floor.
                let noise = row.test.logScale ? (exp(row.test.replicateSpread) - 1) * 100 : nil
                let floor = HumanFormat.format(row.relativeFloor * 100, decimals: 1)
                text += noise.map { " (±\(HumanFormat.format($0, decimals: 0))% per round against a \(floor)% floor: >500 more rounds)" }
                    ?? " (>500 more rounds)"
            } else if let needed = row.roundsNeeded {
                text += " (~\(needed) more round\(needed == 1 ? "" : "s"))"
            } else if row.test.method == .iterations {
                text += " (1 process on a side)"
            }
        }
        if !row.gates { text += " (report only)" }
        return text
    }

    /// "paired 8", "5 / 5", "1 / 1 (iterations)".
    static func replicatesText(_ row: MetricComparison) -> String {
        switch row.test.method {
        case .pairedRounds: return "\(row.test.baselineReplicates) pairs"
        case .iterations: return "\(row.test.baselineReplicates) / \(row.test.candidateReplicates) (iter.)"
        case .processes, .exact: return "\(row.test.baselineReplicates) / \(row.test.candidateReplicates)"
        }
    }

    private var percentileKeys: [String] {
        options.percentiles.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }
    }

    /// The aligned terminal table; ANSI colours when `colour` is set.
    public func renderText(colour: Bool = false) -> String {
        var header = ["metric"]
        if groupBy != nil { header.append(groupBy!) }
        header += ["runs", "n base", "n cand"]
        for key in percentileKeys { header += ["p\(key) base", "p\(key) cand"] }
        header += ["change [CI]", "p (adj.)", "verdict"]
        let firstNumeric = groupBy == nil ? 1 : 2
        var table = TextTable(header: header, rightAligned: Set(firstNumeric..<(header.count - 1)))
        for row in rows {
            var cells = [row.name]
            if groupBy != nil { cells.append(row.group) }
            cells += [Self.replicatesText(row), String(row.baseline.count), String(row.candidate.count)]
            for key in percentileKeys {
                cells += [Self.value(row.baseline.percentiles[key] ?? .nan, unit: row.unit),
                          Self.value(row.candidate.percentiles[key] ?? .nan, unit: row.unit)]
            }
            cells += [Self.change(row), Self.pValue(row.adjustedPValue), Self.verdictText(row)]
            table.rows.append(cells)
        }
        var text = table.render()
        if colour {
            let colours: [Verdict: String] = [.regression: "\u{1B}[31m", .improvement: "\u{1B}[32m", .inconclusive: "\u{1B}[33m"]
            text = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
                guard index >= 2, index - 2 < rows.count, let code = colours[rows[index - 2].verdict] else { return String(line) }
                return code + line + "\u{1B}[0m"
            }.joined(separator: "\n")
        }
        var output = headline + "\n\n" + text + "\n"
        if !warnings.isEmpty { output += "\n" + warnings.map { "warning: " + $0 }.joined(separator: "\n") + "\n" }
        return output
    }

    /// Markdown for a pull-request comment: the summary first, then the
    /// table, then warnings and the method.
    public func renderMarkdown() -> String {
        let regressions = gatedRegressions.count
        var lines: [String] = []
        lines.append(regressions > 0 ? "### :red_circle: Strobe: \(headline)" : "### :green_circle: Strobe: \(headline)")
        lines.append("")
        let flagged = rows.filter { $0.verdict == .regression || $0.verdict == .improvement }
        for row in flagged {
            let group = row.group.isEmpty ? "" : " (\(row.group))"
            lines.append("- **\(row.verdict.rawValue)** `\(row.name)`\(group): \(Self.change(row)), median \(Self.value(row.baseline.median, unit: row.unit)) → \(Self.value(row.candidate.median, unit: row.unit))")
        }
        if !flagged.isEmpty { lines.append("") }
        var header = ["metric"]
        if let groupBy { header.append(groupBy) }
        header += ["runs", "n", "median", "p90", "change [CI]", "p (adj.)", "verdict"]
        lines.append("| " + header.joined(separator: " | ") + " |")
        lines.append("|" + header.enumerated().map { $0.offset == 0 || ($0.offset == 1 && groupBy != nil) ? "---" : "---:" }.joined(separator: "|") + "|")
        for row in rows {
            var cells = ["`\(row.name)`"]
            if groupBy != nil { cells.append(row.group) }
            cells.append(Self.replicatesText(row))
            cells.append("\(row.baseline.count) / \(row.candidate.count)")
            cells.append("\(Self.value(row.baseline.median, unit: row.unit)) → \(Self.value(row.candidate.median, unit: row.unit))")
            cells.append("\(Self.value(row.baseline.p90, unit: row.unit)) → \(Self.value(row.candidate.p90, unit: row.unit))")
            cells.append(Self.change(row))
            cells.append(Self.pValue(row.adjustedPValue))
            cells.append(Self.verdictText(row, markdown: true))
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        if !warnings.isEmpty {
            lines.append("")
            lines += warnings.map { "> :warning: \($0)" }
        }
        lines.append("")
        lines.append("<sub>\(methodNote)</sub>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// One sentence on how the verdicts were reached.
    public var methodNote: String {
        var note = "Each process (run) is a replicate: its iterations are summarised by their median (or minimum, "
            + "where the policy says so), and processes "
            + "are compared by a t-test on log values, paired by round when rounds are given. Benjamini–Hochberg across "
            + "\(rows.count) metrics at \(HumanFormat.format(rows.first?.level ?? options.alpha, decimals: 5)), noise floor "
            + "\(HumanFormat.format(options.minimumEffect * 100, decimals: 1))% unless the policy sets another; metrics "
            + "with no spread are judged by their absolute floor."
        if let look {
            note += " Sequential look \(look.number) after \(look.rounds) rounds (alpha spent over looks, Lan–DeMets, O'Brien–Fleming-type)."
        }
        return note
    }

    /// JSON with every number.
    public func renderJSON() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        guard let data = try? encoder.encode(self) else { return "{}\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
