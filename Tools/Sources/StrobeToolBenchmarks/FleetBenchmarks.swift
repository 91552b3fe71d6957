import Foundation
import Strobe
import StrobeDiff
import StrobeFleet
import StrobeHistory
import StrobeStatistics
import StrobeTestSupport

/// `make bench fleet`: the fleet report's intervals and verdicts in
/// simulation (rates over seeded trials), ingest speed into SQLite and
/// PostgreSQL on traces the SDK writes, and the time of a 10,000-trace
/// report. `STROBE_BENCH_FLEET_SIMULATION_ONLY=1` runs the simulation alone.
enum FleetBenchmarks {
    static func run() async {
        do {
            try await measure()
        } catch {
            FileHandle.standardError.write(Data("StrobeToolBenchmarks fleet: \(error)\n".utf8))
            exit(1)
        }
    }

    static func measure() async throws {
        print(
            "{\"section\":\"fleet\",\"cpu\":\"\(HistoryBenchmarks.cpuModel())\",\"cores\":\(ProcessInfo.processInfo.activeProcessorCount)}"
        )
        simulation()
        if ProcessInfo.processInfo.environment["STROBE_BENCH_FLEET_SIMULATION_ONLY"] == "1" { return }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-fleet-bench-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let files = try writeTraces(count: 400, in: scratch + "/traces")
        try await ingest(files, scratch: scratch)
        try await report(scratch: scratch)
    }

    /// Coverage, A/A false regressions and power, over seeded trials.
    static func simulation() {
        let simulation = FleetSimulation()
        let trials = 1_000
        let coverage = simulation.coverage(trials: trials, seed: 2026)
        for (p, rate) in coverage.sorted(by: { $0.key < $1.key }) {
            Figure(
                name: "95% CI covers the true P\(Int(p * 100)), 500 sessions of 20–60 events (\(trials) trials)",
                value: rate * 100, unit: "% of trials", baselineName: "nominal", baselineValue: 95,
                target: "93 <= value <= 97",
                extra: ["session_sigma": simulation.sessionSpread, "event_sigma": simulation.eventSpread]
            )
            .printLine()
        }
        let aa = simulation.reports(trials: trials, slowdown: 0, seed: 2027)
        Figure(
            name: "A/A: reports with a false regression (2 metrics × 3 groups × 3 percentiles, 500 sessions a side)",
            value: aa.falseRegressionReports * 100, unit: "% of reports", baselineName: "allowed", baselineValue: 1,
            target: "value <= 1",
            extra: ["reports": Double(trials), "comparisons_per_report": Double(aa.comparisonsPerReport)]
        ).printLine()
        let ab = simulation.reports(trials: 500, slowdown: 0.1, seed: 2028)
        Figure(
            name: "10% slowdown, 500 sessions a version: P90 regression found", value: ab.detectedP90 * 100,
            unit: "% of reports", baselineName: "required", baselineValue: 90, target: "value >= 90",
            extra: [
                "reports": 500, "false_regression_reports_pct": ab.falseRegressionReports * 100,
                "session_sigma": simulation.sessionSpread,
            ]
        ).printLine()
        // The power depends on how much sessions differ within a group: the
        // same with sessions' speeds spread by σ 0.2 rather than 0.3.
        var tighter = simulation
        tighter.sessionSpread = 0.2
        let tight = tighter.reports(trials: 500, slowdown: 0.1, seed: 2029)
        Figure(
            name: "10% slowdown, 500 sessions a version, session σ 0.2: P90 regression found",
            value: tight.detectedP90 * 100,
            unit: "% of reports", baselineName: "required", baselineValue: 90, target: "value >= 90",
            extra: [
                "reports": 500, "false_regression_reports_pct": tight.falseRegressionReports * 100,
                "session_sigma": 0.2,
            ]
        ).printLine()
        let tightAA = tighter.reports(trials: trials, slowdown: 0, seed: 2030)
        Figure(
            name: "A/A, session σ 0.2: reports with a false regression", value: tightAA.falseRegressionReports * 100,
            unit: "% of reports", baselineName: "allowed", baselineValue: 1, target: "value <= 1",
            extra: ["reports": Double(trials)]
        ).printLine()
        let tightCoverage = tighter.coverage(trials: trials, seed: 2031)
        Figure(
            name: "95% CI covers the true P90, session σ 0.2 (\(trials) trials)",
            value: (tightCoverage[0.9] ?? 0) * 100,
            unit: "% of trials", baselineName: "nominal", baselineValue: 95, target: "93 <= value <= 97"
        ).printLine()
    }

    /// `count` traces of about 5,000 intervals each (1,000 frames of four
    /// steps) and 100 counter samples, written by the SDK.
    static func writeTraces(count: Int, in directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var files: [String] = []
        for index in 0..<count {
            let path = directory + "/trace-\(index).pftrace"
            var configuration = TraceConfiguration(outputPath: path)
            configuration.processSamplingInterval = .zero
            configuration.metadata = TraceMetadata(
                appName: "Lens", appVersion: index % 2 == 0 ? "5.1" : "5.2", deviceModel: "model-\(index % 3)",
                dimensions: ["device.class": ["low", "mid", "high"][index % 3]])
            try TraceSession.record(configuration) {
                for frame in 0..<1_000 {
                    Trace.interval("frame") {
                        Trace.interval("lens apply") {}
                        Trace.interval("layout") {}
                        Trace.interval("render") {}
                        Trace.interval("commit") {}
                    }
                    if frame % 10 == 0 { Trace.counter("queue depth", Int64(frame % 7)) }
                }
            }
            files.append(path)
        }
        return files
    }

    /// Ingest speed: SQLite and PostgreSQL, against extracting alone.
    static func ingest(_ files: [String], scratch: String) async throws {
        let extractStart = DispatchTime.now().uptimeNanoseconds
        let extracted = files.map {
            FleetTraceExtraction.record(of: [UInt8](FileManager.default.contents(atPath: $0)!), source: $0)
        }
        let extractSeconds = Double(DispatchTime.now().uptimeNanoseconds - extractStart) / 1e9
        guard extracted.allSatisfy({ (try? $0.get()) != nil }) else {
            throw BenchmarkFailure("a written trace was refused")
        }
        let intervals =
            (try? extracted[0].get())?.metrics.filter { $0.kind == .interval }.reduce(0) { $0 + $1.count } ?? 0

        let sqlite = try await FleetStores.open(.sqlite(path: scratch + "/fleet.sqlite"))
        let start = DispatchTime.now().uptimeNanoseconds
        let summary = try await FleetIngestion.ingest(files: files, into: sqlite)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        await sqlite.close()
        guard summary.added == files.count else { throw BenchmarkFailure("SQLite ingest: \(summary)") }
        Figure(
            name: "ingest \(files.count) traces of \(intervals) intervals into SQLite, both cores",
            value: Double(files.count) / seconds,
            unit: "traces/s", baselineName: "extract them on one core, no store",
            baselineValue: Double(files.count) / extractSeconds,
            target: "value >= 200"
        ).printLine()

        let server = try PostgresServer.start(in: scratch + "/postgres")
        defer { server.stop() }
        let url = try PostgresServer.createDatabase("bench_fleet", url: server.url)
        let postgres = try await FleetStores.open(try HistoryLocation.parse(url))
        let pgStart = DispatchTime.now().uptimeNanoseconds
        let pgSummary = try await FleetIngestion.ingest(files: files, into: postgres)
        let pgSeconds = Double(DispatchTime.now().uptimeNanoseconds - pgStart) / 1e9
        let again = try await FleetIngestion.ingest(files: files, into: postgres)
        let stored = try await postgres.traceCount()
        await postgres.close()
        guard pgSummary.added == files.count, again.alreadyStored == files.count, stored == files.count else {
            throw BenchmarkFailure("PostgreSQL ingest: \(pgSummary), then \(again), \(stored) stored")
        }
        Figure(
            name: "ingest \(files.count) traces of \(intervals) intervals into PostgreSQL, both cores",
            value: Double(files.count) / pgSeconds, unit: "traces/s",
            baselineName: "extract them on one core, no store",
            baselineValue: Double(files.count) / extractSeconds, target: "value >= 200"
        ).printLine()
    }

    /// A report of 10,000 traces (two versions × three device classes, with
    /// the simulation's sessions) from SQLite.
    static func report(scratch: String) async throws {
        let store = try await FleetStores.open(.sqlite(path: scratch + "/report.sqlite"))
        var generator = SeededGenerator(seed: 99)
        var simulation = FleetSimulation()
        simulation.sessions = 10_000 / 6
        var records: [FleetTraceRecord] = []
        var index = 0
        for version in ["5.1", "5.2"] {
            for device in ["low", "mid", "high"] {
                for sketch in simulation.sessionSketches(factor: version == "5.2" ? 1.1 : 1, generator: &generator) {
                    index += 1
                    records.append(
                        FleetTraceRecord(
                            id: "sha256:\(index)", source: "simulated-\(index)",
                            metadata: [
                                "app.version": version, "device.class": device, "device.model": "m\(index % 40)",
                            ],
                            samplingProbability: 0.01,
                            metrics: [
                                FleetMetricRecord(
                                    kind: .interval, name: "lens apply", count: Int64(sketch.count), total: sketch.sum,
                                    sketch: sketch.serialized())
                            ]))
                }
            }
        }
        _ = try await store.add(records)
        var options = FleetReport.Options(metrics: ["lens apply"])
        options.by = ["device.class"]
        options.compare = ("5.1", "5.2")
        var reportSeconds: [Double] = []
        var readSeconds: [Double] = []
        var regressions = 0
        for _ in 0..<3 {
            let start = DispatchTime.now().uptimeNanoseconds
            let report = try await FleetReport.build(from: store, options: options)
            _ = report.render()
            reportSeconds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            regressions = report.metrics[0].changes?.filter { $0.changes[1].verdict == .regression }.count ?? 0
            let readStart = DispatchTime.now().uptimeNanoseconds
            _ = try await store.sessions(metric: "lens apply", kind: .interval, filters: [:])
            readSeconds.append(Double(DispatchTime.now().uptimeNanoseconds - readStart) / 1e9)
        }
        await store.close()
        Figure(
            name:
                "fleet report of \(records.count) traces, 3 groups × 2 versions, P50/P90/P99 with CIs and verdicts (median of 3)",
            value: HistoryBenchmarks.median(reportSeconds), unit: "s", baselineName: "read the sessions' rows only",
            baselineValue: HistoryBenchmarks.median(readSeconds), target: "value <= 5",
            extra: ["groups_with_p90_regression_of_3": Double(regressions)]
        ).printLine()
    }
}
