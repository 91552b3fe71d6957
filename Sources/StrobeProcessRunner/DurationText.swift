/// Durations as Strobe's command lines write them, always with a unit:
/// `250ns`, `500µs` (or `500us`), `16.67ms`, `30s`, `3m`, `1h`.
///
/// A perf suite's `--time-budget` and every duration flag of `strobe` read
/// them this way; a bare number is refused with a problem that names the
/// missing unit.
public enum DurationText {
    /// What is wrong with a duration's text, in words that follow the text
    /// itself: `has no unit; write it with one: 30ms, 30s or 30m (ns, µs,
    /// ms, s, m, h)`.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The problem, without the text.
        public var description: String
    }

    private static let units: [(suffix: String, nanoseconds: Double)] = [
        ("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9),
    ]

    /// The nanoseconds `text` stands for: a positive number and its unit,
    /// from 1ns to 30 years.
    public static func nanoseconds(_ text: String) throws(Problem) -> UInt64 {
        let trimmed = text.trimmingWhitespace().lowercased()
        // Longest suffix first, so that "ms" is not read as "s".
        for unit in units.sorted(by: { $0.suffix.count > $1.suffix.count }) where trimmed.hasSuffix(unit.suffix) {
            let number = String(trimmed.dropLast(unit.suffix.count)).trimmingWhitespace()
            guard let value = Double(number), value.isFinite, value > 0 else {
                throw Problem(description: "is not a positive duration such as 16.67ms, 30s or 3m")
            }
            let nanoseconds = value * unit.nanoseconds
            guard nanoseconds >= 1, nanoseconds < 1e18 else { throw Problem(description: "is outside 1ns to 30 years") }
            return UInt64(nanoseconds.rounded())
        }
        if let value = Double(trimmed), value.isFinite {
            throw Problem(
                description: "has no unit; write it with one: \(text)ms, \(text)s or \(text)m (ns, µs, ms, s, m, h)")
        }
        throw Problem(description: "is not a duration such as 16.67ms, 30s or 3m (units: ns, µs, ms, s, m, h)")
    }

    /// `nanoseconds` in its largest whole unit: 600,000,000,000 reads `10m`.
    public static func text(nanoseconds: UInt64) -> String {
        for unit in units.reversed() where unit.suffix != "us" {
            let value = Double(nanoseconds) / unit.nanoseconds
            if value >= 1, value == value.rounded() { return "\(Int(value))\(unit.suffix)" }
        }
        return "\(nanoseconds)ns"
    }
}

extension String {
    /// The string without white space at either end.
    fileprivate func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
