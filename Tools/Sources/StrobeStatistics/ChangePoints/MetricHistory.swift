import StrobeResults

/// One metric's history: one value per run, runs in commit order.
///
/// A run is one process, and its value is that process's summary of the
/// metric (the median of its iterations, say): the process is the replicate,
/// so the iterations of one process never count as independent samples.
public struct MetricHistory: Sendable, Hashable, Codable {
    /// The metric's name, as reports show it.
    public var name: String
    /// One value per run, oldest first. Every value must be finite and
    /// positive (changes are ratios, estimated on logs).
    public var values: [Double]
    /// Which way the metric gets better: `.lower` for times and bytes,
    /// `.higher` for rates.
    public var better: MetricDirection
    /// The smallest relative change worth reporting (0.02 = 2%): a step no
    /// larger than this is never reported, however significant.
    public var relativeFloor: Double

    /// A history of `values`, one per run, oldest first.
    public init(name: String, values: [Double], better: MetricDirection = .lower, relativeFloor: Double = 0) {
        self.name = name
        self.values = values
        self.better = better
        self.relativeFloor = relativeFloor
    }

    /// Throws when the history cannot be analysed: no runs, a value that is
    /// not finite or not positive, or a floor that is negative or not finite.
    func validate() throws(SeriesAnalysisError) {
        guard !values.isEmpty else { throw .emptySeries(metric: name) }
        for (run, value) in values.enumerated() {
            guard value.isFinite else { throw .notFinite(metric: name, run: run) }
            guard value > 0 else { throw .notPositive(metric: name, run: run, value: value) }
        }
        guard relativeFloor.isFinite, relativeFloor >= 0 else {
            throw .invalidFloor(metric: name, floor: relativeFloor)
        }
    }
}

/// Why a series of runs could not be analysed for steps (bad values,
/// options or host series), as opposed to `StrobeHistory`'s errors of
/// the store.
public enum SeriesAnalysisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The metric has no runs.
    case emptySeries(metric: String)
    /// The value of a run is NaN or infinite.
    case notFinite(metric: String, run: Int)
    /// The value of a run is zero or negative: its logarithm is undefined.
    case notPositive(metric: String, run: Int, value: Double)
    /// The relative floor is negative or not finite.
    case invalidFloor(metric: String, floor: Double)
    /// A series of a host does not have one value per night of the others.
    case lengthMismatch(host: String, metric: String, expected: Int, found: Int)
    /// Two hosts share a name.
    case duplicateHost(String)
    /// An option is out of its range.
    case invalidOption(name: String, value: Double, expected: String)

    /// A sentence naming the metric, the run or the option at fault.
    public var description: String {
        switch self {
        case .emptySeries(let metric):
            "metric \"\(metric)\": the history has no runs"
        case .notFinite(let metric, let run):
            "metric \"\(metric)\", run \(run): the value is not a finite number"
        case .notPositive(let metric, let run, let value):
            "metric \"\(metric)\", run \(run): the value \(value) is not positive (changes are ratios, taken on logs)"
        case .invalidFloor(let metric, let floor):
            "metric \"\(metric)\": the relative floor \(floor) must be a finite number of at least 0"
        case .lengthMismatch(let host, let metric, let expected, let found):
            "host \"\(host)\", metric \"\(metric)\": \(found) runs where the other series have \(expected) (series "
                + "must be aligned by night)"
        case .duplicateHost(let host):
            "host \"\(host)\" appears twice"
        case .invalidOption(let name, let value, let expected):
            "option \(name) = \(value): expected \(expected)"
        }
    }
}
