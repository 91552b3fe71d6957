import ArgumentParser
import Foundation
import StrobeDiff
import StrobeFlameGraph
import StrobeJudgement
import StrobeStatistics

/// `strobe diff`: did the candidate regress against the baseline?
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare perf results of a candidate with a baseline, with statistics; gate CI on it.",
        discussion: """
            Each PATH is a results file, a directory of them, or a CSV of samples (header with at least \
            metric,value; optional unit, better=lower|higher, run (the process a row came from) and round \
            (pairs a baseline run with a candidate run); other columns are dimensions). Each process is a \
            replicate: its iterations are summarised by their median, and the processes of the two sides \
            are compared with a t-test on log values, paired by round when every run has one (as \
            strobe compare writes them). Benjamini-Hochberg controls the false discovery rate across all \
            metrics; a noise floor keeps small changes from being called. Metrics with no spread \
            (deterministic counts) and zero baselines are judged by an absolute floor. With a single \
            process on a side, iterations are compared as independent samples, with a warning. \
            Verdicts: regression, improvement, unchanged, inconclusive (with its interval against the \
            floor and what would decide it). The report reads per test (slower, faster, unchanged, \
            undecided), then per metric. By default each test's wall time, its CPU time (user + system) \
            and the metrics the suite names gate; the runner's resource counts (context switches, faults, \
            the user/system split, resident memory) are reported with absolute floors of about a clock \
            tick, one count or one page. --policy FILE sets direction, floors and gating per metric (YAML).

            Instead of --baseline, --baseline-history STORE judges the candidate against the newest runs \
            of a store (SQLite path or postgres:// URL) like the candidate's: its suites, on its CPU \
            model, and the --where conditions (e.g. --where branch=main); only runs after the last \
            change `strobe trend` finds in them in a metric that gates count, and at most --last of them. Which runs \
            were \
            chosen is printed on standard error.

            The results of a `strobe compare` (--baseline RESULTS_DIR/baseline --candidate \
            RESULTS_DIR/candidate) carry its decisions (RESULTS_DIR/decisions.json): every format shows those \
            verdicts, estimates and intervals, each from the look that reached it, and --metric only selects \
            rows. --rejudge judges the results again, all rounds at once (the report says so); --group-by, \
            --policy, --alpha, --min-effect and --percentiles other than compare's change the judgement and \
            need it.

            Exit status: 0 no regression, 1 at least one regression, 2 bad input.
            """
    )

    @Option(parsing: .upToNextOption, help: "Results files, directories or CSV files of the baseline.")
    var baseline: [String] = []

    @Option(parsing: .upToNextOption, help: "Results files, directories or CSV files of the candidate.")
    var candidate: [String] = []

    @Option(
        name: .customLong("baseline-history"),
        help: "Instead of --baseline: a store (path or postgres:// URL) whose recent runs are the baseline.")
    var baselineHistory: String?

    @OptionGroup var password: PostgresPasswordOption

    @Option(
        name: .customLong("where"),
        help: "KEY=VALUE: with --baseline-history, only runs whose suite, branch, host, commit or tag KEY is VALUE.")
    var filters: [String] = []

    @Option(help: "With --baseline-history, the most runs taken, newest first.")
    var last = 10

    @OptionGroup var reportOutput: ReportOutputOptions

    @OptionGroup var reportLink: ReportLinkOption

    @Option(help: "Compare only metrics whose names match this regular expression.")
    var metric: String?

    @Option(name: .customLong("group-by"), help: "Compare within each value of this dimension, e.g. device.")
    var groupBy: String?

    @OptionGroup var judgement: JudgementOptions

    @Option(help: "Percentiles to report, comma separated (default: 50,90).")
    var percentiles: String?

    @Flag(help: "Judge the results of a strobe compare again instead of showing its recorded decisions.")
    var rejudge = false

    @Option(help: "A YAML policy: per metric pattern, direction, relative and absolute floors, and whether it gates.")
    var policy: String?

    /// The percentiles of `--percentiles`, or nil when one is not a number
    /// from 0 to 100.
    var parsedPercentiles: [Double]? {
        var values: [Double] = []
        for part in (percentiles ?? "50,90").split(separator: ",") {
            guard let value = Double(part.trimmingCharacters(in: .whitespaces)), value >= 0, value <= 100 else {
                return nil
            }
            values.append(value)
        }
        return values
    }

    func validate() throws {
        if baselineHistory != nil {
            guard baseline.isEmpty else {
                throw ValidationError("give either --baseline PATH or --baseline-history STORE, not both")
            }
            guard last >= 1 else { throw ValidationError("--last must be 1 or more, not \(last)") }
        } else {
            guard !baseline.isEmpty else {
                throw ValidationError("give at least one --baseline PATH, or --baseline-history STORE")
            }
            if let problem = password.problem(store: baselineHistory, storeFlag: "--baseline-history") {
                throw ValidationError(problem)
            }
            if !filters.isEmpty { throw ValidationError("--where goes with --baseline-history") }
        }
        guard !candidate.isEmpty else { throw ValidationError("give at least one --candidate PATH") }
        guard parsedPercentiles != nil else {
            throw ValidationError(
                "--percentiles: \"\(percentiles ?? "")\" is not a list of percentiles between 0 and 100")
        }
        if let metric, (try? Regex(metric)) == nil {
            throw ValidationError("--metric: \"\(metric)\" is not a valid regular expression")
        }
    }

    func run() async throws {
        var options = ComparisonOptions()
        options.percentiles = parsedPercentiles ?? options.percentiles
        let filter = try metric.map { try Regex($0) }
        let rules = try loadPolicy(policy)
        options = judgement.resolved(options, policy: rules)
        let baselineSamples: SampleSet
        if let baselineHistory {
            let chosen = try await HistoryBaseline.choose(
                store: baselineHistory, passwordFile: password.file, filters: filters, last: last,
                candidatePaths: candidate,
                policy: rules)
            FileHandle.standardError.write(Data((chosen.summary + "\n").utf8))
            baselineSamples = chosen.samples
        } else {
            baselineSamples = try SampleSet.load(baseline)
        }
        let candidateSamples = try SampleSet.load(candidate)
        var origin: DecisionOrigin?
        if baselineHistory == nil,
            let directory = RecordedDecisions.directory(baseline: baseline, candidate: candidate),
            let recorded = try RecordedDecisions.read(from: directory)
        {
            // Named relative to the results directory: the report may be
            // posted where the machine's paths mean nothing.
            let path = RecordedDecisions.fileName
            if rejudge {
                origin = DecisionOrigin(kind: .rejudged, path: path, reason: "--rejudge")
            } else if recorded.matches(baseline: baselineSamples, candidate: candidateSamples, directory: directory) {
                if let flag = judgementFlag(changing: recorded, options: options, policy: rules) {
                    throw CommandFailure.badInput(
                        "\(flag) changes the judgement of results strobe compare decided "
                            + "(\(RecordedDecisions.path(in: directory))): add --rejudge")
                }
                let shown = recorded.recordedReport(path: path, metricFilter: filter)
                try shown.deliver(to: reportOutput, reportLink: reportLink.url) {
                    shown.flameGraphs(baseline: baselineSamples, candidate: candidateSamples)
                }
                return
            } else {
                origin = DecisionOrigin(
                    kind: .rejudged, path: path, reason: "the results changed since strobe compare decided")
            }
        }
        var report = try Judgement.compare(
            baseline: baselineSamples, candidate: candidateSamples, metricFilter: filter, groupBy: groupBy,
            options: options, policy: rules)
        report.origin = origin
        try report.deliver(to: reportOutput, reportLink: reportLink.url) { [report] in
            report.flameGraphs(baseline: baselineSamples, candidate: candidateSamples)
        }
    }

    /// The first flag given that judges the results otherwise than
    /// `recorded` did, so that its decisions cannot show it; nil when every
    /// flag given agrees with them (the same policy, alpha, floor,
    /// percentiles and grouping as `strobe compare` used).
    func judgementFlag(
        changing recorded: RecordedDecisions, options: ComparisonOptions, policy rules: ComparisonPolicy?
    ) -> String? {
        let decided = recorded.report.options
        if groupBy != nil, groupBy != recorded.report.groupBy { return "--group-by" }
        if policy != nil, rules != recorded.policy { return "--policy" }
        if judgement.alpha != nil, options.alpha != decided.alpha { return "--alpha" }
        if judgement.minEffect != nil, options.minimumEffect != decided.minimumEffect { return "--min-effect" }
        if percentiles != nil, options.percentiles != decided.percentiles { return "--percentiles" }
        return nil
    }
}

extension DiffReport {
    /// Writes the report as `output` asks (to standard output when it names
    /// no file, coloured on a terminal), and throws
    /// ``CommandFailure/regression`` when a gated metric regressed, as
    /// `strobe diff` ends. The Markdown links to `reportLink` when given; the
    /// HTML draws the graphs `flameGraphs` makes (called for HTML only).
    func deliver(
        to output: ReportOutputOptions, reportLink: String? = nil,
        flameGraphs: () throws -> [DifferentialFlameGraph] = { [] }
    ) throws {
        let text: String
        switch output.format {
        case .text: text = renderText(colour: output.path == nil && isatty(STDOUT_FILENO) != 0)
        case .markdown: text = renderMarkdown(reportLink: reportLink)
        case .json: text = renderJSON()
        case .html: text = renderHTML(flameGraphs: try flameGraphs())
        }
        try emit(text, to: output.path)
        if exitStatus != 0 { throw CommandFailure.regression }
    }
}

/// The policy at `path`, or an empty one when there is none.
func loadPolicy(_ path: String?) throws(DiffError) -> ComparisonPolicy {
    guard let path else { return ComparisonPolicy() }
    return try ComparisonPolicy.load(path)
}
