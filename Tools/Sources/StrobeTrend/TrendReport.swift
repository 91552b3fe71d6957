import StrobeHistory
import StrobeResults
import StrobeStatistics

/// What a trend found in a history: every series analysed, with its runs
/// for the plots, and every change, pinned to the runs and commits around it.
public struct TrendReport: Sendable, Hashable, Codable {
    /// Where the runs came from (the store, or the results files).
    public var source: String
    /// How runs were ordered: `commit` (git's order) or `time`.
    public var order: String
    /// Runs analysed (reference runs not counted).
    public var runCount: Int
    /// Reference runs read.
    public var referenceRunCount: Int
    /// The runs that are the reference (`KEY=VALUE`), if any.
    public var reference: String?
    /// The false discovery rate over the series of a suite.
    public var alpha: Double
    /// The smallest relative change reported.
    public var relativeFloor: Double
    /// Every series analysed, suite by suite, test by test.
    public var series: [TrendSeries]
    /// The changes of single metrics, suite by suite, oldest first.
    public var changes: [TrendChange]
    /// The steps of a whole suite on one host: every metric moved at once.
    public var suiteChanges: [TrendSuiteChange]
    /// What was left out, and why; how runs were ordered.
    public var notes: [String]

    /// The changes the code made (not the machine, not undetermined).
    public var codeChanges: [TrendChange] { changes.filter { $0.cause == .code } }
}

/// A position in a series: a commit (all runs of one commit share it), or
/// one run when runs carry no commit.
public struct TrendSlot: Sendable, Hashable, Codable {
    /// The commit, or "".
    public var commit: String
    /// The earliest run's time, in nanoseconds since 1970.
    public var time: Int64
}

/// One run as a plot shows it.
public struct TrendPoint: Sendable, Hashable, Codable {
    /// The index of its slot in the series.
    public var slot: Int
    /// Its group (host, device...), "" when runs are not grouped.
    public var group: String
    /// Its value: the run's per-process summary.
    public var value: Double
    /// Its run id (store key).
    public var run: String
    /// Whether it is a reference run.
    public var reference: Bool
}

/// One metric of one suite, over the history: a plot of the dashboard.
public struct TrendSeries: Sendable, Hashable, Codable {
    /// The suite.
    public var suite: String
    /// The test.
    public var test: String
    /// The metric.
    public var metric: String
    /// Its unit.
    public var unit: String
    /// Which way the metric gets better.
    public var better: MetricDirection
    /// Its groups, in the order of their colours.
    public var groups: [String]
    /// Its positions, oldest first.
    public var slots: [TrendSlot]
    /// Every run, and every reference run used.
    public var points: [TrendPoint]
    /// Per group with reference runs, how far the reference explains the
    /// series (its slope b) and whether the series was also searched
    /// adjusted by it, or only raw.
    public var referenceAdjustments: [ReferenceAdjustment] = []

    /// `SUITE/TEST/METRIC`.
    public var name: String { "\(suite)/\(test)/\(metric)" }
}

/// A run next to a change.
public struct TrendRunReference: Sendable, Hashable, Codable {
    /// Its run id (store key).
    public var run: String
    /// Its commit, or "".
    public var commit: String
    /// Its time, in nanoseconds since 1970.
    public var time: Int64
    /// The index of its slot in the series.
    public var slot: Int
}

/// A change of one metric, where it happened and why: the step the
/// attribution found in its series, pinned to the runs, commits and confirm
/// commands around it.
public struct TrendChange: Sendable, Hashable, Codable {
    /// The suite.
    public var suite: String
    /// The test.
    public var test: String
    /// The metric.
    public var metric: String
    /// Its unit.
    public var unit: String
    /// The step: the group (host, device...) whose series changed, "" when
    /// ungrouped; the change, its p-value, direction and status; the cause
    /// and the evidence for it.
    public var step: AttributedStep
    /// The last run at the old level.
    public var lastBefore: TrendRunReference
    /// The first run at the new level.
    public var firstAfter: TrendRunReference
    /// The old level in the metric's unit: the median of the values the
    /// step's estimate used before it (``AttributedStep/step``'s
    /// `runsBefore` positions); nil when not known.
    public var levelBefore: Double?
    /// The new level: the median of the values the estimate used after it;
    /// nil when not known.
    public var levelAfter: Double?
    /// Whether each side's values are one value repeated, as the runner's
    /// exact counts are: the change is then the difference of the levels,
    /// with no interval to give.
    public var levelsRepeat: Bool = false
    /// The commits in the range, newest first, as `git log --oneline A..B`
    /// shows them (at most a few; see ``moreCommits``); empty without the repository.
    public var commits: [String]
    /// Commits in the range beyond those listed.
    public var moreCommits: Int
    /// The commands that confirm it; empty when the runs carry no commits.
    public var confirm: [String]
    /// A verdict stored for it (`strobe history mark`).
    public var mark: HistoryMark?
    /// Functions in the test's stored profile (`profile:` metrics, from
    /// runs with `--profile`) at every position after the change and at
    /// none before it: what the change brought into the profile.
    public var newInProfile: [String] = []
    /// Functions whose counted instructions per iteration (`instructions:`
    /// metrics, from simulated runs) stepped at the same run: callers
    /// giving way to the callee that carries the change, library frames
    /// last.
    public var functionsThatStepped: [FunctionStep] = []

    /// The group whose series changed; "" when ungrouped.
    public var group: String { step.host }
    /// The level after over the level before, with its interval.
    public var change: ShiftEstimate { step.step.change }
    /// The p-value of the test that found it.
    public var pValue: Double { step.step.pValue }
    /// Regression or improvement.
    public var direction: StepDirection { step.step.direction }
    /// Confirmed, or possible with the number of runs still to come.
    public var status: StepStatus { step.step.status }
    /// The code's, the machine's, or undetermined.
    public var cause: StepCause { step.cause }
    /// The evidence for the cause, in a sentence.
    public var reason: String { step.reason }

    /// `SUITE/TEST/METRIC`.
    public var series: String { "\(suite)/\(test)/\(metric)" }

    /// `A..B`: the commits (or run ids) of the last run before and the first after.
    public var range: String {
        let before = lastBefore.commit.isEmpty ? lastBefore.run : lastBefore.commit
        let after = firstAfter.commit.isEmpty ? firstAfter.run : firstAfter.commit
        return "\(before)..\(after)"
    }

    /// The range with commits abbreviated to 10 hex digits.
    public var shortRange: String {
        let before = lastBefore.commit.isEmpty ? lastBefore.run : String(lastBefore.commit.prefix(10))
        let after = firstAfter.commit.isEmpty ? firstAfter.run : String(firstAfter.commit.prefix(10))
        return "\(before)..\(after)"
    }
}

/// A step of a host's whole suite: every metric moved at once, pinned to
/// the runs around it.
public struct TrendSuiteChange: Sendable, Hashable, Codable {
    /// The suite.
    public var suite: String
    /// The step: its group (host, device...), the median change over the
    /// suite's metrics (positive when worse), its status, cause and evidence.
    public var step: SuiteStep
    /// The last run at the old level.
    public var lastBefore: TrendRunReference
    /// The first run at the new level.
    public var firstAfter: TrendRunReference

    /// The group whose suite changed.
    public var group: String { step.host }
}

/// A function whose counted instructions per iteration stepped with a change.
public struct FunctionStep: Sendable, Hashable, Codable {
    /// The function's name, demangled.
    public var function: String
    /// Its inclusive instructions per iteration before the change; 0 when
    /// it held less than the share of the test the history keeps.
    public var before: Double
    /// The same after the change.
    public var after: Double
    /// Whether it is a library frame: the Swift runtime or standard
    /// library, Foundation, Dispatch, or a C symbol.
    public var library: Bool

    /// A function's step.
    public init(function: String, before: Double, after: Double) {
        self.function = function
        self.before = before
        self.after = after
        library = Self.isLibraryFrame(function)
    }

    /// The instructions per iteration it gained (negative: lost).
    public var difference: Double { after - before }

    /// "LensKit.Lens.makeToneCurve() +17.4 M".
    public var summary: String {
        let size = abs(difference)
        let amount =
            size >= 1e9
            ? String(format: "%.1f G", size / 1e9)
            : size >= 1e6
                ? String(format: "%.1f M", size / 1e6)
                : size >= 1e3 ? String(format: "%.1f k", size / 1e3) : String(format: "%.0f", size)
        return "\(function) \(difference < 0 ? "−" : "+")\(amount)" + (before == 0 ? " (new in the counts)" : "")
    }

    /// Whether `name` is a library frame: the Swift runtime (`swift_…`),
    /// the standard library, Foundation or Dispatch, a reserved name
    /// (`_…`), or a name without a module (a C symbol such as `malloc`).
    public static func isLibraryFrame(_ name: String) -> Bool {
        let prefixes = ["swift_", "Swift.", "Foundation.", "FoundationEssentials.", "Dispatch.", "_", "std::"]
        if prefixes.contains(where: { name.hasPrefix($0) }) { return true }
        let head = name.prefix { $0 != "(" && $0 != "<" && $0 != " " }
        return !head.contains(".") && !head.contains("::")
    }
}
