/// Time ranges on each thread, such as the instances of one interval name,
/// overlapping ones merged: whether a thread's sample at a moment lies in
/// one of them, as ``CPUProfile/samples(within:)`` decides it (from an
/// instance's start up to, not including, its end).
///
/// A trace may hold millions of instances, so each thread's ranges are kept
/// packed (see ``Packed``): a few bytes each rather than sixteen.
struct ThreadTimeRanges {
    /// One track's or thread's ranges in time order, merged: each as two
    /// varints, its gap from the end of the range before and its length,
    /// with every 64th range's start and place indexed for lookups.
    struct Packed {
        private(set) var bytes: [UInt8] = []
        private(set) var checkpoints: [(start: UInt64, offset: Int)] = []
        private(set) var count = 0
        private var lastEnd: UInt64 = 0
        /// The last range, kept aside while the next may still join it.
        private var pending: (start: UInt64, end: UInt64)?
        /// Ranges that came out of order (rare), merged at ``finish()``.
        private(set) var unordered: [(start: UInt64, end: UInt64)] = []

        static let stride = 64

        /// Adds a range that starts no earlier than the last one added
        /// (any other is kept aside); an empty one is left out.
        mutating func append(_ range: (start: UInt64, end: UInt64)) {
            guard range.end > range.start else { return }
            guard let last = pending else {
                pending = range
                return
            }
            if range.start < last.start {
                unordered.append(range)
            } else if range.start <= last.end {
                pending = (last.start, max(last.end, range.end))
            } else {
                pack(last)
                pending = range
            }
        }

        /// Packs the last range and merges in those that came out of order.
        mutating func finish() {
            if let last = pending { pack(last) }
            pending = nil
            guard !unordered.isEmpty else { return }
            let all = (ranges() + unordered).sorted { $0.start < $1.start }
            self = Packed()
            for range in all { append(range) }
            if let last = pending { pack(last) }
            pending = nil
        }

        private mutating func pack(_ range: (start: UInt64, end: UInt64)) {
            if count % Self.stride == 0 { checkpoints.append((range.start, bytes.count)) }
            Self.appendVarint(range.start - lastEnd, to: &bytes)
            Self.appendVarint(range.end - range.start, to: &bytes)
            lastEnd = range.end
            count += 1
        }

        /// Every range, unpacked.
        func ranges() -> [(start: UInt64, end: UInt64)] {
            var result: [(start: UInt64, end: UInt64)] = []
            var offset = 0
            var end: UInt64 = 0
            while offset < bytes.count {
                let start = end + Self.varint(bytes, &offset)
                end = start + Self.varint(bytes, &offset)
                result.append((start, end))
            }
            return result + (pending.map { [$0] } ?? [])
        }

        /// Whether `time` lies in one of the ranges.
        func contains(_ time: UInt64) -> Bool {
            // The last checkpoint at or before `time`, then range by range.
            var low = 0
            var high = checkpoints.count
            while low < high {
                let middle = (low + high) / 2
                if checkpoints[middle].start <= time { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return false }
            var offset = checkpoints[low - 1].offset
            var start = checkpoints[low - 1].start
            _ = Self.varint(bytes, &offset)
            while true {
                let end = start + Self.varint(bytes, &offset)
                if time < end { return true }
                guard offset < bytes.count else { return false }
                start = end + Self.varint(bytes, &offset)
                if start > time { return false }
            }
        }

        private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
            var rest = value
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }

        private static func varint(_ bytes: [UInt8], _ offset: inout Int) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            return value
        }
    }

    private var threads: [Int64: Packed] = [:]

    /// The ranges of each thread, from those of its tracks (each finished).
    init(_ byThread: [Int64: [Packed]]) {
        for (tid, tracks) in byThread {
            if tracks.count == 1, let only = tracks.first {
                threads[tid] = only
                continue
            }
            var merged = Packed()
            for range in tracks.flatMap({ $0.ranges() }).sorted(by: { $0.start < $1.start }) { merged.append(range) }
            merged.finish()
            threads[tid] = merged
        }
    }

    /// Whether `time` on thread `tid` lies in one of the ranges.
    func contains(tid: Int64, time: UInt64) -> Bool {
        threads[tid]?.contains(time) ?? false
    }
}
