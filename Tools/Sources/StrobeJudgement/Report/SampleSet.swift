import Foundation
import StrobeResults
import StrobeStatistics
import StrobeToolFormatting

/// Samples pooled from results files and CSV files, each with the
/// dimensions of where it came from.
public struct SampleSet: Sendable {
    /// One metric's samples from one source.
    public struct Series: Sendable, Hashable {
        /// The metric's name (`TEST/METRIC` for results files).
        public var metric: String
        /// Its unit.
        public var unit: String
        /// Which way the metric gets better.
        public var better: MetricDirection
        /// The samples.
        public var samples: [Double]
        /// Where they came from: tags, host, OS, CPU, build configuration.
        public var dimensions: [String: String]
        /// The file they were read from.
        public var source: String
        /// The process (replicate) they came from: a run id, the `run`
        /// column of a CSV file, or else the file itself.
        public var run: String
        /// The round of an interleaved comparison, when there was one.
        public var round: Int?
        /// Whether the process ran under simulation (callgrind): it carries
        /// counts only, and where a side has instructions from both kinds
        /// of process, the simulated ones are compared.
        public var simulated = false

        /// A series.
        public init(
            metric: String, unit: String, better: MetricDirection, samples: [Double], dimensions: [String: String],
            source: String, run: String? = nil, round: Int? = nil
        ) {
            self.metric = metric
            self.unit = unit
            self.better = better
            self.samples = samples
            self.dimensions = dimensions
            self.source = source
            self.run = run ?? source
            self.round = round
        }
    }

    /// Every series loaded.
    public var series: [Series] = []
    /// The CPU profiles of the processes whose suites ran with `--profile`.
    public var profiles: [ProcessProfile] = []
    /// The instructions per function of the processes a simulation counted.
    public var instructionProfiles: [ProcessInstructions] = []
    /// The critical paths the native processes recorded, per test and
    /// interval.
    public var criticalPaths: [ProcessCriticalPath] = []
    /// The files read.
    public var sources: [String] = []

    /// An empty set.
    public init() {}

    /// `metrics` and, when it has the process's user and system CPU time of
    /// every iteration, their sum as ``MetricDefaults/cpuTotal``: Linux
    /// measures the total exactly and splits it by timer ticks, so the total
    /// is the CPU time to judge.
    static func withCPUTotal(_ metrics: [PerfMetric]) -> [PerfMetric] {
        guard !metrics.contains(where: { $0.name == MetricDefaults.cpuTotal }),
            let user = metrics.first(where: { $0.name == MetricKind.cpuUserName }),
            let system = metrics.first(where: { $0.name == MetricKind.cpuSystemName }),
            user.unit == system.unit, user.samples.count == system.samples.count, !user.samples.isEmpty
        else { return metrics }
        let total = PerfMetric(
            name: MetricDefaults.cpuTotal, unit: user.unit, samples: zip(user.samples, system.samples).map { $0 + $1 })
        return [total] + metrics
    }

    /// Whether a simulated process's metric says nothing of the code
    /// (``PerfMetric/isSimulatorReading``, the rule the run history keeps
    /// too): its times and its resource usage, which are the simulator's.
    public static func isIgnoredWhenSimulated(_ metric: PerfMetric) -> Bool { metric.isSimulatorReading }

    /// Adds the series of `run`, read from `source`: a series per metric
    /// of every test (`TEST/METRIC`) with the run as its replicate, or, when
    /// its samples are launches, a series per sample, each launch a
    /// replicate of its own. A run without a run id is named by `source`.
    /// A simulated run (`metadata.simulated`) is a count-only replicate:
    /// its times and resource usage are left out
    /// (``isIgnoredWhenSimulated(_:)``), so they never mix with a native
    /// process's, and its instruction profiles are kept (its critical
    /// paths are not).
    public mutating func add(_ run: PerfRun, source file: String) {
        sources.append(file)
        var dimensions = run.metadata.tags
        dimensions["host"] = dimensions["host"] ?? run.metadata.host
        dimensions["os"] = dimensions["os"] ?? run.metadata.os
        dimensions["cpu_model"] = dimensions["cpu_model"] ?? run.metadata.cpuModel
        dimensions["build_configuration"] = dimensions["build_configuration"] ?? run.metadata.buildConfiguration
        dimensions["suite"] = dimensions["suite"] ?? run.metadata.suite
        let runID = run.metadata.runID.isEmpty ? file : run.metadata.runID
        let simulated = run.metadata.simulated
        for test in run.tests {
            if let counted = test.instructionProfile, counted.iterations > 0, !run.metadata.samplesAreLaunches {
                instructionProfiles.append(
                    ProcessInstructions(
                        test: test.name, run: runID, round: run.metadata.round, dimensions: dimensions,
                        profile: counted))
            }
            if let profile = test.profile, profile.iterations > 0, !run.metadata.samplesAreLaunches, !simulated {
                profiles.append(
                    ProcessProfile(
                        test: test.name, run: runID, round: run.metadata.round, dimensions: dimensions,
                        profile: profile))
            }
            if !run.metadata.samplesAreLaunches, !simulated {
                criticalPaths += test.criticalPaths.map { record in
                    ProcessCriticalPath(
                        test: test.name, run: runID, round: run.metadata.round, dimensions: dimensions, profile: record)
                }
            }
            for metric in Self.withCPUTotal(test.metrics) where !metric.samples.isEmpty {
                if simulated, Self.isIgnoredWhenSimulated(metric) { continue }
                for replicate in ReplicatePool.replicates(of: metric, in: run.metadata, process: runID) {
                    var entry = Series(
                        metric: "\(test.name)/\(metric.name)", unit: metric.unit, better: metric.better,
                        samples: replicate.samples, dimensions: dimensions, source: file, run: replicate.id,
                        round: replicate.round)
                    entry.simulated = simulated
                    series.append(entry)
                }
            }
        }
    }
}
