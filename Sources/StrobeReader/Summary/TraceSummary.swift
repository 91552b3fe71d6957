import Foundation

/// What a trace says at a glance: interval statistics per name (overall and
/// per thread), counters, data loss, intervals long enough to miss a frame,
/// and intervals that run unusually often inside one parent.
public struct TraceSummary: Sendable, Codable {
    /// Statistics of the intervals that share a name (on one thread, or all).
    public struct IntervalStatistics: Sendable, Codable, Hashable {
        /// The interval name.
        public var name: String
        /// The thread's name, or nil for all threads together.
        public var thread: String?
        /// How many ended intervals there are.
        public var count: Int
        /// Sum of durations, in nanoseconds.
        public var total: UInt64
        /// Mean duration, in nanoseconds.
        public var mean: Double
        /// Median duration, in nanoseconds.
        public var p50: Double
        /// 90th percentile of durations, in nanoseconds.
        public var p90: Double
        /// 99th percentile of durations, in nanoseconds.
        public var p99: Double
        /// Longest duration, in nanoseconds.
        public var max: UInt64
        /// CPU time over wall time for the intervals that captured CPU time:
        /// near 1 means busy computing, near 0 means blocked or waiting.
        public var cpuShare: Double?
        /// How many of the intervals captured CPU time.
        public var withCPUTime: Int
    }

    /// Statistics of one counter track.
    public struct CounterStatistics: Sendable, Codable, Hashable {
        /// The counter name.
        public var name: String
        /// Its unit, when known.
        public var unit: String?
        /// Number of samples.
        public var count: Int
        /// Smallest value.
        public var min: Double
        /// Mean value.
        public var mean: Double
        /// Largest value.
        public var max: Double
        /// Last value.
        public var last: Double
    }

    /// How likely an interval is to cause a visible hitch.
    public enum HitchRisk: String, Sendable, Codable, Hashable {
        /// Longer than one frame budget: it may delay a frame.
        case mayHitch = "may hitch"
        /// Longer than two frame budgets: a frame is certainly late.
        case hitch
    }

    /// An interval longer than the frame budget.
    public struct LongInterval: Sendable, Codable, Hashable {
        /// The interval name.
        public var name: String
        /// Its thread's name (or "async").
        public var thread: String
        /// Start, in nanoseconds since the first event of the trace.
        public var start: UInt64
        /// Duration in nanoseconds.
        public var duration: UInt64
        /// The risk it carries.
        public var risk: HitchRisk
    }

    /// A parent interval that contains unusually many children of one name,
    /// like many small updates inside one frame.
    public struct FrequentChild: Sendable, Codable, Hashable {
        /// The parent's name.
        public var parent: String
        /// The children's name.
        public var child: String
        /// The thread's name.
        public var thread: String
        /// The parent's start, in nanoseconds since the first event.
        public var parentStart: UInt64
        /// Children of that name in this parent.
        public var count: Int
        /// The median count across parents of that name.
        public var typicalCount: Double
    }

    /// What was lost.
    public struct Loss: Sendable, Codable, Hashable {
        /// Events discarded because a buffer was full.
        public var discardedEvents: UInt64
        /// Events overwritten in ring buffers.
        public var overwrittenEvents: UInt64
        /// Packets marking a gap before them.
        public var droppedPacketMarks: Int
        /// Packets skipped for lost incremental state.
        public var skippedPackets: Int
        /// Ends without a begin.
        public var unmatchedEnds: Int
        /// Ends the writers left out because their begin is not in the
        /// trace (overwritten in a ring, or recorded while its category was
        /// off).
        public var orphanEnds: UInt64
        /// Problems met while reading, and whether the file was cut short.
        public var readIssues: Int
        /// Set when the file was cut short.
        public var truncation: String?
    }

    /// Where the trace comes from (app, version, device, sampling
    /// probability), when its session recorded that.
    public var origin: TraceOrigin?
    /// Flight-recorder triggers marked in the trace, in time order, with
    /// the intervals and time around each.
    public var triggers: [Trigger] = []
    /// Interval statistics for all threads together, longest total first.
    public var intervals: [IntervalStatistics]
    /// Interval statistics per thread.
    public var intervalsByThread: [IntervalStatistics]
    /// Counter statistics, by name.
    public var counters: [CounterStatistics]
    /// What was lost.
    public var loss: Loss
    /// The frame budget the long intervals were judged against, in ns.
    public var frameBudget: UInt64?
    /// Intervals longer than the budget, longest first (at most 20).
    public var longIntervals: [LongInterval]
    /// Per interval name, how many exceed one and two budgets.
    public var hitchCounts: [String: [String: Int]]
    /// Parents with unusually many children of one name (at most 20).
    public var frequentChildren: [FrequentChild]

    /// Summarizes `trace`; with `frameBudget` (nanoseconds), flags long intervals.
    public init(trace: ParsedTrace, frameBudget: UInt64? = nil) {
        let threadNames = Dictionary(trace.threads.map { ($0.trackUUID, $0.name) }, uniquingKeysWith: { a, _ in a })
        func threadName(_ interval: Interval) -> String {
            interval.isAsync ? "async" : threadNames[interval.track] ?? "track \(interval.track)"
        }
        // Built once: the passes below visit ended intervals many times.
        let ended = trace.intervals.filter { $0.duration != nil }
        var byName: [String: [Interval]] = [:]
        var byThread: [String: [Interval]] = [:]
        for interval in ended {
            byName[interval.name, default: []].append(interval)
            byThread[interval.name + "\u{0}" + threadName(interval), default: []].append(interval)
        }
        intervals = byName.map { Self.statistics(name: $0.key, thread: nil, $0.value) }
            .sorted { ($0.total, $1.name) > ($1.total, $0.name) }
        intervalsByThread = byThread.map { key, values in
            let parts = key.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false)
            return Self.statistics(name: String(parts[0]), thread: String(parts[1]), values)
        }.sorted { ($0.thread ?? "", $1.total) < ($1.thread ?? "", $0.total) }

        counters = trace.counters.filter { !$0.samples.isEmpty }.map { series in
            let values = series.samples.map(\.value)
            return CounterStatistics(
                name: series.name, unit: series.unit, count: values.count, min: values.min() ?? 0,
                mean: values.reduce(0, +) / Double(values.count), max: values.max() ?? 0, last: values.last ?? 0)
        }
        loss = Loss(
            discardedEvents: trace.loss.discardedEvents, overwrittenEvents: trace.loss.overwrittenEvents,
            droppedPacketMarks: trace.loss.droppedPacketMarks, skippedPackets: trace.loss.skippedPackets,
            unmatchedEnds: trace.loss.unmatchedEnds, orphanEnds: trace.loss.orphanEnds, readIssues: trace.issues.count,
            truncation: trace.truncation?.description)

        let origin = trace.intervals.startTimes.min() ?? 0
        self.frameBudget = frameBudget
        var long: [LongInterval] = []
        var counts: [String: [String: Int]] = [:]
        if let frameBudget, frameBudget > 0 {
            for interval in ended {
                guard let duration = interval.duration, duration > frameBudget else { continue }
                let risk: HitchRisk = duration > 2 * frameBudget ? .hitch : .mayHitch
                counts[interval.name, default: [:]][risk.rawValue, default: 0] += 1
                long.append(
                    LongInterval(
                        name: interval.name, thread: threadName(interval), start: interval.start &- origin,
                        duration: duration, risk: risk))
            }
        }
        longIntervals = Array(long.sorted { $0.duration > $1.duration }.prefix(20))
        hitchCounts = counts
        frequentChildren = Self.frequentChildren(ended, origin: origin, threadName: threadName)
        triggers = Self.triggers(in: trace)
        self.origin = trace.origin
    }

    static func statistics(name: String, thread: String?, _ intervals: [Interval]) -> IntervalStatistics {
        let durations = intervals.compactMap(\.duration).sorted()
        let total = durations.reduce(UInt64(0), &+)
        var cpu: UInt64 = 0
        var wall: UInt64 = 0
        var withCPU = 0
        for interval in intervals {
            guard let time = interval.cpuTime, let duration = interval.duration else { continue }
            cpu &+= time
            wall &+= duration
            withCPU += 1
        }
        return IntervalStatistics(
            name: name, thread: thread, count: durations.count, total: total,
            mean: durations.isEmpty ? 0 : Double(total) / Double(durations.count),
            p50: quantile(durations, 0.5), p90: quantile(durations, 0.9), p99: quantile(durations, 0.99),
            max: durations.last ?? 0, cpuShare: withCPU > 0 && wall > 0 ? Double(cpu) / Double(wall) : nil,
            withCPUTime: withCPU)
    }

    /// The `probability` quantile of sorted values, interpolating linearly
    /// between order statistics (Hyndman and Fan's type 7).
    static func quantile(_ sorted: [UInt64], _ probability: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let position = probability * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        let fraction = position - Double(lower)
        return Double(sorted[lower]) + (Double(sorted[upper]) - Double(sorted[lower])) * fraction
    }

    /// Parents whose count of children of one name is at least 10 and at
    /// least four times the median count over all parents of that name.
    /// `ended` holds only intervals that ended; open ones take no part.
    static func frequentChildren(
        _ ended: [Interval], origin: UInt64, threadName: (Interval) -> String
    ) -> [FrequentChild] {
        var byTrack: [UInt64: [Int]] = [:]
        for (index, interval) in ended.enumerated() {
            byTrack[interval.track, default: []].append(index)
        }
        struct Key: Hashable {
            var parent: String
            var child: String
        }
        var countsPerParent: [Key: [(parent: Int, count: Int)]] = [:]
        for indices in byTrack.values {
            let ordered = indices.sorted { ended[$0].start < ended[$1].start }
            var open: [Int] = []
            var children: [Int: [String: Int]] = [:]
            for index in ordered {
                let interval = ended[index]
                while let top = open.last, let end = ended[top].end, end <= interval.start { open.removeLast() }
                if let parent = open.last { children[parent, default: [:]][interval.name, default: 0] += 1 }
                open.append(index)
            }
            for (parent, names) in children {
                for (child, count) in names {
                    countsPerParent[Key(parent: ended[parent].name, child: child), default: []]
                        .append((parent, count))
                }
            }
        }
        var instances: [String: Int] = [:]
        for interval in ended { instances[interval.name, default: 0] += 1 }
        var flagged: [FrequentChild] = []
        for (key, entries) in countsPerParent {
            // Parents with none of these children count as zero.
            let zeros = max((instances[key.parent] ?? 0) - entries.count, 0)
            let sorted = [UInt64](repeating: 0, count: zeros) + entries.map { UInt64($0.count) }.sorted()
            let median = quantile(sorted, 0.5)
            let threshold = max(10, 4 * median)
            for entry in entries where Double(entry.count) >= threshold {
                let parent = ended[entry.parent]
                flagged.append(
                    FrequentChild(
                        parent: key.parent, child: key.child, thread: threadName(parent),
                        parentStart: parent.start &- origin,
                        count: entry.count, typicalCount: median))
            }
        }
        return Array(flagged.sorted { ($0.count, $1.parent) > ($1.count, $0.parent) }.prefix(20))
    }
}
