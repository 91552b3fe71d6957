/// What a bucket of a quantile sketch holds: a count (``QuantileSketch``)
/// or a weight (``WeightedQuantileSketch``).
protocol BucketValue: Sendable, Hashable, Comparable {
    /// Nothing in the bucket.
    static var zero: Self { get }
    /// Adds `amount` to `total`; counts wrap instead of trapping, as the
    /// sketch's own count does.
    static func accumulate(_ total: inout Self, _ amount: Self)
}

extension UInt64: BucketValue {
    static func accumulate(_ total: inout UInt64, _ amount: UInt64) { total &+= amount }
}

extension Double: BucketValue {
    static func accumulate(_ total: inout Double, _ amount: Double) { total += amount }
}

/// Counts (or weights) by bucket index, dense from the smallest index in
/// use: the buckets of one sign of a quantile sketch.
struct BucketStore<Value: BucketValue>: Sendable, Hashable {
    /// The index of the first bucket held.
    var offset: Int32 = 0
    /// What each bucket holds, from ``offset`` on.
    var values: [Value] = []

    /// Everything held.
    var total: Value { sum(values.indices) }

    /// What the buckets with an index up to `limit` hold.
    func total(upTo limit: Int32) -> Value {
        guard !values.isEmpty, limit >= offset else { return .zero }
        return sum(0..<Swift.min(values.count, Int(limit - offset) + 1))
    }

    /// How many buckets hold something.
    var occupied: Int { values.lazy.filter { $0 > .zero }.count }

    /// Adds `amount` to bucket `index`.
    mutating func add(_ index: Int32, _ amount: Value) {
        cover(index, index)
        Value.accumulate(&values[Int(index - offset)], amount)
    }

    /// Adds to each bucket what the same bucket of `other` holds, converted
    /// by `convert` (the identity for a count, times a weight for a
    /// weighted merge).
    mutating func merge<Other: BucketValue>(_ other: BucketStore<Other>, _ convert: (Other) -> Value) {
        guard !other.values.isEmpty else { return }
        cover(other.offset, other.offset + Int32(other.values.count - 1))
        let shift = Int(other.offset - offset)
        for (position, value) in other.values.enumerated() where value > .zero {
            Value.accumulate(&values[shift + position], convert(value))
        }
    }

    /// Every bucket that holds something, by increasing index.
    func ascending() -> some Sequence<(Int32, Value)> {
        values.enumerated().lazy.filter { $0.element > .zero }.map { (offset + Int32($0.offset), $0.element) }
    }

    /// Every bucket that holds something, by decreasing index.
    func descending() -> some Sequence<(Int32, Value)> {
        values.enumerated().reversed().lazy.filter { $0.element > .zero }.map {
            (offset + Int32($0.offset), $0.element)
        }
    }

    /// The same buckets, each emptied.
    func emptied() -> BucketStore {
        BucketStore(offset: offset, values: [Value](repeating: .zero, count: values.count))
    }

    /// Makes the dense range hold the indices `first` through `last`.
    private mutating func cover(_ first: Int32, _ last: Int32) {
        if values.isEmpty {
            offset = first
            values = [Value](repeating: .zero, count: Int(last - first) + 1)
            return
        }
        if first < offset {
            values.insert(contentsOf: repeatElement(.zero, count: Int(offset - first)), at: 0)
            offset = first
        }
        if Int(last - offset) >= values.count {
            values.append(contentsOf: repeatElement(.zero, count: Int(last - offset) - values.count + 1))
        }
    }

    private func sum(_ positions: Range<Int>) -> Value {
        var sum = Value.zero
        for position in positions { Value.accumulate(&sum, values[position]) }
        return sum
    }
}
