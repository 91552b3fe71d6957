import Foundation
import StrobeHistory
import StrobeStatistics
import StrobeToolFormatting

extension TrendReport {
    /// The first line: how many runs, series and changes, and whose.
    public var headline: String {
        let code = changes.filter { $0.cause == .code }.count
        let machine = changes.filter { $0.cause == .machine }.count
        let undetermined = changes.count - code - machine
        var line = "\(runCount) runs"
        if referenceRunCount > 0 { line += " (and \(referenceRunCount) reference runs)" }
        line += ", \(series.count) series, in \(order) order: "
        if changes.isEmpty { return line + "no change" }
        var parts: [String] = []
        if code > 0 { parts.append("\(code) the code's") }
        if machine > 0 { parts.append("\(machine) the machine's") }
        if undetermined > 0 { parts.append("\(undetermined) undetermined") }
        return line + "\(changes.count) change\(changes.count == 1 ? "" : "s") (" + parts.joined(separator: ", ") + ")"
    }

    /// A line of method: the false discovery rate and the floor.
    var methodLine: String {
        "Each run is one value (its processes' median); steps by rank binary segmentation, Benjamini–Hochberg over the "
            + "series of a suite at α \(HumanFormat.format(alpha, decimals: 3)), changes within "
            + "±\(HumanFormat.format(relativeFloor * 100, decimals: 1))% not reported; "
            + "intervals are Hodges–Lehmann 95%."
    }

    /// The changes grouped by where they lie: one group per commit range
    /// (or pair of runs) and recipe, in the order of their first change,
    /// so that a range that moved several metrics is told once.
    var changesByRange: [[TrendChange]] {
        var order: [String] = []
        var groups: [String: [TrendChange]] = [:]
        for change in changes {
            let key =
                "\(change.lastBefore.commit.isEmpty ? change.lastBefore.run : change.lastBefore.commit)\u{0}"
                + "\(change.firstAfter.commit.isEmpty ? change.firstAfter.run : change.firstAfter.commit)\u{0}"
                + change.group + "\u{0}" + change.confirm.joined(separator: "\n")
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(change)
        }
        return order.map { groups[$0]! }
    }

    /// "3 changes at 1a2b3c4..5d6e7f8 on host-a, the code's".
    static func rangeTitle(_ range: [TrendChange]) -> String {
        let first = range[0]
        var counts: [(cause: String, count: Int)] = []
        for change in range {
            if let index = counts.firstIndex(where: { $0.cause == change.cause.rawValue }) {
                counts[index].count += 1
            } else {
                counts.append((change.cause.rawValue, 1))
            }
        }
        // "the code's", "the machine's", "undetermined".
        func phrase(_ cause: String) -> String { cause == StepCause.undetermined.rawValue ? cause : "the \(cause)'s" }
        let causes =
            counts.count == 1
            ? (counts[0].cause == StepCause.undetermined.rawValue ? "cause undetermined" : phrase(counts[0].cause))
            : counts.map { "\($0.count) \(phrase($0.cause))" }.joined(separator: ", ")
        return "\(range.count) change\(range.count == 1 ? "" : "s") at \(first.shortRange)"
            + (first.group.isEmpty ? "" : " on \(first.group)") + ", " + causes
    }

    /// The report as aligned text: the headline, then per commit range its
    /// changes, commits, and one recipe to confirm them.
    public func renderText() -> String {
        var text = "\(headline)\n(\(source))\n"
        for range in changesByRange {
            let first = range[0]
            text += "\n" + Self.rangeTitle(range) + "\n"
            text += "  " + Self.runsLine(first) + "\n"
            for change in range {
                text += "  " + Self.summary(change) + "\n"
                text += "    cause: \(change.reason)\n"
                if !change.newInProfile.isEmpty {
                    text += "    new in the profile: \(change.newInProfile.joined(separator: ", "))\n"
                }
                if !change.functionsThatStepped.isEmpty {
                    text +=
                        "    functions that stepped: "
                        + change.functionsThatStepped.map(\.summary).joined(separator: ", ") + "\n"
                }
                if let mark = change.mark { text += "    marked \(Self.markText(mark))\n" }
            }
            if !first.commits.isEmpty {
                text += "  commits in \(first.shortRange):\n"
                for commit in first.commits { text += "    \(commit)\n" }
                if first.moreCommits > 0 { text += "    … and \(first.moreCommits) more\n" }
            }
            if !first.confirm.isEmpty {
                text += "  confirm it:\n" + first.confirm.map { "    \($0)\n" }.joined()
            }
            text += "  then: \(Self.markCommand(first, of: range.count))\n"
        }
        if !suiteChanges.isEmpty {
            text += "\nWhole suites:\n"
            for change in suiteChanges { text += "  " + Self.suiteLine(change) + "\n" }
        }
        if !referenceLines.isEmpty {
            text += "\nAgainst the reference:\n" + referenceLines.map { "  \($0)\n" }.joined()
        }
        if !notes.isEmpty {
            text += "\nNotes:\n" + notes.map { "  - \($0)\n" }.joined()
        }
        return text + "\n" + methodLine + "\n"
    }

    /// The report as Markdown, for a bot's comment: the headline and a row
    /// per change, then per commit range its details folded.
    public func renderMarkdown() -> String {
        var text =
            "### Performance history\n\n**\(Self.markdownEscape(headline))** (\(Self.markdownEscape(source)))\n\n"
        if !changes.isEmpty {
            text +=
                "| | series | where | change [95% CI] | p | status | cause | commits "
                + "|\n|---|---|---|---|---|---|---|---|\n"
            for change in changes {
                let icon = change.direction == .regression ? "🔴" : "🟢"
                let mark = change.mark.map { " (\($0.verdict.rawValue))" } ?? ""
                text +=
                    "| \(icon) | `\(Self.markdownEscape(change.series))` | "
                    + "\(Self.markdownEscape(change.group.isEmpty ? "—" : change.group)) "
                text +=
                    "| \(Self.markdownEscape(change.changeText())) | \(Self.pValue(change.pValue)) "
                    + "| \(change.status)\(mark) "
                text += "| **\(change.cause.rawValue)** | `\(change.shortRange)` |\n"
            }
            for range in changesByRange {
                let first = range[0]
                text += "\n<details><summary>\(HTMLText.escape(Self.rangeTitle(range)))</summary>\n\n"
                text += "- " + Self.markdownEscape(Self.runsLine(first)) + "\n"
                for change in range {
                    text += "- `\(Self.markdownEscape(change.series))`: " + Self.markdownEscape(change.reason) + "\n"
                    if !change.functionsThatStepped.isEmpty {
                        text +=
                            "  functions that stepped: "
                            + Self.markdownEscape(change.functionsThatStepped.map(\.summary).joined(separator: ", "))
                            + "\n"
                    }
                    if let mark = change.mark { text += "  marked " + Self.markdownEscape(Self.markText(mark)) + "\n" }
                }
                if !first.commits.isEmpty {
                    text += "\nCommits:\n\n```\n" + first.commits.joined(separator: "\n")
                    text += first.moreCommits > 0 ? "\n… and \(first.moreCommits) more\n```\n" : "\n```\n"
                }
                if !first.confirm.isEmpty {
                    text += "\nConfirm it:\n\n```sh\n" + first.confirm.joined(separator: "\n") + "\n```\n"
                }
                text += "\nThen: `\(Self.markCommand(first, of: range.count))`\n\n</details>\n"
            }
        }
        if !suiteChanges.isEmpty {
            text +=
                "\n**Whole suites:**\n\n"
                + suiteChanges.map { "- " + Self.markdownEscape(Self.suiteLine($0)) + "\n" }.joined()
        }
        if !notes.isEmpty {
            text += "\n**Notes:**\n\n" + notes.map { "- " + Self.markdownEscape($0) + "\n" }.joined()
        }
        return text + "\n<sub>\(Self.markdownEscape(methodLine))</sub>\n"
    }

    /// The report as JSON, every number included.
    public func renderJSON() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    // MARK: Pieces

    /// Per series with a reference, which series was searched: "nightly/a/wall
    /// on ci-1: adjusted by the reference (b = 0.97)".
    var referenceLines: [String] {
        series.flatMap { item in
            item.referenceAdjustments.map { adjustment in
                item.name + (adjustment.host.isEmpty ? "" : " on \(adjustment.host)") + ": " + adjustment.summary
            }
        }
    }

    /// "regression  suite/test/metric on host: +10.2% [+8.1, +12.0], p 0.0003, confirmed".
    static func summary(_ change: TrendChange) -> String {
        "\(change.direction.rawValue)  \(change.series)\(change.group.isEmpty ? "" : " on \(change.group)"): "
            + "\(change.changeText()), p \(pValue(change.pValue)), \(change.status)"
    }

    /// Where the change lies: the runs on either side.
    static func runsLine(_ change: TrendChange) -> String {
        func describe(_ run: TrendRunReference) -> String {
            var text = "run \(run.run), \(time(run.time))"
            if !run.commit.isEmpty { text += ", commit \(run.commit.prefix(10))" }
            return text
        }
        return
            "between \(describe(change.lastBefore)) (position \(change.lastBefore.slot + 1)) and "
            + "\(describe(change.firstAfter)) (position \(change.firstAfter.slot + 1))"
    }

    /// A suite step in a line.
    static func suiteLine(_ change: TrendSuiteChange) -> String {
        let before =
            change.lastBefore.commit.isEmpty ? change.lastBefore.run : String(change.lastBefore.commit.prefix(10))
        let after =
            change.firstAfter.commit.isEmpty ? change.firstAfter.run : String(change.firstAfter.commit.prefix(10))
        let step = change.step
        let sign = step.medianChange >= 0 ? "+" : ""
        return
            "\(change.suite)\(change.group.isEmpty ? "" : " on \(change.group)") at \(before)..\(after): median "
            + "\(sign)\(HumanFormat.format(step.medianChange * 100, decimals: 1))% (worse when positive), "
            + "\(step.status); the \(step.cause.rawValue)'s: \(step.reason)"
    }

    /// The command that marks the change; for a range of several changes,
    /// the first one's, said to be one per series.
    static func markCommand(_ change: TrendChange, of count: Int = 1) -> String {
        "strobe history mark \(change.shortRange) --series \(ConfirmCommand.quote(change.series)) --confirmed (or "
            + "--dismissed) --note '...'"
            + (count > 1 ? " (one per series)" : "")
    }

    /// "confirmed on 2025-01-02 10:00 UTC: the note".
    static func markText(_ mark: HistoryMark) -> String {
        "\(mark.verdict.rawValue) on \(time(mark.markedAt))" + (mark.note.isEmpty ? "" : ": \(mark.note)")
    }

    /// A p-value in four decimals, or "<0.0001".
    static func pValue(_ p: Double) -> String {
        p < 0.0001 ? "<0.0001" : HumanFormat.format(p, decimals: 4)
    }

    /// A time in UTC, to the minute.
    static func time(_ nanoseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: Double(nanoseconds) / 1e9)) + " UTC"
    }

    static func markdownEscape(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "<", with: "&lt;")
    }
}
