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

    /// A host's metrics and its reference series.
    public init(host: String, metrics: [MetricHistory], reference: [MetricHistory] = []) {
        self.host = host
        self.metrics = metrics
        self.reference = reference
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
}

/// Tells the code's steps from the machine's, across hosts and against a
/// reference measured in the same nightly job.
///
/// Every host's metrics are searched for steps as one family
/// (``StepDetector``). A step of host h at night i is then judged by
/// targeted tests: did another series move at night i ± 1, in the same
/// direction, over the same nights? (The standardized Mann–Whitney
/// statistic at the best of the three splits, one-sided, Bonferroni ×3, at
/// `alpha`; several series are pooled with Stouffer's sum.)
///
/// 1. **The whole suite.** When the host's metrics moved together (their
///    pooled test is significant and at least 80% of them moved the same
///    way) and the pooled reference moved the same way, every step of the
///    host at that night is the machine's.
/// 2. **The reference.** When the reference series of the same metric (or,
///    without one, the whole reference) moved with the step: the machine's.
/// 3. **The other hosts.** On every other host as well: the code's; on none:
///    the machine's; on some: undetermined.
/// 4. **One host.** With a reference that stayed put: the code's; with no
///    reference: undetermined.
public enum StepAttribution {
    /// The share of a host's metrics that must move the same way for the
    /// whole suite to count as moved.
    public static let suiteShare = 0.8

    /// The steps of every host, each with its cause.
    ///
    /// - Throws: ``HistoryError`` for a series that cannot be analysed, a
    ///   series whose length differs from the others', or two hosts of one name.
    public static func attribute(
        _ hosts: [HostHistory], options: StepDetectionOptions = StepDetectionOptions()
    ) throws(HistoryError) -> [AttributedStep] {
        try validate(hosts)
        let all = hosts.flatMap(\.metrics)
        let report = try StepDetector.detect(all, options: options)
        var offset = 0
        var result: [AttributedStep] = []
        for (hostIndex, host) in hosts.enumerated() {
            let series = report.series[offset..<(offset + host.metrics.count)]
            offset += host.metrics.count
            for (metricIndex, found) in zip(host.metrics.indices, series) {
                for step in found.steps {
                    let (cause, reason) = classify(
                        step, metric: metricIndex, host: hostIndex, hosts: hosts, alpha: options.alpha)
                    result.append(AttributedStep(host: host.host, step: step, cause: cause, reason: reason))
                }
            }
        }
        return result
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
        if let suite = suiteShift(home.metrics.map(\.values), at: night, span: span, alpha: alpha),
           !home.reference.isEmpty,
           pooledTest(home.reference.map(\.values), at: night, span: span, up: suite.up) <= alpha
        {
            return (.machine, "every metric of \(home.host) moved at run \(night) and the reference moved with them")
        }
        if !home.reference.isEmpty {
            let matching = home.reference.filter { $0.name == name }
            let reference = (matching.isEmpty ? home.reference : matching).map(\.values)
            if pooledTest(reference, at: night, span: span, up: up) <= alpha {
                return (.machine, "the reference moved at run \(night) ± 1")
            }
        }
        let others = hosts.indices.filter { $0 != host }.compactMap { index in
            hosts[index].metrics.first { $0.name == name }.map { (hosts[index].host, $0.values) }
        }
        if !others.isEmpty {
            let moved = others.filter { pooledTest([$0.1], at: night, span: span, up: up) <= alpha }
            if moved.count == others.count {
                let still = home.reference.isEmpty ? "" : "; the reference did not move"
                return (.code, "on every host at run \(night) ± 1\(still)")
            }
            if moved.isEmpty {
                return (.machine, "on \(home.host) only; \(others.count) other host\(others.count == 1 ? "" : "s") did not move")
            }
            return (.undetermined, "on \(moved.count + 1) of \(others.count + 1) hosts")
        }
        if !home.reference.isEmpty {
            return (.code, "the reference did not move at run \(night) ± 1")
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

    /// Whether the metrics of a host moved together at `night` ± 1: their
    /// pooled test in the direction most of them moved is significant, and
    /// at least ``suiteShare`` of them moved that way.
    static func suiteShift(_ series: [[Double]], at night: Int, span: Range<Int>, alpha: Double) -> (up: Bool, share: Double)? {
        guard series.count >= 2 else { return nil }
        var best: (up: Bool, share: Double, p: Double)?
        for split in (night - 1)...(night + 1) where split > span.lowerBound && split < span.upperBound {
            let statistics = series.map { values in
                let clamped = span.clamped(to: 0..<values.count)
                return RankScan.splitStatistic(values[clamped], split: split - clamped.lowerBound)
            }
            let up = statistics.filter { $0 > 0 }.count * 2 >= statistics.count
            let share = Double(statistics.filter { up ? $0 > 0 : $0 < 0 }.count) / Double(statistics.count)
            let sum = statistics.reduce(0, +)
            let p = min(1, 3 * NormalDistribution.survival((up ? sum : -sum) / Double(statistics.count).squareRoot()))
            if best == nil || p < best!.p { best = (up, share, p) }
        }
        guard let best, best.p <= alpha, best.share >= suiteShare else { return nil }
        return (best.up, best.share)
    }

    /// Throws when hosts repeat a name or their series are not aligned.
    private static func validate(_ hosts: [HostHistory]) throws(HistoryError) {
        var names = Set<String>()
        var nights: Int?
        for host in hosts {
            guard names.insert(host.host).inserted else { throw .duplicateHost(host.host) }
            for series in host.metrics + host.reference {
                try series.validate()
                if let nights, series.values.count != nights {
                    throw .lengthMismatch(host: host.host, metric: series.name, expected: nights, found: series.values.count)
                }
                nights = nights ?? series.values.count
            }
        }
    }
}
