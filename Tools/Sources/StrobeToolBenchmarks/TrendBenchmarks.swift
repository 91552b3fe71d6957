import Foundation
import StrobeDiff
import StrobeHistory
import StrobeHistoryStore
import StrobeResults
import StrobeStatistics
import StrobeTestSupport
import StrobeTrend

/// `make bench trend`: `strobe trend` end to end over a store of 10,000 runs
/// × 50 metrics, SQLite and PostgreSQL, against loading the same runs alone.
///
/// The history: 2,500 nightly commits, each measured on 4 hosts (10,000
/// runs), one test of 50 metrics; each run a process with its own noise
/// (log-normal σ 5%) and 10 iterations on top (σ 2%); five metrics 10% slower
/// from commit 1,800 on every host. The command is the `strobe` built beside
/// this benchmark, run as a user runs it (text report to a file).
enum TrendBenchmarks {
    static let commits = 2_500
    static let hosts = 4
    static let metricCount = 50
    static let stepCommit = 1_800
    static let steppedMetrics = 5

    static func run() async throws {
        let strobe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "strobe"
        ).path
        guard FileManager.default.isExecutableFile(atPath: strobe) else {
            throw BenchmarkFailure(
                "\(strobe): no strobe command beside the benchmark; build it first (swift build -c release --product "
                    + "strobe)"
            )
        }
        ToolBenchmarkSection.printOpeningLine("trend", loadAverage: true)
        try await ToolBenchmarkSection.withScratchDirectory("trend") { scratch in
            try await measure(strobe: strobe, scratch: scratch)
        }
    }

    /// Stores the history in SQLite and PostgreSQL under `scratch`, then
    /// times `strobe trend` (the command at `strobe`) and its parts on each.
    static func measure(strobe: String, scratch: String) async throws {
        let server = try PostgresServer.start(in: scratch + "/postgres")
        defer { server.stop() }

        let records = history()
        let sqlitePath = scratch + "/trend.sqlite"
        let sqlite = try await HistoryStores.open(.sqlite(path: sqlitePath))
        for record in records { _ = try await sqlite.add(record) }
        await sqlite.close()
        let postgresURL = try PostgresServer.createDatabase("bench_trend", url: server.url)
        let postgresLocation = try HistoryLocation.parse(postgresURL)
        let writers = 4
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    let store = try await HistoryStores.open(postgresLocation)
                    for (offset, record) in records.enumerated() where offset % writers == writer {
                        _ = try await store.add(record)
                    }
                    await store.close()
                }
            }
            try await group.waitForAll()
        }

        for (name, argument, location) in [
            ("SQLite", sqlitePath, HistoryLocation.sqlite(path: sqlitePath)),
            ("PostgreSQL", postgresURL, postgresLocation),
        ] {
            // The parts, in process: loading the runs, then the analysis.
            let loadStart = DispatchTime.now().uptimeNanoseconds
            let store = try await HistoryStores.open(location)
            let runs = try await store.runs(HistoryQuery())
            await store.close()
            let loadSeconds = seconds(since: loadStart)
            let analysisStart = DispatchTime.now().uptimeNanoseconds
            let report = try TrendAnalysis.analyze(runs, source: name)
            let analysisSeconds = seconds(since: analysisStart)
            let found = Set(report.changes.filter { $0.status == .confirmed }.map(\.metric))
            // The command, end to end.
            let output = scratch + "/trend-\(name).txt"
            let commandStart = DispatchTime.now().uptimeNanoseconds
            _ = try PostgresServer.shell([strobe, "trend", "--history", argument, "--output", output])
            let commandSeconds = seconds(since: commandStart)
            guard runs.count == commits * hosts else {
                throw BenchmarkFailure("\(name): loaded \(runs.count) runs, expected \(commits * hosts)")
            }
            print("{\"section\":\"trend\",\"store\":\"\(name)\",\"load_average\":\"\(loadAverage())\"}")
            Figure(
                name: "strobe trend over 10,000 runs × 50 metrics (4 hosts × 2,500 commits) in \(name), end to end",
                value: commandSeconds, unit: "s", baselineName: "load the runs alone, in process",
                baselineValue: loadSeconds,
                target: "value <= 10",
                extra: [
                    "load_s": loadSeconds, "analysis_s": analysisSeconds, "changes": Double(report.changes.count),
                    "stepped_metrics_found": Double(
                        found.intersection(Set((0..<steppedMetrics).map { "metric.\($0)" })).count),
                ]
            ).printLine()
            let written = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            guard written.contains(report.headline) else {
                throw BenchmarkFailure(
                    "\(name): strobe trend wrote a report without the headline \"\(report.headline)\"")
            }
            print(
                "{\"section\":\"trend\",\"store\":\"\(name)\","
                    + "\"headline\":\"\(report.headline.replacingOccurrences(of: "\"", with: "'"))\"}"
            )
        }
    }

    /// The history's runs: every commit on every host.
    static func history() -> [RunRecord] {
        var generator = SeededGenerator(seed: 20)
        var records: [RunRecord] = []
        records.reserveCapacity(commits * hosts)
        for commit in 0..<commits {
            for host in 0..<hosts {
                let process = (0..<metricCount).map { _ in exp(0.05 * generator.normal()) }
                let metrics = (0..<metricCount).map { index in
                    let step = index < steppedMetrics && commit >= stepCommit ? 1.1 : 1.0
                    let center = 1e6 * Double(index + 1) * step * process[index]
                    return PerfMetric(
                        name: "metric.\(index)", unit: "ns",
                        samples: (0..<10).map { _ in center * exp(0.02 * generator.normal()) })
                }
                let time = Int64(commit) * 86_400_000_000_000 + Int64(host) * 1_000_000_000
                let run = PerfRun(
                    metadata: RunMetadata(
                        suite: "nightly", gitCommit: String(format: "%040x", commit + 1), host: "runner-\(host)",
                        os: "Linux",
                        cpuModel: "bench", coreCount: 2, buildConfiguration: "release", timestamp: time,
                        tags: ["branch": "main"], runID: "trend-\(commit)-\(host)"),
                    tests: [PerfTestResult(name: "suite", metrics: metrics, warmupIterations: 1)])
                records.append(RunRecord(run: run))
            }
        }
        return records
    }

    /// The 1, 5 and 15 minute load averages, from /proc/loadavg.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func seconds(since start: UInt64) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
