import Foundation
import StrobeResults
import StrobeStatistics

/// When a test's counted work settles its time in `strobe compare`.
///
/// Instructions and allocations repeat from process to process to a few
/// thousandths of a percent, so they are decided at the first look, while
/// a time on a shared machine may need minutes of rounds. For a test that
/// does not wait, the time says little the counts have not said: once its
/// counts are decided, a CPU-bound test whose counts are unchanged is
/// "work unchanged" and one whose counts changed has the counts' verdict;
/// its time rows keep what they measured at that look
/// (``WorkCoverage``) and are measured no further. A test that waits is
/// measured until its wall time and its other durations are decided, since
/// waiting costs time without instructions; its CPU time (`process.cpu` and
/// its parts), which is time spent executing, is settled by its counts as
/// a CPU-bound test's is, so that a sleep that grew is decided by its wall
/// time alone rather than kept open by a CPU time of a few milliseconds
/// that the machine's noise makes slow to call unchanged. Waiting is read
/// from the rusage the runner records: for a synchronous block, the measuring thread's voluntary context switches
/// (a sleep, a lock, I/O each give one; a neighbour's preemption gives
/// involuntary ones only); where the runner has no thread figures, the
/// wall time clearly above the process's CPU time in every iteration.
/// A measuring thread that blocks to join workers of its own
/// (`concurrentPerform`, a task group, threads it started) does not wait
/// while they compute side by side: the process's threads then spend more
/// than its wall time on the CPU. Such a test counts as CPU-bound when its
/// parallelism (the process's CPU time over the wall time) is the same on both sides
/// (``JudgementDefaults/parallelismTolerance``); where it moved, the workers overlap
/// differently (a lock taken too wide runs them one after another, with
/// the same instructions), and the time is measured.
///
/// What identical counts do not prove: the same instructions can take
/// longer through cache and memory behaviour (a layout that misses more),
/// a slower mix of the same count, the CPU's frequency, contention between
/// the test's own threads that spins rather than sleeps, or more time in
/// the kernel (the counts are of user-space instructions). A test
/// where those matter should be measured to the end (`--decide-times`, or
/// `decide-times: true` in the policy).
public enum CountedWork {
    /// The measuring thread's voluntary context switches per iteration.
    static let threadSwitches = "thread.context_switches.voluntary"

    /// What the counts of `test` (in `group`) settle of its time in
    /// `report`, and whether they settle its CPU time only: nil unless its
    /// instruction count is gated and judged as a deterministic count and
    /// every gated count of the test (instructions, the runner's exact
    /// counts) is decided. `cpuTimeOnly` is true unless the test is
    /// CPU-bound (it waits, or that cannot be told); `regressed`, whether a
    /// gated count was decided a regression.
    public static func coverage(test: String, group: String, in report: DiffReport) -> (
        coverage: WorkCoverage, cpuTimeOnly: Bool, regressed: Bool
    )? {
        let counts = report.rows.filter {
            $0.gates && $0.group == group && MetricDefaults.testPart(of: $0.name) == test && isCount($0)
        }
        guard let instructions = counts.first(where: { MetricDefaults.isInstructions($0.name) }),
            instructions.isWithinCountTolerance, counts.allSatisfy({ $0.verdict != .inconclusive })
        else { return nil }
        let coverage: WorkCoverage = counts.allSatisfy { $0.verdict == .unchanged } ? .unchanged : .changed
        return (
            coverage, waits(test: test, group: group, in: report) != false,
            counts.contains { $0.verdict == .regression }
        )
    }

    /// Whether counts that cover the time of `row`'s test (``coverage(test:group:in:)``)
    /// settle `row`: any time of a CPU-bound test, only the CPU time of one
    /// that waits; and any metric that is not counted work (a time, a
    /// value the test reports, such as frames over their budget) of a test
    /// whose counts regressed (`countsRegressed`), waiting or not. Such a
    /// test is a regression whatever its other metrics do, and so is the
    /// comparison: measuring them further would only narrow their
    /// intervals, so they are kept as measured at the look that decided the
    /// counts. Counts that improved or stayed put settle times only: a
    /// reported metric may still be a regression there.
    static func settles(_ row: MetricComparison, cpuTimeOnly: Bool, countsRegressed: Bool) -> Bool {
        guard !isCount(row) else { return false }
        if countsRegressed { return true }
        return isSettleableTime(row) && (!cpuTimeOnly || row.kind.isCPUTime)
    }

    /// Whether `row` is counted work: the instructions or one of the
    /// runner's exact counts.
    public static func isCount(_ row: MetricComparison) -> Bool { row.kind.isCountedWork }

    /// Whether `row` is a time a test's counts can settle: a row in a unit
    /// of time (``MetricKind/timeUnits``) that is not counted work.
    static func isSettleableTime(_ row: MetricComparison) -> Bool {
        MetricKind.timeUnits.contains(row.unit) && !row.kind.isCountedWork
    }

    /// Whether `test` waits: its measuring thread blocked (a voluntary
    /// context switch) in at least half the iterations of a side, unless
    /// it was joining workers that computed side by side with the same
    /// parallelism on both sides (in its least-waiting iteration on each
    /// side the process's threads were on the CPU for more than
    /// 1 + ``JudgementDefaults/parallelismTolerance`` times the wall time, and the sides'
    /// median parallelism agrees within ``JudgementDefaults/parallelismTolerance``): one that
    /// hands its work to a single worker, or sleeps a little, is measured.
    /// Without the thread's figures (an asynchronous block, a program
    /// measured per launch): in its least-waiting iteration on either side more than
    /// ``JudgementDefaults/waitingShare`` of the wall time was not CPU time of the process's
    /// threads, or its threads ran side by side (a median parallelism above
    /// 1 + ``JudgementDefaults/parallelismTolerance`` on a side) with a parallelism that
    /// moved. Nil when neither can be told.
    public static func waits(test: String, group: String, in report: DiffReport) -> Bool? {
        let wall = report.samples[DiffReport.sampleKey("\(test)/wall", group)]
        let cpu = report.samples[DiffReport.sampleKey("\(test)/\(MetricDefaults.cpuTotal)", group)]
        // A figure of each side's wall and CPU times, both sides or none.
        func bothSides(_ figure: (_ wall: [Double], _ cpu: [Double]) -> Double?) -> (Double, Double)? {
            guard let wall, let cpu, let baseline = figure(wall.baseline, cpu.baseline),
                let candidate = figure(wall.candidate, cpu.candidate)
            else { return nil }
            return (baseline, candidate)
        }
        let shares = bothSides(busiestShare)
        let parallelism = bothSides(medianParallelism)
        let agrees =
            parallelism.map { abs(log($0.1 / $0.0)) <= log(1 + JudgementDefaults.parallelismTolerance) } ?? false
        if let switches = report.samples[DiffReport.sampleKey("\(test)/\(threadSwitches)", group)],
            !switches.baseline.isEmpty, !switches.candidate.isEmpty
        {
            let blocked = [switches.baseline, switches.candidate].contains {
                Quantiles.median(sorted: $0.sorted()) >= 1
            }
            guard blocked else { return false }
            // Workers side by side on the CPU all the while it waited.
            let keptBusy = shares.map { min($0.0, $0.1) > 1 + JudgementDefaults.parallelismTolerance } ?? false
            return !(keptBusy && agrees)
        }
        guard let shares else { return nil }
        if min(shares.0, shares.1) < 1 - JudgementDefaults.waitingShare { return true }
        let sideBySide = parallelism.map { max($0.0, $0.1) > 1 + JudgementDefaults.parallelismTolerance } ?? false
        return sideBySide && !agrees
    }

    /// The median over iterations of the process's CPU time over the wall
    /// time (where the lists do not pair up, the ratio of their medians);
    /// nil when either is empty or the wall time is not positive.
    static func medianParallelism(wall: [Double], cpu: [Double]) -> Double? {
        cpuShare(wall: wall, cpu: cpu) { $0.isEmpty ? nil : Quantiles.median(sorted: $0.sorted()) }
    }

    /// The largest share of its wall time an iteration spent on the CPU
    /// (CPU time / wall time; above 1 for threads running side by side);
    /// where the two lists do not pair up, the ratio of their medians. Nil
    /// when either is empty or the wall time is not positive.
    static func busiestShare(wall: [Double], cpu: [Double]) -> Double? {
        cpuShare(wall: wall, cpu: cpu) { $0.max() }
    }

    /// `summary` of the iterations' CPU time over wall time where the two
    /// lists pair up (the iterations of positive wall time), else the ratio
    /// of their medians; nil when either is empty or the wall time is not
    /// positive.
    private static func cpuShare(wall: [Double], cpu: [Double], _ summary: ([Double]) -> Double?) -> Double? {
        guard !wall.isEmpty, !cpu.isEmpty else { return nil }
        if wall.count == cpu.count {
            return summary(zip(wall, cpu).compactMap { wall, cpu in wall > 0 ? cpu / wall : nil })
        }
        let wallMedian = Quantiles.median(sorted: wall.sorted())
        guard wallMedian > 0 else { return nil }
        return Quantiles.median(sorted: cpu.sorted()) / wallMedian
    }
}
