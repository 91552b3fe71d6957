import Foundation
import StrobeDiff
import StrobeHistory
import StrobeHistoryStore
import StrobeJudgement
import StrobeResults
import StrobeTrend

/// The baseline of `strobe diff --baseline-history STORE`: the newest runs of
/// the store like the candidate's (its suites, on its CPU model, and the
/// `--where` conditions), taken from after the last change `strobe trend`
/// finds in them in a metric that gates, so that a pull request is judged
/// against the level main has now, not a mix of levels before and after a
/// step.
struct HistoryBaseline {
    /// The runs chosen, oldest first.
    var runs: [HistoryRun]
    /// What was chosen and why, in one line.
    var summary: String

    /// The runs as a sample set, each run one process.
    var samples: SampleSet {
        var set = SampleSet()
        for run in runs { set.add(run.perfRun, source: "history run \(run.key)") }
        return set
    }

    /// Chooses the baseline from `store` for the candidate at
    /// `candidatePaths`; `policy` says which metrics gate (a change in a
    /// report-only metric, such as a count of context switches, does not
    /// start a new level).
    ///
    /// - Throws: ``CommandFailure/badInput(_:)`` naming the store, a filter
    ///   or what matched nothing.
    static func choose(
        store: String, passwordFile: String?, filters filterTexts: [String], last: Int, candidatePaths: [String],
        policy: ComparisonPolicy
    ) async throws -> HistoryBaseline {
        let location: HistoryLocation
        var filters: [HistoryFilter] = []
        do {
            location = try HistoryLocation.parse(store, passwordFile: passwordFile)
        } catch {
            throw CommandFailure.badInput(error.message)
        }
        for text in filterTexts {
            do {
                filters.append(try HistoryFilter(parsing: text))
            } catch {
                throw CommandFailure.badInput(error.message)
            }
        }
        if case .sqlite(let path) = location, !FileManager.default.fileExists(atPath: path) {
            throw CommandFailure.badInput(
                "--baseline-history \(path): no such store (`strobe history add` creates one)")
        }
        // The candidate's suites and CPU models, when its inputs are
        // results files (a CSV names neither).
        let candidate = (try? HistoryInput.load(candidatePaths))?.map(\.record.run.metadata) ?? []
        let suites = Set(candidate.map(\.suite).filter { !$0.isEmpty })
        let cpus = Set(candidate.map(\.cpuModel).filter { !$0.isEmpty })

        let opened: any HistoryStore
        let stored: [HistoryRun]
        do {
            opened = try await HistoryStores.open(location, access: .readOnly)
        } catch let error as StrobeHistory.HistoryError {
            throw CommandFailure.badInput(error.message)
        }
        do {
            stored = try await opened.runs(HistoryQuery(filters: filters, includeSamples: true))
            await opened.close()
        } catch let error as StrobeHistory.HistoryError {
            await opened.close()
            throw CommandFailure.badInput(error.message)
        }
        let like =
            stored
            .filter { suites.isEmpty || suites.contains($0.metadata.suite) }
            .filter { cpus.isEmpty || cpus.contains($0.metadata.cpuModel) }
            .sorted { ($0.metadata.timestamp, $0.key) < ($1.metadata.timestamp, $1.key) }
        var wanted: [String] = filterTexts
        if !suites.isEmpty { wanted.append("suite " + suites.sorted().joined(separator: " or ")) }
        if !cpus.isEmpty { wanted.append("CPU " + cpus.sorted().joined(separator: " or ")) }
        let described = wanted.isEmpty ? "" : " (" + wanted.joined(separator: ", ") + ")"
        guard !like.isEmpty else {
            throw CommandFailure.badInput(
                "--baseline-history \(location): none of its \(stored.count) "
                    + "run\(stored.count == 1 ? "" : "s")"
                    + "\(filterTexts.isEmpty ? "" : " matching the --where conditions") "
                    + "is like the candidate's\(described)")
        }

        // The last change in those runs: the baseline starts after it.
        var since = like
        var changeNote = "no change in a gated metric found in them"
        if like.count >= 2 {
            let report: TrendReport
            do {
                report = try TrendAnalysis.analyze(like, source: location.description)
            } catch {
                throw CommandFailure.badInput(error.message)
            }
            let gating = report.changes.filter { change in
                change.status == .confirmed
                    && policy.settings(for: "\(change.test)/\(change.metric)", unit: change.unit).gates
            }
            if let latest = gating.max(by: { $0.firstAfter.time < $1.firstAfter.time }) {
                since = like.filter { $0.metadata.timestamp >= latest.firstAfter.time }
                let commit =
                    latest.firstAfter.commit.isEmpty
                    ? "run \(latest.firstAfter.run)" : "commit \(latest.firstAfter.commit.prefix(10))"
                changeNote =
                    "since the change at \(commit) (\(latest.test)/\(latest.metric) "
                    + "\(latest.shortChangeText))"
            }
        }
        let chosen = Array(since.suffix(last))
        let summary =
            "baseline: the newest \(chosen.count) of \(like.count) runs of \(location)\(described), \(changeNote)"
        return HistoryBaseline(runs: chosen, summary: summary)
    }
}
