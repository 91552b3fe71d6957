import Foundation

/// Durations and values written for people.
public enum HumanFormat {
    /// `1.23 ms`, `456 µs`, `12 ns`, `2.5 s`.
    public static func duration(_ nanoseconds: Double) -> String {
        let magnitude = abs(nanoseconds)
        if magnitude >= 1e9 { return fixed(nanoseconds / 1e9) + " s" }
        if magnitude >= 1e6 { return fixed(nanoseconds / 1e6) + " ms" }
        if magnitude >= 1e3 { return fixed(nanoseconds / 1e3) + " µs" }
        return fixed(nanoseconds) + " ns"
    }

    /// A number with three significant digits where that helps.
    public static func fixed(_ value: Double) -> String {
        let magnitude = abs(value)
        let decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2
        return format(value, decimals: decimals)
    }

    /// `value` with `decimals` digits after the point.
    public static func format(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return String(value) }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = String(rounded)
        if let dot = text.firstIndex(of: ".") {
            let existing = text.distance(from: dot, to: text.endIndex) - 1
            if decimals == 0 {
                text = String(text[..<dot])
            } else if existing < decimals {
                text += String(repeating: "0", count: decimals - existing)
            }
        } else if decimals > 0 {
            text += "." + String(repeating: "0", count: decimals)
        }
        if text.contains("e") { return String(value) }
        return text
    }

    /// A counter value in its unit.
    public static func value(_ value: Double, unit: String?) -> String {
        switch unit {
        case "ns": return duration(value)
        case "bytes":
            let magnitude = abs(value)
            if magnitude >= 1_073_741_824 { return fixed(value / Double(1 << 30)) + " GiB" }
            if magnitude >= 1_048_576 { return fixed(value / Double(1 << 20)) + " MiB" }
            if magnitude >= 1024 { return fixed(value / Double(1 << 10)) + " KiB" }
            return fixed(value) + " B"
        default:
            return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : fixed(value)
        }
    }
}
