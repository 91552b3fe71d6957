import Foundation
import StrobeResults
import StrobeStatistics

extension ComparisonEngine {
    /// One metric's replicates on both sides, and the rules it is judged by.
    public struct Input: Sendable, Hashable {
        /// The metric's name.
        public var name: String
        /// The group (`--group-by` value), or "".
        public var group: String
        /// Its unit.
        public var unit: String
        /// Which way the metric gets better.
        public var better: MetricDirection
        /// Baseline replicates (processes).
        public var baseline: [Replicate]
        /// Candidate replicates (processes).
        public var candidate: [Replicate]
        /// The relative floor; nil takes the options' `minimumEffect`.
        public var relativeFloor: Double?
        /// Changes no larger than this, in the metric's unit, are never
        /// flagged; it alone judges metrics with no spread or a zero baseline.
        public var absoluteFloor: Double
        /// Whether a regression of this metric fails the comparison.
        public var gates: Bool
        /// How each replicate's iterations are summarised.
        public var summary: ReplicateSummary
        /// Whether the metric is an exact count (see
        /// ``MetricComparison/isCount``). A count that varies is compared by
        /// the mean of each replicate's iterations.
        public var isCount: Bool
        /// For a counted metric that repeats from process to process only up
        /// to a small relative spread (instructions): the spread (`max / min
        /// − 1` over a side's samples) up to which it is judged as a
        /// deterministic count, by the relative difference of the sides'
        /// centers against the relative floor, at once. A side that spreads
        /// wider is tested like any metric, with a warning. Nil for other
        /// metrics.
        public var countTolerance: Double?

        /// An input of replicates.
        public init(
            name: String, group: String = "", unit: String, better: MetricDirection, baseline: [Replicate],
            candidate: [Replicate], relativeFloor: Double? = nil, absoluteFloor: Double = 0, gates: Bool = true,
            summary: ReplicateSummary = .median, isCount: Bool = false, countTolerance: Double? = nil
        ) {
            self.isCount = isCount
            self.countTolerance = countTolerance
            self.name = name
            self.group = group
            self.unit = unit
            self.better = better
            self.baseline = baseline
            self.candidate = candidate
            self.relativeFloor = relativeFloor
            self.absoluteFloor = absoluteFloor
            self.gates = gates
            self.summary = summary
        }

        /// An input whose sides are one process each.
        public init(
            name: String, group: String = "", unit: String, better: MetricDirection, baseline: [Double],
            candidate: [Double]
        ) {
            self.init(
                name: name, group: group, unit: unit, better: better,
                baseline: [Replicate(id: "baseline", samples: baseline)],
                candidate: [Replicate(id: "candidate", samples: candidate)])
        }
    }
}
