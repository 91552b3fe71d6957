import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobeResults
import StrobeTrend

/// A small deterministic generator (SplitMix64) with normal draws.
struct TrendNoise {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uniform() -> Double { (Double(next() >> 11) + 0.5) / Double(1 << 53) }

    mutating func normal() -> Double { (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform()) }
}

/// A git repository in a temporary directory with one empty commit per
/// night, and nightly runs tagged with those commits.
struct NightlyHistory {
    /// The repository.
    var repository: String
    /// Its commits, oldest first.
    var commits: [String]

    /// A repository of `nights` commits, "night 1"...
    static func make(nights: Int, in directory: String) throws -> NightlyHistory {
        let repository = directory + "/repo"
        try FileManager.default.createDirectory(atPath: repository, withIntermediateDirectories: true)
        try git(["init", "-q", repository])
        for night in 1...nights {
            try git([
                "-C", repository, "-c", "user.name=Nightly", "-c", "user.email=nightly@example.com",
                "commit", "-q", "--allow-empty", "-m", "night \(night)",
            ])
        }
        let commits = try git(["-C", repository, "rev-list", "--reverse", "HEAD"]).split(separator: "\n").map(
            String.init)
        return NightlyHistory(repository: repository, commits: commits)
    }

    @discardableResult
    static func git(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw GitFailed(arguments: arguments) }
        return String(decoding: data, as: UTF8.self)
    }

    struct GitFailed: Error, CustomStringConvertible {
        var arguments: [String]
        var description: String { "git \(arguments.joined(separator: " ")) failed" }
    }

    /// The run of one process on `night` (0-based) on `host`: tests `a`...`d`
    /// (each a `wall` in ns, about 1 ms), each test's level times
    /// `factor(test, night)`, every process with its own 2% noise and 5
    /// iterations with 0.5% noise of their own.
    func run(
        night: Int, host: String = "ci-1", build: String? = nil, tests: [String] = ["a", "b", "c", "d"],
        noise: inout TrendNoise, factor: (String, Int) -> Double = { _, _ in 1 }
    ) -> PerfRun {
        var tags = ["branch": "main"]
        if let build { tags["build"] = build }
        let results = tests.map { test in
            let level = 1_000_000 * factor(test, night) * exp(0.02 * noise.normal())
            let samples = (0..<5).map { _ in level * exp(0.005 * noise.normal()) }
            return PerfTestResult(name: test, metrics: [PerfMetric(name: "wall", unit: "ns", samples: samples)])
        }
        return PerfRun(
            metadata: RunMetadata(
                suite: "nightly", gitCommit: commits[night], host: host, os: "Linux", cpuModel: "AMD EPYC",
                coreCount: 2,
                buildConfiguration: "release",
                timestamp: (1_700_000_000 + Int64(night) * 86_400) * 1_000_000_000
                    + (build == "reference" ? 60_000_000_000 : 0),
                tags: tags, runID: "\(host)-\(build ?? "build")-night\(night + 1)"),
            tests: results)
    }
}

extension HistoryStore {
    /// Adds every run.
    func add(_ runs: [PerfRun]) async throws {
        for run in runs { _ = try await add(RunRecord(run: run)) }
    }
}

extension NightlyHistory {
    /// Per night of the history a native and a simulated process of the
    /// nightly build and of the pinned reference (`build=nightly`,
    /// `build=reference`) on host `ci-1`, each with one test, `test`, whose
    /// metrics `metrics` gives for the night (index), the build and whether
    /// the process is simulated.
    func runs(
        test: String, cpuModel: String, metrics: (_ night: Int, _ build: String, _ simulated: Bool) -> [PerfMetric]
    ) -> [HistoryRun] {
        var runs: [PerfRun] = []
        for night in commits.indices {
            for build in ["nightly", "reference"] {
                for simulated in [false, true] {
                    var metadata = RunMetadata(
                        suite: "LensPipeline", gitCommit: commits[night], host: "ci-1", os: "Linux",
                        cpuModel: cpuModel, coreCount: 2, buildConfiguration: "release",
                        timestamp: (1_700_000_000 + Int64(night) * 86_400 + (simulated ? 600 : 0)
                            + (build == "reference" ? 60 : 0)) * 1_000_000_000,
                        tags: ["branch": "main", "build": build],
                        runID: "ci-1-\(build)-\(simulated ? "simulated-" : "")night\(night + 1)")
                    metadata.simulated = simulated
                    runs.append(
                        PerfRun(
                            metadata: metadata,
                            tests: [PerfTestResult(name: test, metrics: metrics(night, build, simulated))]))
                }
            }
        }
        return runs.map { HistoryRun(record: RunRecord(run: $0)) }
    }
}
