import StrobeResults

/// Series of samples pooled into replicates, one per process: the series of
/// one process are joined into one replicate, and replicates keep the order
/// in which their processes first appeared.
///
/// `strobe diff` pools each metric's series this way, and the run history
/// summarises a stored run's metrics with the same pooling, so that both
/// see the same replicates in a run.
public struct ReplicatePool: Sendable, Hashable {
    /// The replicates, in the order their processes first appeared.
    public private(set) var replicates: [Replicate] = []
    private var positions: [String: Int] = [:]

    /// An empty pool.
    public init() {}

    /// Adds `samples` of the process named `process` (run in `round`, if
    /// the comparison was interleaved) to that process's replicate.
    public mutating func add(_ samples: [Double], process: String, round: Int?) {
        if let position = positions[process] {
            replicates[position].samples += samples
        } else {
            positions[process] = replicates.count
            replicates.append(Replicate(id: process, round: round, samples: samples))
        }
    }

    /// Adds the samples of `replicate` to the replicate of its process.
    public mutating func add(_ replicate: Replicate) {
        add(replicate.samples, process: replicate.id, round: replicate.round)
    }

    /// The replicates of `metric` as one run measured it, `process` naming
    /// the run's process: one replicate of every sample, or, when the run's
    /// samples are launches (`strobe run`), a replicate per launch, named
    /// `process#0`, `process#1`, …. A metric without samples has none.
    public static func replicates(of metric: PerfMetric, in run: RunMetadata, process: String) -> [Replicate] {
        guard !metric.samples.isEmpty else { return [] }
        guard run.samplesAreLaunches else { return [Replicate(id: process, round: run.round, samples: metric.samples)] }
        return metric.samples.enumerated().map { index, sample in
            Replicate(id: "\(process)#\(index)", round: run.round, samples: [sample])
        }
    }
}
