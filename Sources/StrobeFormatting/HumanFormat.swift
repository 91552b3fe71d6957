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

    /// A large count with three significant digits and an SI prefix:
    /// "4.12 M", "84.0 K", "312".
    public static func scaled(_ value: Double) -> String {
        let (divisor, prefix) = countScale(of: abs(value))
        let scaled = value / divisor
        let decimals = divisor == 1 ? 0 : abs(scaled) >= 100 ? 0 : abs(scaled) >= 10 ? 1 : 2
        return String(format: "%.\(decimals)f", scaled) + (prefix.isEmpty ? "" : " " + prefix)
    }

    /// The SI step a count of `magnitude` is shown in: (1e6, "M") for
    /// 4.12 million, (1, "") below a thousand.
    public static func countScale(of magnitude: Double) -> (divisor: Double, prefix: String) {
        let steps: [(Double, String)] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")]
        return steps.first { magnitude >= $0.0 } ?? (1, "")
    }

    /// A count in its unit, exactly: "12", "12.5" for a mean, "16 B" or
    /// "2.50 MiB" for bytes.
    public static func count(_ value: Double, unit: String) -> String {
        guard unit == "bytes" else { return whole(value) }
        return abs(value) >= 1024 ? self.value(value, unit: "bytes") : whole(value) + " B"
    }

    /// A difference of a count in its unit, signed: "+96", "−2.50 MiB",
    /// "±0".
    public static func signedCount(_ difference: Double, unit: String) -> String {
        let sign = difference > 0 ? "+" : difference < 0 ? "−" : "±"
        return sign + count(abs(difference), unit: unit)
    }

    /// A number as a whole number where it is one ("12", "1048576"), else
    /// to one decimal.
    static func whole(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : format(value, decimals: 1)
    }
}
