import Foundation
import StrobeStatistics

/// What a comparison concluded about one test: its gated metrics taken
/// together, with the change of the metric that says it best.
public struct TestVerdict: Sendable, Hashable, Codable {
    /// How a test came out.
    public enum Outcome: String, Sendable, Hashable, Codable, CaseIterable {
        /// A gated metric regressed.
        case slower
        /// A gated metric improved and none regressed or is undecided.
        case faster
        /// Every gated metric is unchanged.
        case unchanged
        /// No gated metric regressed and at least one is inconclusive.
        case undecided

        /// The outcome that `verdict`, its gated metrics' verdicts taken
        /// together (``Verdict/combined(_:)``), stands for.
        init(_ verdict: Verdict) {
            switch verdict {
            case .regression: self = .slower
            case .improvement: self = .faster
            case .unchanged: self = .unchanged
            case .inconclusive: self = .undecided
            }
        }
    }

    /// The test's name (`TEST` of `TEST/METRIC`).
    public var test: String
    /// The group (`--group-by` value), or "".
    public var group: String
    /// The outcome.
    public var outcome: Outcome
    /// The metric whose change the summary quotes, the one that decided
    /// the test: the wall time when it reached the outcome, else the
    /// instruction count when it did, else the first gated metric that did.
    public var metric: String
    /// That metric's change and its interval; nil when it has no ratio.
    public var shift: ShiftEstimate?
    /// That metric's change when it is a constant exact count: "+1 per
    /// iteration (12 → 13)" (``MetricDefaults/exactCountChange(_:naming:)``).
    public var countChange: String?
    /// The test's other gated metrics whose verdict is not the quoted
    /// metric's, each as "wall inconclusive".
    public var otherMetrics: [String] = []
    /// "instructions ±0.0%, allocations ±0" when the test's counted work is
    /// unchanged (a deterministic instruction count and every gated count
    /// unchanged) while its time is not decided; nil otherwise. Such a test
    /// reads "work unchanged …; time undecided", not "inconclusive".
    public var unchangedWork: String?
    /// What its critical path now crosses, when a critical path metric of
    /// the test is judged longer or shorter
    /// (``CriticalPathComparison/sentence(for:)``): "critical path +98%
    /// [+95, +101]: `parse worker 1` now waits for `parse worker 0` in
    /// `parse in two threads`"; nil otherwise.
    public var criticalPath: String?
    /// The verdict with the metric that decided it: "regression
    /// (instructions +1.9% per iteration (4.12 M → 4.20 M); wall
    /// inconclusive)".
    public var decision: String = ""

    /// The verdict a test's outcome stands for.
    public var verdict: Verdict {
        switch outcome {
        case .slower: return .regression
        case .faster: return .improvement
        case .unchanged: return .unchanged
        case .undecided: return .inconclusive
        }
    }

    /// "instructions +1.9% per iteration (4.12 M → 4.20 M)", "wall +61%
    /// [+58, +64]": the quoted metric's own name and its change.
    public var decidingChange: String {
        let name = MetricDefaults.metricPart(of: metric)
        if let countChange { return "\(name) \(countChange)" }
        guard let shift else { return name }
        return "\(name) \(Self.compact(shift))"
    }

    /// "decode: regression (instructions +1.9% …; wall inconclusive)".
    public var decisionLine: String { "\(displayName): \(decision)" }

    /// "decode" or "decode [arm64]".
    public var displayName: String { group.isEmpty ? test : "\(test) [\(group)]" }

    /// "decode +61% [+58, +64]", naming the metric unless it is the wall time.
    public var summary: String {
        let metricPart = MetricDefaults.metricPart(of: metric)
        let label = metricPart == "wall" || metricPart == metric ? displayName : "\(displayName) \(metricPart)"
        if let countChange { return "\(label) \(countChange)" }
        guard let shift else { return label }
        return "\(label) \(Self.compact(shift))"
    }

    /// "+61% [+58, +64]": whole percents from 10% on, one decimal below.
    static func compact(_ shift: ShiftEstimate) -> String {
        func percent(_ ratio: Double) -> String { signedPercent(ratio, decimalsFor: shift.change) }
        return "\(percent(shift.ratio))% [\(percent(shift.lower)), \(percent(shift.upper))]"
    }

    /// "+61", "-8", "+1.5": `ratio` as a signed percent change, in whole
    /// percents when `change` (the change the figure belongs to) is 10% or
    /// more, to one decimal below.
    static func signedPercent(_ ratio: Double, decimalsFor change: Double) -> String {
        let text = String(format: abs(change) >= 0.1 ? "%.0f" : "%.1f", (ratio - 1) * 100)
        return text.hasPrefix("-") ? text : "+" + text
    }

    /// The verdicts of the tests of `rows` that have a gated metric, in the
    /// order the tests first appear, each saying what its critical paths
    /// (`criticalPaths`) now cross where their length changed.
    static func verdicts(
        of rows: [MetricComparison], criticalPaths: [CriticalPathComparison] = []
    ) -> [TestVerdict] {
        let rowsByMetric = Dictionary(
            rows.map { ($0.name + "\u{0}" + $0.group, $0) }, uniquingKeysWith: { first, _ in first })
        return undescribedVerdicts(of: rows).map { verdict in
            let sentences = criticalPaths.filter { $0.test == verdict.test && $0.group == verdict.group }.compactMap {
                path in rowsByMetric[path.metric + "\u{0}" + path.group].flatMap(path.sentence(for:))
            }
            guard !sentences.isEmpty else { return verdict }
            var described = verdict
            described.criticalPath = sentences.joined(separator: "; ")
            return described
        }
    }

    /// The verdicts of `rows` without their critical paths.
    private static func undescribedVerdicts(of rows: [MetricComparison]) -> [TestVerdict] {
        var order: [Key] = []
        var byTest: [Key: [MetricComparison]] = [:]
        for row in rows where row.gates {
            let key = Key(test: MetricDefaults.testPart(of: row.name), group: row.group)
            if byTest[key] == nil { order.append(key) }
            byTest[key, default: []].append(row)
        }
        return order.map { key in
            let all = byTest[key] ?? []
            // Times the counted work settled do not hold the test open.
            let gated = all.filter { $0.settledByCounts == nil }
            let combined = Verdict.combined(gated.map(\.verdict))
            let outcome = Outcome(combined)
            let deciding = gated.filter { $0.verdict == combined }
            let quoted =
                deciding.first { MetricDefaults.metricPart(of: $0.name) == "wall" }
                ?? deciding.first { MetricDefaults.isInstructions($0.name) } ?? deciding[0]
            var verdict = TestVerdict(
                test: key.test, group: key.group, outcome: outcome, metric: quoted.name, shift: quoted.shift,
                countChange: MetricDefaults.exactCountChange(quoted, naming: false))
            verdict.otherMetrics = gated.filter { $0.verdict != quoted.verdict }.map {
                "\(MetricDefaults.metricPart(of: $0.name)) \($0.verdict.rawValue)"
            }
            let times = all.filter { $0.verdict == .inconclusive && CountedWork.isSettleableTime($0) }
            let measured = all.filter { $0.settledByCounts != nil }.map(Self.asMeasured)
            let onlyTimesOpen = gated.filter { $0.verdict == .inconclusive }.allSatisfy(CountedWork.isSettleableTime)
            if outcome == .unchanged || outcome == .undecided, onlyTimesOpen, !times.isEmpty,
                let work = unchangedWork(all)
            {
                verdict.unchangedWork = work
                let undecided = times.map(Self.asMeasured).joined(separator: ", ")
                verdict.decision = "work unchanged (\(work)); time undecided (\(undecided))"
                return verdict
            }
            if !measured.isEmpty {
                verdict.otherMetrics.append("time as measured: " + measured.joined(separator: ", "))
            }
            let detail = ([verdict.decidingChange] + verdict.otherMetrics).joined(separator: "; ")
            verdict.decision = "\(verdict.verdict.rawValue) (\(detail))"
            return verdict
        }
    }

    /// "instructions ±0.0%, allocations ±0" when the gated counts of a
    /// test's `rows` include a deterministic instruction count and are all
    /// unchanged; nil otherwise.
    static func unchangedWork(_ rows: [MetricComparison]) -> String? {
        let counts = rows.filter(CountedWork.isCount)
        guard counts.contains(where: { MetricDefaults.isInstructions($0.name) && $0.isWithinCountTolerance }),
            counts.allSatisfy({ $0.verdict == .unchanged })
        else { return nil }
        return counts.map { row in
            MetricDefaults.metricPart(of: row.name) + " " + (MetricDefaults.countChangeAmount(row) ?? "±0")
        }.joined(separator: ", ")
    }

    /// "wall +0.4% [−1.2, +2.0]": a time row's name and its change as
    /// measured; "wall not measured far enough" where its interval does
    /// not size it (``SizedInterval``).
    static func asMeasured(_ row: MetricComparison) -> String {
        let name = MetricDefaults.metricPart(of: row.name)
        if row.notMeasuredFarEnough == true { return "\(name) \(SizedInterval.text)" }
        guard let shift = row.shift else { return name }
        return "\(name) \(compact(shift))"
    }

    /// `rows` by test (in name order), each test's gated metrics first
    /// (its wall time, then its CPU time, then the others), then by metric
    /// name.
    static func ordered(_ rows: [MetricComparison]) -> [MetricComparison] {
        func rank(_ row: MetricComparison) -> Int {
            switch MetricDefaults.metricPart(of: row.name) {
            case "wall": return 0
            case MetricDefaults.cpuTotal: return 1
            case MetricDefaults.instructions: return 2
            default: return 3
            }
        }
        return rows.sorted { a, b in
            let testA = MetricDefaults.testPart(of: a.name)
            let testB = MetricDefaults.testPart(of: b.name)
            if testA != testB { return testA < testB }
            if a.group != b.group { return a.group < b.group }
            if a.gates != b.gates { return a.gates }
            if rank(a) != rank(b) { return rank(a) < rank(b) }
            return a.name < b.name
        }
    }

    struct Key: Hashable {
        var test: String
        var group: String
    }
}
