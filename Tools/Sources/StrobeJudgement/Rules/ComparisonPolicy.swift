import Foundation
import StrobeResults
import StrobeStatistics
import Yams

/// How each metric is judged, checked into the repository beside the perf
/// tests and read by `strobe diff --policy` and `strobe compare --policy`.
///
/// A YAML file:
///
/// ```yaml
/// alpha: 0.01              # false-alarm rate across all metrics (default 0.01)
/// relative-floor: 2%       # default noise floor (default 2%)
/// decide-times: false      # true: decide every time, even where the counts settle it
/// metrics:
///   - match: "/wall$"      # a regular expression on TEST/METRIC names
///     relative-floor: 3%
///   - match: "frames per second"
///     better: higher       # lower (default) or higher
///   - match: "faults\\.major"
///     absolute-floor: 0    # in the metric's unit: changes up to this never count
///   - match: "context_switches"
///     gate: true           # gated (resource counts are only reported by default)
///   - match: "/wall$"
///     summary: minimum     # each process's fastest iteration (default: median)
/// ```
///
/// Every rule whose `match` finds the metric's name applies, in file order,
/// so a later, narrower rule overrides what an earlier, broader one set.
/// What no rule sets comes from ``MetricDefaults``: wall time, the CPU total
/// and the suite's own metrics gate; resource counts are reported, with
/// absolute floors of about a clock tick, one count or one page.
/// Unknown keys and malformed values are errors that name the file and line.
public struct ComparisonPolicy: Sendable, Hashable, Codable {
    /// One rule: which metrics it applies to and what it sets.
    public struct Rule: Sendable, Hashable, Codable {
        /// The pattern as written.
        public var pattern: String
        /// Sets which way the metric gets better.
        public var better: MetricDirection?
        /// Sets the relative floor (0.02 = 2%).
        public var relativeFloor: Double?
        /// Sets the absolute floor, in the metric's unit.
        public var absoluteFloor: Double?
        /// Sets whether the metric gates.
        public var gates: Bool?
        /// Sets how each process's iterations are summarised.
        public var summary: ReplicateSummary?

        /// Whether the rule applies to `metric`.
        public func matches(_ metric: String) -> Bool {
            // The pattern was validated when the rule was read.
            guard let regex = try? Regex(pattern) else { return false }
            return (try? regex.firstMatch(in: metric)) != nil
        }
    }

    /// What the rules say for one metric; nil fields keep the defaults.
    public struct Settings: Sendable, Hashable {
        /// The direction, if a rule set it.
        public var better: MetricDirection?
        /// The pattern of the rule that set ``better`` (the last matching
        /// rule that sets it), or nil when none did.
        public var betterRule: String?
        /// The relative floor: the rules', else the metric's default
        /// (``MetricDefaults/relativeFloor(_:)``, the instructions' 0.5%),
        /// else nil (the comparison's own floor).
        public var relativeFloor: Double?
        /// The relative spread within a side up to which a counted metric is
        /// judged as deterministic (``MetricDefaults/countTolerance(_:)``:
        /// the instructions'); nil for other metrics.
        public var countTolerance: Double?
        /// The absolute floor: the rules', else the metric's default
        /// (``MetricDefaults/absoluteFloor(_:unit:)``).
        public var absoluteFloor: Double = 0
        /// Whether the metric gates: the rules' word, else the metric's
        /// default (``MetricDefaults/gates(_:)``).
        public var gates = true
        /// How each process's iterations are summarised; the median unless
        /// a rule says otherwise.
        public var summary = ReplicateSummary.median
    }

    /// The false-alarm rate, if the file sets it.
    public var alpha: Double?
    /// The default relative floor, if the file sets it.
    public var relativeFloor: Double?
    /// The rules, in file order.
    public var rules: [Rule] = []
    /// Whether `strobe compare` measures every time until it is decided,
    /// even that of a CPU-bound test whose counted work settled it
    /// (`decide-times: true`; ``CountedWork``); nil when the file does not
    /// say (the counts settle such times).
    public var decidesTimes: Bool?

    /// A policy with no rules.
    public init() {}

    /// `options` with the policy's alpha and default floor, unless the
    /// command line gave them (`alpha`, `minimumEffect` as a fraction), which
    /// win over the file.
    public func options(overriding options: ComparisonOptions, alpha: Double?, minimumEffect: Double?)
        -> ComparisonOptions
    {
        var resolved = options
        resolved.alpha = alpha ?? self.alpha ?? options.alpha
        resolved.minimumEffect = minimumEffect ?? relativeFloor ?? options.minimumEffect
        return resolved
    }

    /// What the rules say for `metric` (in `unit`), starting from its
    /// defaults: the runner's resource metrics are reported, not gated, and
    /// have the floors of ``MetricDefaults``.
    public func settings(for metric: String, unit: String = "") -> Settings {
        var settings = Settings()
        settings.gates = MetricDefaults.gates(metric)
        settings.absoluteFloor = MetricDefaults.absoluteFloor(metric, unit: unit)
        settings.relativeFloor = MetricDefaults.relativeFloor(metric)
        settings.countTolerance = MetricDefaults.countTolerance(metric)
        for rule in rules where rule.matches(metric) {
            if let value = rule.better {
                settings.better = value
                settings.betterRule = rule.pattern
            }
            if let value = rule.relativeFloor { settings.relativeFloor = value }
            if let value = rule.absoluteFloor { settings.absoluteFloor = value }
            if let value = rule.gates { settings.gates = value }
            if let value = rule.summary { settings.summary = value }
        }
        return settings
    }

    /// Reads the policy file at `path`.
    public static func load(_ path: String) throws(DiffError) -> ComparisonPolicy {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw DiffError(path: path, problem: "cannot read the policy: \(error.localizedDescription)")
        }
        return try parse(text, file: path)
    }

    /// Parses policy text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(DiffError) -> ComparisonPolicy {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw DiffError(path: file, problem: "not valid YAML: \(error)")
        }
        var policy = ComparisonPolicy()
        guard let root else { return policy }
        guard let mapping = root.mapping else {
            throw DiffError(
                path: file,
                problem:
                    "\(location(root)): the policy must be a mapping with `metrics:` and optional `alpha:`, "
                    + "`relative-floor:`"
            )
        }
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            switch key {
            case "alpha":
                let alpha = try number(value, key: key, file: file)
                guard alpha > 0, alpha < 1 else {
                    throw DiffError(
                        path: file, problem: "\(location(value)): alpha must be between 0 and 1, not \(alpha)")
                }
                policy.alpha = alpha
            case "relative-floor":
                policy.relativeFloor = try fraction(value, key: key, file: file)
            case "decide-times":
                guard let flag = value.bool else {
                    throw DiffError(path: file, problem: "\(location(value)): `decide-times` must be true or false")
                }
                policy.decidesTimes = flag
            case "metrics":
                guard let sequence = value.sequence else {
                    throw DiffError(path: file, problem: "\(location(value)): `metrics` must be a list of rules")
                }
                for item in sequence { policy.rules.append(try rule(item, file: file)) }
            default:
                throw DiffError(
                    path: file,
                    problem:
                        "\(location(keyNode)): unknown key `\(key)` (expected alpha, relative-floor, decide-times or "
                        + "metrics)")
            }
        }
        return policy
    }

    private static func rule(_ node: Node, file: String) throws(DiffError) -> Rule {
        guard let mapping = node.mapping else {
            throw DiffError(path: file, problem: "\(location(node)): a rule must be a mapping with at least `match:`")
        }
        var pattern: String?
        var better: MetricDirection?
        var relativeFloor: Double?
        var absoluteFloor: Double?
        var gates: Bool?
        var summary: ReplicateSummary?
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            switch key {
            case "match":
                guard let text = value.string, !text.isEmpty else {
                    throw DiffError(
                        path: file, problem: "\(location(value)): `match` must be a non-empty regular expression")
                }
                pattern = text
            case "better":
                switch value.string.flatMap({ MetricDirection(rawValue: $0.lowercased()) }) {
                case .some(let direction): better = direction
                case .none:
                    throw DiffError(
                        path: file,
                        problem: "\(location(value)): `better` must be lower or higher, not \(value.string ?? "?")")
                }
            case "relative-floor":
                relativeFloor = try fraction(value, key: key, file: file)
            case "absolute-floor":
                let floor = try number(value, key: key, file: file)
                guard floor >= 0 else {
                    throw DiffError(
                        path: file, problem: "\(location(value)): `absolute-floor` must be zero or more, not \(floor)")
                }
                absoluteFloor = floor
            case "gate":
                guard let flag = value.bool else {
                    throw DiffError(path: file, problem: "\(location(value)): `gate` must be true or false")
                }
                gates = flag
            case "summary":
                guard let text = value.string, let kind = ReplicateSummary(rawValue: text.lowercased()) else {
                    throw DiffError(
                        path: file,
                        problem: "\(location(value)): `summary` must be median or minimum, not \(value.string ?? "?")")
                }
                summary = kind
            default:
                throw DiffError(
                    path: file,
                    problem:
                        "\(location(keyNode)): unknown key `\(key)` in a rule (expected match, better, relative-floor, "
                        + "absolute-floor, gate or summary)"
                )
            }
        }
        guard let pattern else { throw DiffError(path: file, problem: "\(location(node)): a rule without `match`") }
        do {
            _ = try Regex(pattern)
        } catch {
            throw DiffError(
                path: file, problem: "\(location(node)): `match` \"\(pattern)\" is not a valid regular expression")
        }
        return Rule(
            pattern: pattern, better: better, relativeFloor: relativeFloor, absoluteFloor: absoluteFloor,
            gates: gates, summary: summary)
    }

    private static func location(_ node: Node) -> String {
        node.mark.map { "line \($0.line)" } ?? "top level"
    }

    private static func number(_ node: Node, key: String, file: String) throws(DiffError) -> Double {
        guard let text = node.string, let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite
        else {
            throw DiffError(
                path: file,
                problem: "\(location(node)): `\(key)` must be a number, not \(node.string ?? "a collection")")
        }
        return value
    }

    /// "2%" or 0.02.
    private static func fraction(_ node: Node, key: String, file: String) throws(DiffError) -> Double {
        let text = (node.string ?? "").trimmingCharacters(in: .whitespaces)
        let value: Double?
        if text.hasSuffix("%") {
            value = Double(text.dropLast().trimmingCharacters(in: .whitespaces)).map { $0 / 100 }
        } else {
            value = Double(text)
        }
        guard let value, value.isFinite, value >= 0, value < 1 else {
            throw DiffError(
                path: file,
                problem: "\(location(node)): `\(key)` must be a percentage like 2% or a fraction like 0.02, not \(text)"
            )
        }
        return value
    }
}
