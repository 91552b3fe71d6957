import Foundation
import StrobeFormatting
import StrobeStatistics

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
        "Each run is one value (its processes' median); steps by rank binary segmentation, Benjamini–Hochberg over the series of a suite at α \(HumanFormat.format(alpha, decimals: 3)), changes within ±\(HumanFormat.format(relativeFloor * 100, decimals: 1))% not reported; intervals are Hodges–Lehmann 95%."
    }

    /// The report as aligned text.
    public func renderText() -> String {
        var text = "strobe trend: \(source)\n\(headline)\n"
        for change in changes {
            text += "\n" + Self.summary(change) + "\n"
            text += "  " + Self.runsLine(change) + "\n"
            text += "  cause: \(change.cause.rawValue) (\(change.reason))\n"
            if let mark = change.mark { text += "  marked \(Self.markText(mark))\n" }
            if !change.commits.isEmpty {
                text += "  commits in \(change.shortRange):\n"
                for commit in change.commits { text += "    \(commit)\n" }
                if change.moreCommits > 0 { text += "    … and \(change.moreCommits) more\n" }
            }
            if !change.confirm.isEmpty {
                text += "  confirm it:\n" + change.confirm.map { "    \($0)\n" }.joined()
            }
            text += "  then: \(Self.markCommand(change))\n"
        }
        if !suiteChanges.isEmpty {
            text += "\nWhole suites:\n"
            for change in suiteChanges { text += "  " + Self.suiteLine(change) + "\n" }
        }
        if !notes.isEmpty {
            text += "\nNotes:\n" + notes.map { "  - \($0)\n" }.joined()
        }
        return text + "\n" + methodLine + "\n"
    }

    /// The report as Markdown, for a bot's comment.
    public func renderMarkdown() -> String {
        var text =
            "### Performance history\n\n**\(Self.markdownEscape(headline))** (\(Self.markdownEscape(source)))\n\n"
        if !changes.isEmpty {
            text +=
                "| | series | where | change [95% CI] | p | status | cause | commits |\n|---|---|---|---|---|---|---|---|\n"
            for change in changes {
                let icon = change.direction == .regression ? "🔴" : "🟢"
                let mark = change.mark.map { " (\($0.verdict.rawValue))" } ?? ""
                text +=
                    "| \(icon) | `\(Self.markdownEscape(change.series))` | \(Self.markdownEscape(change.group.isEmpty ? "—" : change.group)) "
                text += "| \(Self.changeText(change.change)) | \(Self.pValue(change.pValue)) | \(change.status)\(mark) "
                text += "| **\(change.cause.rawValue)** | `\(change.shortRange)` |\n"
            }
            for change in changes {
                text +=
                    "\n<details><summary>\(HTMLText.escape(change.series)) \(HTMLText.escape(change.shortRange)): \(change.direction.rawValue), the \(change.cause.rawValue)'s</summary>\n\n"
                text += "- " + Self.markdownEscape(Self.runsLine(change)) + "\n"
                text += "- cause: " + Self.markdownEscape(change.reason) + "\n"
                if let mark = change.mark { text += "- marked " + Self.markdownEscape(Self.markText(mark)) + "\n" }
                if !change.commits.isEmpty {
                    text += "\nCommits:\n\n```\n" + change.commits.joined(separator: "\n")
                    text += change.moreCommits > 0 ? "\n… and \(change.moreCommits) more\n```\n" : "\n```\n"
                }
                if !change.confirm.isEmpty {
                    text += "\nConfirm it:\n\n```sh\n" + change.confirm.joined(separator: "\n") + "\n```\n"
                }
                text += "\nThen: `\(Self.markCommand(change))`\n\n</details>\n"
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

    /// "regression  suite/test/metric on host: +10.2% [+8.1, +12.0], p 0.0003, confirmed".
    static func summary(_ change: TrendChange) -> String {
        "\(change.direction.rawValue)  \(change.series)\(change.group.isEmpty ? "" : " on \(change.group)"): "
            + "\(changeText(change.change)), p \(pValue(change.pValue)), \(change.status)"
    }

    /// Where the change lies: the runs on either side.
    static func runsLine(_ change: TrendChange) -> String {
        func describe(_ run: TrendRunReference) -> String {
            var text = "run \(run.run), \(time(run.time))"
            if !run.commit.isEmpty { text += ", commit \(run.commit.prefix(10))" }
            return text
        }
        return
            "between \(describe(change.lastBefore)) (position \(change.lastBefore.slot + 1)) and \(describe(change.firstAfter)) (position \(change.firstAfter.slot + 1))"
    }

    /// A suite step in a line.
    static func suiteLine(_ change: TrendSuiteChange) -> String {
        let before =
            change.lastBefore.commit.isEmpty ? change.lastBefore.run : String(change.lastBefore.commit.prefix(10))
        let after =
            change.firstAfter.commit.isEmpty ? change.firstAfter.run : String(change.firstAfter.commit.prefix(10))
        let sign = change.medianChange >= 0 ? "+" : ""
        return
            "\(change.suite)\(change.group.isEmpty ? "" : " on \(change.group)") at \(before)..\(after): median \(sign)\(HumanFormat.format(change.medianChange * 100, decimals: 1))% (worse when positive), \(change.status); the \(change.cause.rawValue)'s: \(change.reason)"
    }

    /// The command that marks the change.
    static func markCommand(_ change: TrendChange) -> String {
        "strobe history mark \(change.shortRange) --series \(ConfirmCommand.quote(change.series)) --confirmed (or --dismissed) --note '...'"
    }

    /// "confirmed on 2025-01-02 10:00 UTC: the note".
    static func markText(_ mark: HistoryMark) -> String {
        "\(mark.verdict.rawValue) on \(time(mark.markedAt))" + (mark.note.isEmpty ? "" : ": \(mark.note)")
    }

    /// "+10.2% [+8.1, +12.0]".
    static func changeText(_ shift: ShiftEstimate) -> String {
        func percent(_ ratio: Double) -> String {
            let value = (ratio - 1) * 100
            return (value >= 0 ? "+" : "") + HumanFormat.format(value, decimals: 1)
        }
        return "\(percent(shift.ratio))% [\(percent(shift.lower)), \(percent(shift.upper))]"
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
