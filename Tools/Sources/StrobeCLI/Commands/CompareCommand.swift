import ArgumentParser
import Foundation
import StrobeCompare
import StrobeDiff
import StrobeJudgement
import StrobeProcessRunner
import StrobeStatistics

/// `strobe compare`: runs a baseline and a candidate in interleaved rounds
/// of one process each, in random order, and adds rounds until every gated
/// metric is decided or the time budget is spent.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Run baseline and candidate in interleaved rounds until every gated metric is decided.",
        discussion: """
            Each round runs one baseline process and one candidate process, in random order, so that \
            drift of the machine lands on both sides alike. CMD is run through /bin/sh -c. By default it \
            is a perf-suite executable (PerfSuite): Strobe appends --results-dir DIR/SIDE --iterations K \
            --round N. With --process, CMD is any program, measured per launch as `strobe run` measures \
            it (wall, CPU, rusage, and its trace when it writes one to STROBE_TRACE_OUTPUT).

            With --profile, each suite process samples its measure blocks' call stacks, and each slower or \
            faster test lists the functions whose inclusive CPU time per iteration changed, judged with the \
            process as the replicate and Benjamini–Hochberg across the test's functions.

            After --min-rounds rounds the runs are compared as `strobe diff` compares them (processes \
            as replicates, paired by round), and again each time the rounds have grown by half (2, 3, \
            4, 6, 9, 13, 19, ...), until every gated metric is decided or --max-time is spent. The false-alarm \
            rate is spent over these looks in equal shares (alpha spending): stopping early does not \
            raise it above --alpha, and a large change is decided at the first look that can decide it. A \
            gated metric whose floor even an optimistic reading of the rounds so far cannot reach in the \
            budget is said so, with the floor the budget can show, and measured no more (--decide-all \
            keeps measuring it). A test that does not wait (its wall time within 10% of its threads' CPU time) \
            and whose instructions and allocations are decided needs no decision of its time: unchanged counts \
            read "work unchanged", changed ones give the verdict, its time as measured so far \
            (--decide-times measures it to a decision). With no policy, \
            each test's wall time, CPU time and the suite's own metrics gate; resource counts are \
            reported. Progress goes to standard error: one line per look, and at most one line every \
            10 s between looks (a line rewritten in place on a terminal).

            With --git BASE (or BASE..HEAD) and --product NAME, Strobe builds the suite at each revision \
            itself, in a scratch worktree of its own per revision (under .git/strobe/builds, or --git-builds) \
            with one --build-command for both, and compares the two executables. BASE alone compares the \
            working tree as it is, uncommitted changes included (said so on standard error). Builds are \
            kept by the revision's files (its tree), so a second comparison against the same base builds \
            nothing; the user's checkout, index and branches are not touched. A failed build names the \
            revision, the command and its log (exit status 2).

            The results stay in RESULTS_DIR/baseline and RESULTS_DIR/candidate for `strobe diff` later; the report \
            goes to standard output or --output FILE. \
            Exit status: 0 no regression, 1 at least one gated regression, 2 bad input or a failed run.
            """
    )

    @Option(help: "The baseline's command line (run through /bin/sh -c).")
    var baseline: String?

    @Option(help: "The candidate's command line (run through /bin/sh -c).")
    var candidate: String?

    @Option(
        name: .customLong("max-time"), help: "Time budget for all rounds, e.g. 90s, 3m (default: 3m).",
        transform: DurationArgument.parse)
    var maxTime = DurationArgument(seconds: 180)

    @Option(
        name: .customLong("min-rounds"),
        help: """
            Rounds before the first look (default: 2; 4 with --profile, whose functions are judged with the \
            processes as replicates). At 2, a suite whose counts were read before round 1 and settle every test \
            (CPU-bound tests with their counts decided) ends after round 1.
            """)
    var minRounds: Int?

    @Option(help: "Measured iterations per process of a perf suite.")
    var iterations = 5

    @Option(
        help: """
            Where a perf suite's instructions are counted: auto (the CPU's counter, else one process per side \
            under Valgrind's callgrind, or under QEMU where callgrind would take over 20 s), hardware, \
            simulated, emulated or off.
            """)
    var instructions = "auto"

    @Option(
        help: """
            Warm-up iterations per suite process (default: the suite's own, 2 for a PerfSuite); with --process, \
            warm-up launches per side before round 1 (default: 1).
            """)
    var warmup: Int?

    @Option(name: .customLong("results-dir"), help: "Directory for the results; it must not hold results already.")
    var resultsDirectory = ".strobe/compare"

    @Option(help: "Compare only metrics whose names match this regular expression (default: every metric).")
    var metric: String?

    @Option(
        help: """
            A YAML policy: per metric pattern, direction, relative and absolute floors, and whether it gates \
            (default: none; wall and CPU time and the suite's metrics gate, resource counts are reported).
            """)
    var policy: String?

    @OptionGroup var reportOutput: ReportOutputOptions

    @OptionGroup var reportLink: ReportLinkOption

    /// Where the report goes; nil for standard output.
    var reportPath: String? { reportOutput.path }

    @Flag(help: "CMD is any program, measured per launch, not a perf suite (default: a perf suite).")
    var process = false

    @Flag(
        help: """
            Sample the suites' measure blocks (their --profile) and list, under each slower or faster test, the \
            functions whose CPU time per iteration changed (default: off).
            """)
    var profile = false

    @Option(help: "The test's name in the results with --process.")
    var name = "process"

    @OptionGroup var judgement: JudgementOptions

    @Option(
        help: "How long one process may run before it is stopped (default: 10m).", transform: DurationArgument.parse)
    var timeout = DurationArgument(seconds: 600)

    @Option(help: "Seed for the order of the sides within rounds (default: random).")
    var seed: UInt64?

    @Flag(
        name: .customLong("decide-all"),
        help: "Keep measuring metrics the budget cannot decide, instead of setting them aside (default: set aside).")
    var decideAll = false

    @Flag(
        name: .customLong("decide-times"),
        help: """
            Measure every test's time until it is decided, even a CPU-bound test's whose instructions and \
            allocations are decided (default: the counts settle such a test's time).
            """)
    var decidesTimes = false

    @OptionGroup var history: HistoryDestinationOptions

    @OptionGroup(title: "Two revisions of this repository") var git: GitCompareOptions

    /// The first problem with the flags, if any.
    var problem: String? {
        if let problem = git.problem(baseline: baseline, candidate: candidate) { return problem }
        if git.range == nil {
            guard let baseline, !baseline.isEmpty else {
                return "give the baseline's command with --baseline CMD (or two revisions with --git)"
            }
            guard let candidate, !candidate.isEmpty else { return "give the candidate's command with --candidate CMD" }
        }
        if let minRounds, minRounds < 2 { return "--min-rounds must be at least 2, not \(minRounds)" }
        guard iterations > 0 else { return "--iterations must be positive, not \(iterations)" }
        if let warmup, warmup < 0 { return "--warmup must be zero or more, not \(warmup)" }
        if let problem = judgement.problem { return problem }
        if let metric, (try? Regex(metric)) == nil {
            return "--metric: \"\(metric)\" is not a valid regular expression"
        }
        if profile, process {
            return "--profile samples a perf suite's measure blocks; it cannot be used with --process"
        }
        // Checked before the rounds, not after minutes of them.
        if let reportPath, let problem = unwritable(reportPath) {
            return "--output \(reportPath): cannot write the report: \(problem)"
        }
        return nil
    }

    func validate() throws {
        if let problem { throw ValidationError(problem) }
        if InstructionCounting(rawValue: instructions) == nil {
            throw ValidationError("--instructions \(instructions): expected auto, hardware, simulated, emulated or off")
        }
    }

    func run() throws {
        let sides: (baseline: String, candidate: String)
        if let built = try git.sides() {
            sides = built
        } else {
            guard let baseline, let candidate else { return }
            sides = (baseline, candidate)
        }
        let rules = try loadPolicy(policy)
        var settings = InterleavedComparison<ProcessRounds>.Settings(
            budget: maxTime.seconds, seed: seed ?? UInt64.random(in: 0...UInt64.max))
        settings.minimumRounds = minRounds ?? (profile ? 4 : 2)
        settings.options = judgement.resolved(policy: rules)
        settings.policy = rules
        settings.metricFilter = try metric.map { try Regex($0) }
        settings.decideAll = decideAll
        settings.decidesTimes = decidesTimes
        let progress = CompareProgress(budget: maxTime.seconds)
        let outcome: InterleavedComparison<ProcessRounds>.Outcome
        var instructionNote: String?
        do throws(ComparisonFailure) {
            let rounds = try ProcessRounds(
                directory: resultsDirectory, commands: [.baseline: sides.baseline, .candidate: sides.candidate],
                mode: process ? .perLaunch(name: name) : .suite, iterations: iterations, warmup: warmup,
                timeout: timeout.seconds, profile: profile,
                instructions: process ? .off : InstructionCounting(rawValue: instructions) ?? .auto)
            let start = Date()
            var comparison = InterleavedComparison(
                settings: settings, runner: rounds, clock: { Date().timeIntervalSince(start) })
            outcome = try comparison.run { event in progress.show(event) }
            instructionNote = comparison.runner.instructionNote.map { note in
                let seconds = comparison.runner.countingSeconds
                return seconds > 0 ? note + String(format: " (%.0f s)", seconds) : note
            }
        } catch {
            progress.clear()
            throw CommandFailure(message: error.message, status: 2)
        }
        progress.clear()
        progress.summary(rounds: outcome.rounds, elapsed: outcome.elapsed, report: outcome.report)
        if let instructionNote { FileHandle.standardError.write(Data((instructionNote + "\n").utf8)) }
        try history.record([resultsDirectory], comparison: true)
        let report = outcome.report
        try report.deliver(to: reportOutput, reportLink: reportLink.url) {
            try report.flameGraphs(
                baseline: SampleSet.load(["\(resultsDirectory)/baseline"]),
                candidate: SampleSet.load(["\(resultsDirectory)/candidate"]))
        }
    }
}
