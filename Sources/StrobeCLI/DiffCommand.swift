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
            metric,value; optional unit and better=lower|higher; other columns are dimensions). Files on \
            one side are pooled. Per metric: a Mann-Whitney U test for a shift, Benjamini-Hochberg \
            control of the false discovery rate across all metrics, the change as a Hodges-Lehmann \
            ratio with its distribution-free confidence interval, and a noise floor below which no \
            change is called. Verdicts: regression, improvement, unchanged, inconclusive (with the \
            iterations per side that would decide).

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

    @Option(help: "False discovery rate across all metrics (default 0.01).")
    var alpha = 0.01

    @Option(name: .customLong("min-effect"), help: "Noise floor in percent: smaller changes are never flagged (default 2).")
    var minEffect = 2.0

    @Option(help: "Percentiles to report, comma separated (default 50,90).")
    var percentiles = "50,90"

    func run() throws {
        guard !baseline.isEmpty else { CommandFailure(message: "give at least one --baseline PATH", status: 2).exit() }
        guard !candidate.isEmpty else { CommandFailure(message: "give at least one --candidate PATH", status: 2).exit() }
        guard alpha > 0, alpha < 1 else { CommandFailure(message: "--alpha must be between 0 and 1, not \(alpha)", status: 2).exit() }
        guard minEffect >= 0, minEffect < 100 else {
            CommandFailure(message: "--min-effect is a percentage from 0 to 100, not \(minEffect)", status: 2).exit()
        }
        var options = ComparisonOptions()
        options.alpha = alpha
        options.minimumEffect = minEffect / 100
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
            let base = try SampleSet.load(baseline)
            let cand = try SampleSet.load(candidate)
            report = try DiffEngine.diff(
                baseline: base, candidate: cand, metricFilter: filter, groupBy: groupBy, options: options)
        } catch {
            CommandFailure(message: error.description, status: 2).exit()
        }
        let text: String
        switch format {
        case .text:
            text = report.renderText(colour: output == nil && isatty(STDOUT_FILENO) != 0)
        case .markdown:
            text = report.renderMarkdown()
        case .json:
            text = report.renderJSON()
        case .html:
            text = report.renderHTML()
        }
        do {
            try emit(text, to: output)
        } catch {
            error.exit()
        }
        if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }
}
