import Foundation
import StrobeDiff
import StrobeJudgement
import StrobeStatistics

/// `strobe compare`'s experiment: rounds of one baseline and one candidate
/// process in random order, looks at the results as they grow, and a stop
/// when every gated metric is decided or the time budget is spent.
///
/// 1. **Rounds.** Each round runs one process of each side through the
///    ``RoundRunner``, in an order a seeded coin picks per round.
/// 2. **The plan.** After ``Settings/minimumRounds`` rounds the time per
///    round is known; the planned rounds are those that fit in the budget,
///    and a ``SequentialDesign`` spends the false-alarm rate over its looks.
/// 3. **Looks.** At each look of the design (and when the next round would
///    not fit in the budget) the results are compared as `strobe diff`
///    compares them; a ``DecisionLedger`` keeps each verdict from the look
///    that reached it and sets aside what the budget cannot decide.
/// 4. **Counts settle CPU-bound times.** A test that does not wait and
///    whose counted work is decided needs no decision of its time
///    (``CountedWork``), unless ``Settings/decidesTimes``.
///    Where the counts were read before round 1 and round 1's rusage shows
///    no test waiting, the comparison ends after that round.
/// 5. **Only what is open.** A suite's later rounds run only the tests
///    that still have an open gated metric.
///
/// The clock is injected, so the whole plan can be tested in-process with a
/// runner that writes results files of its own.
public struct InterleavedComparison<Runner: RoundRunner> {
    /// What the experiment is asked for.
    public struct Settings {
        /// Seconds for all rounds.
        public var budget: Double
        /// Rounds before the first look (at least 2). At 2, a comparison
        /// whose counts, read before round 1, settle every test after that
        /// round ends there; above 2 it never ends before this many.
        public var minimumRounds = 2
        /// The statistics' settings: alpha, floor, confidence.
        public var options = ComparisonOptions()
        /// Direction, floors and gating per metric.
        public var policy = ComparisonPolicy()
        /// Only metrics whose names match; nil for every metric.
        public var metricFilter: Regex<AnyRegexOutput>?
        /// Keep measuring metrics the budget cannot decide.
        public var decideAll = false
        /// Measure every time until it is decided, even that of a CPU-bound
        /// test whose counted work settled it (``CountedWork``); the
        /// policy's `decide-times` says the same.
        public var decidesTimes = false
        /// Seed of the coin that orders the sides in each round.
        public var seed: UInt64
        /// Choose the iterations per process from the split of the noise
        /// between and within processes at each look (``IterationPlan``),
        /// where the runner lets it; else keep the runner's.
        public var adaptsIterations = true

        /// The options every look judges by: ``options``, with a constant
        /// count judged exactly only once at least two processes on each
        /// side counted it (``ComparisonOptions/exactCountProcesses``), so
        /// a count the counting processes alone saw is not decided before
        /// round 1.
        var judgedOptions: ComparisonOptions {
            var judged = options
            judged.exactCountProcesses = max(judged.exactCountProcesses, 2)
            return judged
        }

        /// Settings with `budget` seconds and `seed`, the rest at their
        /// defaults.
        public init(budget: Double, seed: UInt64) {
            self.budget = budget
            self.seed = seed
        }
    }

    /// What happens, as it happens: for a progress line.
    public enum Event {
        /// A round ended that was not followed by a look.
        case round(Int, elapsed: Double)
        /// A look: how many of the gated metrics are decided.
        case look(SequentialDesign.Look, decided: Int, gated: Int, elapsed: Double)
        /// A line of its own: a count decided, the tests narrowed.
        case note(String)
        /// The counting processes before round 1 ended; their counts'
        /// verdicts follow as notes.
        case counted(elapsed: Double)
    }

    /// How it ended.
    public struct Outcome {
        /// The report of the last look, each verdict as first reached.
        public var report: DiffReport
        /// Rounds run.
        public var rounds: Int
        /// Seconds the rounds and looks took.
        public var elapsed: Double
    }

    /// What is asked.
    public let settings: Settings
    /// What runs the processes.
    public private(set) var runner: Runner
    private let clock: () -> Double

    /// An experiment of `settings` whose processes `runner` runs; `clock`
    /// gives the seconds since the experiment began.
    public init(settings: Settings, runner: Runner, clock: @escaping () -> Double) {
        self.settings = settings
        self.runner = runner
        self.clock = clock
    }

    /// Runs rounds and looks until every gated metric is decided or the
    /// budget is spent, telling `events` as it goes.
    public mutating func run(events: (Event) -> Void = { _ in }) throws(ComparisonFailure) -> Outcome {
        var generator = SeededGenerator(seed: settings.seed)
        let minimumRounds = max(settings.minimumRounds, 2)
        var design: SequentialDesign?
        var lookNumber = 0
        var rounds = 0
        var ledger = DecisionLedger()
        ledger.decideAll = settings.decideAll
        ledger.decidesTimes = settings.decidesTimes || settings.policy.decidesTimes == true
        var counts = DecidedCounts()
        var allTests: [String] = []
        var onlyTests: [String]?
        // Each round's iterations per process and seconds.
        var roundSeconds: [(iterations: Int?, seconds: Double)] = []
        // The last look's seconds: reading the results and judging them.
        var lookSeconds = 0.0
        // Counts read by a simulation or emulation decide at once: told
        // before the rounds a look of times needs.
        let countedFirst = try runner.countBeforeRounds(tests: onlyTests)
        if countedFirst {
            events(.counted(elapsed: clock()))
            for line in counts.newLines(in: try countsSoFar(), at: "before round 1") { events(.note(line)) }
        }
        while true {
            rounds += 1
            var order = ComparisonSide.allCases
            if Bool.random(using: &generator) { order.reverse() }
            let roundStart = clock()
            try runner.runRound(rounds, order: order, tests: onlyTests)
            let elapsed = clock()
            roundSeconds.append((runner.iterationsPerProcess, elapsed - roundStart))
            if rounds == 1, countedFirst, let ended = try endAfterCountedRound(ledger: ledger, elapsed: elapsed) {
                events(.look(ended.look, decided: ended.decided, gated: ended.gated, elapsed: clock()))
                for line in counts.newLines(in: ended.report, at: "at look 1") { events(.note(line)) }
                try record(ended.report)
                return Outcome(report: ended.report, rounds: rounds, elapsed: clock())
            }
            guard rounds >= minimumRounds else {
                events(.round(rounds, elapsed: elapsed))
                continue
            }
            let perRound = max(elapsed - runner.countingSeconds, 0) / Double(rounds)
            if design == nil {
                // The plan: the rounds that fit in the budget at the pace so far.
                let planned = plannedRounds(after: rounds, elapsed: elapsed, perRound: perRound, atLeast: minimumRounds)
                design = SequentialDesign(
                    alpha: settings.options.alpha, confidence: settings.options.confidence, plannedRounds: planned,
                    firstLook: minimumRounds)
            }
            guard var current = design else { continue }
            // Another round (at the slower of the mean pace and the last
            // round's) and the look after it must end within the budget.
            let nextRound = max(perRound, roundSeconds.last?.seconds ?? perRound)
            let timeUp = elapsed + nextRound + lookSeconds > settings.budget
            guard timeUp || current.looks(afterRound: rounds) else {
                events(.round(rounds, elapsed: elapsed))
                continue
            }
            lookNumber += 1
            let lookStart = clock()
            let look = current.look(number: lookNumber, rounds: rounds, final: timeUp)
            design = current
            let (judged, baselineSet, candidateSet) = try judgeResults(at: look)
            lookSeconds = clock() - lookStart
            // The rounds that fit: the plan's, or more at the last round's
            // pace when fewer iterations or tests made rounds shorter.
            let pace = roundSeconds.last?.seconds ?? perRound
            let fitting = plannedRounds(after: rounds, elapsed: elapsed, perRound: pace, atLeast: current.plannedRounds)
            let (report, openTests) = ledger.record(judged, rounds: rounds, plannedRounds: fitting)
            // Rounds of fewer tests (or fewer iterations) are shorter: the
            // plan grows to what fits, so the budget is not left unspent
            // while a metric is open.
            if fitting > current.plannedRounds { design?.plannedRounds = fitting }
            let gated = report.rows.filter(\.gates).count
            events(.look(look, decided: gated - report.undecided.count, gated: gated, elapsed: clock()))
            for line in counts.newLines(in: report, at: "at look \(look.number)") { events(.note(line)) }
            if openTests.isEmpty || look.isFinal {
                try record(report)
                return Outcome(report: report, rounds: rounds, elapsed: clock())
            }
            if runner.runsSelectedTests {
                // Decided tests, and those out of the budget's reach, run no more.
                if allTests.isEmpty { allTests = report.tests.map(\.test) }
                let narrowed = openTests.count < Set(allTests).count ? openTests : nil
                if let narrowed, narrowed != onlyTests {
                    events(.note("measuring only \(narrowed.joined(separator: ", ")) from round \(rounds + 1)"))
                }
                onlyTests = narrowed
            }
            let recent = roundSeconds.filter { $0.iterations == runner.iterationsPerProcess }.suffix(4)
            // The split of the noise needs a few processes a side: with two,
            // the spread between them has one degree of freedom.
            if settings.adaptsIterations, rounds >= IterationPlan.roundsBeforePlanning,
                let current = runner.iterationsPerProcess, !recent.isEmpty,
                let plan = IterationPlan.plan(
                    baseline: baselineSet, candidate: candidateSet, tests: openTests,
                    processSeconds: recent.reduce(0) { $0 + $1.seconds } / Double(2 * recent.count),
                    iterations: current,
                    target: ledger.hardestDistance(in: report, floor: settings.options.minimumEffect),
                    level: look.alpha),
                plan.iterations != current
            {
                runner.iterationsPerProcess = plan.iterations
                events(
                    .note(
                        "\(plan.iterations) iterations per process from round \(rounds + 1) (noise ±"
                            + "\(Self.percent(plan.within)) within a process, ±\(Self.percent(plan.between)) between "
                            + "processes)"
                    ))
            }
        }
    }

    /// The look after round 1 of a comparison whose counts were read before
    /// it, when that look settles every test: each gated count decided (the
    /// counting process and round 1's give two processes a side) and every
    /// other gated metric settled by the counts (``CountedWork``: a CPU-bound
    /// test whose work is decided, the times of one whose counts regressed).
    /// Round 1 is what tells whether a test waits, from its rusage; no time
    /// is decided at this look. Nil, with nothing of the look kept, when a
    /// metric is left for the rounds, when the counts do not settle times
    /// (``Settings/decidesTimes``), or when more rounds before the first
    /// look were asked for (``Settings/minimumRounds`` above 2).
    private func endAfterCountedRound(ledger: DecisionLedger, elapsed: Double) throws(ComparisonFailure) -> (
        report: DiffReport, look: SequentialDesign.Look, decided: Int, gated: Int
    )? {
        guard !ledger.decidesTimes, settings.minimumRounds <= 2 else { return nil }
        let planned = plannedRounds(after: 1, elapsed: elapsed, perRound: elapsed - runner.countingSeconds, atLeast: 2)
        var design = SequentialDesign(
            alpha: settings.options.alpha, confidence: settings.options.confidence, plannedRounds: planned,
            firstLook: 1)
        let look = design.look(number: 1, rounds: 1, final: false)
        let judged = try judgeResults(at: look).report
        var trial = ledger
        var (report, openTests) = trial.record(judged, rounds: 1, plannedRounds: planned)
        let gated = report.rows.filter(\.gates)
        guard openTests.isEmpty, !gated.isEmpty,
            gated.allSatisfy({
                CountedWork.isCount($0) ? $0.verdict != .inconclusive : $0.settledByCounts != nil
            })
        else { return nil }
        // What is left of the caveat on one process a side concerns the
        // reported metrics; its advice, to run more processes, is this
        // command's own.
        func reworded(_ line: String) -> String {
            guard line.hasPrefix(MetricComparison.singleProcessWarning) else { return line }
            return Self.reportedAfterRoundOne + line.dropFirst(MetricComparison.singleProcessWarning.count)
        }
        report.warnings = report.warnings.map(reworded)
        for index in report.rows.indices { report.rows[index].warnings = report.rows[index].warnings.map(reworded) }
        return (report, look, gated.count - report.undecided.count, gated.count)
    }

    /// The rounds that fit in the budget: `rounds` run by `elapsed`, and as
    /// many more as the rest of the budget holds at `perRound` seconds each;
    /// at least `floor`.
    private func plannedRounds(after rounds: Int, elapsed: Double, perRound: Double, atLeast floor: Int) -> Int {
        max(floor, rounds + Int(max(settings.budget - elapsed, 0) / max(perRound, 1e-3)))
    }

    /// The caveat on the reported metrics of a comparison that ended after
    /// round 1.
    static var reportedAfterRoundOne: String {
        "reported only, judged on the iterations of one process a side (the counts ended the comparison after "
            + "round 1; --min-rounds 3 runs more)"
    }

    /// Writes the decisions of `report` beside the results
    /// (``RecordedDecisions``), where both sides' directories lie in one,
    /// so that a later `strobe diff` of them shows these numbers.
    func record(_ report: DiffReport) throws(ComparisonFailure) {
        let parents = ComparisonSide.allCases.map {
            URL(fileURLWithPath: runner.resultsDirectory(of: $0)).standardizedFileURL.deletingLastPathComponent().path
        }
        guard let directory = parents.first, Set(parents).count == 1 else { return }
        do throws(DiffError) {
            try RecordedDecisions(report: report, directory: directory, policy: settings.policy).write(
                to: directory)
        } catch {
            throw ComparisonFailure(error.description)
        }
    }

    /// The results so far judged as one fixed sample, for their counts.
    private func countsSoFar() throws(ComparisonFailure) -> DiffReport { try judgeResults(at: nil).report }

    /// Both sides' results so far, read back and judged at `look` (nil: as
    /// one fixed sample), with the sample sets read.
    private func judgeResults(at look: SequentialDesign.Look?) throws(ComparisonFailure) -> (
        report: DiffReport, baseline: SampleSet, candidate: SampleSet
    ) {
        do throws(DiffError) {
            let baseline = try SampleSet.load([runner.resultsDirectory(of: .baseline)])
            let candidate = try SampleSet.load([runner.resultsDirectory(of: .candidate)])
            let report = try Judgement.compare(
                baseline: baseline, candidate: candidate, metricFilter: settings.metricFilter,
                options: settings.judgedOptions, policy: settings.policy, look: look)
            return (report, baseline, candidate)
        } catch {
            throw ComparisonFailure(error.description)
        }
    }

    /// `1.2%`.
    static func percent(_ fraction: Double) -> String {
        String(format: fraction >= 0.1 ? "%.0f%%" : "%.1f%%", fraction * 100)
    }
}
