import Foundation
import StrobeFlameGraph
import StrobeResults

/// A run read back from a history.
public struct HistoryRun: Sendable, Hashable {
    /// The key it is stored under (see ``RunRecord/key``).
    public var key: String
    /// Where and how it ran, tags included, as its results file had it.
    public var metadata: RunMetadata
    /// The branch (its `branch` tag), or "".
    public var branch: String
    /// The `strobe compare` it was a side of, if known.
    public var comparison: String?
    /// `baseline` or `candidate` in that comparison.
    public var side: String?
    /// Its tests, in the run's order.
    public var tests: [HistoryTest]

    /// A run.
    public init(
        key: String, metadata: RunMetadata, branch: String, comparison: String? = nil, side: String? = nil,
        tests: [HistoryTest] = []
    ) {
        self.key = key
        self.metadata = metadata
        self.branch = branch
        self.comparison = comparison
        self.side = side
        self.tests = tests
    }

    /// The run of `record`, as the store would give it back (without samples).
    public init(record: RunRecord) {
        self.init(
            key: record.key, metadata: record.run.metadata, branch: record.branch, comparison: record.comparison,
            side: record.side,
            tests: record.run.tests.indices.map { position in
                let test = record.run.tests[position]
                return HistoryTest(
                    name: test.name, error: test.error, warmupIterations: test.warmupIterations,
                    tracePaths: test.tracePaths,
                    metrics: zip(test.metrics, record.summaries[position]).map { metric, summary in
                        HistoryMetric(
                            name: metric.name, unit: metric.unit, better: metric.better,
                            summary: summary)
                    }, stacks: record.stacks(ofTest: position))
            })
    }

    /// The run as a results file holds it. Its samples are empty unless
    /// the query asked for them (``HistoryQuery/includeSamples``).
    public var perfRun: PerfRun {
        PerfRun(
            metadata: metadata,
            tests: tests.map { test in
                PerfTestResult(
                    name: test.name,
                    metrics: test.metrics.map {
                        PerfMetric(
                            name: $0.name, unit: $0.unit, better: $0.better,
                            samples: $0.samples)
                    },
                    error: test.error, warmupIterations: test.warmupIterations, tracePaths: test.tracePaths)
            })
    }
}

/// A test of a stored run.
public struct HistoryTest: Sendable, Hashable {
    /// The test's name.
    public var name: String
    /// Why it failed, if it did.
    public var error: String?
    /// Warm-up iterations run and discarded.
    public var warmupIterations: Int
    /// Per-iteration trace files kept, if any.
    public var tracePaths: [String]
    /// Its metrics, in the run's order.
    public var metrics: [HistoryMetric]
    /// The call stacks of its CPU profile, each one's CPU time per
    /// iteration in nanoseconds (``RunRecord/stacks``); empty for a test
    /// without a profile, or unless the query asked for them
    /// (``HistoryQuery/includeStacks``).
    public var stacks: [FlameStack]

    /// A test.
    public init(
        name: String, error: String? = nil, warmupIterations: Int = 0, tracePaths: [String] = [],
        metrics: [HistoryMetric] = [], stacks: [FlameStack] = []
    ) {
        self.name = name
        self.error = error
        self.warmupIterations = warmupIterations
        self.tracePaths = tracePaths
        self.metrics = metrics
        self.stacks = stacks
    }

    /// `stacks` as a store keeps them: a JSON array of
    /// `{"frames": [...], "amount": ...}`.
    public static func encodeStacks(_ stacks: [FlameStack]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? String(decoding: encoder.encode(stacks), as: UTF8.self)) ?? "[]"
    }

    /// The stacks a store kept (``encodeStacks(_:)``), or nil for text that
    /// is not such an array.
    public static func decodeStacks(_ text: String) -> [FlameStack]? {
        try? JSONDecoder().decode([FlameStack].self, from: Data(text.utf8))
    }
}

/// A metric of a stored run: its per-process summaries, and its samples
/// when they were asked for.
public struct HistoryMetric: Sendable, Hashable {
    /// The metric's name.
    public var name: String
    /// Its unit.
    public var unit: String
    /// Which way the metric gets better.
    public var better: MetricDirection
    /// Every iteration's value; empty unless the query included samples.
    public var samples: [Double]
    /// Each process's median and minimum: what the statistics compare.
    public var summary: MetricSummary

    /// A metric.
    public init(name: String, unit: String, better: MetricDirection, samples: [Double] = [], summary: MetricSummary) {
        self.name = name
        self.unit = unit
        self.better = better
        self.samples = samples
        self.summary = summary
    }
}
