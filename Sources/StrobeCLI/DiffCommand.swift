import ArgumentParser
import Foundation
import StrobeDiff
import StrobeStatistics

/// `strobe diff`: did the candidate regress against the baseline?
struct DiffCommand: ParsableCommand {
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
            Verdicts: regression, improvement, unchanged, inconclusive (with about how many more rounds \
            would decide). --policy FILE sets direction, floors and gating per metric (YAML).

            Exit status: 0 no regression, 1 at least one regression, 2 bad input.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, markdown, json, html
    }

    @Option(parsing: .upToNextOption, help: "Results files, directories or CSV files of the baseline.")
    var baseline: [String] = []

    @Option(parsing: .upToNextOption, help: "Results files, directories or CSV files of the candidate.")
    var candidate: [String] = []

    @Option(help: "text, markdown, json or html.")
    var format: Format = .text

    @Option(name: .shortAndLong, help: "Write the report here instead of standard output.")
    var output: String?

    @Option(help: "Compare only metrics whose names match this regular expression.")
    var metric: String?

    @Option(name: .customLong("group-by"), help: "Compare within each value of this dimension, e.g. device.")
    var groupBy: String?

    @Option(help: "False discovery rate across all metrics (default 0.01, or the policy's).")
    var alpha: Double?

    @Option(name: .customLong("min-effect"), help: "Noise floor in percent: smaller changes are never flagged (default 2, or the policy's).")
    var minEffect: Double?

    @Option(help: "Percentiles to report, comma separated (default 50,90).")
    var percentiles = "50,90"

    @Option(help: "A YAML policy: per metric pattern, direction, relative and absolute floors, and whether it gates.")
    var policy: String?

    func run() throws {
        guard !baseline.isEmpty else { CommandFailure(message: "give at least one --baseline PATH", status: 2).exit() }
        guard !candidate.isEmpty else { CommandFailure(message: "give at least one --candidate PATH", status: 2).exit() }
        if let alpha, !(alpha > 0 && alpha < 1) {
            CommandFailure(message: "--alpha must be between 0 and 1, not \(alpha)", status: 2).exit()
        }
        if let minEffect, !(minEffect >= 0 && minEffect < 100) {
            CommandFailure(message: "--min-effect is a percentage from 0 to 100, not \(minEffect)", status: 2).exit()
        }
        var options = ComparisonOptions()
        var parsedPercentiles: [Double] = []
        for part in percentiles.split(separator: ",") {
            guard let value = Double(part.trimmingCharacters(in: .whitespaces)), value >= 0, value <= 100 else {
                CommandFailure(message: "--percentiles: \"\(part)\" is not a percentile between 0 and 100", status: 2).exit()
            }
            parsedPercentiles.append(value)
        }
        options.percentiles = parsedPercentiles
        var filter: Regex<AnyRegexOutput>?
        if let metric {
            do {
                filter = try Regex(metric)
            } catch {
                CommandFailure(message: "--metric: \"\(metric)\" is not a valid regular expression", status: 2).exit()
            }
        }
        let report: DiffReport
        do {
            let rules = try loadPolicy(policy)
            options = rules.options(overriding: options, alpha: alpha, minimumEffect: minEffect.map { $0 / 100 })
            let base = try SampleSet.load(baseline)
            let cand = try SampleSet.load(candidate)
            report = try DiffEngine.diff(
                baseline: base, candidate: cand, metricFilter: filter, groupBy: groupBy, options: options, policy: rules)
        } catch {
            CommandFailure(message: error.description, status: 2).exit()
        }
        try report.deliver(as: format, to: output)
    }
}

extension DiffReport {
    /// Writes the report in `format` to `path` (standard output when nil,
    /// coloured on a terminal) and ends as `strobe diff` does: exit status 1
    /// when a gated metric regressed.
    func deliver(as format: DiffCommand.Format, to path: String?) throws {
        let text: String
        switch format {
        case .text: text = renderText(colour: path == nil && isatty(STDOUT_FILENO) != 0)
        case .markdown: text = renderMarkdown()
        case .json: text = renderJSON()
        case .html: text = renderHTML()
        }
        do {
            try emit(text, to: path)
        } catch {
            error.exit()
        }
        if exitStatus != 0 { throw ExitCode(exitStatus) }
    }
}

/// The policy at `path`, or an empty one when there is none.
func loadPolicy(_ path: String?) throws(DiffError) -> ComparisonPolicy {
    guard let path else { return ComparisonPolicy() }
    return try ComparisonPolicy.load(path)
}
