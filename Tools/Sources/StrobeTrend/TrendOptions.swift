import StrobeHistory
import StrobeStatistics

/// How a trend reads a history: which runs form a series, which runs are
/// the machine's control, how runs are ordered, and how the command that
/// confirms a change is written.
public struct TrendOptions: Sendable {
    /// The keys whose values split a metric's runs into series (`host`,
    /// `branch`, `os`, `cpu`, `build`, or a tag); nil for the default: by
    /// host when the runs come from more than one host.
    public var groupBy: [String]?
    /// The runs that are the machine's control (e.g. `build=reference`, a
    /// pinned build run in the same job): left out of the series analysed,
    /// used to tell the machine's steps from the code's.
    public var reference: HistoryFilter?
    /// Only metrics whose `TEST/METRIC` matches this regular expression.
    public var metricPattern: String?
    /// The detector's settings.
    public var detection = StepDetectionOptions()
    /// The smallest relative change reported (0.02 = 2%): the comparisons'
    /// floor, ``JudgementDefaults/relativeFloor``.
    public var relativeFloor = JudgementDefaults.relativeFloor
    /// The repository's commits, oldest first (`git rev-list --topo-order
    /// --reverse`), or nil: runs are then ordered by time.
    public var commitOrder: [String]?
    /// How the command that confirms a change builds and runs each commit.
    public var confirm = ConfirmCommand()

    /// The defaults.
    public init() {}
}

/// Writes the commands that confirm a change: a worktree of the last
/// commit before it and one of the first after, each built, and a
/// `strobe compare` of the two builds on the test that changed.
public struct ConfirmCommand: Sendable, Hashable, Codable {
    /// The repository, as `git -C` takes it; nil for the current directory.
    public var repository: String?
    /// How a worktree is built, run in it (`{suite}` is the suite's name).
    public var build = "swift build -c release"
    /// The suite's executable in a built worktree, relative to it
    /// (`{suite}` is the suite's name).
    public var executable = ".build/release/{suite}"
    /// The time budget of the comparison.
    public var maxTime = "5m"

    /// The defaults.
    public init() {}

    /// The lines that confirm a change of `test`/`metric` of `suite`
    /// between commits `before` and `after`; empty when either commit is
    /// unknown.
    public func lines(suite: String, test: String, metric: String, before: String, after: String) -> [String] {
        lines(suite: suite, series: [(test, metric)], before: before, after: after)
    }

    /// The lines that confirm every change of `series` (each a test and a
    /// metric of `suite`) between the same two commits: one pair of
    /// worktrees, one build each, one `strobe compare` over those tests.
    public func lines(suite: String, series: [(test: String, metric: String)], before: String, after: String)
        -> [String]
    {
        guard !before.isEmpty, !after.isEmpty, !series.isEmpty else { return [] }
        let git = repository.map { "git -C \(Self.quote($0))" } ?? "git"
        let beforeDirectory = "/tmp/strobe-confirm-\(before.prefix(10))"
        let afterDirectory = "/tmp/strobe-confirm-\(after.prefix(10))"
        let build = self.build.replacingOccurrences(of: "{suite}", with: suite)
        let executable = self.executable.replacingOccurrences(of: "{suite}", with: suite)
        func alternatives(_ names: [String]) -> String {
            var seen = Set<String>()
            let unique = names.filter { seen.insert($0).inserted }.map(Self.escapeRegex)
            return unique.count == 1 ? "^" + unique[0] + "$" : "^(" + unique.joined(separator: "|") + ")$"
        }
        let filter = " --filter " + Self.quote(alternatives(series.map(\.test)))
        func side(_ directory: String) -> String {
            Self.doubleQuote(directory + "/" + executable + filter)
        }
        return [
            "\(git) worktree add --detach \(beforeDirectory) \(before)",
            "\(git) worktree add --detach \(afterDirectory) \(after)",
            "(cd \(beforeDirectory) && \(build)) && (cd \(afterDirectory) && \(build))",
            "strobe compare --baseline \(side(beforeDirectory)) --candidate \(side(afterDirectory)) "
                + "--metric \(Self.quote(alternatives(series.map { $0.test + "/" + $0.metric }))) --max-time "
                + "\(maxTime) "
                + "--results-dir /tmp/strobe-confirm-\(before.prefix(7))-\(after.prefix(7))",
        ]
    }

    /// `text` as one word of /bin/sh.
    static func quote(_ text: String) -> String {
        let plain = text.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=@%+,".contains($0) }
        return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `text` in double quotes for /bin/sh: a command line that holds
    /// single-quoted words of its own.
    static func doubleQuote(_ text: String) -> String {
        var quoted = "\""
        for character in text {
            if "\\\"$`".contains(character) { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// `text` with the characters special to a regular expression escaped.
    static func escapeRegex(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
