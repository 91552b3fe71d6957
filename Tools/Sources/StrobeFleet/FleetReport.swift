import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobeJudgement
import StrobeResults
import StrobeStatistics

/// What `strobe fleet` reports: per metric and group, sessions, events and
/// percentiles with intervals that treat the session as the unit
/// (``StrobeStatistics/SessionQuantiles``); between two versions, the
/// change of each percentile with its interval and a verdict, the p-values
/// adjusted by Benjamini–Hochberg across every metric, group and percentile
/// of the report. Where a group's sessions were sampled with different
/// probabilities, each counts the inverse of its probability
/// (``Group/weighted``). Which way each metric gets better, and its floors,
/// come from a `strobe diff` policy (``Options/policy``); without a rule a
/// metric is lower-is-better.
package struct FleetReport: Sendable, Codable {
    /// What to report.
    package struct Options: Sendable {
        /// The metrics: interval names, or counters as `counter:NAME`
        /// (`interval:NAME` spells an interval out).
        package var metrics: [String]
        /// The metadata keys whose values make the groups.
        package var by: [String] = []
        /// Only sessions whose metadata has these values.
        package var filters: [String: String] = [:]
        /// The baseline and candidate versions to compare, if any.
        package var compare: (baseline: String, candidate: String)?
        /// The metadata key that holds the version.
        package var versionKey = "app.version"
        /// The percentiles, as probabilities.
        package var probabilities = [0.5, 0.9, 0.99]
        /// The intervals' confidence.
        package var confidence = JudgementDefaults.confidence
        /// The false-alarm rate of the comparison, after Benjamini–Hochberg.
        package var alpha = ComparisonOptions().alpha
        /// Changes up to this fraction never count, unless a policy rule
        /// sets the metric's own.
        package var relativeFloor = ComparisonOptions().minimumEffect
        /// The rules that set each metric's direction (`better: higher`) and
        /// floors, matched on the metric's name (without `counter:`) by
        /// ``StrobeDiff/ComparisonPolicy/settings(for:unit:)``, as
        /// `strobe diff` matches them. A rule's `gate` and `summary` do not
        /// apply to a fleet. Without a rule a metric is lower-is-better.
        package var policy = ComparisonPolicy()

        /// Options for `metrics`.
        package init(metrics: [String]) {
            self.metrics = metrics
        }
    }

    /// One group's percentiles.
    package struct Group: Sendable, Codable, Hashable {
        /// The group's values of the `--group-by` keys, in their order.
        package var values: [String]
        /// Its sessions and events, and each percentile with its interval.
        package var percentiles: [SessionQuantileEstimate]
        /// Sessions.
        package var sessions: Int
        /// Events over its sessions.
        package var events: UInt64
        /// The sampling probabilities its sessions were recorded with.
        package var samplingProbabilities: [Double]
        /// Whether its percentiles weight each session by the inverse of its
        /// sampling probability (Horvitz–Thompson), which they do when the
        /// probabilities differ: the percentiles then describe the
        /// population rather than the sample.
        package var weighted: Bool

        /// The events beyond percentile `index` that
        /// ``StrobeStatistics/SessionQuantiles/compare(_:alpha:)`` counts:
        /// the estimate's (Kish's effective ones in a weighted group), else
        /// (a report written before estimates carried them)
        /// `min(p, 1 − p) · events`.
        func tailEvents(_ index: Int) -> Double {
            let percentile = percentiles[index]
            return percentile.tailEvents
                ?? min(percentile.probability, 1 - percentile.probability) * Double(percentile.events)
        }
    }

    /// One group's change between the versions.
    package struct GroupChange: Sendable, Codable, Hashable {
        /// The group's values of the `--group-by` keys other than the version.
        package var values: [String]
        /// Each percentile's change, with its verdict.
        package var changes: [SessionQuantileChange]
    }

    /// One metric's part of the report.
    package struct Metric: Sendable, Codable, Hashable {
        /// Its name.
        package var name: String
        /// `interval` (durations in nanoseconds) or `counter`.
        package var kind: String
        /// Which way it gets better, which its verdicts follow: a policy
        /// rule's `better`, else lower.
        package var better: MetricDirection = .lower
        /// The pattern of the policy rule that set ``better`` (the last
        /// matching rule that sets it), or nil when none did and lower is
        /// better by default.
        package var betterRule: String?
        /// The groups, by their values.
        package var groups: [Group]
        /// The groups' changes when comparing versions.
        package var changes: [GroupChange]?
    }

    /// The keys that make the groups.
    package var by: [String]
    /// The filters applied.
    package var filters: [String: String]
    /// The versions compared, baseline first.
    package var compared: [String]?
    /// The key that holds the version.
    package var versionKey: String
    /// The false-alarm rate of the verdicts.
    package var alpha: Double
    /// The metrics.
    package var metrics: [Metric]

    /// Whether a comparison found a regression.
    package var hasRegression: Bool {
        metrics.contains { $0.changes?.contains { $0.changes.contains { $0.verdict == .regression } } ?? false }
    }

    /// Reads the sessions from `store` and builds the report.
    ///
    /// - Throws: ``FleetReportError`` for a metric no trace holds (naming
    ///   those stored), a comparison whose versions have no sessions, a
    ///   sketch that cannot be read; ``StrobeHistory/HistoryError`` for the
    ///   store.
    package static func build(from store: any FleetStore, options: Options) async throws -> FleetReport {
        var loaded: [(name: String, kind: FleetMetricRecord.Kind, sessions: [FleetSession])] = []
        for metric in options.metrics {
            let (kind, name) = parse(metric)
            var sessions = try await store.sessions(metric: name, kind: kind ?? .interval, filters: options.filters)
            var resolved = kind ?? .interval
            if sessions.isEmpty, kind == nil {
                sessions = try await store.sessions(metric: name, kind: .counter, filters: options.filters)
                resolved = .counter
            }
            if sessions.isEmpty {
                let stored = try await store.metricNames()
                let known = stored.contains { $0.name == name }
                throw FleetReportError(
                    known
                        ? "no session of \(metric) matches the filters \(describe(options.filters))"
                        : "no trace holds the metric \(metric); stored: "
                            + (stored.isEmpty
                                ? "none"
                                : stored.prefix(20).map { "\($0.kind.rawValue):\($0.name)" }.joined(separator: ", ")))
            }
            loaded.append((name, resolved, sessions))
        }
        return try build(loaded, options: options)
    }

    /// `counter:NAME` and `interval:NAME` name their kind; a bare name does not.
    static func parse(_ metric: String) -> (FleetMetricRecord.Kind?, String) {
        for kind in FleetMetricRecord.Kind.allCases where metric.hasPrefix(kind.rawValue + ":") {
            return (kind, String(metric.dropFirst(kind.rawValue.count + 1)))
        }
        return (nil, metric)
    }

    /// Refuses a grouping key that no session of the report carries, and a
    /// compared version that no session of a metric has, naming what is
    /// stored: a typo must not turn into one "(none)" group or an empty table.
    static func checkKeysAndVersions(
        _ loaded: [(name: String, kind: FleetMetricRecord.Kind, sessions: [FleetSession])], options: Options
    ) throws {
        let sessions = loaded.flatMap(\.sessions)
        let stored = Set(sessions.flatMap(\.metadata.keys))
        func list(_ values: some Collection<String>) -> String {
            values.isEmpty ? "none" : values.sorted().joined(separator: ", ")
        }
        for key in options.by where !stored.contains(key) {
            throw FleetReportError("--group-by \(key): no session has this metadata key; keys stored: \(list(stored))")
        }
        guard let compare = options.compare else { return }
        guard stored.contains(options.versionKey) else {
            throw FleetReportError(
                "--version-key \(options.versionKey): no session has this metadata key; keys stored: \(list(stored))")
        }
        for (name, _, sessions) in loaded {
            let versions = Set(sessions.compactMap { $0.metadata[options.versionKey] })
            for version in [compare.baseline, compare.candidate] where !versions.contains(version) {
                throw FleetReportError(
                    "--compare: no session of \(name) has \(options.versionKey) \(version); versions stored: "
                        + "\(list(versions))"
                )
            }
        }
    }

    static func describe(_ filters: [String: String]) -> String {
        filters.isEmpty
            ? "(none)" : filters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }

    /// The report of sessions already read.
    static func build(
        _ loaded: [(name: String, kind: FleetMetricRecord.Kind, sessions: [FleetSession])], options: Options
    ) throws -> FleetReport {
        let groupKeys = options.compare == nil ? options.by : options.by.filter { $0 != options.versionKey }
        try checkKeysAndVersions(loaded, options: options)
        var metrics: [Metric] = []
        // Every comparison of the report, judged together at the end.
        var comparisons: [SessionQuantiles.Comparison] = []
        var slots: [(metric: Int, group: Int)] = []
        for (name, kind, sessions) in loaded {
            var sketches: [(session: FleetSession, sketch: QuantileSketch)] = []
            sketches.reserveCapacity(sessions.count)
            for session in sessions {
                guard session.samplingProbability > 0, session.samplingProbability <= 1 else {
                    throw FleetReportError(
                        "trace \(session.trace), \(name): sampling probability \(session.samplingProbability) is not "
                            + "in (0, 1]"
                    )
                }
                do {
                    let sketch = try QuantileSketch(serialized: session.sketch)
                    guard sketch.relativeAccuracy == QuantileSketch.defaultRelativeAccuracy else {
                        throw FleetReportError(
                            "trace \(session.trace), \(name): a sketch of accuracy \(sketch.relativeAccuracy), this "
                                + "strobe merges \(QuantileSketch.defaultRelativeAccuracy)"
                        )
                    }
                    sketches.append((session, sketch))
                } catch let error as QuantileSketchError {
                    throw FleetReportError("trace \(session.trace), \(name): \(error)")
                }
            }
            func key(_ session: FleetSession, _ keys: [String]) -> [String] {
                keys.map { session.metadata[$0] ?? "(none)" }
            }
            func group(_ members: [(session: FleetSession, sketch: QuantileSketch)], values: [String]) -> Group {
                let probabilities = members.map(\.session.samplingProbability)
                let sessions = members.map(\.sketch)
                let estimates = SessionQuantiles.estimate(
                    sessions: sessions, samplingProbabilities: probabilities,
                    probabilities: options.probabilities, confidence: options.confidence)
                let distinct = Set(probabilities).sorted()
                let weighted = distinct.count > 1
                return Group(
                    values: values, percentiles: estimates, sessions: members.count,
                    events: estimates.first?.events ?? 0, samplingProbabilities: distinct, weighted: weighted)
            }
            let unit = kind == .interval ? "ns" : ""
            let settings = options.policy.settings(for: name, unit: unit)
            var metric = Metric(
                name: name, kind: kind.rawValue, better: settings.better ?? .lower,
                betterRule: settings.betterRule, groups: [], changes: nil)
            if let compare = options.compare {
                let byGroup = Dictionary(grouping: sketches) { key($0.session, groupKeys) }
                var changes: [GroupChange] = []
                for values in byGroup.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    let members = byGroup[values]!
                    let baseline = members.filter { $0.session.metadata[options.versionKey] == compare.baseline }
                    let candidate = members.filter { $0.session.metadata[options.versionKey] == compare.candidate }
                    for (version, side) in [(compare.baseline, baseline), (compare.candidate, candidate)]
                    where !side.isEmpty {
                        metric.groups.append(group(side, values: values + [version]))
                    }
                    guard baseline.count >= 2, candidate.count >= 2 else { continue }
                    let a = metric.groups[metric.groups.count - 2]
                    let b = metric.groups[metric.groups.count - 1]
                    for (pa, pb) in zip(a.percentiles, b.percentiles) {
                        comparisons.append(
                            SessionQuantiles.Comparison(
                                baseline: pa, candidate: pb, better: metric.better,
                                relativeFloor: settings.relativeFloor ?? options.relativeFloor,
                                absoluteFloor: settings.absoluteFloor))
                        slots.append((metrics.count, changes.count))
                    }
                    changes.append(GroupChange(values: values, changes: []))
                }
                guard !metric.groups.isEmpty else {
                    throw FleetReportError(
                        "\(name): no session has \(options.versionKey) \(compare.baseline) or \(compare.candidate)")
                }
                metric.changes = changes
            } else {
                let byGroup = Dictionary(grouping: sketches) { key($0.session, groupKeys) }
                for values in byGroup.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    metric.groups.append(group(byGroup[values]!, values: values))
                }
            }
            metrics.append(metric)
        }
        for (slot, change) in zip(slots, SessionQuantiles.compare(comparisons, alpha: options.alpha)) {
            metrics[slot.metric].changes![slot.group].changes.append(change)
        }
        return FleetReport(
            by: groupKeys, filters: options.filters, compared: options.compare.map { [$0.baseline, $0.candidate] },
            versionKey: options.versionKey, alpha: options.alpha, metrics: metrics)
    }
}

/// A fleet report that cannot be made.
package struct FleetReportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    package var description: String

    /// An error saying `description`.
    package init(_ description: String) {
        self.description = description
    }
}
