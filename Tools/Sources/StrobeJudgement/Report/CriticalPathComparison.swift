import StrobeResults
import StrobeStatistics

/// The critical path of one interval of a suite's processes: its record
/// (``CriticalPathRecord``) per process, with where the process stands.
public typealias ProcessCriticalPath = ProcessFunctionProfile<CriticalPathRecord>

/// What the critical path of one interval of a test crossed on each side
/// of a comparison, iteration by iteration: the waits and intervals new on
/// the candidate's path and gone from it, which explain a change of its
/// length (`interval:NAME:critical_path`).
public struct CriticalPathComparison: Sendable, Hashable, Codable {
    /// The test's name.
    public var test: String
    /// The group (`--group-by` value), or "".
    public var group: String
    /// The interval whose critical path it is.
    public var interval: String
    /// The metric that gives the path's length: `TEST/interval:NAME:critical_path`.
    public var metric: String
    /// The baseline's iterations with a path.
    public var baselinePaths: Int
    /// The candidate's.
    public var candidatePaths: Int
    /// Waits on the path of at least half the candidate's iterations and of
    /// under a tenth of the baseline's.
    public var newWaits: [CriticalPathRecord.Wait]
    /// Waits on the path of at least half the baseline's iterations and of
    /// under a tenth of the candidate's.
    public var goneWaits: [CriticalPathRecord.Wait]
    /// Intervals on the candidate's path as ``newWaits`` are.
    public var newNames: [String]
    /// Intervals gone from it as ``goneWaits`` are.
    public var goneNames: [String]
    /// Waits on the path of at least half the candidate's iterations.
    public var candidateWaits: [CriticalPathRecord.Wait]
    /// How many paths and processes of each side crossed each wait of
    /// ``newWaits`` and ``goneWaits``, in that order; nil in a report
    /// written before it was kept.
    public var waitEvidence: [WaitEvidence]?

    /// How often each side's paths crossed one wait: the counts the waits
    /// on the path decide a length by (``verdictByWaits(for:)``).
    public struct WaitEvidence: Sendable, Hashable, Codable {
        /// The wait.
        public var wait: CriticalPathRecord.Wait
        /// The baseline's paths that crossed it.
        public var baselineCrossings: Int
        /// The candidate's paths that crossed it.
        public var candidateCrossings: Int
        /// The baseline's processes with it on at least half of their paths.
        public var baselineProcesses: Int
        /// The candidate's processes with it on at least half of their paths.
        public var candidateProcesses: Int
    }

    /// The share of a row's false-alarm level the waits are tested at
    /// (``verdictByWaits(for:)``): a tenth, so that a row that its time or
    /// its waits can decide raises no false alarm more often than 1.1 times
    /// its level.
    public static let waitLevelShare = 0.1
    /// The candidate's (or, for a gone wait, the baseline's) processes that
    /// must each have the wait on at least half of their paths: one process
    /// whose threads ran one after the other is not a change of the code.
    public static let processesWithTheWait = 2

    /// The comparison of each test's, group's and interval's paths that
    /// both sides recorded, in test, group and interval order; `groupBy`
    /// groups the processes by that dimension, as the rows are.
    public static func comparisons(
        baseline: [ProcessCriticalPath], candidate: [ProcessCriticalPath], groupBy: String?
    ) -> [CriticalPathComparison] {
        struct Key: Hashable, Comparable {
            var test: String
            var group: String
            var interval: String
            static func < (a: Key, b: Key) -> Bool { (a.test, a.group, a.interval) < (b.test, b.group, b.interval) }
        }
        // Per test, group and interval: every path of the side, and per wait
        // the processes with it on at least half of their own paths.
        struct Side {
            var paths = CriticalPathTally()
            var processesWith: [CriticalPathRecord.Wait: Int] = [:]
        }
        func tallies(_ side: [ProcessCriticalPath]) -> [Key: Side] {
            var tallies: [Key: Side] = [:]
            for process in side {
                let group = groupBy.map { process.dimensions[$0] ?? "(none)" } ?? ""
                let key = Key(test: process.test, group: group, interval: process.profile.interval)
                let own = CriticalPathTally(process.profile.iterations)
                for iteration in process.profile.iterations {
                    tallies[key, default: Side()].paths.add(iteration)
                }
                for wait in own.commonWaits { tallies[key, default: Side()].processesWith[wait, default: 0] += 1 }
            }
            return tallies
        }
        let base = tallies(baseline)
        let cand = tallies(candidate)
        return Set(base.keys).intersection(cand.keys).sorted().compactMap { key in
            guard let baseSide = base[key], let candSide = cand[key] else { return nil }
            let (before, after) = (baseSide.paths, candSide.paths)
            guard before.paths > 0, after.paths > 0 else { return nil }
            let newWaits = after.newWaits(since: before)
            let goneWaits = before.newWaits(since: after)
            let evidence = (newWaits + goneWaits).map { wait in
                WaitEvidence(
                    wait: wait, baselineCrossings: before.waits[wait] ?? 0, candidateCrossings: after.waits[wait] ?? 0,
                    baselineProcesses: baseSide.processesWith[wait] ?? 0,
                    candidateProcesses: candSide.processesWith[wait] ?? 0)
            }
            return CriticalPathComparison(
                test: key.test, group: key.group, interval: key.interval,
                metric: key.test + "/" + CriticalPathRecord(interval: key.interval).metric,
                baselinePaths: before.paths, candidatePaths: after.paths, newWaits: newWaits,
                goneWaits: goneWaits, newNames: after.newNames(since: before),
                goneNames: before.newNames(since: after), candidateWaits: after.commonWaits, waitEvidence: evidence)
        }
    }

    /// "+25%", "-8%", "+1.5%": a change as the sentence gives it, rounded
    /// as the verdicts round theirs (``TestVerdict/compact(_:)``).
    static func signedPercent(_ change: Double) -> String {
        TestVerdict.signedPercent(1 + change, decimalsFor: change) + "%"
    }

    /// The verdict the waits on the path give `row` (the gated row of
    /// ``metric``) where its time left it inconclusive, as a count decides
    /// its metric: whether a thread waits for another is a fact of each
    /// iteration's path that a loaded machine rarely makes up, where the
    /// path's length is as noisy as any time. A regression when a wait new
    /// on the path lay on at least half the paths of
    /// ``processesWithTheWait`` candidate processes, Fisher's exact test of
    /// its crossings per path (candidate against baseline) is significant
    /// at ``waitLevelShare`` of the row's level, and the path's estimated
    /// change is longer by more than its floor; an improvement, the same
    /// for a wait gone from the path and a shorter path. Nil otherwise:
    /// the row is decided, ungated, not this path's, or the evidence is
    /// short of that.
    public func verdictByWaits(for row: MetricComparison) -> Verdict? {
        guard row.gates, row.verdict == .inconclusive, row.name == metric, row.group == group,
            let shift = row.shift, let evidence = waitEvidence
        else { return nil }
        let longer = shift.change > row.relativeFloor
        let shorter = shift.ratio > 0 && 1 / shift.ratio - 1 > row.relativeFloor
        guard longer || shorter else { return nil }
        let waits = longer ? newWaits : goneWaits
        let level = row.level * Self.waitLevelShare
        let decisive = evidence.contains { item in
            guard waits.contains(item.wait) else { return false }
            // The side the wait is on against the side it is not.
            let on = longer ? (item.candidateCrossings, candidatePaths) : (item.baselineCrossings, baselinePaths)
            let off = longer ? (item.baselineCrossings, baselinePaths) : (item.candidateCrossings, candidatePaths)
            let processes = longer ? item.candidateProcesses : item.baselineProcesses
            let p = HypergeometricDistribution.fisherGreater(
                candidateEvents: on.0, candidateTotal: on.1, baselineEvents: off.0, baselineTotal: off.1)
            return processes >= Self.processesWithTheWait && p <= level
        }
        guard decisive else { return nil }
        return longer == (row.better == .lower) ? .regression : .improvement
    }

    /// What the verdict of a test whose path `row` (the row of ``metric``)
    /// judged longer or shorter says: "critical path +98% [+95, +101]:
    /// `parse worker 1` now waits for `parse worker 0` in `parse in two
    /// threads`" (the waits new on a longer path, or gone from a shorter
    /// one; else the intervals; else that its waits are the same); nil when
    /// the row is neither a regression nor an improvement.
    public func sentence(for row: MetricComparison) -> String? {
        guard row.verdict == .regression || row.verdict == .improvement else { return nil }
        // A length its waits decided at an early look may have an interval
        // that sizes nothing: its estimate so far, and that.
        let length = row.shift.map { shift in
            row.notMeasuredFarEnough == true
                ? " " + Self.signedPercent(shift.change) + " so far, " + SizedInterval.text + " to size it"
                : " " + TestVerdict.compact(shift)
        }
        let lead =
            "critical path" + (length ?? "") + (row.decidedByWaits == true ? " (decided by its waits)" : "")
        let place = "in `\(interval)`"
        func waiter(_ wait: CriticalPathRecord.Wait) -> String { wait.waiter.map { "`\($0)`" } ?? "untraced code" }
        let longer = row.verdict == .regression
        var clauses = (longer ? newWaits : goneWaits).map { wait in
            "\(waiter(wait)) \(longer ? "now waits" : "no longer waits") for `\(wait.waitedFor)`"
        }
        if clauses.isEmpty {
            clauses = (longer ? newNames : goneNames).map { "`\($0)` \(longer ? "now on it" : "no longer on it")" }
        }
        if !clauses.isEmpty { return "\(lead): \(clauses.joined(separator: ", ")) \(place)" }
        let waits = candidateWaits.map { "\(waiter($0)) waits for `\($0.waitedFor)`" }
        return "\(lead) \(place), the same waits on it" + (waits.isEmpty ? "" : " (\(waits.joined(separator: ", ")))")
    }
}
