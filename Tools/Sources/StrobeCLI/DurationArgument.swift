import ArgumentParser
import Foundation

/// A duration on the command line, always with its unit: `250ns`, `500µs`
/// (or `500us`), `16.67ms`, `30s`, `3m`, `1h`.
///
/// Every duration flag of `strobe` (`--frame-budget`, `--max-time`,
/// `--timeout`) reads this way; a bare number is refused with a message
/// that names the missing unit.
struct DurationArgument: CustomStringConvertible, Sendable {
    /// The duration in nanoseconds.
    var nanoseconds: UInt64

    /// The duration in seconds.
    var seconds: Double { Double(nanoseconds) / 1e9 }

    /// A duration of `seconds`.
    init(seconds: Double) {
        nanoseconds = UInt64((seconds * 1e9).rounded())
    }

    private static let units: [(suffix: String, nanoseconds: Double)] = [
        ("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9),
    ]

    /// Parses `text`; the error says what is wrong, naming a missing unit.
    static func parse(_ text: String) throws -> DurationArgument {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        // Longest suffix first, so that "ms" is not read as "s".
        for unit in units.sorted(by: { $0.suffix.count > $1.suffix.count }) where trimmed.hasSuffix(unit.suffix) {
            let number = trimmed.dropLast(unit.suffix.count).trimmingCharacters(in: .whitespaces)
            guard let value = Double(number), value.isFinite, value > 0 else {
                throw ValidationError("\"\(text)\" is not a positive duration such as 16.67ms, 30s or 3m")
            }
            let nanoseconds = value * unit.nanoseconds
            guard nanoseconds >= 1, nanoseconds < 1e18 else {
                throw ValidationError("\"\(text)\" is outside 1ns to 30 years")
            }
            return DurationArgument(nanoseconds: UInt64(nanoseconds.rounded()))
        }
        if let value = Double(trimmed), value.isFinite {
            throw ValidationError(
                "\"\(text)\" has no unit; write it with one: \(text)ms, \(text)s or \(text)m (ns, µs, ms, s, m, h)")
        }
        throw ValidationError("\"\(text)\" is not a duration such as 16.67ms, 30s or 3m (units: ns, µs, ms, s, m, h)")
    }

    private init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// The duration in its largest whole unit: `600s` reads `10m`.
    var description: String {
        for unit in Self.units.reversed() where unit.suffix != "us" {
            let value = Double(nanoseconds) / unit.nanoseconds
            if value >= 1, value == value.rounded() { return "\(Int(value))\(unit.suffix)" }
        }
        return "\(nanoseconds)ns"
    }
}
