import Foundation
import StrobeJudgement
import StrobeToolFormatting

/// The functions behind the verdicts, as each report format shows them.
extension DiffReport {
    /// The heading of the functions' section: what the numbers are (CPU
    /// time sampled, instructions counted, or both where tests differ).
    var functionsHeading: String {
        let units = Set(changedTestFunctions.map(\.functions.unit))
        let quantity = units.count == 1 ? units.first?.quantity ?? "CPU time" : "CPU time or instructions"
        return "functions behind the verdicts (inclusive \(quantity) per iteration, candidate − baseline, "
            + "\(Self.level((1 - options.alpha) * 100))% interval)"
    }

    /// What a test's list says when no function is named, and why: "no
    /// function named: too small: …".
    static func noFunctionLine(_ functions: TestFunctionChanges) -> String {
        let how = functions.unit == .instructions ? "counted" : "profiled"
        let reason =
            functions.unnamedReason
            ?? "no function changed by \(functions.unit.signed(functions.floor).dropFirst()) or more per iteration"
        return "no function named: \(reason) "
            + "(\(functions.baselineProcesses) + \(functions.candidateProcesses) processes \(how))"
    }

    /// The text section: per slower or faster test, its leading functions
    /// in an aligned table; empty when no changed test was profiled.
    func functionsText(width: Int) -> String {
        let changed = changedTestFunctions
        guard !changed.isEmpty else { return "" }
        var output = "\n" + functionsHeading + ":\n"
        for (verdict, functions) in changed {
            output += "  \(verdict.displayName), \(verdict.outcome.rawValue):\n"
            let listed = functions.listed()
            if functions.leading == nil { output += "    \(Self.noFunctionLine(functions))\n" }
            if listed.isEmpty { continue }
            var table = TextTable(header: ["function", "baseline", "candidate", "change", "interval", ""])
            table.rightAligned = [1, 2, 3, 4]
            for function in listed {
                table.rows.append([
                    TextTable.clipped(function.function, to: max(width - 60, 30)),
                    function.unit.amount(function.baseline), function.unit.amount(function.candidate),
                    function.signedChange,
                    function.interval,
                    function.label,
                ])
            }
            output +=
                table.render().split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
                .joined(separator: "\n") + "\n"
        }
        return output
    }

    /// The Markdown of one changed test's functions: a table folded under
    /// `<details>`, its summary naming the leading function.
    func functionsMarkdown(_ verdict: TestVerdict, _ functions: TestFunctionChanges) -> [String] {
        let summary =
            functions.leading.map {
                "Functions behind \(verdict.displayName): `\($0.function)` \($0.signedChange) \($0.label)"
            } ?? "Functions behind \(verdict.displayName): \(Self.noFunctionLine(functions))"
        var lines = ["", "<details><summary>\(HTMLText.escape(summary))</summary>", ""]
        lines.append("| function | baseline | candidate | change [\(Self.level((1 - options.alpha) * 100))% CI] | |")
        lines.append("|---|---:|---:|---:|---|")
        for function in functions.listed() {
            lines.append(
                "| `\(function.function.replacingOccurrences(of: "|", with: "\\|"))` "
                    + "| \(function.unit.amount(function.baseline)) "
                    + "| \(function.unit.amount(function.candidate)) | \(function.signedChange) "
                    + "\(function.interval) | \(function.label) |")
        }
        lines.append("")
        lines.append(
            functions.unit == .instructions
                ? "<sub>Inclusive instructions per iteration counted in \(functions.baselineProcesses) + "
                    + "\(functions.candidateProcesses) simulated processes; a function whose count repeats across "
                    + "each side's processes is decided by its difference, others process by process.</sub>"
                : "<sub>Inclusive CPU time per iteration from \(functions.baselineProcesses) + "
                    + "\(functions.candidateProcesses) profiled processes, each process one replicate; "
                    + "Benjamini–Hochberg across the test's functions.</sub>")
        lines.append("")
        lines.append("</details>")
        return lines
    }

    /// The HTML section: per changed test a table of its functions with a
    /// bar for each change, growing right (slower, red) or left (faster,
    /// green) from the middle, on one scale per test.
    func functionsHTML() -> String {
        let changed = changedTestFunctions
        guard !changed.isEmpty else { return "" }
        var html = "<h2>\(HTMLText.escape(functionsHeading.prefix(1).uppercased() + functionsHeading.dropFirst()))</h2>"
        for (verdict, functions) in changed {
            let listed = functions.listed(limit: 12, minimum: 5)
            html += "<h3>\(HTMLText.escape(verdict.displayName)) — \(verdict.outcome.rawValue)</h3>"
            if functions.leading == nil {
                html += "<p>\(HTMLText.escape(Self.noFunctionLine(functions)))</p>"
            }
            guard !listed.isEmpty else { continue }
            let scale = listed.map { max(abs($0.lower), abs($0.upper)) }.max() ?? 1
            html +=
                "<table class=\"functions\"><tr><th>function</th><th>baseline</th><th>candidate</th>"
                + "<th>change [CI]</th><th>difference</th><th></th></tr>"
            for function in listed {
                let half = 120.0
                let width = scale > 0 ? abs(function.change) / scale * half : 0
                let x = function.change >= 0 ? half : half - width
                let colour = function.change >= 0 ? "#c62828" : "#2e7d32"
                let low = half + (scale > 0 ? function.lower / scale * half : 0)
                let high = half + (scale > 0 ? function.upper / scale * half : 0)
                func f(_ value: Double) -> String { String(format: "%.1f", value) }
                let bar =
                    "<svg width=\"240\" height=\"16\" role=\"img\">"
                    + "<line x1=\"120\" x2=\"120\" y1=\"0\" y2=\"16\" stroke=\"#999\"/>"
                    + "<rect x=\"\(f(x))\" y=\"3\" width=\"\(f(max(width, 0.5)))\" "
                    + "height=\"10\" fill=\"\(colour)\" fill-opacity=\"\(function.changed ? "0.8" : "0.25")\"/>"
                    + "<line x1=\"\(f(low))\" x2=\"\(f(high))\" y1=\"8\" y2=\"8\" stroke=\"#333\"/></svg>"
                let cls = function.changed ? (function.change > 0 ? "regression" : "improvement") : ""
                html +=
                    "<tr><td>\(HTMLText.escape(function.function))</td>"
                    + "<td>\(HTMLText.escape(function.unit.amount(function.baseline)))</td>"
                    + "<td>\(HTMLText.escape(function.unit.amount(function.candidate)))</td>"
                    + "<td>\(HTMLText.escape(function.signedChange)) \(function.interval)</td>"
                    + "<td>\(bar)</td><td class=\"\(cls)\">\(function.label)</td></tr>"
            }
            html += "</table>"
        }
        return html
    }

    /// A duration per iteration for a table: `21.3 ms`, `0` for none.
    static func duration(_ nanoseconds: Double) -> String {
        nanoseconds == 0 ? "0" : String(FunctionChange.signed(nanoseconds).dropFirst())
    }
}
