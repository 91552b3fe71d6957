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
        func tallies(_ side: [ProcessCriticalPath]) -> [Key: CriticalPathTally] {
            var tallies: [Key: CriticalPathTally] = [:]
            for process in side {
                let group = groupBy.map { process.dimensions[$0] ?? "(none)" } ?? ""
                let key = Key(test: process.test, group: group, interval: process.profile.interval)
                for iteration in process.profile.iterations {
                    tallies[key, default: CriticalPathTally()].add(iteration)
                }
            }
            return tallies
        }
        let base = tallies(baseline)
        let cand = tallies(candidate)
        return Set(base.keys).intersection(cand.keys).sorted().compactMap { key in
            guard let before = base[key], let after = cand[key], before.paths > 0, after.paths > 0 else { return nil }
            return CriticalPathComparison(
                test: key.test, group: key.group, interval: key.interval,
                metric: key.test + "/" + CriticalPathRecord(interval: key.interval).metric,
                baselinePaths: before.paths, candidatePaths: after.paths, newWaits: after.newWaits(since: before),
                goneWaits: before.newWaits(since: after), newNames: after.newNames(since: before),
                goneNames: before.newNames(since: after), candidateWaits: after.commonWaits)
        }
    }

    /// What the verdict of a test whose path `row` (the row of ``metric``)
    /// judged longer or shorter says: "critical path +98% [+95, +101]:
    /// `parse worker 1` now waits for `parse worker 0` in `parse in two
    /// threads`" (the waits new on a longer path, or gone from a shorter
    /// one; else the intervals; else that its waits are the same); nil when
    /// the row is neither a regression nor an improvement.
    public func sentence(for row: MetricComparison) -> String? {
        guard row.verdict == .regression || row.verdict == .improvement else { return nil }
        let lead = "critical path" + (row.shift.map { " " + TestVerdict.compact($0) } ?? "")
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
