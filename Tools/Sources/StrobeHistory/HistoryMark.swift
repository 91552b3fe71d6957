import Foundation

/// A person's verdict on a change point, kept in the store so that every
/// later report shows it: confirmed (a real change, being dealt with) or
/// dismissed (noise, or an accepted cost).
public struct HistoryMark: Sendable, Hashable, Codable {
    /// The verdict.
    public enum Verdict: String, Sendable, Hashable, Codable, CaseIterable {
        /// The change is real.
        case confirmed
        /// The change is not worth acting on.
        case dismissed
    }

    /// What is marked: `A..B`, the last commit (or run id) before the change
    /// and the first after it, or one commit (or run id), the first after.
    /// Commits may be abbreviated (at least 4 hex digits).
    public var target: String
    /// The series, `SUITE/TEST/METRIC` or `TEST/METRIC`; empty for every
    /// series changed at the target.
    public var series: String
    /// The verdict.
    public var verdict: Verdict
    /// Why, in the marker's words; may be empty.
    public var note: String
    /// When it was marked, in nanoseconds since 1970.
    public var markedAt: Int64

    /// A mark.
    public init(target: String, series: String = "", verdict: Verdict, note: String = "", markedAt: Int64) {
        self.target = target
        self.series = series
        self.verdict = verdict
        self.note = note
        self.markedAt = markedAt
    }

    /// The target's two sides: (before, after), before nil for a single
    /// commit or run.
    public var sides: (before: String?, after: String) {
        guard let range = target.range(of: "..") else { return (nil, target) }
        return (String(target[..<range.lowerBound]), String(target[range.upperBound...]))
    }

    /// Throws when the target or the series cannot name a change point.
    public func validate() throws(HistoryError) {
        let (before, after) = sides
        guard !after.isEmpty, before.map({ !$0.isEmpty }) ?? true, !after.contains("..") else {
            throw HistoryError(
                .badArgument,
                "mark \(target): write A..B (the last commit or run id before the change and the first after) or one "
                    + "commit or run id"
            )
        }
        if !series.isEmpty, series.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            throw HistoryError(.badArgument, "--series \(series): write SUITE/TEST/METRIC or TEST/METRIC")
        }
    }

    /// Whether this mark is about the change from `before` to `after` (each
    /// a commit and a run id) of `series` (`SUITE/TEST/METRIC`).
    public func matches(
        before: (commit: String, run: String), after: (commit: String, run: String), series name: String
    ) -> Bool {
        func names(_ text: String, _ side: (commit: String, run: String)) -> Bool {
            text == side.run || (!side.commit.isEmpty && text.count >= 4 && side.commit.hasPrefix(text))
        }
        let (markBefore, markAfter) = sides
        guard names(markAfter, after) else { return false }
        if let markBefore, !names(markBefore, before) { return false }
        return series.isEmpty || series == name || name.hasSuffix("/" + series) && series.contains("/")
    }
}
