import Foundation
import Strobe
import StrobeDiff
import StrobeFleet
import StrobeHistoryStore
import StrobeSimulations
import StrobeStatistics
import StrobeTestSupport

/// `make bench fleet`: the fleet report's intervals and verdicts in
/// simulation (rates over seeded trials), ingest speed into SQLite and
/// PostgreSQL on traces the SDK writes, and the time of a 10,000-trace
/// report. `STROBE_BENCH_FLEET_SIMULATION_ONLY=1` runs the simulation alone.
enum FleetBenchmarks {
    static func run() async throws {
        ToolBenchmarkSection.printOpeningLine("fleet")
        simulation()
        if ProcessInfo.processInfo.environment["STROBE_BENCH_FLEET_SIMULATION_ONLY"] == "1" { return }
        try await ToolBenchmarkSection.withScratchDirectory("fleet") { scratch in
            let files = try writeTraces(count: 400, in: scratch + "/traces")
            try await ingest(files, scratch: scratch)
            try await report(scratch: scratch)
        }
    }

    /// Power and false alarms of the method against an oracle on the same
    /// seeded reports, at four spreads of sessions; coverage and the
    /// intervals' claimed against true spread; Woodruff's intervals against
    /// a bootstrap over sessions.
    static func simulation() {
        func fleet(sessionSpread: Double) -> FleetSimulation {
            var simulation = FleetSimulation()
            simulation.sessionSpread = sessionSpread
            return simulation
        }
        for (index, sigma) in [0.1, 0.2, 0.25, 0.3].enumerated() {
            let study = fleet(sessionSpread: sigma).study(reports: 300, slowdown: 0.1, seed: 2028 + UInt64(index))
            Figure(
                name:
                    "10% slowdown, 500 sessions a version, session σ \(sigma): P90 regressions found (\(study.reports) "
                    + "reports × 3 groups), method against oracle",
                value: study.methodPower * 100, unit: "% of slowed P90s",
                baselineName: "oracle: exact pooled P90, its true standard error, same BH family and floors",
                baselineValue: study.oraclePower * 100, target: "value >= 90",
                extra: [
                    "session_sigma": sigma,
                    "false_regression_reports_pct": study.methodFalseRegressionReports * 100,
                    "oracle_false_regression_reports_pct": study.oracleFalseRegressionReports * 100,
                    "p90_claimed_log_se_pct": (study.claimedLogError[0.9] ?? 0) * 100,
                    "p90_method_log_sd_pct": (study.methodLogSpread[0.9] ?? 0) * 100,
                    "p90_exact_log_sd_pct": (study.exactLogSpread[0.9] ?? 0) * 100,
                    "p90_sketch_vs_exact_log_rms_pct": (study.sketchLogError[0.9] ?? 0) * 100,
                    "p90_coverage_pct": (study.coverage[0.9] ?? 0) * 100,
                ]
            ).printLine()
        }
        // What it takes at session σ 0.3: more sessions a version.
        var larger = fleet(sessionSpread: 0.3)
        larger.sessions = 600
        let more = larger.study(reports: 200, slowdown: 0.1, seed: 2035)
        Figure(
            name:
                "10% slowdown, 600 sessions a version, session σ 0.3: P90 regressions found (\(more.reports) reports × "
                + "3 groups), method against oracle",
            value: more.methodPower * 100, unit: "% of slowed P90s", baselineName: "oracle",
            baselineValue: more.oraclePower * 100, target: "value >= 90",
            extra: ["false_regression_reports_pct": more.methodFalseRegressionReports * 100]
        ).printLine()
        for (index, sigma) in [0.2, 0.3].enumerated() {
            let simulation = fleet(sessionSpread: sigma)
            let study = simulation.study(reports: 500, slowdown: 0, seed: 2040 + UInt64(index))
            Figure(
                name:
                    "A/A, session σ \(sigma): reports with a false regression (\(study.reports) reports of 2 metrics × "
                    + "3 groups × 3 percentiles, 500 sessions a side)",
                value: study.methodFalseRegressionReports * 100, unit: "% of reports",
                baselineName: "oracle", baselineValue: study.oracleFalseRegressionReports * 100,
                target: "value <= 1",
                extra: ["comparisons_per_report": Double(study.comparisonsPerReport), "session_sigma": sigma]
            ).printLine()
            for p in simulation.probabilities {
                Figure(
                    name:
                        "session σ \(sigma): 95% CI covers the true P\(Int(p * 100)) "
                        + "(\(study.reports * simulation.metrics * simulation.groups * 2) sides of 500 sessions)",
                    value: (study.coverage[p] ?? 0) * 100, unit: "% of sides", baselineName: "nominal",
                    baselineValue: 95, target: "93 <= value <= 97",
                    extra: [
                        "claimed_log_se_pct": (study.claimedLogError[p] ?? 0) * 100,
                        "method_log_sd_pct": (study.methodLogSpread[p] ?? 0) * 100,
                        "exact_log_sd_pct": (study.exactLogSpread[p] ?? 0) * 100,
                        "sketch_vs_exact_log_rms_pct": (study.sketchLogError[p] ?? 0) * 100,
                    ]
                ).printLine()
            }
        }
        let simulation = fleet(sessionSpread: 0.3)
        let check = simulation.intervalCheck(sides: 300, resamples: 200, seed: 2050)
        for p in simulation.probabilities {
            Figure(
                name:
                    "session σ 0.3, P\(Int(p * 100)): Woodruff's 95% CI covers the truth, against a bootstrap over "
                    + "sessions (\(check.sides) sides, \(check.resamples) resamples)",
                value: (check.woodruffCoverage[p] ?? 0) * 100, unit: "% of sides",
                baselineName: "bootstrap over sessions", baselineValue: (check.bootstrapCoverage[p] ?? 0) * 100,
                extra: [
                    "woodruff_width_pct": (check.woodruffWidth[p] ?? 0) * 100,
                    "bootstrap_width_pct": (check.bootstrapWidth[p] ?? 0) * 100,
                ]
            ).printLine()
        }
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
    /// the simulation's sessions) from SQLite; half the sessions sampled at
    /// 0.01 and half at 0.05, so that every group's percentiles are
    /// weighted.
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
                            samplingProbability: index % 2 == 0 ? 0.01 : 0.05,
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
        var weightedGroups = 0
        for _ in 0..<3 {
            let start = DispatchTime.now().uptimeNanoseconds
            let report = try await FleetReport.build(from: store, options: options)
            _ = report.render()
            reportSeconds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            regressions = report.metrics[0].changes?.filter { $0.changes[1].verdict == .regression }.count ?? 0
            weightedGroups = report.metrics[0].groups.filter(\.weighted).count
            let readStart = DispatchTime.now().uptimeNanoseconds
            _ = try await store.sessions(metric: "lens apply", kind: .interval, filters: [:])
            readSeconds.append(Double(DispatchTime.now().uptimeNanoseconds - readStart) / 1e9)
        }
        await store.close()
        Figure(
            name:
                "fleet report of \(records.count) traces, 3 groups × 2 versions, P50/P90/P99 with CIs and verdicts, "
                + "sessions sampled at 0.01 and 0.05 (median of 3)",
            value: median(reportSeconds), unit: "s", baselineName: "read the sessions' rows only",
            baselineValue: median(readSeconds), target: "value <= 5",
            extra: [
                "groups_with_p90_regression_of_3": Double(regressions),
                "weighted_groups_of_6": Double(weightedGroups),
            ]
        ).printLine()
    }
}
