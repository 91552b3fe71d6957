/// What a profile says about where time went: functions by self and
/// inclusive samples, the samples inside intervals, and folded stacks.
extension CPUProfile {
    /// One function's share of a set of samples.
    public struct FunctionCost: Sendable, Hashable {
        /// The function's name.
        public var function: String
        /// Samples in which it was the function running.
        public var selfSamples: Int
        /// Samples in which it was on the stack (counted once per sample,
        /// however often it recurs).
        public var inclusiveSamples: Int
        /// ``selfSamples`` over all the samples considered.
        public var selfShare: Double
        /// ``inclusiveSamples`` over all the samples considered.
        public var inclusiveShare: Double
    }

    /// The samples that fall inside `intervals`: for each interval with a
    /// thread and an end, the samples of that thread from its start up to
    /// its end. A sample inside several of them (nested instances of one
    /// name) counts once.
    public func samples(within intervals: [Interval]) -> [Sample] {
        var byThread: [Int64: [Int]] = [:]
        for (index, sample) in samples.enumerated() { byThread[sample.tid, default: []].append(index) }
        for key in byThread.keys { byThread[key]!.sort { samples[$0].time < samples[$1].time } }
        var chosen = Set<Int>()
        for interval in intervals {
            guard let tid = interval.tid, let end = interval.end, let indexes = byThread[tid] else { continue }
            // The first sample at or after the start.
            var low = 0
            var high = indexes.count
            while low < high {
                let middle = (low + high) / 2
                if samples[indexes[middle]].time < interval.start { low = middle + 1 } else { high = middle }
            }
            var position = low
            while position < indexes.count, samples[indexes[position]].time < end {
                chosen.insert(indexes[position])
                position += 1
            }
        }
        return chosen.sorted().map { samples[$0] }
    }

    /// The functions of `samples` (all of the profile's when nil), most
    /// self samples first (then most inclusive, then by name), at most
    /// `limit` of them.
    public func topFunctions(of samples: [Sample]? = nil, limit: Int = .max) -> [FunctionCost] {
        let chosen = samples ?? self.samples
        guard !chosen.isEmpty else { return [] }
        var selfCounts = [Int](repeating: 0, count: functions.count)
        var inclusiveCounts = [Int](repeating: 0, count: functions.count)
        var seen = [Int](repeating: -1, count: functions.count)
        for (number, sample) in chosen.enumerated() {
            let stack = stacks[sample.stack]
            if let leaf = stack.last { selfCounts[leaf] += 1 }
            for function in stack where seen[function] != number {
                seen[function] = number
                inclusiveCounts[function] += 1
            }
        }
        let total = Double(chosen.count)
        let rows = functions.indices.filter { inclusiveCounts[$0] > 0 }.map { index in
            FunctionCost(
                function: functions[index], selfSamples: selfCounts[index], inclusiveSamples: inclusiveCounts[index],
                selfShare: Double(selfCounts[index]) / total, inclusiveShare: Double(inclusiveCounts[index]) / total)
        }
        return Array(
            rows.sorted {
                ($0.selfSamples, $0.inclusiveSamples, $1.function) > ($1.selfSamples, $1.inclusiveSamples, $0.function)
            }.prefix(limit))
    }

    /// The share of `samples` whose stack holds a function for which
    /// `matches` is true.
    public func share(of samples: [Sample], where matches: (String) -> Bool) -> Double {
        guard !samples.isEmpty else { return 0 }
        let matching = functions.indices.filter { matches(functions[$0]) }
        let wanted = Set(matching)
        let count = samples.filter { sample in stacks[sample.stack].contains { wanted.contains($0) } }.count
        return Double(count) / Double(samples.count)
    }

    /// Folded stacks, as flamegraph.pl and speedscope read them: one line
    /// per distinct stack, its frames from the outermost caller joined by
    /// `;`, a space and its sample count; lines sorted. A `;` in a name
    /// becomes `:`, a newline a space.
    public func folded(_ samples: [Sample]? = nil) -> String {
        var counts: [Int: Int] = [:]
        for sample in samples ?? self.samples { counts[sample.stack, default: 0] += 1 }
        let lines = counts.map { stack, count in
            stacks[stack].map { Self.foldedName(functions[$0]) }.joined(separator: ";") + " \(count)"
        }
        return lines.sorted().map { $0 + "\n" }.joined()
    }

    private static func foldedName(_ name: String) -> String {
        String(name.map { $0 == ";" ? ":" : ($0 == "\n" ? " " : $0) })
    }
}
