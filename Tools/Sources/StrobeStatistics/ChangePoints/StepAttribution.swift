import Foundation

/// One host's histories, aligned night by night with the other hosts'.
public struct HostHistory: Sendable, Hashable, Codable {
    /// The host's name.
    public var host: String
    /// The metrics measured on it: run i of every series (and of every
    /// reference series) is night i, on every host.
    public var metrics: [MetricHistory]
    /// The reference measured in the same nightly job on the same host: a
    /// pinned build of the suite or a calibration suite, whose code never
    /// changes. Empty when there is none.
    public var reference: [MetricHistory]
    /// Per test, each run's CPU time of the process's threads (user and
    /// system) over its wall time: about 1 for a test that computes on one
    /// thread, above for threads side by side, below for one that waits.
    /// A test's time step with its instructions unchanged is the code's
    /// only when the test waits (``StepAttribution/unchangedWork(of:host:countedSteps:)``).
    public var cpuShares: [String: [Double]]

    /// A host's metrics, its reference series and its tests' CPU shares.
    public init(
        host: String, metrics: [MetricHistory], reference: [MetricHistory] = [], cpuShares: [String: [Double]] = [:]
    ) {
        self.host = host
        self.metrics = metrics
        self.reference = reference
        self.cpuShares = cpuShares
    }
}

/// What moved a metric: the code under test, or the machine it ran on.
public enum StepCause: String, Sendable, Hashable, Codable, CaseIterable {
    /// The step is on every host and the reference stayed put.
    case code
    /// The step is on one host only, or the reference moved with it.
    case machine
    /// The evidence does not tell: on some hosts but not all, or one host
    /// and no reference.
    case undetermined
}

/// A step, where it happened and why.
public struct AttributedStep: Sendable, Hashable, Codable {
    /// The host whose series has the step.
    public var host: String
    /// The step.
    public var step: HistoryStep
    /// The code's or the machine's.
    public var cause: StepCause
    /// The evidence, in a sentence.
    public var reason: String
    /// For a time step whose host has a reference series of its name: the
    /// machine's share and the code's (``StepShares``); nil otherwise.
    public var shares: StepShares?
}

/// A step of a host's whole suite: its metrics, taken together, moved the
/// same way at one night.
public struct SuiteStep: Sendable, Hashable, Codable {
    /// The host.
    public var host: String
    /// Index of the last night at the old level.
    public var lastBefore: Int
    /// Index of the first night at the new level.
    public var firstAfter: Int
    /// The median over the host's metrics of their relative change at the
    /// step, oriented so that a positive change is worse (slower for times,
    /// lower for rates).
    public var medianChange: Double
    /// The p-value of the test that found the step in the suite's index.
    public var pValue: Double
    /// Confirmed, or possible with the number of nights still to come.
    public var status: StepStatus
    /// The code's or the machine's.
    public var cause: StepCause
    /// The evidence, in a sentence.
    public var reason: String
}

/// The steps of every host and of every host's whole suite, each with its cause.
public struct AttributionReport: Sendable, Hashable, Codable {
    /// The steps of single metrics.
    public var steps: [AttributedStep]
    /// The steps of whole suites.
    public var suiteSteps: [SuiteStep]
    /// Changes the evidence points to without reaching the level.
    public var possibleChanges: [AttributedPossibleChange] = []
    /// For each metric with a reference series, how far the reference
    /// explains it and whether the adjusted series was searched.
    public var referenceAdjustments: [ReferenceAdjustment] = []
    /// Time series that did not step where their test's counted work did:
    /// what they measured there.
    public var timesAtCountedSteps: [TimeAtCountedStep] = []
}

/// A time series at the run where its test's counted work (instructions,
/// allocations) stepped, where no step of the series was told: the code
/// changed there, and this is how far the time moved with it, measured as
/// a step's change is (Hodges–Lehmann over the runs on either side, with
/// its interval), with the rank test at that run that fell short of the
/// level (or a change within the metric's floor).
public struct TimeAtCountedStep: Sendable, Hashable, Codable {
    /// The host.
    public var host: String
    /// The metric's name.
    public var metric: String
    /// The first run after the counted step.
    public var firstAfter: Int
    /// The change across that run, with its interval.
    public var change: ShiftEstimate
    /// The two-sided rank test's p-value at that run; with a reference of
    /// the metric's name, the smaller of the series' and of the series
    /// over its reference, doubled.
    public var pValue: Double
    /// That p-value adjusted by Benjamini–Hochberg over the tests at
    /// counted steps.
    public var adjustedPValue: Double
    /// How many such tests the adjustment was over.
    public var tests: Int
    /// Whether the series over its reference was tested beside the series.
    public var againstReference: Bool = false
    /// The change of the series over its reference, run by run, across that
    /// run, with its interval: the part of ``change`` that the pinned
    /// reference does not explain (nil without a reference).
    public var changeOverReference: ShiftEstimate? = nil
}

/// A metric's possible change on one host: in its own series, or in its
/// series adjusted by the reference.
public struct AttributedPossibleChange: Sendable, Hashable, Codable {
    /// The host.
    public var host: String
    /// The metric's name.
    public var metric: String
    /// Where, how strong, and how many more runs would confirm it.
    public var change: PossibleChange
    /// Whether it was seen in the metric's series adjusted by the reference.
    public var againstReference: Bool
}

/// Tells the code's steps from the machine's, across hosts and against a
/// reference measured in the same nightly job.
///
/// Each host with two metrics or more also gets a **suite index**: per
/// night, the median over its metrics of that night's rank within the
/// metric, oriented so that a higher rank is worse (the median, so that one
/// metric's large step does not read as the suite's). A step of the index is
/// reported when at least ``suiteShare`` of the metrics moved its way and the
/// median change of the metrics is beyond the smallest of their floors. Nights are exchangeable when
/// nothing changed, whatever the metrics' shapes and however they correlate
/// (one process measures them all), so the index is searched for steps with
/// the same rank tests as a metric, and a shift of every metric at once,
/// each too small to find alone, shows in it. The reference gets an index
/// the same way.
///
/// Every host's metrics and suite indexes, and each metric adjusted by its
/// reference where that makes it quieter (``ReferenceAdjustment``), are
/// searched for steps as one family (``StepDetector``). A step at night i is then judged by targeted
/// tests: did another series move at night i ± 1, the same way, over the
/// same nights? (The standardized Mann–Whitney statistic at the best of the
/// three splits, one-sided, Bonferroni ×3, at `alpha`; several series are
/// pooled with Stouffer's sum.)
///
/// 1. **The reference.** When the reference (for a metric: its series of the
///    same name, or the reference's index; for a suite: the reference's
///    index) moved with the step: the machine's. A counted reference
///    (``CountedLevels``) moved when its level moved past the tolerance.
/// 2. **The other hosts.** On every other host as well: the code's; on none:
///    the machine's; on some: undetermined.
/// 3. **One host.** With a reference that stayed put: the code's; with no
///    reference: undetermined.
/// 4. **The whole suite.** The suite's index is taken over the metrics the
///    machine can move, never its counted work (``CountedLevels``). A
///    metric's step within a run of a suite step of its host that is the
///    machine's is the machine's too, and so is one placed further from it
///    when the metric moved at the suite step's night as well (a small step
///    is placed less precisely than the suite's). This rule comes first,
///    but for counted work, which the machine does not move: its own
///    reference tells.
/// 5. **Shares.** A time step is then split into the reference's change
///    over its nights, the machine's share, and what is left, the code's
///    (``StepShares``): the code's, the machine's, or both; a counted
///    series of the same test that stepped there is evidence of the code
///    (``withShares(_:hosts:)``).
public enum StepAttribution {
    /// The share of a host's metrics that must have moved the suite step's
    /// way for it to be reported: the index is a median of ranks, and one
    /// metric's large step still nudges it.
    static let suiteShare = 0.8

    /// The name the suite index goes by in reports.
    static let suiteName = "(suite)"

    /// The steps of every host and of every host's suite, each with its cause.
    ///
    /// - Throws: ``SeriesAnalysisError`` for a series that cannot be analysed, a
    ///   series whose length differs from the others', or two hosts of one name.
    public static func attribute(
        _ hosts: [HostHistory], options: StepDetectionOptions = StepDetectionOptions()
    ) throws(SeriesAnalysisError) -> AttributionReport {
        try validate(hosts)
        // Each host as seen by the suite: the index of its metrics that the
        // machine can move (counted work it cannot: a step of every count
        // at once is the code's, and is judged per series), and its
        // reference's.
        let machineMetrics = hosts.map { host in host.metrics.filter { !CountedLevels.repeats($0.values) } }
        let suites = zip(hosts, machineMetrics).map { host, metrics in
            let reference = host.reference.filter { !CountedLevels.repeats($0.values) }
            return HostHistory(
                host: host.host,
                metrics: metrics.count >= 2 ? [MetricHistory(name: suiteName, values: suiteIndex(metrics))] : [],
                reference: reference.isEmpty ? [] : [MetricHistory(name: suiteName, values: suiteIndex(reference))])
        }
        // Each metric adjusted by its reference, night by night, as far as
        // the two move together: the reference cancels what the machine did
        // that night, so a step the machine's noise hides in the raw series
        // can stand out here. Only where that makes the series quieter.
        var ratios: [(host: Int, metric: Int, history: MetricHistory)] = []
        var adjustments: [ReferenceAdjustment] = []
        for (hostIndex, host) in hosts.enumerated() {
            for (metricIndex, metric) in host.metrics.enumerated() {
                guard let reference = host.reference.first(where: { $0.name == metric.name }),
                    reference.values.count == metric.values.count
                else { continue }
                let (adjustment, adjusted) = ReferenceAdjustment.adjust(
                    metric, by: reference.values, host: host.host)
                adjustments.append(adjustment)
                if let adjusted { ratios.append((hostIndex, metricIndex, adjusted)) }
            }
        }
        let family = hosts.flatMap(\.metrics) + suites.flatMap(\.metrics) + ratios.map(\.history)
        let report = try StepDetector.detect(family, options: options)
        var offset = hosts.reduce(0) { $0 + $1.metrics.count }
        var suiteSteps: [SuiteStep] = []
        let countedAt = countedBoundaries(hosts, report: report)
        for (hostIndex, suite) in suites.enumerated() where !suite.metrics.isEmpty {
            for step in report.series[offset].steps {
                // A step of the whole suite is one of the tests whose code
                // did not change: the metrics of a test whose counted work
                // stepped at the same run ± 1 moved with their code, and
                // are left out of the share and the change (a suite of few
                // tests, one of them changed, must not read as the machine).
                let metrics = machineMetrics[hostIndex].filter { metric in
                    !(countedAt[hostIndex]?[testPart(of: metric.name)] ?? []).contains {
                        abs($0 - step.firstAfter) <= 1
                    }
                }
                // The smallest floor of those metrics: a suite step whose
                // median change is within it is no more a step than a
                // metric's.
                let floor = metrics.map(\.relativeFloor).min() ?? 0
                guard metrics.count >= 2, sharedShare(metrics, step: step) >= suiteShare,
                    abs(medianChange(metrics, step: step)) > floor
                else { continue }
                let (cause, reason) = classify(step, metric: 0, host: hostIndex, hosts: suites, alpha: options.alpha)
                suiteSteps.append(
                    SuiteStep(
                        host: suite.host, lastBefore: step.lastBefore, firstAfter: step.firstAfter,
                        medianChange: medianChange(metrics, step: step), pValue: step.pValue,
                        status: step.status, cause: cause,
                        reason: cause == .machine && reason.hasPrefix("the reference")
                            ? "every metric of \(suite.host.isEmpty ? "the host" : suite.host) moved at position "
                                + "\(step.firstAfter + 1) and the reference moved with them"
                            : "the whole suite: " + reason))
            }
            offset += 1
        }
        offset = 0
        var steps: [AttributedStep] = []
        for (hostIndex, host) in hosts.enumerated() {
            let series = report.series[offset..<(offset + host.metrics.count)]
            offset += host.metrics.count
            for (metricIndex, found) in zip(host.metrics.indices, series) {
                // Counted work (instructions) does not move with the
                // machine: its own reference, not the suite's, tells whose
                // step it is.
                let counted = CountedLevels.repeats(host.metrics[metricIndex].values)
                let countedSteps = countedAt[hostIndex]?[testPart(of: host.metrics[metricIndex].name)] ?? []
                for found in found.steps {
                    if counted {
                        let (cause, reason) = classify(
                            found, metric: metricIndex, host: hostIndex, hosts: hosts, alpha: options.alpha)
                        steps.append(AttributedStep(host: host.host, step: found, cause: cause, reason: reason))
                        continue
                    }
                    guard
                        let (step, note) = judgedBesideCountedSteps(
                            found, history: host.metrics[metricIndex], countedSteps: countedSteps, options: options)
                    else { continue }
                    steps.append(
                        attributeTimeStep(
                            step, note: note, metric: metricIndex, host: hostIndex, hosts: hosts,
                            suiteSteps: suiteSteps, alpha: options.alpha))
                }
            }
        }
        // Time steps where the test's counted work stepped and the scan
        // found none: a test at that run alone.
        let atCountedRuns = stepsAtCountedRuns(hosts, steps: steps, countedAt: countedAt, options: options)
        for found in atCountedRuns.found {
            steps.append(
                attributeTimeStep(
                    found.step, note: found.note, metric: found.metric, host: found.host, hosts: hosts,
                    suiteSteps: suiteSteps, alpha: options.alpha))
        }
        // Steps seen against the reference and not in the raw series: the
        // code's, since the reference did not move. One the raw series
        // found too, the same way within the reach of a step's placement,
        // is that step.
        var possible: [AttributedPossibleChange] = []
        let ratioOffset = hosts.reduce(0) { $0 + $1.metrics.count } + suites.filter { !$0.metrics.isEmpty }.count
        for (position, ratio) in ratios.enumerated() {
            let found = report.series[ratioOffset + position]
            let host = hosts[ratio.host]
            let name = host.metrics[ratio.metric].name
            let countedSteps = countedAt[ratio.host]?[testPart(of: name)] ?? []
            for found in found.steps {
                guard
                    let (step, placement) = judgedBesideCountedSteps(
                        found, history: ratio.history, countedSteps: countedSteps, options: options),
                    !steps.contains(where: {
                        $0.host == host.host && $0.step.metric == name && $0.step.direction == step.direction
                            && abs($0.step.firstAfter - step.firstAfter) <= StepDetector.placementReach
                    })
                else { continue }
                steps.append(
                    AttributedStep(
                        host: host.host, step: step, cause: .code,
                        reason:
                            "against the reference: \(name) moved at position \(step.firstAfter + 1) adjusted by the pinned "
                            + "build, which did not; the machine's noise hid it in the raw series"
                            + (placement.map { "; \($0)" } ?? "")))
            }
            if let change = found.possibleChange,
                !steps.contains(where: { $0.host == host.host && $0.step.metric == name })
            {
                possible.append(
                    AttributedPossibleChange(host: host.host, metric: name, change: change, againstReference: true))
            }
        }
        var offset2 = 0
        for host in hosts {
            for (metric, found) in zip(host.metrics, report.series[offset2..<(offset2 + host.metrics.count)]) {
                guard let change = found.possibleChange,
                    !steps.contains(where: { $0.host == host.host && $0.step.metric == metric.name }),
                    !possible.contains(where: { $0.host == host.host && $0.metric == metric.name })
                else { continue }
                possible.append(
                    AttributedPossibleChange(
                        host: host.host, metric: metric.name, change: change, againstReference: false))
            }
            offset2 += host.metrics.count
        }
        // A series told at the counted run after all (against the
        // reference, or as a possible change) is not untold.
        let untold = atCountedRuns.untold.filter { time in
            !steps.contains {
                $0.host == time.host && $0.step.metric == time.metric
                    && abs($0.step.firstAfter - time.firstAfter) <= StepDetector.placementReach
            }
                && !possible.contains {
                    $0.host == time.host && $0.metric == time.metric
                        && abs($0.change.firstAfter - time.firstAfter) <= StepDetector.placementReach
                }
        }
        return AttributionReport(
            steps: withShares(steps, hosts: hosts, countedAt: countedAt), suiteSteps: suiteSteps,
            possibleChanges: possible,
            referenceAdjustments: adjustments, timesAtCountedSteps: untold)
    }

    /// The cause of a time step of metric `metric` of host `host`, with
    /// `note` (where it was placed or how it was found) after its reason: the
    /// machine's when a suite step of the host that is the machine's lies
    /// within a run of it, or within its runs where the metric moved at the
    /// suite's night too; else as ``classify(_:metric:host:hosts:alpha:)``
    /// finds.
    static func attributeTimeStep(
        _ step: HistoryStep, note: String?, metric: Int, host: Int, hosts: [HostHistory], suiteSteps: [SuiteStep],
        alpha: Double
    ) -> AttributedStep {
        let name = hosts[host].host
        func noted(_ reason: String) -> String { note.map { "\(reason); \($0)" } ?? reason }
        if let suite = suiteSteps.first(where: {
            $0.host == name && $0.cause == .machine && abs($0.firstAfter - step.firstAfter) <= 1
        }) {
            return AttributedStep(host: name, step: step, cause: .machine, reason: noted(suite.reason))
        }
        // A small step is placed less precisely than the suite's: the same
        // shift when the metric moved at the suite's night.
        let span = (step.firstAfter - step.runsBefore)..<(step.firstAfter + step.runsAfter)
        let values = hosts[host].metrics[metric].values
        if let suite = suiteSteps.first(where: {
            $0.host == name && $0.cause == .machine && span.contains($0.firstAfter)
                && pooledTest([values], at: $0.firstAfter, span: span, up: step.change.ratio > 1) <= alpha
        }) {
            let reason =
                suite.reason + "; this metric moved there too (its own step placed at position \(step.firstAfter + 1))"
            return AttributedStep(host: name, step: step, cause: .machine, reason: noted(reason))
        }
        let (cause, reason) = classify(step, metric: metric, host: host, hosts: hosts, alpha: alpha)
        return AttributedStep(host: name, step: step, cause: cause, reason: noted(reason))
    }

    /// Per night, the median over `metrics` of the night's mid-rank within
    /// the metric, oriented so that higher is worse, over (nights + 1): in
    /// (0, 1). The median, not the mean: one metric's large step must not
    /// read as the whole suite's.
    static func suiteIndex(_ metrics: [MetricHistory]) -> [Double] {
        guard let nights = metrics.first?.values.count else { return [] }
        let ranks = metrics.map { metric in
            MidRanks(metric.values).ranks.map { metric.better == .lower ? $0 : Double(nights + 1) - $0 }
        }
        return (0..<nights).map { night in
            Quantiles.median(sorted: ranks.map { $0[night] }.sorted()) / Double(nights + 1)
        }
    }

    /// The share of `metrics` that moved the way the suite's `step` did (a
    /// positive oriented Mann–Whitney statistic at its night, over its nights).
    static func sharedShare(_ metrics: [MetricHistory], step: HistoryStep) -> Double {
        let span = (step.firstAfter - step.runsBefore)..<(step.firstAfter + step.runsAfter)
        let worse = step.change.ratio > 1
        let moved = metrics.filter { metric in
            let z = RankScan.splitStatistic(metric.values[span], split: step.firstAfter - span.lowerBound)
            return ((metric.better == .lower) == worse) ? z > 0 : z < 0
        }
        return Double(moved.count) / Double(max(metrics.count, 1))
    }

    /// The median over `metrics` of their change across `step`'s nights,
    /// oriented so that positive is worse.
    static func medianChange(_ metrics: [MetricHistory], step: HistoryStep) -> Double {
        let before = (step.firstAfter - step.runsBefore)..<step.firstAfter
        let after = step.firstAfter..<(step.firstAfter + step.runsAfter)
        let changes = metrics.compactMap { metric -> Double? in
            guard
                let shift = ShiftEstimate.hodgesLehmann(
                    baseline: Array(metric.values[before]), candidate: Array(metric.values[after]))
            else { return nil }
            return metric.better == .lower ? shift.ratio - 1 : 1 / shift.ratio - 1
        }
        return Quantiles.median(sorted: changes.sorted())
    }

    /// The cause of `step`, found in metric `metric` of host `host`.
    static func classify(
        _ step: HistoryStep, metric: Int, host: Int, hosts: [HostHistory], alpha: Double
    ) -> (StepCause, String) {
        let home = hosts[host]
        let name = home.metrics[metric].name
        let span = (step.firstAfter - step.runsBefore)..<(step.firstAfter + step.runsAfter)
        let up = step.change.ratio > 1
        let night = step.firstAfter
        let matching = home.reference.filter { $0.name == name }
        // Counted work is judged by a counted reference of its name only:
        // the machine's speed, which moves the reference's times, does not
        // move a count.
        let counted = CountedLevels.repeats(home.metrics[metric].values)
        // A series of the same name moves like the metric; else the index
        // of the reference's times (as the suite's is), which rises when
        // things get worse.
        let times = home.reference.filter { !CountedLevels.repeats($0.values) }
        let reference: [[Double]]? =
            !matching.isEmpty ? matching.map(\.values) : counted || times.isEmpty ? nil : [suiteIndex(times)]
        if let reference {
            let referenceUp = matching.isEmpty ? step.direction == .regression : up
            // A counted reference moved only if its level moved past the
            // tolerance; ranks would read its jitter as a move.
            let referenceMoved =
                matching.count == 1 && CountedLevels.repeats(matching[0].values)
                ? CountedLevels.moved(matching[0].values, at: night, span: span)
                : pooledTest(reference, at: night, span: span, up: referenceUp) <= alpha
            if referenceMoved {
                return (.machine, "the reference moved at position \(night + 1) ± 1")
            }
        }
        let others = hosts.indices.filter { $0 != host }.compactMap { index in
            hosts[index].metrics.first { $0.name == name }.map { (hosts[index].host, $0.values) }
        }
        if !others.isEmpty {
            let moved = others.filter { pooledTest([$0.1], at: night, span: span, up: up) <= alpha }
            if moved.count == others.count {
                let still = home.reference.isEmpty ? "" : "; the reference did not move"
                return (.code, "on every host at position \(night + 1) ± 1\(still)")
            }
            if moved.isEmpty {
                return (
                    .machine,
                    "on \(home.host) only; \(others.count) other host\(others.count == 1 ? "" : "s") did not move"
                )
            }
            return (.undetermined, "on \(moved.count + 1) of \(others.count + 1) hosts")
        }
        if counted, matching.isEmpty {
            return (
                .undetermined,
                "counted work, which the machine's speed does not move, on one host with no reference counted"
            )
        }
        if reference != nil {
            return (.code, "the reference did not move at position \(night + 1) ± 1")
        }
        return (.undetermined, "one host and no reference")
    }

    /// The one-sided p-value that `series` moved up (or down) at `night` ± 1
    /// over the nights of `span`: Stouffer's sum of their standardized
    /// Mann–Whitney statistics at the best of the three splits, times 3.
    static func pooledTest(_ series: [[Double]], at night: Int, span: Range<Int>, up: Bool) -> Double {
        guard !series.isEmpty else { return 1 }
        var best = -Double.infinity
        for split in (night - 1)...(night + 1) where split > span.lowerBound && split < span.upperBound {
            let sum = series.reduce(0.0) { total, values in
                let clamped = span.clamped(to: 0..<values.count)
                return total + RankScan.splitStatistic(values[clamped], split: split - clamped.lowerBound)
            }
            let z = (up ? sum : -sum) / Double(series.count).squareRoot()
            best = max(best, z)
        }
        guard best.isFinite else { return 1 }
        return min(1, 3 * NormalDistribution.survival(best))
    }

    /// Throws when hosts repeat a name or their series are not aligned.
    private static func validate(_ hosts: [HostHistory]) throws(SeriesAnalysisError) {
        var names = Set<String>()
        var nights: Int?
        for host in hosts {
            guard names.insert(host.host).inserted else { throw .duplicateHost(host.host) }
            for series in host.metrics + host.reference {
                try series.validate()
                if let nights, series.values.count != nights {
                    throw .lengthMismatch(
                        host: host.host, metric: series.name, expected: nights, found: series.values.count)
                }
                nights = nights ?? series.values.count
            }
        }
    }
}
