import Foundation
import StrobeToolFormatting

/// Differential flame graphs as a page shows them: a section of one graph
/// per test or interval, with the rules and the script it needs once.
public enum FlameGraphHTML {
    /// The section holding `graphs` under the heading `heading` (nothing
    /// when there is no graph): a legend, then per graph its title, the
    /// graph's data (names once, then each frame by number) and a caption
    /// of what it shows and what was left out, then the script that draws
    /// them.
    public static func section(_ graphs: [DifferentialFlameGraph], heading: String) -> String {
        let drawn = graphs.filter { !$0.frames.isEmpty }
        guard !drawn.isEmpty else { return "" }
        var html = "<style>\(FlameGraphScript.style)</style><h2>\(HTMLText.escape(heading))</h2>"
        html += "<p class=\"flame-legend\">"
        for (change, label) in [
            (FrameChange.slower, "slower"), (.faster, "faster"), (.unchanged, "unchanged"), (.new, "new"),
            (.gone, "gone (drawn at its baseline width)"),
        ] {
            let colour = FrameChange.colour(change, baseline: 1, candidate: change == .slower ? 2 : 0.5)
            html += "<span><i style=\"background:\(colour)\"></i>\(HTMLText.escape(label))</span>"
        }
        html += "<br><small>Click a frame to zoom into it, click it again (or press Escape) to zoom out; "
        html += "hover for both amounts.</small></p>"
        for graph in drawn { html += fragment(graph) }
        return html + "<script>\(FlameGraphScript.script)</script>"
    }

    /// One graph: its title, its data and its caption.
    static func fragment(_ graph: DifferentialFlameGraph) -> String {
        var html = "<h3>\(HTMLText.escape(graph.title))</h3><div class=\"flame\">"
        html += "<script type=\"application/json\">\(data(graph))</script>"
        html += "<p><small>\(HTMLText.escape(caption(graph)))</small></p></div>"
        return html
    }

    /// What a graph's caption says: what the widths are, how many frames of
    /// each change, and what was left out.
    static func caption(_ graph: DifferentialFlameGraph) -> String {
        var parts = [
            "Width: the candidate's inclusive \(graph.unit.quantity)"
                + " per \(graph.per)"
                + "; colour: its change against the baseline at the same call path "
                + "(a change under \(amount(graph.floor, graph.unit)) or under "
                + "\(Int(FrameChange.relativeShare * 100))% of the frame is none)."
        ]
        let counts = FrameChange.allCases.compactMap { change -> String? in
            let count = graph.frames(change).count
            return count > 0 ? "\(count) \(change.rawValue)" : nil
        }
        parts.append("\(graph.frames.count) frames: " + counts.joined(separator: ", ") + ".")
        if graph.leftOut > 0 {
            parts.append(
                "\(graph.leftOut) narrower frames left out (their amounts stay in their callers).")
        }
        if graph.depthCut { parts.append("Stacks deeper than the depth limit are cut there.") }
        return parts.joined(separator: " ")
    }

    /// `amount` in `unit`, for a caption.
    static func amount(_ amount: Double, _ unit: FlameUnit) -> String {
        switch unit {
        case .nanoseconds: return HumanFormat.duration(amount)
        case .samples: return HumanFormat.fixed(amount) + " samples"
        case .instructions: return HumanFormat.fixed(amount) + " instructions"
        }
    }

    /// The graph's data as the script reads it: `n` the names, each once;
    /// `t` a note per name number; `k` the changes' names; `p` the colours,
    /// each once, and `dark` whether a colour takes white text; `f` the
    /// frames, each `[name, depth, start, width, baseline, candidate,
    /// change, colour]`.
    static func data(_ graph: DifferentialFlameGraph) -> String {
        var names: [String] = []
        var nameIndex: [String: Int] = [:]
        var palette: [String] = []
        var paletteIndex: [String: Int] = [:]
        let kinds = FrameChange.allCases
        var rows: [String] = []
        rows.reserveCapacity(graph.frames.count)
        for frame in graph.frames {
            let name = nameIndex[frame.name] ?? names.count
            if name == names.count {
                nameIndex[frame.name] = name
                names.append(frame.name)
            }
            let colour = FrameChange.colour(frame.change, baseline: frame.baseline, candidate: frame.candidate)
            let shade = paletteIndex[colour] ?? palette.count
            if shade == palette.count {
                paletteIndex[colour] = shade
                palette.append(colour)
            }
            let kind = kinds.firstIndex(of: frame.change) ?? 0
            rows.append(
                "[\(name),\(frame.depth),\(number(frame.start)),\(number(frame.width)),"
                    + "\(number(frame.baseline)),\(number(frame.candidate)),\(kind),\(shade)]")
        }
        let notes = names.enumerated().compactMap { index, name in
            graph.notes[name].map { "\"\(index)\":\(json($0))" }
        }
        return "{\"u\":\(json(graph.unit.scriptName)),\"n\":[\(names.map(json).joined(separator: ","))],"
            + "\"t\":{\(notes.joined(separator: ","))},\"k\":[\(kinds.map { json($0.rawValue) }.joined(separator: ","))],"
            + "\"p\":[\(palette.map(json).joined(separator: ","))],"
            + "\"dark\":[\(palette.map { isDark($0) ? "1" : "0" }.joined(separator: ","))],"
            + "\"f\":[\(rows.joined(separator: ","))]}"
    }

    /// Whether text on `colour` (`#rrggbb`) reads better white.
    static func isDark(_ colour: String) -> Bool {
        let digits = Array(colour.dropFirst())
        guard digits.count == 6 else { return false }
        let channels = stride(from: 0, to: 6, by: 2).map { Int(String(digits[$0...$0 + 1]), radix: 16) ?? 255 }
        return 0.299 * Double(channels[0]) + 0.587 * Double(channels[1]) + 0.114 * Double(channels[2]) < 140
    }

    /// A number in at most 6 significant digits, as JSON.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: "%.6g", value)
    }

    /// `text` as a JSON string that is safe inside a `<script>` element.
    static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
