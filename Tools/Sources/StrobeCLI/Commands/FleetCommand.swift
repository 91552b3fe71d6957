import ArgumentParser
import Foundation
import StrobeDiff
import StrobeFleet
import StrobeHistory
import StrobeHistoryStore
import StrobeJudgement
import StrobeStatistics

/// `strobe fleet`: percentiles of a fleet's traces per group, with intervals
/// that treat the session as the unit, and the change between two versions.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Percentiles of a fleet's traces per version and device, and the change between versions.",
        discussion: """
            Reads the traces strobe ingest stored. Per metric and group: the sessions, the events, and P50, P90 \
            and P99 of the events with 95% confidence intervals that treat the session as the unit (Woodruff's \
            method with sessions as clusters; see docs/statistics.md). With --compare A B, each group is split \
            by the version (--version-key, default app.version) and each percentile's change from A to B is \
            given with its interval at the judgement's level and a verdict: the p-values are adjusted by \
            Benjamini–Hochberg across every metric, group and percentile of the report and judged as strobe \
            diff judges (α \(ComparisonOptions().alpha), \
            \(Int((ComparisonOptions().minimumEffect * 100).rounded()))% floor), a group's percentiles taken \
            together as a test's metrics are. A metric is lower-is-better unless a rule of --policy FILE \
            (strobe diff's policy file) says `better: higher` for it, matched on its name as strobe diff \
            matches; the report says the direction each metric was judged by. Where a group's sessions are \
            weighted by their sampling probabilities, a percentile is judged only where Kish's effective number \
            of events beyond it reaches \(Int(SessionQuantiles.minimumTailEvents)). Exit status 1 when a \
            comparison finds a regression.
            """
    )

    @OptionGroup var history: HistoryStoreOptions

    @Option(help: "An interval name, or counter:NAME; repeat for several metrics in one report.")
    var metric: [String] = []

    @Option(
        name: .customLong("group-by"),
        help: "KEY,...: one group per value of these metadata keys (e.g. device.class,os.version).")
    var groupBy: String?

    /// The grouping keys as given.
    var by: String? { groupBy }

    @Option(name: .customLong("where"), help: "KEY=VALUE: only sessions whose metadata KEY is VALUE; repeatable.")
    var filters: [String] = []

    @Option(parsing: .upToNextOption, help: "VERSION_A VERSION_B: the change from A (baseline) to B (candidate).")
    var compare: [String] = []

    @Option(name: .customLong("version-key"), help: "The metadata key holding the version.")
    var versionKey = "app.version"

    @OptionGroup var reportOutput: ReportOutputOptions

    @OptionGroup var judgement: JudgementOptions

    @Option(
        help: """
            strobe diff's YAML policy: per metric pattern, its direction (better: higher) and floors; gate and \
            summary do not apply.
            """
    )
    var policy: String?

    /// The first problem with the flags, if any.
    var problem: String? {
        if metric.isEmpty { return "give the metric with --metric NAME (an interval name, or counter:NAME)" }
        if metric.contains(where: \.isEmpty) { return "--metric: a metric name is empty" }
        for filter in filters {
            let parts = filter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count != 2 || parts[0].isEmpty { return "--where \(filter): expected KEY=VALUE" }
        }
        if let by,
            by.split(separator: ",", omittingEmptySubsequences: false).contains(where: {
                $0.trimmingCharacters(in: .whitespaces).isEmpty
            })
        {
            return "--group-by \(by): a key is empty; write e.g. device.class or device.class,os.version"
        }
        if !compare.isEmpty, compare.count != 2 {
            return "--compare takes two versions, VERSION_A VERSION_B; got \(compare.count)"
        }
        if compare.count == 2, compare[0] == compare[1] {
            return "--compare \(compare[0]) \(compare[1]): the versions are the same"
        }
        if let problem = judgement.problem { return problem }
        return nil
    }

    func validate() throws {
        if let problem { throw ValidationError(problem) }
    }

    func run() async throws {
        var options = FleetReport.Options(metrics: metric)
        options.by = by.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
        for filter in filters {
            let parts = filter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            options.filters[String(parts[0])] = String(parts[1])
        }
        if compare.count == 2 { options.compare = (compare[0], compare[1]) }
        options.versionKey = versionKey
        options.policy = try loadPolicy(policy)
        let resolved = judgement.resolved(policy: options.policy)
        options.alpha = resolved.alpha
        options.relativeFloor = resolved.minimumEffect
        let location: HistoryLocation
        do {
            location = try HistoryLocation.parse(history.store, passwordFile: history.password.file)
        } catch {
            throw CommandFailure.badInput(error.message)
        }
        let report: FleetReport
        do {
            let store = try await FleetStores.open(location, access: .readOnly)
            do {
                report = try await FleetReport.build(from: store, options: options)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        } catch let error as HistoryError {
            throw CommandFailure.badInput(error.message)
        } catch let error as FleetReportError {
            throw CommandFailure.badInput(error.description)
        }
        let output = reportOutput.path
        switch reportOutput.format {
        case .text: try emit(report.render(), to: output)
        case .markdown: try emit(report.render(markdown: true), to: output)
        case .html: try emit(report.renderHTML(), to: output)
        case .json:
            do {
                try emit(try report.renderJSON(), to: output)
            } catch let error as EncodingError {
                throw CommandFailure.badInput("the report cannot be written as JSON: \(error)")
            }
        }
        if report.hasRegression { throw CommandFailure.regression }
    }
}
