/// The raw samples of one metric across a test's measured iterations.
///
/// In JSON (`strobe results --json`) the direction is `"better": "lower"` or
/// `"better": "higher"`.
public struct PerfMetric: Sendable, Hashable, Codable {
    /// The metric's name, e.g. `wall`, `process.cpu.user`, `interval:lens apply:sum`.
    public var name: String
    /// Its unit: `ns`, `bytes`, `count`, or a name of your choosing.
    public var unit: String
    /// Which way the metric gets better: `.lower` for durations and memory,
    /// `.higher` for throughput.
    public var better: MetricDirection
    /// One value per measured iteration, in order. Never aggregated.
    public var samples: [Double]

    /// A metric with its samples.
    public init(name: String, unit: String, better: MetricDirection = .lower, samples: [Double] = []) {
        self.name = name
        self.unit = unit
        self.better = better
        self.samples = samples
    }
}

/// What one test produced.
public struct PerfTestResult: Sendable, Hashable, Codable {
    /// The test's name.
    public var name: String
    /// Its metrics, each with every raw sample.
    public var metrics: [PerfMetric]
    /// Why the test failed, if it did: the description of the runner's error
    /// (`iteration N: PROBLEM`); metrics hold what was measured before.
    public var error: String?
    /// Warm-up iterations run and discarded.
    public var warmupIterations: Int
    /// Per-iteration trace files kept, if any.
    public var tracePaths: [String]
    /// The CPU samples of the measured iterations, when the suite ran with
    /// `--profile`.
    public var profile: CallStackProfile?
    /// The instructions of the measured iterations per function, when a
    /// simulation counted them.
    public var instructionProfile: InstructionProfile?
    /// For each interval a `.criticalPath` metric measures, what its
    /// critical path crossed in each measured iteration.
    public var criticalPaths: [CriticalPathRecord] = []

    /// A result.
    public init(
        name: String, metrics: [PerfMetric] = [], error: String? = nil, warmupIterations: Int = 0,
        tracePaths: [String] = []
    ) {
        self.name = name
        self.metrics = metrics
        self.error = error
        self.warmupIterations = warmupIterations
        self.tracePaths = tracePaths
    }

    /// The metric named `name`.
    public func metric(_ name: String) -> PerfMetric? { metrics.first { $0.name == name } }
}

/// Where and how a run happened: what `strobe diff` groups and warns by.
public struct RunMetadata: Sendable, Hashable, Codable {
    /// The suite's name.
    public var suite: String
    /// The git commit of the code measured, when known.
    public var gitCommit: String
    /// The machine's host name.
    public var host: String
    /// The operating system and its version.
    public var os: String
    /// The CPU model.
    public var cpuModel: String
    /// Online CPU cores.
    public var coreCount: Int
    /// `release` or `debug` (or whatever the run says).
    public var buildConfiguration: String
    /// When the run started, in nanoseconds since 1970.
    public var timestamp: Int64
    /// User tags (`--tag key=value`), the dimensions results are grouped by.
    public var tags: [String: String]
    /// The Strobe version that wrote the file.
    public var strobeVersion: String
    /// The process that produced the run: the replicate `strobe diff`
    /// compares. Empty in files written before run ids existed; such a file
    /// is its own run.
    public var runID: String
    /// The round of an interleaved comparison this run belongs to; a
    /// baseline run and a candidate run of the same round are compared as a
    /// pair. Nil outside such a comparison.
    public var round: Int?
    /// Whether every sample came from a launch of its own (`strobe run`), so
    /// each sample, not the file, is a replicate.
    public var samplesAreLaunches: Bool
    /// Where the run's `instructions` metric came from: `hardware` or
    /// `simulated`; empty when it counted none.
    public var instructionSource: String = ""
    /// Why the run counted no instructions although asked to; empty
    /// otherwise.
    public var instructionNote: String = ""
    /// Whether the process ran under simulation: its times say nothing of
    /// the code's speed, and it carries counts only.
    public var simulated: Bool = false

    /// Metadata; empty fields where unknown.
    public init(
        suite: String, gitCommit: String = "", host: String = "", os: String = "", cpuModel: String = "",
        coreCount: Int = 0, buildConfiguration: String = "", timestamp: Int64 = 0, tags: [String: String] = [:],
        strobeVersion: String = StrobeVersion.current, runID: String = "", round: Int? = nil,
        samplesAreLaunches: Bool = false
    ) {
        self.suite = suite
        self.gitCommit = gitCommit
        self.host = host
        self.os = os
        self.cpuModel = cpuModel
        self.coreCount = coreCount
        self.buildConfiguration = buildConfiguration
        self.timestamp = timestamp
        self.tags = tags
        self.strobeVersion = strobeVersion
        self.runID = runID
        self.round = round
        self.samplesAreLaunches = samplesAreLaunches
    }
}

/// A perf run: its metadata and every test's results.
public struct PerfRun: Sendable, Hashable, Codable {
    /// Where and how it ran.
    public var metadata: RunMetadata
    /// The tests' results.
    public var tests: [PerfTestResult]

    /// A run.
    public init(metadata: RunMetadata, tests: [PerfTestResult] = []) {
        self.metadata = metadata
        self.tests = tests
    }

    /// Whether any test failed.
    public var hasFailures: Bool { tests.contains { $0.error != nil } }
}

/// The version of Strobe.
public enum StrobeVersion {
    /// The version string written into results files.
    public static let current = "0.1.0"
}
