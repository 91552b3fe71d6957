import Foundation

/// Quantile sketches merged with a weight each: the pooled distribution of
/// sessions that stand for different numbers of sessions of the population.
///
/// A session admitted with probability `π` stands for `1/π` sessions
/// (Horvitz and Thompson 1952), so a fleet whose sessions were sampled at
/// different rates is described by the merge of their sketches each weighted
/// by `1/π`, not by their plain merge. The buckets are those of
/// ``QuantileSketch`` with the same accuracy, each holding a weight rather
/// than a count; a weight is a frequency (merging a sketch with weight 2
/// answers as merging it twice), and with every weight 1 every answer is
/// exactly the plain merge's. The minimum and maximum are those of the
/// sketches merged with a positive weight.
public struct WeightedQuantileSketch: Sendable, Hashable {
    /// The relative accuracy `α` of the merged sketches.
    public var relativeAccuracy: Double { layout.relativeAccuracy }
    /// The weighted count: each merged sketch's count times its weight.
    public private(set) var totalWeight = 0.0
    /// The smallest value of the sketches merged with a positive weight.
    public private(set) var minimum = Double.infinity
    /// The largest value of the sketches merged with a positive weight.
    public private(set) var maximum = -Double.infinity

    /// An empty sketch: it maps values to buckets, so this one does too.
    private let layout: QuantileSketch
    private var positive = WeightedBucketStore()
    private var negative = WeightedBucketStore()
    private var zeroWeight = 0.0

    /// An empty merge of sketches of accuracy `relativeAccuracy`.
    public init(relativeAccuracy: Double = QuantileSketch.defaultRelativeAccuracy) {
        layout = QuantileSketch(relativeAccuracy: relativeAccuracy)
    }

    /// Whether nothing of positive weight was merged.
    public var isEmpty: Bool { totalWeight == 0 }

    /// Adds every value of `sketch`, each counting `weight` times. The
    /// sketch must have this accuracy, and the weight must be finite and not
    /// negative.
    public mutating func merge(_ sketch: QuantileSketch, weight: Double = 1) {
        precondition(sketch.relativeAccuracy == relativeAccuracy, "sketches of different accuracy do not merge")
        precondition(weight.isFinite && weight >= 0, "a weight must be finite and not negative")
        guard sketch.count > 0, weight > 0 else { return }
        totalWeight += Double(sketch.count) * weight
        minimum = Swift.min(minimum, sketch.minimum)
        maximum = Swift.max(maximum, sketch.maximum)
        zeroWeight += Double(sketch.zeroCount) * weight
        positive.merge(sketch.positive, weight: weight)
        negative.merge(sketch.negative, weight: weight)
    }

    /// The `q` quantile (0 ≤ q ≤ 1), read as ``QuantileSketch/quantile(_:)``
    /// reads it with the weights in place of counts: the bucket holding the
    /// weighted rank `q·(totalWeight − 1)`, clamped to the minimum and
    /// maximum; NaN when empty.
    public func quantile(_ q: Double) -> Double {
        guard totalWeight > 0 else { return .nan }
        let rank = Swift.max(0, Swift.min(Swift.max(q, 0), 1) * (totalWeight - 1))
        var seen = 0.0
        for (index, weight) in negative.descending() {
            seen += weight
            if seen > rank { return clamp(-layout.value(ofBucket: index)) }
        }
        seen += zeroWeight
        if seen > rank { return clamp(0) }
        for (index, weight) in positive.ascending() {
            seen += weight
            if seen > rank { return clamp(layout.value(ofBucket: index)) }
        }
        return maximum
    }

    /// The `q` quantile placed inside its bucket, as
    /// ``QuantileSketch/interpolatedQuantile(_:)`` places it, with weights in
    /// place of counts.
    public func interpolatedQuantile(_ q: Double) -> Double {
        guard totalWeight > 0 else { return .nan }
        let rank = Swift.max(0, Swift.min(Swift.max(q, 0), 1) * (totalWeight - 1))
        let below = negative.total + zeroWeight
        guard rank >= below else { return quantile(q) }
        var seen = below
        for (index, weight) in positive.ascending() {
            let next = seen + weight
            if next > rank {
                let within = (rank - seen + 0.5) / weight
                return clamp(Foundation.pow(layout.gamma, Double(index) - 1 + within))
            }
            seen = next
        }
        return maximum
    }

    /// The weight of the values at most `value`, counting whole buckets as
    /// ``QuantileSketch/count(atMost:)`` does.
    public func weight(atMost value: Double) -> Double {
        guard totalWeight > 0 else { return 0 }
        if value < -QuantileSketch.smallestMagnitude {
            let limit = layout.index(of: -value)
            return negative.descending().reduce(0) { $1.0 >= limit ? $0 + $1.1 : $0 }
        }
        let below = negative.total + zeroWeight
        guard value > QuantileSketch.smallestMagnitude else { return below }
        return below + positive.total(upTo: layout.index(of: value))
    }

    /// An empty merge with this one's buckets already in place, so that
    /// merging sketches of no wider range grows nothing.
    package func emptied() -> WeightedQuantileSketch {
        var empty = self
        empty.totalWeight = 0
        empty.minimum = .infinity
        empty.maximum = -.infinity
        empty.zeroWeight = 0
        for index in empty.positive.weights.indices { empty.positive.weights[index] = 0 }
        for index in empty.negative.weights.indices { empty.negative.weights[index] = 0 }
        return empty
    }

    private func clamp(_ value: Double) -> Double { Swift.min(Swift.max(value, minimum), maximum) }
}

/// Weights by bucket index, dense from the smallest index in use.
private struct WeightedBucketStore: Sendable, Hashable {
    var offset: Int32 = 0
    var weights: [Double] = []

    var total: Double { weights.reduce(0, +) }

    /// The weight of buckets with an index up to `limit`.
    func total(upTo limit: Int32) -> Double {
        guard !weights.isEmpty, limit >= offset else { return 0 }
        let end = Swift.min(weights.count, Int(limit - offset) + 1)
        var sum = 0.0
        for position in 0..<end { sum += weights[position] }
        return sum
    }

    mutating func merge(_ store: BucketStore, weight: Double) {
        guard !store.counts.isEmpty else { return }
        let first = store.offset
        let last = store.offset + Int32(store.counts.count - 1)
        if weights.isEmpty {
            offset = first
            weights = [Double](repeating: 0, count: store.counts.count)
        } else {
            if first < offset {
                weights.insert(contentsOf: repeatElement(0, count: Int(offset - first)), at: 0)
                offset = first
            }
            if Int(last - offset) >= weights.count {
                weights.append(contentsOf: repeatElement(0, count: Int(last - offset) - weights.count + 1))
            }
        }
        let shift = Int(first - offset)
        for (position, count) in store.counts.enumerated() where count > 0 {
            weights[shift + position] += Double(count) * weight
        }
    }

    func ascending() -> some Sequence<(Int32, Double)> {
        weights.enumerated().lazy.filter { $0.element > 0 }.map { (offset + Int32($0.offset), $0.element) }
    }

    func descending() -> some Sequence<(Int32, Double)> {
        weights.enumerated().reversed().lazy.filter { $0.element > 0 }.map { (offset + Int32($0.offset), $0.element) }
    }
}
