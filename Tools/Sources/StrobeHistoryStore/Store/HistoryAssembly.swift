import Foundation
import StrobeHistory
import StrobeResults

/// Builds ``HistoryRun`` values from the rows of the four tables, read a
/// query per table, in any order.
struct HistoryAssembly {
    /// A row of `strobe_runs`.
    struct RunRow {
        var key: String
        var runID: String
        var timestamp: Int64
        var suite: String
        var gitCommit: String
        var branch: String
        var host: String
        var os: String
        var cpuModel: String
        var coreCount: Int
        var buildConfiguration: String
        var strobeVersion: String
        var round: Int?
        var samplesAreLaunches: Bool
        var comparison: String?
        var side: String?
        var simulated: Bool
        var instructionSource: String
    }

    /// A row of `strobe_metrics`.
    struct MetricRow {
        var run: String
        var testPosition: Int
        var position: Int
        var name: String
        var unit: String
        /// The direction; the `lower_is_better` column stores it as a flag.
        var better: MetricDirection
        var samples: [Double]
        var medians: [Double]
        var minimums: [Double]
    }

    private var runs: [HistoryRun] = []
    private var index: [String: Int] = [:]
    private var testPositions: [String: [Int]] = [:]
    private var metrics: [String: [Int: [(position: Int, metric: HistoryMetric)]]] = [:]

    /// Adds a run, in the order the result lists runs.
    mutating func add(_ row: RunRow) {
        index[row.key] = runs.count
        var metadata = RunMetadata(
            suite: row.suite, gitCommit: row.gitCommit, host: row.host, os: row.os, cpuModel: row.cpuModel,
            coreCount: row.coreCount, buildConfiguration: row.buildConfiguration, timestamp: row.timestamp, tags: [:],
            strobeVersion: row.strobeVersion, runID: row.runID, round: row.round,
            samplesAreLaunches: row.samplesAreLaunches)
        metadata.simulated = row.simulated
        metadata.instructionSource = row.instructionSource
        runs.append(
            HistoryRun(key: row.key, metadata: metadata, branch: row.branch, comparison: row.comparison, side: row.side)
        )
    }

    /// Adds a tag of a run added before.
    mutating func addTag(run: String, key: String, value: String) {
        guard let position = index[run] else { return }
        runs[position].metadata.tags[key] = value
    }

    /// Adds a test of a run added before.
    mutating func addTest(
        run: String, position: Int, name: String, error: String?, warmupIterations: Int, tracePaths: String,
        stacks: String = "[]"
    ) throws(HistoryError) {
        guard let runPosition = index[run] else { return }
        guard let paths = try? JSONDecoder().decode([String].self, from: Data(tracePaths.utf8)) else {
            throw HistoryError(.database, "run \(run), test \(name): its trace paths are not a JSON array of strings")
        }
        guard let profile = HistoryTest.decodeStacks(stacks) else {
            throw HistoryError(
                .database, "run \(run), test \(name): its CPU stacks are not a JSON array of frames and amounts")
        }
        testPositions[run, default: []].append(position)
        runs[runPosition].tests.append(
            HistoryTest(
                name: name, error: error, warmupIterations: warmupIterations, tracePaths: paths, stacks: profile))
    }

    /// Adds a metric of a test added before.
    mutating func addMetric(_ row: MetricRow) {
        let metric = HistoryMetric(
            name: row.name, unit: row.unit, better: row.better, samples: row.samples,
            summary: MetricSummary(medians: row.medians, minimums: row.minimums))
        metrics[row.run, default: [:]][row.testPosition, default: []].append((row.position, metric))
    }

    /// The runs, each test and metric in its run's order.
    func finish() -> [HistoryRun] {
        var result = runs
        for (key, positions) in testPositions {
            guard let runPosition = index[key] else { continue }
            let order = positions.indices.sorted { positions[$0] < positions[$1] }
            let tests = result[runPosition].tests
            result[runPosition].tests = order.map { offset in
                var test = tests[offset]
                test.metrics = (metrics[key]?[positions[offset]] ?? []).sorted { $0.position < $1.position }.map(
                    \.metric)
                return test
            }
        }
        return result
    }

    /// The CPU stacks of test `position` of `record` as stored: a JSON array.
    static func stacks(of record: RunRecord, _ position: Int) -> String {
        HistoryTest.encodeStacks(record.stacks(ofTest: position))
    }

    /// The trace paths of a test as stored: a JSON array.
    static func encodeTracePaths(_ paths: [String]) -> String {
        (try? String(decoding: JSONEncoder().encode(paths), as: UTF8.self)) ?? "[]"
    }

    /// The error for a column of `table` whose bytes are not an array of doubles.
    static func badArray(_ column: String, run: String) -> HistoryError {
        HistoryError(
            .database, "run \(run): \(column) holds a byte count that is not a multiple of 8, not an array of doubles")
    }
}
