/// Time ranges on each thread, such as the instances of one interval name,
/// overlapping ones merged: whether a thread's sample at a moment lies in
/// one of them, as ``CPUProfile/samples(within:)`` decides it (from an
/// instance's start up to, not including, its end).
struct ThreadTimeRanges {
    private var ranges: [Int64: [(start: UInt64, end: UInt64)]] = [:]

    /// The ranges of `instances`; empty ones are left out.
    init(_ instances: [(tid: Int64, start: UInt64, end: UInt64)]) {
        var byThread: [Int64: [(start: UInt64, end: UInt64)]] = [:]
        for instance in instances where instance.end > instance.start {
            byThread[instance.tid, default: []].append((instance.start, instance.end))
        }
        for (tid, list) in byThread {
            var merged: [(start: UInt64, end: UInt64)] = []
            for range in list.sorted(by: { $0.start < $1.start }) {
                if let last = merged.last, range.start <= last.end {
                    merged[merged.count - 1].end = max(last.end, range.end)
                } else {
                    merged.append(range)
                }
            }
            ranges[tid] = merged
        }
    }

    /// Whether `time` on thread `tid` lies in one of the ranges.
    func contains(tid: Int64, time: UInt64) -> Bool {
        guard let list = ranges[tid] else { return false }
        // The last range that starts at or before `time`.
        var low = 0
        var high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle].start <= time { low = middle + 1 } else { high = middle }
        }
        return low > 0 && time < list[low - 1].end
    }
}
