/// Which runs to read from a history, and how much of each.
public struct HistoryQuery: Sendable, Hashable {
    /// Conditions every run must meet (all of them).
    public var filters: [HistoryFilter]
    /// Whether to load every iteration's value too, not only each
    /// process's summaries.
    public var includeSamples: Bool
    /// Whether to load the call stacks of each test's CPU profile too
    /// (``HistoryTest/stacks``), for its flame graphs.
    public var includeStacks: Bool

    /// A query; with no filters, every run.
    public init(filters: [HistoryFilter] = [], includeSamples: Bool = false, includeStacks: Bool = false) {
        self.filters = filters
        self.includeSamples = includeSamples
        self.includeStacks = includeStacks
    }
}

/// One condition on runs: `KEY=VALUE`, where KEY is `suite`, `branch`,
/// `host` or `commit`, or else a tag's key.
public struct HistoryFilter: Sendable, Hashable, CustomStringConvertible {
    /// What is compared.
    public enum Field: Sendable, Hashable {
        /// The suite's name.
        case suite
        /// The branch (the run's `branch` tag).
        case branch
        /// The host name.
        case host
        /// The git commit.
        case commit
        /// A tag.
        case tag(String)
    }

    /// What is compared.
    public var field: Field
    /// The value it must equal.
    public var value: String

    /// A condition.
    public init(_ field: Field, _ value: String) {
        self.field = field
        self.value = value
    }

    /// Parses `KEY=VALUE`.
    public init(parsing text: String) throws(HistoryError) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw HistoryError(.badArgument, "--where \(text): write KEY=VALUE, e.g. branch=main or device=pixel7")
        }
        let key = String(text[..<equals])
        value = String(text[text.index(after: equals)...])
        switch key {
        case "suite": field = .suite
        case "branch": field = .branch
        case "host": field = .host
        case "commit": field = .commit
        default: field = .tag(key)
        }
    }

    /// `KEY=VALUE`.
    public var description: String {
        switch field {
        case .suite: return "suite=\(value)"
        case .branch: return "branch=\(value)"
        case .host: return "host=\(value)"
        case .commit: return "commit=\(value)"
        case .tag(let key): return "\(key)=\(value)"
        }
    }

    /// Whether `run` meets this condition.
    public func matches(_ run: HistoryRun) -> Bool {
        switch field {
        case .suite: return run.metadata.suite == value
        case .branch: return run.branch == value
        case .host: return run.metadata.host == value
        case .commit: return run.metadata.gitCommit == value
        case .tag(let key): return run.metadata.tags[key] == value
        }
    }
}
