import StrobeResults

/// The chain of work and waits that bounds one interval's wall time when
/// its work runs on several threads (a measure block, a frame): walked back
/// from the interval's end, on its thread, through the intervals each
/// thread ran, and across to another thread wherever the current one was
/// idle until that thread's work ended (a wait: for a flow's source when a
/// flow leads into the resumed interval, else for the interval on another
/// thread that ended last before it resumed).
///
/// An interval that a piece of work on another thread ended (one of its
/// flows' sources, or work that ended inside it within ``wakeTolerance`` of
/// its end), when it was busy for less than half its time or, without its
/// CPU time, when it is on the root's thread, was itself a wait: the
/// path crosses there too. Each thread's innermost intervals are the work;
/// time on the path that no interval covers is its thread's own untraced
/// time (the root's own code,
/// or a worker's wait to be started). ``length`` sums the intervals on the
/// path: two workers that ran in parallel put one of them on it, the same
/// two made to run one after the other put both, so the length grows with
/// the instructions and allocations unchanged.
public struct CriticalPath: Sendable, Hashable, Codable {
    /// One stretch of the path.
    public struct Segment: Sendable, Hashable, Codable {
        /// The interval's name; nil for time no interval covers.
        public var name: String?
        /// The thread it ran on.
        public var thread: Int64
        /// Start, in the trace's nanoseconds.
        public var start: UInt64
        /// End.
        public var end: UInt64
        /// The duration.
        public var duration: UInt64 { end - start }
    }

    /// A wait on the path: `waiter`'s thread resumed when `waitedFor` ended.
    public struct Wait: Sendable, Hashable, Codable, CustomStringConvertible {
        /// What ran next on the thread that waited (nil: the thread's own
        /// untraced code).
        public var waiter: String?
        /// The interval it waited for.
        public var waitedFor: String
        /// Whether a flow says so (else it is inferred from the times).
        public var byFlow: Bool

        /// `lens worker 1 waits for lens worker 0`.
        public var description: String { recorded.description }

        /// The wait as a results file records it (without ``byFlow``).
        public var recorded: CriticalPathRecord.Wait { CriticalPathRecord.Wait(waiter: waiter, waitedFor: waitedFor) }

        /// A wait of `waiter` for `waitedFor`.
        public init(waiter: String?, waitedFor: String, byFlow: Bool) {
            self.waiter = waiter
            self.waitedFor = waitedFor
            self.byFlow = byFlow
        }
    }

    /// The path, earliest first.
    public var segments: [Segment]
    /// The waits it crosses, earliest first.
    public var waits: [Wait]
    /// The root interval's wall time.
    public var wall: UInt64

    /// The time of the intervals on the path, in nanoseconds.
    public var length: UInt64 { segments.filter { $0.name != nil }.reduce(0) { $0 + $1.duration } }

    /// Each interval name's share of ``wall`` on the path (untraced time
    /// under `(untraced)`).
    public var shares: [String: Double] {
        var shares: [String: Double] = [:]
        for segment in segments {
            shares[segment.name ?? "(untraced)", default: 0] += Double(segment.duration) / Double(max(wall, 1))
        }
        return shares
    }

    /// How long a thread may take to resume after the work it waited for
    /// ended and still count as its waiter: 1 ms.
    public static let wakeTolerance: UInt64 = 1_000_000

    /// The critical path of `root` (an interval with a thread and an end)
    /// through `intervals` (those of its trace, or any that overlap it);
    /// nil when `root` has no thread or no end.
    public static func of(_ root: Interval, in intervals: [Interval]) -> CriticalPath? {
        guard let rootThread = root.tid, let rootEnd = root.end else { return nil }
        let work = Self.work(inside: root, intervals)
        var byThread: [Int64: [Interval]] = [:]
        for interval in work { byThread[interval.tid ?? 0, default: []].append(interval) }
        var flowSources: [UInt64: Interval] = [:]
        for interval in work { for id in interval.flowIDs { flowSources[id] = flowSources[id] ?? interval } }
        var segments: [Segment] = []
        var waits: [Wait] = []
        var thread = rootThread
        var time = rootEnd
        var resumed: Interval?
        // Each step moves back in time or to another thread's work that
        // ends by then, so the walk takes at most two steps per interval.
        var steps = 2 * work.count + 2
        while time > root.start, steps > 0 {
            steps -= 1
            // The thread's last work ending by now.
            let previous = (byThread[thread] ?? []).filter {
                $0.start < time && ($0.end ?? 0) <= time &+ Self.wakeTolerance
            }
            .max { ($0.end ?? 0, $0.start) < ($1.end ?? 0, $1.start) }
            let idleFrom = max(min(previous?.end ?? root.start, time), root.start)
            if time - idleFrom <= Self.wakeTolerance, let previous,
                let (source, byFlow) = endedBy(previous, onRootThread: thread == rootThread, work, flowSources)
            {
                // `previous` was a wait that `source`'s end ended: the path
                // goes on from there.
                let sourceEnd = min(source.end ?? time, time)
                segments.append(Segment(name: previous.name, thread: thread, start: sourceEnd, end: time))
                waits.append(Wait(waiter: previous.name, waitedFor: source.name, byFlow: byFlow))
                thread = source.tid ?? thread
                time = sourceEnd
                resumed = nil
                continue
            }
            if time - idleFrom > Self.wakeTolerance,
                let (source, byFlow) = waitedFor(resumed, thread: thread, from: idleFrom, to: time, work, flowSources)
            {
                let sourceEnd = min(source.end ?? time, time)
                if time > sourceEnd { segments.append(Segment(name: nil, thread: thread, start: sourceEnd, end: time)) }
                waits.append(Wait(waiter: resumed?.name, waitedFor: source.name, byFlow: byFlow))
                thread = source.tid ?? thread
                time = sourceEnd
                resumed = nil
                continue
            }
            if time > idleFrom { segments.append(Segment(name: nil, thread: thread, start: idleFrom, end: time)) }
            guard let previous, let end = previous.end, end > root.start else { break }
            let start = max(previous.start, root.start)
            let cut = min(end, idleFrom)
            if cut > start { segments.append(Segment(name: previous.name, thread: thread, start: start, end: cut)) }
            time = start
            resumed = previous
        }
        return CriticalPath(segments: segments.reversed(), waits: waits.reversed(), wall: rootEnd - root.start)
    }

    /// The innermost intervals on a thread that overlap `root`'s span, `root`
    /// and its enclosing intervals left out.
    static func work(inside root: Interval, _ intervals: [Interval]) -> [Interval] {
        guard let rootEnd = root.end else { return [] }
        let overlapping = intervals.filter { interval in
            guard let end = interval.end, interval.tid != nil, interval != root else { return false }
            let encloses = interval.tid == root.tid && interval.start <= root.start && end >= rootEnd
            return !encloses && interval.start < rootEnd && end > root.start
        }
        var byThread: [Int64: [Interval]] = [:]
        for interval in overlapping { byThread[interval.tid ?? 0, default: []].append(interval) }
        return overlapping.filter { outer in
            !(byThread[outer.tid ?? 0] ?? []).contains { inner in
                inner != outer && inner.depth > outer.depth && inner.start >= outer.start
                    && (inner.end ?? 0) <= (outer.end ?? 0)
            }
        }
    }

    /// What ended `interval` when it was a wait: the source of a flow into
    /// it, else the work on another thread that ended last inside it, within
    /// ``wakeTolerance`` of its end. An interval that captured its CPU time
    /// was a wait only when it was busy for less than half of it; one that
    /// did not, only on the root's thread (where the block waits for its
    /// workers: two workers that end together did not wait for each other).
    static func endedBy(
        _ interval: Interval, onRootThread: Bool, _ work: [Interval], _ flowSources: [UInt64: Interval]
    ) -> (Interval, Bool)? {
        guard let end = interval.end, end > interval.start else { return nil }
        let cpu =
            interval.cpuTime ?? interval.resourceUsage.map { UInt64(max($0.userNanoseconds + $0.systemNanoseconds, 0)) }
        if let cpu {
            if 2 * cpu >= end - interval.start { return nil }
        } else if !onRootThread {
            return nil
        }
        let from = end > wakeTolerance ? max(end - wakeTolerance, interval.start) : interval.start
        return waitedFor(interval, thread: interval.tid ?? 0, from: from, to: end, work, flowSources, slack: 0)
    }

    /// What a thread idle from `from` to `to` waited for: the source of a
    /// flow into `resumed` that ended in that time, else the work on another
    /// thread that ended last in it (by `to` and the tolerance).
    static func waitedFor(
        _ resumed: Interval?, thread: Int64, from: UInt64, to: UInt64, _ work: [Interval],
        _ flowSources: [UInt64: Interval], slack: UInt64 = wakeTolerance
    ) -> (Interval, Bool)? {
        let limit = to &+ slack
        for id in (resumed?.terminatingFlowIDs ?? []) + (resumed?.flowIDs ?? []) {
            if let source = flowSources[id], source.tid != thread, let end = source.end, end > from, end <= limit {
                return (source, true)
            }
        }
        let candidates = work.filter { interval in
            guard let end = interval.end, interval.tid != thread else { return false }
            return end > from && end <= limit && interval.start < to
        }
        return candidates.max { ($0.end ?? 0, $1.tid ?? 0) < ($1.end ?? 0, $0.tid ?? 0) }.map { ($0, false) }
    }
}
