import StrobeResults
import StrobeStatistics

/// What the statistics use of one metric of one run: a value per process.
///
/// A run is one process, so its iterations make one replicate; a run whose
/// samples are launches (`strobe run`) holds a replicate per launch. Each
/// replicate is summarised both ways ``ReplicateSummary`` knows. The rule
/// is `strobe diff`'s own: the replicates come from
/// ``ReplicatePool/replicates(of:in:process:)`` and are pooled by a
/// ``ReplicatePool``, as the diff pools them.
public struct MetricSummary: Sendable, Hashable {
    /// The median iteration of each replicate, in the run's order.
    public var medians: [Double]
    /// The fastest (smallest) iteration of each replicate, in the same order.
    public var minimums: [Double]

    /// Summaries of the given replicates.
    public init(medians: [Double], minimums: [Double]) {
        self.medians = medians
        self.minimums = minimums
    }

    /// Each replicate's value under `summary`.
    public func values(_ summary: ReplicateSummary) -> [Double] {
        switch summary {
        case .median: return medians
        case .minimum: return minimums
        }
    }

    /// The median of the processes' medians, the one number a query
    /// without Strobe reads; nil without samples.
    package var centralValue: Double? {
        medians.isEmpty ? nil : Quantiles.median(sorted: medians.sorted())
    }

    /// The summaries of every metric of `run`, by test then metric; a
    /// metric without samples has none. `replicateName` names the run's
    /// process (its key). A metric listed twice in a test pools the
    /// samples of both, as ``ReplicatePool`` pools a diff's series.
    static func summaries(of run: PerfRun, replicateName: String) -> [[MetricSummary]] {
        var pools: [String: ReplicatePool] = [:]
        for test in run.tests {
            for metric in test.metrics {
                for replicate in ReplicatePool.replicates(of: metric, in: run.metadata, process: replicateName) {
                    pools["\(test.name)/\(metric.name)", default: ReplicatePool()].add(replicate)
                }
            }
        }
        return run.tests.map { test in
            test.metrics.map { metric in
                let replicates = pools["\(test.name)/\(metric.name)"]?.replicates ?? []
                return MetricSummary(
                    medians: replicates.map { ReplicateSummary.median.value(of: $0.samples) },
                    minimums: replicates.map { ReplicateSummary.minimum.value(of: $0.samples) })
            }
        }
    }
}
