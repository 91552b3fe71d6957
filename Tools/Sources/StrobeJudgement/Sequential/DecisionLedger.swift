import Foundation
import StrobeStatistics
import StrobeToolFormatting

/// What `strobe compare` has decided so far, so that each round measures
/// only what is still open.
///
/// A gated metric's verdict stands from the look that reached it: later
/// looks neither re-judge it nor spend error rate on it, and the false-alarm
/// bound (the levels of all looks add up to at most alpha) still holds,
/// since each metric is flagged at most once, at a look that spent its
/// level. A test whose gated metrics are all decided stops running. A
/// metric the budget cannot decide either way is said so at that look and
/// measured no further, unless every metric is to be decided
/// (`--decide-all`): from ``roundsBeforeSettingAside`` rounds on, when even
/// an optimistic reading of the rounds so far
/// (``DecisionPower/roundsToDecide(_:optimistic:)``: the spread at its 80% lower
/// confidence bound, the change 0.84 standard errors further from the
/// nearer verdict) needs more rounds than the plan holds. A metric that
/// reading could still decide keeps its rounds: a comparison does not stop
/// with budget left while a gated metric could be decided.
///
/// A decided time whose test goes on running (another of its metrics is
/// open) is checked at every later look: when the interval of all the
/// rounds so far no longer overlaps the one it was decided on, the machine
/// changed during the comparison in a way the pairing by round did not
/// cancel (a sleep's length quantized differently under load, a neighbour
/// that slowed one build's phase), and the decision is withdrawn: the row
/// reads inconclusive from then on, with both intervals in a warning, and
/// is never decided again (``contradicted``). Withdrawing only turns
/// verdicts into "inconclusive", so the false-alarm bound still holds.
///
/// A test whose counted work is decided has its open time rows settled by
/// the counts (``CountedWork``; a test that waits, its CPU time only): they
/// keep the look's numbers, and the test runs no more for them, unless
/// every time is to be decided (``decidesTimes``, `--decide-times`).
public struct DecisionLedger: Sendable {
    /// A metric set aside because the budget cannot decide it.
    public struct OutOfReach: Sendable {
        /// The row as it was when it was set aside.
        public var row: MetricComparison
        /// The rounds run then.
        public var rounds: Int
        /// The rounds the plan had.
        public var plannedRounds: Int
    }

    /// The rounds a look must have before a metric may be set aside: fewer
    /// rounds' spread is too rough to say the budget cannot reach it (with
    /// 2 rounds a process that a neighbour slowed can double it).
    public static let roundsBeforeSettingAside = 6

    /// An empty ledger.
    public init() {}

    /// Whether metrics out of the budget's reach are measured anyway.
    public var decideAll = false
    /// Whether every time is measured until it is decided, even that of a
    /// CPU-bound test whose counted work settled it.
    public var decidesTimes = false
    /// Time rows settled by their test's counted work, as they were at the
    /// look that settled them, by metric and group.
    public private(set) var settled: [String: MetricComparison] = [:]
    /// Decided gated rows, by metric and group.
    public private(set) var decided: [String: MetricComparison] = [:]
    /// Gated rows set aside as out of reach, by metric and group.
    public private(set) var outOfReach: [String: OutOfReach] = [:]
    /// Decided times that later rounds contradicted, withdrawn and left
    /// inconclusive, by metric and group (see ``record(_:rounds:plannedRounds:)``).
    public private(set) var contradicted: [String: MetricComparison] = [:]

    static func key(_ row: MetricComparison) -> String { row.name + "\u{0}" + row.group }

    /// Takes a look's report: decided rows keep the verdict they were given
    /// first, newly decided ones are kept, metrics out of reach are set
    /// aside. Returns the report with those verdicts and the tests that
    /// still have an open gated metric (empty: nothing is left to measure).
    public mutating func record(_ report: DiffReport, rounds: Int, plannedRounds: Int) -> (
        report: DiffReport, openTests: [String]
    ) {
        var report = report
        for row in report.rows {
            let key = Self.key(row)
            guard contradicted[key] == nil, let decision = decided[key],
                let withdrawn = Self.withdrawn(decision, by: row)
            else { continue }
            decided[key] = nil
            contradicted[key] = withdrawn
        }
        report.rows = report.rows.map {
            contradicted[Self.key($0)] ?? decided[Self.key($0)] ?? settled[Self.key($0)] ?? $0
        }
        for row in report.rows where row.gates && row.verdict != .inconclusive {
            if decided[Self.key(row)] == nil { decided[Self.key(row)] = row }
        }
        if !decidesTimes { settleByCounts(&report) }
        report.testVerdicts = report.tests
        let open = report.rows.filter {
            $0.gates && $0.verdict == .inconclusive && $0.settledByCounts == nil && contradicted[Self.key($0)] == nil
        }
        if !decideAll {
            let left = max(plannedRounds - rounds, 0)
            for row in open where outOfReach[Self.key(row)] == nil {
                if Self.isOutOfReach(row, rounds: rounds, left: left) {
                    outOfReach[Self.key(row)] = OutOfReach(row: row, rounds: rounds, plannedRounds: plannedRounds)
                }
            }
        }
        var tests: [String] = []
        for row in open where outOfReach[Self.key(row)] == nil {
            let test = MetricDefaults.testPart(of: row.name)
            if !tests.contains(test) { tests.append(test) }
        }
        if let line = Self.outOfReachLine(outOfReach.values.sorted { $0.row.name < $1.row.name }) {
            report.warnings.append(line)
        }
        return (report, tests)
    }

    /// The decided time row `decision`, withdrawn because `fresh` (the same
    /// metric judged on more rounds) has an interval that does not overlap
    /// the one it was decided on; nil while they overlap, for a row that is
    /// not a time, and when no round was added.
    static func withdrawn(_ decision: MetricComparison, by fresh: MetricComparison) -> MetricComparison? {
        guard decision.kind.isTime, let decided = decision.shift, let now = fresh.shift,
            fresh.test.baselineReplicates > decision.test.baselineReplicates,
            now.lower > decided.upper || now.upper < decided.lower
        else { return nil }
        var row = fresh
        row.verdict = .inconclusive
        row.warnings.append(
            "the machine changed during the comparison: decided \(decision.verdict.rawValue) at "
                + "\(decision.test.baselineReplicates) rounds (\(TestVerdict.compact(decided))), it reads "
                + "\(TestVerdict.compact(now)) at \(fresh.test.baselineReplicates); the intervals do not overlap, so the "
                + "decision is withdrawn")
        return row
    }

    /// Settles the open rows of each test of `report` whose counted work is
    /// decided (``CountedWork/coverage(test:group:in:)``): every time of a
    /// CPU-bound test, the CPU time of one that waits, and every metric but
    /// the counts of one whose counts regressed
    /// (``CountedWork/settles(_:cpuTimeOnly:countsRegressed:)``). They are
    /// kept as they are at this look, marked where their interval does not
    /// size the change (``SizedInterval``).
    mutating func settleByCounts(_ report: inout DiffReport) {
        var coverages: [String: (coverage: WorkCoverage, cpuTimeOnly: Bool, regressed: Bool)?] = [:]
        for (index, row) in report.rows.enumerated()
        where row.gates && row.verdict == .inconclusive && row.settledByCounts == nil && !CountedWork.isCount(row) {
            let test = MetricDefaults.testPart(of: row.name)
            let testKey = test + "\u{0}" + row.group
            if coverages[testKey] == nil {
                coverages[testKey] = CountedWork.coverage(test: test, group: row.group, in: report)
            }
            guard let found = coverages[testKey] ?? nil,
                CountedWork.settles(row, cpuTimeOnly: found.cpuTimeOnly, countsRegressed: found.regressed)
            else { continue }
            var kept = row
            kept.settledByCounts = found.coverage
            if let shift = row.shift, !SizedInterval.sizes(shift) { kept.notMeasuredFarEnough = true }
            // Not a verdict of its own: the caveat on judging one process a
            // side does not apply.
            kept.warnings.removeAll { $0 == MetricComparison.singleProcessWarning }
            settled[Self.key(row)] = kept
            report.rows[index] = kept
        }
        Self.regroup(MetricComparison.singleProcessWarning, in: &report)
    }

    /// The report's line of `caveat`, rebuilt from the rows that still carry
    /// it; none when no row does.
    static func regroup(_ caveat: String, in report: inout DiffReport) {
        guard report.warnings.contains(where: { $0.hasPrefix(caveat) }) else { return }
        report.warnings.removeAll { $0.hasPrefix(caveat) }
        let items = WarningGroups.caveats(of: report.rows).filter { $0.caveat == caveat }
        report.warnings += WarningGroups.render(items)
    }

    /// One line for the metrics set aside: "set aside after round 32 as out
    /// of this budget's reach (about 378 rounds would decide them, 74
    /// fit): capture frame/wall (the budget shows about ±11%), …;
    /// --decide-all keeps measuring them."
    static func outOfReachLine(_ entries: [OutOfReach]) -> String? {
        guard let first = entries.first else { return nil }
        let needed = entries.compactMap { DecisionPower.roundsToDecide($0.row) }.filter { $0 < 1e7 }.min()
        var line = "set aside after round \(entries.map(\.rounds).max() ?? first.rounds) as out of this budget's reach"
        if let needed {
            line += " (about \(Int(needed.rounded(.up))) rounds or more would decide them, \(first.plannedRounds) fit)"
        }
        line +=
            ": "
            + entries.map { entry in
                let name = entry.row.name + (entry.row.group.isEmpty ? "" : " [\(entry.row.group)]")
                guard let reachable = DecisionPower.reachableFloor(entry.row, rounds: entry.plannedRounds) else {
                    return name
                }
                return name + " (the budget shows about ±\(HumanFormat.format(reachable * 100, decimals: 0))%)"
            }.joined(separator: ", ")
        return line + "; --decide-all keeps measuring them."
    }

    /// The log distance the hardest open gated metric of `report` must
    /// cover to be decided: per metric the larger of its estimated change
    /// and its room inside its floor, the smallest of those; the log of
    /// `1 + floor` when no open metric has a log-scale estimate.
    public func hardestDistance(in report: DiffReport, floor: Double) -> Double {
        let distances = report.rows.filter {
            $0.gates && $0.verdict == .inconclusive && $0.settledByCounts == nil && outOfReach[Self.key($0)] == nil
                && $0.test.logScale
        }.map { row in
            let effect = abs(row.test.estimate)
            return max(effect, DecisionPower.logFloor(row.relativeFloor) - effect)
        }
        return distances.min() ?? DecisionPower.logFloor(floor)
    }

    /// Whether an open row is out of the reach of a plan with `left` rounds
    /// after the `rounds` run: from ``roundsBeforeSettingAside`` rounds on,
    /// even the optimistic reading needs more than the plan holds.
    static func isOutOfReach(_ row: MetricComparison, rounds: Int, left: Int) -> Bool {
        guard rounds >= roundsBeforeSettingAside, let needed = DecisionPower.roundsToDecide(row, optimistic: true)
        else {
            return false
        }
        return needed > Double(rounds + left)
    }
}
