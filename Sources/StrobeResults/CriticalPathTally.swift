/// How many of a side's critical paths (its iterations, or its instances
/// of an interval) crossed each wait and each interval name: what two
/// sides are compared by to say which wait is new on the path.
public struct CriticalPathTally: Sendable, Hashable {
    /// The paths counted.
    public private(set) var paths = 0
    /// Per wait, the paths that crossed it.
    public private(set) var waits: [CriticalPathRecord.Wait: Int] = [:]
    /// Per interval name, the paths it lay on.
    public private(set) var names: [String: Int] = [:]

    /// No paths.
    public init() {}

    /// The paths of `iterations`.
    public init(_ iterations: [CriticalPathRecord.Iteration]) {
        for iteration in iterations { add(iteration) }
    }

    /// Counts one more path.
    public mutating func add(_ path: CriticalPathRecord.Iteration) {
        paths += 1
        for wait in Set(path.waits) { waits[wait, default: 0] += 1 }
        for name in Set(path.names) { names[name, default: 0] += 1 }
    }

    /// The waits on at least half of these paths and on under a tenth of
    /// `baseline`'s: new on the path, sorted.
    public func newWaits(since baseline: CriticalPathTally) -> [CriticalPathRecord.Wait] {
        Self.new(waits, of: paths, against: baseline.waits, of: baseline.paths)
    }

    /// The interval names on at least half of these paths and on under a
    /// tenth of `baseline`'s, sorted.
    public func newNames(since baseline: CriticalPathTally) -> [String] {
        Self.new(names, of: paths, against: baseline.names, of: baseline.paths)
    }

    /// The waits on at least half of these paths, sorted.
    public var commonWaits: [CriticalPathRecord.Wait] {
        waits.filter { 2 * $0.value >= paths }.keys.sorted()
    }

    /// The keys of `counts` (of `total` paths) on at least half of them and
    /// in `baseline` (of `baselineTotal`) on under a tenth.
    static func new<Key: Comparable>(
        _ counts: [Key: Int], of total: Int, against baseline: [Key: Int], of baselineTotal: Int
    ) -> [Key] {
        counts.filter { key, count in
            2 * count >= total && 10 * (baseline[key] ?? 0) < max(baselineTotal, 1)
        }.keys.sorted()
    }
}
