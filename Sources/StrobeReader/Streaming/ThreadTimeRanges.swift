/// Time ranges on each thread, such as the instances of one interval name,
/// overlapping ones merged: whether a thread's sample at a moment lies in
/// one of them, as ``CPUProfile/samples(within:)`` decides it (from an
/// instance's start up to, not including, its end).
struct ThreadTimeRanges {
    private var ranges: [Int64: [(start: UInt64, end: UInt64)]] = [:]

    /// The ranges of each thread (in any order; empty ones are left out).
    init(_ byThread: [Int64: [(start: UInt64, end: UInt64)]]) {
        for (tid, list) in byThread {
            var list = list
            if !zip(list, list.dropFirst()).allSatisfy({ $0.start <= $1.start }) { list.sort { $0.start < $1.start } }
            // Merged in place: the list is its own output.
            var kept = 0
            for range in list where range.end > range.start {
                if kept > 0, range.start <= list[kept - 1].end {
                    list[kept - 1].end = max(list[kept - 1].end, range.end)
                } else {
                    list[kept] = range
                    kept += 1
                }
            }
            list.removeLast(list.count - kept)
            ranges[tid] = list
        }
    }

    /// Adds `range` to the end of `list`, merged with the last range when
    /// they overlap: how ranges that come in order are gathered.
    static func append(_ range: (start: UInt64, end: UInt64), to list: inout [(start: UInt64, end: UInt64)]) {
        guard range.end > range.start else { return }
        if let last = list.last, range.start >= last.start, range.start <= last.end {
            list[list.count - 1].end = max(last.end, range.end)
        } else {
            list.append(range)
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
