import ArgumentParser
import Foundation
import StrobeStatistics
import StrobeTraceComparison

/// `strobe diff-traces`: what changed between two traces (or two folders
/// of them), per interval name.
struct DiffTracesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff-traces",
        abstract: "Compare two traces (or folders of them) per interval name, with their CPU samples.",
        discussion: """
            BASELINE and CANDIDATE are each a trace file or a directory whose .pftrace files are read. \
            For each interval name: the change of its duration over its finished instances, of its thread \
            CPU time and of its blocked time (the duration less the CPU time), each as a Hodges-Lehmann \
            shift with its interval and a Mann-Whitney p-value, Benjamini-Hochberg across every measure; a \
            change is called when its interval lies beyond --min-effect. Instances are compared as \
            independent samples, so a shift of a whole process reads as a change: give several traces a \
            side to see past one. Where both sides hold CPU samples (--cpu-profile) inside a name's \
            instances, the functions whose inclusive CPU time per instance moved are listed, and the HTML \
            page draws a differential flame graph per name. --critical-path NAME also compares, per instance \
            of NAME, the length of the chain of intervals, flows and waits across threads that bounds its \
            wall time, and names the waits new on it.

            Exit status: 0 no interval slower, 1 an interval's duration slower, 2 bad input.
            """
    )

    @Argument(help: "The baseline's trace, or a directory of traces.")
    var baseline: String

    @Argument(help: "The candidate's trace, or a directory of traces.")
    var candidate: String

    @OptionGroup var reportOutput: ReportOutputOptions

    @Option(help: "Compare only intervals whose names match this regular expression.")
    var interval: String?

    @Option(
        name: .customLong("critical-path"),
        help: "Also compare the critical path of each instance of this interval across threads; repeatable.")
    var criticalPath: [String] = []

    @Option(help: "The level of the intervals and of the false discovery rate (default 0.05).")
    var alpha = 0.05

    @Option(
        name: .customLong("min-effect"),
        help: "The smallest relative change called one (default \(JudgementDefaults.relativeFloor)).")
    var minEffect = JudgementDefaults.relativeFloor

    func validate() throws {
        if reportOutput.format == .markdown { throw ValidationError("--format: text, json or html") }
        guard alpha > 0, alpha < 1 else { throw ValidationError("--alpha must be between 0 and 1, not \(alpha)") }
        guard minEffect >= 0, minEffect < 1 else {
            throw ValidationError("--min-effect must be at least 0 and below 1, not \(minEffect)")
        }
        if let interval, (try? Regex(interval)) == nil {
            throw ValidationError("--interval: \"\(interval)\" is not a valid regular expression")
        }
    }

    func run() throws {
        var baselineSide: TraceSide
        var candidateSide: TraceSide
        do throws(TraceComparisonError) {
            baselineSide = try TraceSide.load([baseline], criticalPathOf: Set(criticalPath))
            candidateSide = try TraceSide.load([candidate], criticalPathOf: Set(criticalPath))
        } catch {
            throw CommandFailure.badInput(error.description)
        }
        if let interval, let pattern = try? Regex(interval) {
            let keep = { (name: String) in ((try? pattern.firstMatch(in: name)) ?? nil) != nil }
            baselineSide.names = baselineSide.names.filter { keep($0.key) }
            candidateSide.names = candidateSide.names.filter { keep($0.key) }
        }
        guard !baselineSide.names.isEmpty || !candidateSide.names.isEmpty else {
            throw CommandFailure.badInput(
                "no finished interval\(interval.map { " matching \"\($0)\"" } ?? "") in either side's traces")
        }
        var options = TraceComparison.Options()
        options.alpha = alpha
        options.minimumEffect = minEffect
        let comparison = TraceComparison(baseline: baselineSide, candidate: candidateSide, options: options)
        let text: String
        switch reportOutput.format {
        case .text, .markdown: text = comparison.renderText()
        case .json: text = comparison.renderJSON()
        case .html: text = comparison.renderHTML()
        }
        try emit(text, to: reportOutput.path)
        if comparison.intervals.contains(where: { $0.duration.verdict == .slower }) { throw CommandFailure.regression }
    }
}
