import Foundation

/// A mergeable quantile sketch with a relative-error guarantee, after
/// DDSketch (Masson, Rim and Lee, VLDB 2019).
///
/// A positive value `x` goes to bucket `ceil(log_γ(x))` with
/// `γ = (1 + α) / (1 − α)`; the bucket's estimate `2γ^i / (γ + 1)` is within
/// `α` of every value the bucket holds, relatively. The `q` quantile read
/// from the sketch is therefore within `α` of the sample's order statistic of
/// rank `q·(n − 1)`, whatever the distribution and whatever the range, and
/// merging two sketches (adding their bucket counts) gives exactly the sketch
/// of the pooled samples, so the guarantee holds for any merge of per-session
/// sketches. Negative values go to a mirrored set of buckets and zero to a
/// count of its own; the count, sum, minimum and maximum are kept exactly.
///
/// Why not HdrHistogram: it needs the highest trackable value in advance and
/// guarantees its precision as significant digits over that range, while a
/// fleet's durations span nanoseconds to minutes and counters have any
/// range; DDSketch's relative error holds over any range with buckets taken
/// only where values fall, which keeps a session's sketch to a few hundred
/// bytes serialized (``serialized()``).
public struct QuantileSketch: Sendable, Hashable {
    /// The relative accuracy `α` of every quantile.
    public let relativeAccuracy: Double
    /// Values added.
    public private(set) var count: UInt64 = 0
    /// Their sum.
    public private(set) var sum: Double = 0
    /// The smallest value added (+∞ when empty).
    public private(set) var minimum: Double = .infinity
    /// The largest value added (−∞ when empty).
    public private(set) var maximum: Double = -.infinity

    let gamma: Double
    private let inverseLogGamma: Double
    /// Buckets of positive values, and of the magnitudes of negative ones.
    private(set) var positive = BucketStore()
    private(set) var negative = BucketStore()
    private(set) var zeroCount: UInt64 = 0

    /// The default accuracy: quantiles within 0.5% of the order statistic.
    public static let defaultRelativeAccuracy = 0.005

    /// Values closer to zero than this count as zero.
    static let smallestMagnitude = 1e-9

    /// An empty sketch whose quantiles are within `relativeAccuracy` (0 < α < 1).
    public init(relativeAccuracy: Double = defaultRelativeAccuracy) {
        precondition(relativeAccuracy > 0 && relativeAccuracy < 1, "relativeAccuracy must be in (0, 1)")
        self.relativeAccuracy = relativeAccuracy
        gamma = (1 + relativeAccuracy) / (1 - relativeAccuracy)
        inverseLogGamma = 1 / Foundation.log(gamma)
    }

    /// Whether no value was added.
    public var isEmpty: Bool { count == 0 }

    /// The mean, or NaN when empty.
    public var mean: Double { count == 0 ? .nan : sum / Double(count) }

    /// Adds `value` `times` times. NaN and infinities are ignored.
    public mutating func add(_ value: Double, times: UInt64 = 1) {
        guard value.isFinite, times > 0 else { return }
        count &+= times
        sum += value * Double(times)
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
        if value > Self.smallestMagnitude {
            positive.add(index(of: value), times)
        } else if value < -Self.smallestMagnitude {
            negative.add(index(of: -value), times)
        } else {
            zeroCount &+= times
        }
    }

    /// Adds every value of `other`, which must have the same accuracy.
    public mutating func merge(_ other: QuantileSketch) {
        precondition(other.relativeAccuracy == relativeAccuracy, "sketches of different accuracy do not merge")
        guard other.count > 0 else { return }
        count &+= other.count
        sum += other.sum
        minimum = Swift.min(minimum, other.minimum)
        maximum = Swift.max(maximum, other.maximum)
        zeroCount &+= other.zeroCount
        positive.merge(other.positive)
        negative.merge(other.negative)
    }

    /// The `q` quantile (0 ≤ q ≤ 1): within ``relativeAccuracy`` of the
    /// order statistic of rank `q·(count − 1)`, clamped to the minimum and
    /// maximum; NaN when empty.
    public func quantile(_ q: Double) -> Double {
        guard count > 0 else { return .nan }
        let rank = Swift.min(Swift.max(q, 0), 1) * Double(count - 1)
        var seen: UInt64 = 0
        // Negative values, largest magnitude (most negative) first.
        for (index, bucketCount) in negative.descending() {
            seen &+= bucketCount
            if Double(seen) > rank { return clamp(-value(ofBucket: index)) }
        }
        seen &+= zeroCount
        if Double(seen) > rank { return clamp(0) }
        for (index, bucketCount) in positive.ascending() {
            seen &+= bucketCount
            if Double(seen) > rank { return clamp(value(ofBucket: index)) }
        }
        return maximum
    }

    /// The `q` quantile placed inside its bucket: where the rank falls among
    /// the bucket's values, spread evenly on a log scale between the
    /// bucket's bounds. Within a bucket of ``quantile(_:)``'s answer, so
    /// within about 2α of the order statistic; between buckets it moves
    /// smoothly with `q`, which suits the ends of an interval. Negative values
    /// and zero are answered as by ``quantile(_:)``.
    public func interpolatedQuantile(_ q: Double) -> Double {
        guard count > 0 else { return .nan }
        let rank = Swift.min(Swift.max(q, 0), 1) * Double(count - 1)
        let below = Double(negative.total &+ zeroCount)
        guard rank >= below else { return quantile(q) }
        var seen = below
        for (index, bucketCount) in positive.ascending() {
            let next = seen + Double(bucketCount)
            if next > rank {
                let within = (rank - seen + 0.5) / Double(bucketCount)
                return clamp(Foundation.pow(gamma, Double(index) - 1 + within))
            }
            seen = next
        }
        return maximum
    }

    /// How many values are at most `value`, counting whole buckets: a value
    /// in the bucket of `value` counts, so that this is consistent with
    /// ``quantile(_:)``, whose answers are bucket values.
    public func count(atMost value: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        if value < -Self.smallestMagnitude {
            let limit = index(of: -value)
            return negative.ascending().reduce(0) { $1.0 >= limit ? $0 &+ $1.1 : $0 }
        }
        let below = negative.total &+ zeroCount
        guard value > Self.smallestMagnitude else { return below }
        let limit = index(of: value)
        return below &+ positive.total(upTo: limit)
    }

    /// How many values are in buckets below the bucket of `value`: those
    /// ``count(atMost:)`` counts, without the bucket of `value`.
    public func count(below value: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        if value < -Self.smallestMagnitude {
            let limit = index(of: -value)
            return negative.ascending().reduce(0) { $1.0 > limit ? $0 &+ $1.1 : $0 }
        }
        guard value > Self.smallestMagnitude else { return negative.total }
        return negative.total &+ zeroCount &+ positive.total(upTo: index(of: value) - 1)
    }

    /// Buckets holding values, both signs: a measure of the sketch's size.
    var bucketCount: Int { positive.occupied + negative.occupied + (zeroCount > 0 ? 1 : 0) }

    private func clamp(_ value: Double) -> Double { Swift.min(Swift.max(value, minimum), maximum) }

    func index(of magnitude: Double) -> Int32 {
        Int32((Foundation.log(magnitude) * inverseLogGamma).rounded(.up))
    }

    func value(ofBucket index: Int32) -> Double {
        2 * Foundation.pow(gamma, Double(index)) / (gamma + 1)
    }

    // MARK: Serialization

    /// The first byte of a serialized sketch.
    static let formatVersion: UInt8 = 1

    /// The sketch as bytes: a version byte, the accuracy, the count, sum,
    /// minimum and maximum, the zero count, then each store as a run of
    /// (index delta, count) varints.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = [Self.formatVersion]
        out.reserveCapacity(64 + 4 * bucketCount)
        for double in [relativeAccuracy, sum, minimum, maximum] { appendFixed(double.bitPattern, to: &out) }
        appendVarint(count, to: &out)
        appendVarint(zeroCount, to: &out)
        positive.serialize(to: &out)
        negative.serialize(to: &out)
        return out
    }

    /// Reads a sketch written by ``serialized()``.
    ///
    /// - Throws: ``QuantileSketchError`` naming the byte offset of what is
    ///   wrong.
    public init(serialized bytes: some Collection<UInt8>) throws(QuantileSketchError) {
        var reader = SketchByteReader(bytes: Array(bytes))
        let version = try reader.byte("the version")
        guard version == Self.formatVersion else {
            throw QuantileSketchError(offset: 0, problem: "format version \(version), expected \(Self.formatVersion)")
        }
        let accuracy = Double(bitPattern: try reader.fixed("the accuracy"))
        guard accuracy > 0, accuracy < 1 else {
            throw QuantileSketchError(offset: 1, problem: "relative accuracy \(accuracy) is not in (0, 1)")
        }
        self.init(relativeAccuracy: accuracy)
        sum = Double(bitPattern: try reader.fixed("the sum"))
        minimum = Double(bitPattern: try reader.fixed("the minimum"))
        maximum = Double(bitPattern: try reader.fixed("the maximum"))
        count = try reader.varint("the count")
        zeroCount = try reader.varint("the zero count")
        positive = try BucketStore(reading: &reader)
        negative = try BucketStore(reading: &reader)
        guard reader.offset == reader.bytes.count else {
            throw QuantileSketchError(
                offset: reader.offset, problem: "\(reader.bytes.count - reader.offset) bytes after the sketch")
        }
        guard zeroCount &+ positive.total &+ negative.total == count else {
            throw QuantileSketchError(offset: 0, problem: "bucket counts do not add up to the count \(count)")
        }
    }
}

/// A serialized ``QuantileSketch`` that cannot be read.
public struct QuantileSketchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the bytes.
    public var offset: Int
    /// What is wrong.
    public var problem: String

    /// `quantile sketch, byte N: problem`.
    public var description: String { "quantile sketch, byte \(offset): \(problem)" }
}

/// Counts by bucket index, dense from the smallest index in use.
struct BucketStore: Sendable, Hashable {
    var offset: Int32 = 0
    var counts: [UInt64] = []

    var total: UInt64 { counts.reduce(0, &+) }

    /// The count of buckets with an index up to `limit`.
    func total(upTo limit: Int32) -> UInt64 {
        guard !counts.isEmpty, limit >= offset else { return 0 }
        let end = Swift.min(counts.count, Int(limit - offset) + 1)
        var sum: UInt64 = 0
        for position in 0..<end { sum &+= counts[position] }
        return sum
    }
    var occupied: Int { counts.lazy.filter { $0 > 0 }.count }

    mutating func add(_ index: Int32, _ times: UInt64) {
        if counts.isEmpty {
            offset = index
            counts = [times]
            return
        }
        if index < offset {
            counts.insert(contentsOf: repeatElement(0, count: Int(offset - index)), at: 0)
            offset = index
        } else if Int(index - offset) >= counts.count {
            counts.append(contentsOf: repeatElement(0, count: Int(index - offset) - counts.count + 1))
        }
        counts[Int(index - offset)] &+= times
    }

    mutating func merge(_ other: BucketStore) {
        guard !other.counts.isEmpty else { return }
        if counts.isEmpty {
            self = other
            return
        }
        add(other.offset, 0)
        add(other.offset + Int32(other.counts.count - 1), 0)
        let shift = Int(other.offset - offset)
        for (position, value) in other.counts.enumerated() where value > 0 { counts[shift + position] &+= value }
    }

    func ascending() -> some Sequence<(Int32, UInt64)> {
        counts.enumerated().lazy.filter { $0.element > 0 }.map { (offset + Int32($0.offset), $0.element) }
    }

    func descending() -> some Sequence<(Int32, UInt64)> {
        counts.enumerated().reversed().lazy.filter { $0.element > 0 }.map { (offset + Int32($0.offset), $0.element) }
    }

    func serialize(to out: inout [UInt8]) {
        let used = counts.enumerated().filter { $0.element > 0 }
        appendVarint(UInt64(used.count), to: &out)
        var previous: Int64 = 0
        for (position, value) in used {
            let index = Int64(offset) + Int64(position)
            appendVarint(zigzag(index - previous), to: &out)
            appendVarint(value, to: &out)
            previous = index
        }
    }

    init() {}

    fileprivate init(reading reader: inout SketchByteReader) throws(QuantileSketchError) {
        let start = reader.offset
        let used = try reader.varint("a bucket count")
        guard used <= UInt64(reader.bytes.count - reader.offset) else {
            throw QuantileSketchError(
                offset: start, problem: "\(used) buckets in \(reader.bytes.count - reader.offset) bytes")
        }
        var previous: Int64 = 0
        var first = true
        for _ in 0..<used {
            let at = reader.offset
            let delta = unzigzag(try reader.varint("a bucket index"))
            let value = try reader.varint("a bucket's count")
            let index = previous + delta
            guard first || delta > 0, index >= Int64(Int32.min), index <= Int64(Int32.max) else {
                throw QuantileSketchError(offset: at, problem: "bucket index \(index) out of order or out of range")
            }
            if !first, index - Int64(offset) > 1 << 20 {
                throw QuantileSketchError(offset: at, problem: "buckets span more than 2^20 indices")
            }
            guard value > 0 else { throw QuantileSketchError(offset: at, problem: "an empty bucket") }
            add(Int32(index), value)
            previous = index
            first = false
        }
    }
}

/// Reads the sketch's bytes, naming the offset of what is missing.
private struct SketchByteReader {
    let bytes: [UInt8]
    var offset = 0

    mutating func byte(_ what: String) throws(QuantileSketchError) -> UInt8 {
        guard offset < bytes.count else { throw QuantileSketchError(offset: offset, problem: "truncated in \(what)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func fixed(_ what: String) throws(QuantileSketchError) -> UInt64 {
        guard offset + 8 <= bytes.count else {
            throw QuantileSketchError(offset: offset, problem: "truncated in \(what)")
        }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    mutating func varint(_ what: String) throws(QuantileSketchError) -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else {
                throw QuantileSketchError(offset: start, problem: "truncated in \(what)")
            }
            let byte = bytes[offset]
            offset += 1
            guard shift < 64 else {
                throw QuantileSketchError(offset: start, problem: "\(what) is longer than 64 bits")
            }
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }
}

private func appendFixed(_ value: UInt64, to out: inout [UInt8]) {
    for index in 0..<8 { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
}

private func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
    var value = value
    while value >= 0x80 {
        out.append(UInt8(truncatingIfNeeded: value) | 0x80)
        value >>= 7
    }
    out.append(UInt8(value))
}

private func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
private func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }
