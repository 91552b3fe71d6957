import Foundation
import Strobe
import StrobeReader
import StrobeResults
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// Every `strobe` subcommand run as a user runs it, the built `strobe` beside
/// the test bundle, on small inputs made here: its output and its exit status
/// (0 success, 1 a regression or a failed measurement, 2 bad input with a
/// message naming the file, flag or byte).
@Suite(.serialized, .processWide) struct StrobeCLITests {
    static let strobePath = builtProgram("strobe")
    static let traceChild = builtProgram("TraceChild")

    static func strobe(_ arguments: String...) throws -> ProgramOutcome {
        try runProgram(strobePath, arguments, environment: ["CI": "true"])
    }

    /// A fresh scratch directory, removed by the caller.
    static func scratch(_ name: String = #function) throws -> String {
        let path = NSTemporaryDirectory() + "strobe-cli-\(getpid())-\(name.filter { $0.isLetter })"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A trace written in this process: `load` inside `startup`, 3 times,
    /// and a counter `items`.
    static func writeTrace(_ path: String) throws {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        try TraceSession.record(configuration) {
            for round in 0..<3 {
                Trace.interval("startup") {
                    Trace.interval("load") { usleep(1000) }
                }
                Trace.counter("items", round + 40)
            }
        }
    }

    /// A results file of one process: test `t`, metric `wall` in ns.
    static func writeResults(_ path: String, wall: [Double], run: String, timestamp: Int64 = 1) throws {
        let metadata = RunMetadata(suite: "s", gitCommit: "c0ffee", timestamp: timestamp, runID: run)
        let test = PerfTestResult(name: "t", metrics: [PerfMetric(name: "wall", unit: "ns", samples: wall)])
        try ResultsFile.write(PerfRun(metadata: metadata, tests: [test]), to: path)
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    // MARK: Reading traces

    @Test func summarizePrintsIntervalsAndRefusesABadCategory() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/app.pftrace"
        try Self.writeTrace(trace)

        let text = try Self.strobe("summarize", trace)
        #expect(text.status == 0, "\(text.errors)")
        #expect(text.output.contains("\(trace): 6 intervals"), "\(text.output)")
        #expect(text.output.contains("load") && text.output.contains("startup"))

        let json = try Self.strobe("summarize", trace, "--format", "json")
        #expect(json.status == 0, "\(json.errors)")
        #expect(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) is [String: Any])

        let badFlag = try Self.strobe("summarize", trace, "--category", "")
        #expect(badFlag.status == 2)
        #expect(badFlag.errors.contains("--category: empty category pattern"), "\(badFlag.errors)")

        let missing = try Self.strobe("summarize", folder + "/missing.pftrace")
        #expect(missing.status == 2)
        #expect(
            missing.errors.contains("strobe: \(folder)/missing.pftrace: cannot open: No such file"), "\(missing.errors)"
        )
        #expect(missing.errors.contains("(errno \(ENOENT))"), "\(missing.errors)")
    }

    @Test func exportWritesEachFormatAndRefusesAnUnknownOne() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/app.pftrace"
        try Self.writeTrace(trace)

        let csv = try Self.strobe("export", trace, "--format", "csv")
        #expect(csv.status == 0, "\(csv.errors)")
        let lines = csv.output.split(separator: "\n")
        #expect(lines.first == "kind,name,tid,thread,track,ts_ns,dur_ns,depth,cpu_ns,value,args")
        #expect(lines.filter { $0.hasPrefix("interval,load,") }.count == 3, "\(csv.output)")
        #expect(lines.filter { $0.hasPrefix("counter,items,") }.count == 3, "\(csv.output)")

        let output = folder + "/app.json"
        let chrome = try Self.strobe("export", trace, "--format", "chrome-json", "-o", output)
        #expect(chrome.status == 0 && chrome.output.isEmpty, "\(chrome.errors)")
        #expect(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) is [String: Any])

        let badFormat = try Self.strobe("export", trace, "--format", "xml")
        #expect(badFormat.status == 2)
        #expect(badFormat.errors.contains("--format"), "\(badFormat.errors)")

        let unwritable = try Self.strobe("export", trace, "--format", "csv", "-o", folder + "/no/such/dir.csv")
        #expect(unwritable.status == 2)
        #expect(unwritable.errors.contains("strobe: cannot write \(folder)/no/such/dir.csv"), "\(unwritable.errors)")
    }

    @Test func repairCutsACutPacketAndNamesItsOffset() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/app.pftrace"
        try Self.writeTrace(trace)
        let whole = try Data(contentsOf: URL(fileURLWithPath: trace))

        let complete = try Self.strobe("repair", trace)
        #expect(complete.status == 0, "\(complete.errors)")
        #expect(complete.output.contains("complete, \(whole.count) bytes"), "\(complete.output)")

        try whole.dropLast(3).write(to: URL(fileURLWithPath: trace))
        let repaired = folder + "/repaired.pftrace"
        let cut = try Self.strobe("repair", trace, "-o", repaired)
        #expect(cut.status == 0, "\(cut.errors)")
        #expect(cut.output.contains("\(repaired): kept"), "\(cut.output)")
        let kept = try Data(contentsOf: URL(fileURLWithPath: repaired))
        #expect(kept.count < whole.count - 3)
        #expect(
            cut.output.contains("dropped \(whole.count - 3 - kept.count) bytes from byte \(kept.count)"),
            "\(cut.output)")
        #expect(try TraceReader.read(contentsOf: repaired).isComplete)

        let missing = try Self.strobe("repair", folder + "/missing.pftrace")
        #expect(missing.status == 2)
        #expect(missing.errors.contains("\(folder)/missing.pftrace: cannot open: No such file"), "\(missing.errors)")
    }

    // MARK: Measuring

    @Test
    func runMeasuresATracedProgramAndExitsOneWhenItFails() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }

        let ok = try Self.strobe(
            "run", "--iterations", "2", "--warmup", "0", "--results-dir", folder + "/ok", "--name", "child", "--",
            Self.traceChild, "ok", "1")
        #expect(ok.status == 0, "\(ok.errors)")
        #expect(ok.output.contains("child: 2 iterations, median wall"), "\(ok.output)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder + "/ok")
        #expect(files.count == 1)
        let run = try ResultsFile.read(folder + "/ok/" + files[0])
        #expect(run.tests.first?.metric("wall")?.samples.count == 2)
        #expect(
            run.tests.first?.metrics.contains { $0.name.contains("load") } == true,
            "\(run.tests.first?.metrics.map(\.name) ?? [])")

        let failing = try Self.strobe(
            "run", "--iterations", "2", "--results-dir", folder + "/fail", "--name", "child", "--", Self.traceChild,
            "fail")
        #expect(failing.status == 1)
        #expect(
            failing.errors.contains("strobe: child: iteration 0 (warm-up): the child exited with status 3"),
            "\(failing.errors)")

        let badFlag = try Self.strobe("run", "--iterations", "0", "--", "true")
        #expect(badFlag.status == 2)
        #expect(badFlag.errors.contains("--iterations must be positive, not 0"), "\(badFlag.errors)")
        let badTag = try Self.strobe("run", "--tag", "novalue", "--", "true")
        #expect(badTag.status == 2)
        #expect(badTag.errors.contains("strobe: --tag novalue: expected key=value"), "\(badTag.errors)")
    }

    // MARK: Results

    @Test func resultsExportWritesJSONAndCSVAndNamesABadFile() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let results = folder + "/run.strobe-results"
        try Self.writeResults(results, wall: [10, 11, 12], run: "r1")

        let csv = try Self.strobe("results", "export", results, "--format", "csv")
        #expect(csv.status == 0, "\(csv.errors)")
        #expect(csv.output.hasPrefix("suite,test,metric,unit,better,run,round,iteration,value\n"), "\(csv.output)")
        #expect(csv.output.contains("\ns,t,t/wall,ns,lower,r1,,2,12.0\n"), "\(csv.output)")

        let json = try Self.strobe("results", "export", results, "--format", "json")
        #expect(json.status == 0, "\(json.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect((object["tests"] as? [[String: Any]])?.count == 1)

        let notResults = folder + "/text.strobe-results"
        try Self.write("not a results file", to: notResults)
        let bad = try Self.strobe("results", "export", notResults, "--format", "json")
        #expect(bad.status == 2)
        #expect(bad.errors.contains("strobe: \(notResults)"), "\(bad.errors)")
        #expect(bad.output.isEmpty)

        let missing = try Self.strobe("results", "export", folder + "/missing.strobe-results", "--format", "csv")
        #expect(missing.status == 2)
        #expect(missing.errors.contains("strobe: \(folder)/missing.strobe-results: cannot read"), "\(missing.errors)")
        #expect(missing.errors.contains("(errno \(ENOENT))"), "\(missing.errors)")
    }

    /// Samples of three processes a side, as `strobe diff` reads CSV.
    static func samples(_ values: [[Double]]) -> String {
        var text = "metric,unit,run,value\n"
        for (run, runValues) in values.enumerated() {
            for value in runValues { text += "wall,ns,r\(run),\(value)\n" }
        }
        return text
    }

    @Test func diffExitsOneOnARegressionZeroWithoutAndTwoOnABadFile() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let baseline = folder + "/baseline.csv"
        let same = folder + "/same.csv"
        let slower = folder + "/slower.csv"
        let runs: [[Double]] = (0..<6).map { run in (0..<5).map { 100 + Double(run % 3) + Double($0) * 0.1 } }
        try Self.write(Self.samples(runs), to: baseline)
        try Self.write(Self.samples(runs.map { $0.map { $0 + 0.05 } }), to: same)
        try Self.write(Self.samples(runs.map { $0.map { $0 * 1.5 } }), to: slower)

        let regression = try Self.strobe("diff", "--baseline", baseline, "--candidate", slower)
        #expect(regression.status == 1, "\(regression.output)\(regression.errors)")
        #expect(regression.output.contains("regression"), "\(regression.output)")

        let unchanged = try Self.strobe("diff", "--baseline", baseline, "--candidate", same, "--format", "json")
        #expect(unchanged.status == 0, "\(unchanged.output)\(unchanged.errors)")
        #expect(try JSONSerialization.jsonObject(with: Data(unchanged.output.utf8)) is [String: Any])

        let broken = folder + "/broken.csv"
        try Self.write("metric,value\nwall,fast\n", to: broken)
        let bad = try Self.strobe("diff", "--baseline", baseline, "--candidate", broken)
        #expect(bad.status == 2)
        #expect(bad.errors.contains("\(broken): line 2, column value: \"fast\" is not a number"), "\(bad.errors)")

        let badFlag = try Self.strobe("diff", "--baseline", baseline, "--candidate", same, "--alpha", "2")
        #expect(badFlag.status == 2)
        #expect(badFlag.errors.contains("--alpha must be between 0 and 1, not 2.0"), "\(badFlag.errors)")
    }

    @Test func compareRefusesBadFlagsBeforeRunningAnything() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cases: [([String], String)] = [
            (
                ["--baseline", "true", "--candidate", "true", "--max-time", "soon"],
                "'--max-time <max-time>': \"soon\" is not a duration"
            ),
            (
                ["--baseline", "true", "--candidate", "true", "--min-rounds", "1"],
                "--min-rounds must be at least 2, not 1"
            ),
            (["--candidate", "true"], "give the baseline's command with --baseline CMD"),
        ]
        for (arguments, message) in cases {
            let outcome = try runProgram(Self.strobePath, ["compare", "--results-dir", folder + "/out"] + arguments)
            #expect(outcome.status == 2, "\(arguments)")
            #expect(outcome.errors.contains(message), "\(outcome.errors)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
        }
    }

    @Test func trendFindsAStepAndNamesWhatItCannotRead() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for index in 0..<16 {
            let level: Double = index < 8 ? 100 : 150
            let wall = (0..<8).map { level + Double($0) * 0.5 + Double(index % 3) }
            try Self.writeResults(
                folder + "/run\(index).strobe-results", wall: wall, run: "r\(index)",
                timestamp: Int64(index + 1) * 1_000_000_000)
        }
        let trend = try Self.strobe("trend", folder)
        #expect(trend.status == 0, "\(trend.errors)")
        #expect(trend.output.contains("16 runs, 1 series, in time order: 1 change (1 undetermined)"), "\(trend.output)")
        #expect(trend.output.contains("regression  s/t/wall: +"), "\(trend.output)")
        #expect(trend.output.contains("between run r7") && trend.output.contains("and run r8"), "\(trend.output)")

        let one = try Self.strobe("trend", folder + "/run0.strobe-results")
        #expect(one.status == 2)
        #expect(one.errors.contains("a trend needs at least two runs, found 1"), "\(one.errors)")

        let notResults = folder + "/zz.strobe-results"
        try Self.write("text", to: notResults)
        let bad = try Self.strobe("trend", folder)
        #expect(bad.status == 2)
        #expect(bad.errors.contains("strobe: \(notResults)"), "\(bad.errors)")

        let badFlag = try Self.strobe("trend", folder, "--alpha", "0")
        #expect(badFlag.status == 2)
        #expect(badFlag.errors.contains("--alpha must be between 0 and 1"), "\(badFlag.errors)")
    }

    @Test func helpExitsZeroAndAnUnknownCommandTwo() throws {
        let help = try Self.strobe("--help")
        #expect(help.status == 0)
        #expect(help.output.contains("Exit status: 0 success"), "\(help.output)")
        let unknown = try Self.strobe("frobnicate")
        #expect(unknown.status == 2)
        #expect(unknown.errors.contains("frobnicate"), "\(unknown.errors)")
    }
}
