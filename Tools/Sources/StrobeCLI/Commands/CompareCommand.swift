import ArgumentParser
import Foundation
import StrobeDiff
import StrobeProcessRunner
import StrobeResults
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
            is a perf-suite executable (PerfSuite): Strobe appends --output DIR/SIDE --iterations K \
            --round N. With --process, CMD is any program, measured per launch as `strobe run` measures \
            it (wall, CPU, rusage, and its trace when it writes one to STROBE_TRACE_OUTPUT).

            With --profile, each suite process samples its measure blocks' call stacks, and each slower or \
            faster test lists the functions whose inclusive CPU time per iteration changed, judged with the \
            process as the replicate and Benjamini–Hochberg across the test's functions.

            After --min-rounds rounds the runs are compared as `strobe diff` compares them (processes \
            as replicates, paired by round), and again each time the rounds have grown by half (4, 6, \
            9, 14, 21, ...), until every gated metric is decided or --max-time is spent. The false-alarm \
            rate is spent over these looks in equal shares (alpha spending): stopping early does not \
            raise it above --alpha, and a large change is decided at the first look. With no policy, \
            each test's wall time, CPU time and the suite's own metrics gate; resource counts are \
            reported. Progress goes to standard error: one line per look, and at most one line every \
            10 s between looks (a line rewritten in place on a terminal).

            The results stay in RESULTS_DIR/baseline and RESULTS_DIR/candidate for `strobe diff` later; the report goes to standard output or --output FILE. \
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

    @Option(name: .customLong("min-rounds"), help: "Rounds before the first look.")
    var minRounds = 4

    @Option(help: "Measured iterations per process of a perf suite.")
    var iterations = 5

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

    @Option(help: "text, markdown, json or html.")
    var format: DiffCommand.Format = .text

    @Option(name: .shortAndLong, help: "Write the report here (default: standard output).")
    var output: String?

    /// The earlier spelling of `--output`, kept for a release.
    @Option(name: .customLong("report"), help: .private)
    var legacyReport: String?

    /// Where the report goes, by either spelling; nil for standard output.
    var reportPath: String? { output ?? legacyReport }

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

    @Option(help: "False-alarm rate over all looks and metrics (default: 0.01, or the policy's).")
    var alpha: Double?

    @Option(name: .customLong("min-effect"), help: "Noise floor in percent (default: 2, or the policy's).")
    var minEffect: Double?

    @Option(
        help: "How long one process may run before it is stopped (default: 10m).", transform: DurationArgument.parse)
    var timeout = DurationArgument(seconds: 600)

    @Option(help: "Seed for the order of the sides within rounds (default: random).")
    var seed: UInt64?

    @Flag(
        name: .customLong("decide-all"),
        help: "Keep measuring metrics the budget cannot decide, instead of setting them aside (default: set aside).")
    var decideAll = false

    @OptionGroup var history: HistoryDestinationOptions

    /// The first problem with the flags, if any.
    var problem: String? {
        guard let baseline, !baseline.isEmpty else { return "give the baseline's command with --baseline CMD" }
        guard let candidate, !candidate.isEmpty else { return "give the candidate's command with --candidate CMD" }
        guard minRounds >= 2 else { return "--min-rounds must be at least 2, not \(minRounds)" }
        guard iterations > 0 else { return "--iterations must be positive, not \(iterations)" }
        if let warmup, warmup < 0 { return "--warmup must be zero or more, not \(warmup)" }
        if let alpha, !(alpha > 0 && alpha < 1) { return "--alpha must be between 0 and 1, not \(alpha)" }
        if let minEffect, !(minEffect >= 0 && minEffect < 100) {
            return "--min-effect is a percentage from 0 to 100, not \(minEffect)"
        }
        if let metric, (try? Regex(metric)) == nil {
            return "--metric: \"\(metric)\" is not a valid regular expression"
        }
        if profile, process {
            return "--profile samples a perf suite's measure blocks; it cannot be used with --process"
        }
        if output != nil, legacyReport != nil { return "give the report's file once, with --output FILE" }
        // Checked before the rounds, not after minutes of them.
        if let reportPath, let problem = unwritable(reportPath) {
            return "--output \(reportPath): cannot write the report: \(problem)"
        }
        return nil
    }

    func validate() throws {
        if let problem { throw ValidationError(problem) }
    }

    func run() throws {
        guard let baseline, let candidate else { return }
        let budget = maxTime
        let rules = try loadPolicy(policy)
        let options = rules.options(
            overriding: ComparisonOptions(), alpha: alpha, minimumEffect: minEffect.map { $0 / 100 })
        let filter = try metric.map { try Regex($0) }

        var experiment = try InterleavedExperiment(
            directory: resultsDirectory, commands: [.baseline: baseline, .candidate: candidate],
            mode: process ? .perLaunch(name: name) : .suite,
            iterations: iterations, warmup: warmup, timeout: timeout.seconds, seed: seed)
        experiment.profile = profile
        let progress = CompareProgress(budget: budget.seconds)
        var design: SequentialDesign?
        var lookNumber = 0
        var rounds = 0
        var final: DiffReport?
        var allTests: [String] = []
        var ledger = DecisionLedger()
        ledger.decideAll = decideAll
        var counts = DecidedCounts()
        while final == nil {
            rounds += 1
            do {
                try experiment.runRound(rounds)
            } catch {
                progress.clear()
                throw error
            }
            let elapsed = progress.elapsed
            guard rounds >= minRounds else {
                progress.round(rounds)
                continue
            }
            let perRound = elapsed / Double(rounds)
            if design == nil {
                // The plan: the rounds that fit in the budget at the pace so far.
                let remaining = max(budget.seconds - elapsed, 0)
                let planned = max(minRounds, rounds + Int(remaining / max(perRound, 1e-3)))
                design = SequentialDesign(
                    alpha: options.alpha, confidence: options.confidence, plannedRounds: planned, firstLook: minRounds)
            }
            guard var current = design else { break }
            let timeUp = elapsed + perRound > budget.seconds
            guard timeUp || current.looks(afterRound: rounds) else {
                progress.round(rounds)
                continue
            }
            lookNumber += 1
            let look = current.look(number: lookNumber, rounds: rounds, final: timeUp)
            design = current
            let judged: DiffReport
            do {
                judged = try DiffEngine.diff(
                    baseline: SampleSet.load([experiment.directory(of: .baseline)]),
                    candidate: SampleSet.load([experiment.directory(of: .candidate)]),
                    metricFilter: filter, options: options, policy: rules, look: look)
            } catch {
                progress.clear()
                throw error
            }
            let (report, openTests) = ledger.record(judged, rounds: rounds, plannedRounds: current.plannedRounds)
            let gated = report.rows.filter(\.gates).count
            progress.look(look, decided: gated - report.undecided.count, of: gated)
            for line in counts.newLines(in: report, look: look) { progress.note(line) }
            if openTests.isEmpty || look.isFinal {
                final = report
            } else if !process {
                // Decided tests, and those out of the budget's reach, run no more.
                if allTests.isEmpty { allTests = report.tests.map(\.test) }
                let narrowed = openTests.count < Set(allTests).count ? openTests : nil
                if let narrowed, narrowed != experiment.onlyTests {
                    progress.note("measuring only \(narrowed.joined(separator: ", ")) from round \(rounds + 1)")
                }
                experiment.onlyTests = narrowed
            }
        }
        progress.clear()
        guard let report = final else { return }
        progress.summary(rounds: rounds, report: report)
        try history.record([resultsDirectory], comparison: true)
        try report.deliver(as: format, to: reportPath)
    }
}

/// The progress of a comparison on standard error. On a terminal, one line
/// rewritten after every round. Elsewhere (a CI log), a line per look and at
/// most one line every ``quietInterval`` seconds between looks.
final class CompareProgress {
    private let start = Date()
    private let budget: Double
    private let interactive: Bool
    private let write: (String) -> Void
    private let clock: () -> Double
    private var lastLine = -Double.infinity

    /// Seconds between two progress lines that are not looks, in a log.
    static let quietInterval = 10.0

    init(budget: Double) {
        self.budget = budget
        interactive = isatty(STDERR_FILENO) != 0 && ProcessInfo.processInfo.environment["CI"] != "true"
        write = { FileHandle.standardError.write(Data($0.utf8)) }
        let start = self.start
        clock = { Date().timeIntervalSince(start) }
    }

    /// A progress writer for a log that reads the time from `clock` and
    /// writes lines through `write`.
    init(budget: Double, clock: @escaping () -> Double, write: @escaping (String) -> Void) {
        self.budget = budget
        interactive = false
        self.write = write
        self.clock = clock
    }

    var elapsed: Double { clock() }

    /// After a round that was not a look.
    func round(_ round: Int) {
        let now = elapsed
        let line = "round \(round), \(Self.clock(now)) of \(Self.clock(budget))"
        if interactive {
            write("\r" + line + "\u{1B}[K")
        } else if now - lastLine >= Self.quietInterval {
            lastLine = now
            write("compare: " + line + "\n")
        }
    }

    /// After a look.
    func look(_ look: SequentialDesign.Look, decided: Int, of gated: Int) {
        let now = elapsed
        let line =
            "round \(look.rounds), \(Self.clock(now)) of \(Self.clock(budget)): look \(look.number), "
            + "\(decided) of \(gated) gated metrics decided"
        if interactive {
            write("\r" + line + "\u{1B}[K")
        } else {
            lastLine = now
            write("compare: " + line + "\n")
        }
    }

    func clear() {
        if interactive { write("\r\u{1B}[K") }
    }

    /// A line of its own, kept above the progress line on a terminal.
    func note(_ line: String) {
        write((interactive ? "\r\u{1B}[K" : "") + "compare: " + line + "\n")
    }

    func summary(rounds: Int, report: DiffReport) {
        var line = "compare: \(rounds) rounds in \(Self.clock(elapsed))"
        if let look = report.look {
            line += ", look \(look.number) at level \(String(format: "%.2g", look.alpha))"
            if !report.undecided.isEmpty {
                line +=
                    look.isFinal
                    ? "; the budget ran out with \(Self.gatedMetrics(report.undecided.count)) inconclusive"
                    : "; \(Self.gatedMetrics(report.undecided.count)) inconclusive, out of the budget's reach"
            }
        }
        write(line + "\n")
    }

    /// "1 gated metric", "3 gated metrics".
    static func gatedMetrics(_ count: Int) -> String { "\(count) gated metric\(count == 1 ? "" : "s")" }

    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return String(format: "%d:%02d", total / 60, total % 60)
    }
}
