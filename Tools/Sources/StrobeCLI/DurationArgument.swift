import ArgumentParser
import StrobeProcessRunner

/// A duration on the command line, always with its unit: `250ns`, `500µs`
/// (or `500us`), `16.67ms`, `30s`, `3m`, `1h`.
///
/// Every duration flag of `strobe` (`--frame-budget`, `--max-time`,
/// `--timeout`) reads this way, as a perf suite's `--time-budget` does
/// (both through ``DurationText``); a bare number is refused with a message
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

    /// Parses `text`; the error says what is wrong, naming a missing unit.
    static func parse(_ text: String) throws -> DurationArgument {
        do {
            return DurationArgument(nanoseconds: try DurationText.nanoseconds(text))
        } catch {
            throw ValidationError("\"\(text)\" \(error)")
        }
    }

    private init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// The duration in its largest whole unit: `600s` reads `10m`.
    var description: String { DurationText.text(nanoseconds: nanoseconds) }
}
