import Foundation
import Strobe
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// `strobe ingest` and `strobe fleet` as a user runs them, on traces the SDK
/// wrote: the slower version is a regression at every percentile, the same
/// version against itself is not, and bad flags are named.
@Suite(.serialized, .processWide)
struct FleetCommandTests {
    static let strobe = builtProgram("strobe")

    /// Two versions × two device classes × `sessions` traces; version 5.2's
    /// intervals take three times as long.
    static func writeFleet(in directory: String, sessions: Int) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for version in ["5.1", "5.2"] {
            for device in ["mid", "high"] {
                for session in 0..<sessions {
                    try SDKTraces.write(
                        directory + "/\(version)-\(device)-\(session).pftrace",
                        metadata: TraceMetadata(appVersion: version, dimensions: ["device.class": device]),
                        intervals: 40, duration: .microseconds(version == "5.1" ? 50 : 150))
                }
            }
        }
    }

    @Test func ingestThenReportFindsTheSlowerVersionInEveryGroup() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-fleet-cli-\(getpid())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.writeFleet(in: directory + "/traces", sessions: 8)
        try Data("not a trace".utf8).write(to: URL(fileURLWithPath: directory + "/traces/junk.pftrace"))
        let store = directory + "/history.sqlite"

        let ingest = try runProgram(Self.strobe, ["ingest", directory + "/traces", "--history", store])
        #expect(ingest.status == 0, "\(ingest.errors)")
        #expect(ingest.output.hasPrefix("33 traces: 32 added, 0 already stored, 1 skipped"), "\(ingest.output)")
        #expect(ingest.errors.contains("strobe ingest: skipped \(directory)/traces/junk.pftrace: "), "\(ingest.errors)")
        let again = try runProgram(Self.strobe, ["ingest", directory + "/traces", "--history", store])
        #expect(again.output.hasPrefix("33 traces: 0 added, 32 already stored, 1 skipped"), "\(again.output)")

        let report = try runProgram(
            Self.strobe,
            ["fleet", "--history", store, "--metric", "work", "--group-by", "device.class", "--compare", "5.1", "5.2"])
        #expect(report.status == 1, "a regression: \(report.output) \(report.errors)")
        #expect(report.output.contains("work: 5.2 against 5.1"))
        let verdictLines = report.output.split(separator: "\n").filter { $0.hasPrefix("high ") || $0.hasPrefix("mid ") }
        #expect(verdictLines.filter { $0.hasSuffix("regression") }.count == 2, "\(report.output)")

        #expect(report.output.contains("work (lower is better by default)\n"), "\(report.output)")

        // A policy that says more work is better turns the regressions into
        // improvements.
        let policy = directory + "/policy.yml"
        try Data("metrics:\n  - match: \"^work$\"\n    better: higher\n".utf8).write(to: URL(fileURLWithPath: policy))
        let flipped = try runProgram(
            Self.strobe,
            [
                "fleet", "--history", store, "--metric", "work", "--group-by", "device.class", "--compare", "5.1",
                "5.2",
                "--policy", policy,
            ])
        #expect(flipped.status == 0, "\(flipped.output) \(flipped.errors)")
        #expect(flipped.output.contains("work (higher is better by policy rule \"^work$\")\n"), "\(flipped.output)")
        let flippedLines = flipped.output.split(separator: "\n").filter {
            $0.hasPrefix("high ") || $0.hasPrefix("mid ")
        }
        // Each group's median is an improvement and nothing a regression.
        // The group's own verdict is not asked: it is "improvement" only
        // when its P90 is decided too, and a P90 over eight sessions of
        // timed intervals is left open now and then on a loaded machine
        // (a preempted session of the faster version).
        #expect(
            flippedLines.filter { $0.contains("] improvement") && !$0.contains("regression") }.count == 2,
            "\(flipped.output)")

        let json = try runProgram(
            Self.strobe,
            ["fleet", "--history", store, "--metric", "work", "--group-by", "device.class", "--format", "json"])
        #expect(json.status == 0, "\(json.errors)")
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let metrics = object?["metrics"] as? [[String: Any]]
        let groups = metrics?.first?["groups"] as? [[String: Any]]
        #expect(groups?.count == 2)
        #expect(groups?.map { $0["sessions"] as? Int } == [16, 16])

        let same = try runProgram(
            Self.strobe,
            [
                "fleet", "--history", store, "--metric", "work", "--where", "app.version=5.1", "--group-by",
                "device.class",
                "--format", "markdown",
            ])
        #expect(same.status == 0)
        #expect(same.output.contains("### work where app.version=5.1"))
        #expect(same.output.contains("| mid | 8 | 320 |"), "\(same.output)")

        let missing = try runProgram(Self.strobe, ["fleet", "--history", store, "--metric", "lens apply"])
        #expect(missing.status == 2)
        #expect(
            missing.errors.contains("no trace holds the metric lens apply; stored: counter:queue, interval:work"),
            "\(missing.errors)")
    }

    /// The HTML page, rendered by headless Chromium: a plot per
    /// percentile, a point and an interval per device class and version,
    /// a line per device class, and the verdicts.
    @Test func theBrowserShowsAPlotPerPercentileWithALinePerDeviceClass() throws {
        let browser = try #require(
            ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            }, "the page test needs headless Chromium: apt-get install -y chromium (scripts/setup.sh installs it)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-fleet-html-\(getpid())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.writeFleet(in: directory + "/traces", sessions: 6)
        let store = directory + "/history.sqlite"
        #expect(try runProgram(Self.strobe, ["ingest", directory + "/traces", "--history", store]).status == 0)
        let page = directory + "/fleet.html"
        let report = try runProgram(
            Self.strobe,
            [
                "fleet", "--history", store, "--metric", "work", "--group-by", "device.class", "--compare", "5.1",
                "5.2",
                "--format", "html", "--output", page,
            ])
        #expect(report.status == 1, "a regression: \(report.errors)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(!html.contains("<script") && !html.contains("http://") && !html.contains("https://"))
        let dom = try runProgram(
            browser, ["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + page])
        #expect(dom.status == 0)
        func count(_ needle: String) -> Int { dom.output.components(separatedBy: needle).count - 1 }
        #expect(count("<svg class=\"fleet-plot\"") == 3, "\(dom.output.prefix(300))")
        #expect(count("<circle class=\"point\"") == 3 * 4)
        #expect(count("<line class=\"ci\"") == 3 * 4)
        #expect(count("<polyline class=\"series\"") == 3 * 2)
        #expect(count("data-series=\"high\"") == 3 * 2 && count("data-series=\"mid\"") == 3 * 2)
        #expect(count("<td class=\"regression\">regression</td>") == 2)
        #expect(dom.output.contains("5.2 against 5.1 by app.version"))
        if let keep = ProcessInfo.processInfo.environment["STROBE_FLEET_SCREENSHOT"] {
            _ = try runProgram(
                browser,
                [
                    "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1000,900",
                    "--screenshot=" + keep, "file://" + page,
                ])
        }
    }

    /// A bad policy is named by file and line, as `strobe diff` names it,
    /// before the store is opened.
    @Test(arguments: [
        ("metrics:\n  - match: work\n    better: sideways\n", "line 3: `better` must be lower or higher, not sideways"),
        ("metrics:\n  - better: higher\n", "line 2: a rule without `match`"),
        ("metrics:\n  - match: \"(\"\n    better: higher\n", "line 2: `match` \"(\" is not a valid regular expression"),
    ])
    func aBadPolicyIsNamedByFileAndLine(policy: String, problem: String) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-fleet-policy-\(getpid()).yml")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(policy.utf8).write(to: URL(fileURLWithPath: path))
        let outcome = try runProgram(
            Self.strobe,
            ["fleet", "--metric", "work", "--policy", path, "--history", "/nonexistent/strobe-fleet/history.sqlite"])
        #expect(outcome.status == 2)
        #expect(outcome.errors.contains("strobe: \(path): \(problem)"), "\(outcome.errors)")
        let missing = try runProgram(
            Self.strobe,
            [
                "fleet", "--metric", "work", "--policy", path + ".absent", "--history",
                "/nonexistent/strobe-fleet/h.sqlite",
            ])
        #expect(missing.status == 2)
        #expect(missing.errors.contains("strobe: \(path).absent: cannot read the policy"), "\(missing.errors)")
    }

    @Test(arguments: [
        (["fleet"], "give the metric with --metric NAME"),
        (["fleet", "--metric", "x", "--where", "novalue"], "--where novalue: expected KEY=VALUE"),
        (["fleet", "--metric", "x", "--compare", "5.1"], "--compare takes two versions"),
        (["fleet", "--metric", "x", "--group-by", "a,,b"], "--group-by a,,b: a key is empty"),
        (["ingest", "/nonexistent/strobe-traces"], "/nonexistent/strobe-traces: no such file or directory"),
        (["ingest", ".", "--batch", "0"], "--batch must be at least 1"),
    ])
    func badFlagsAreNamed(arguments: [String], problem: String) throws {
        let outcome = try runProgram(
            Self.strobe, arguments + ["--history", "/tmp/strobe-fleet-unused-\(getpid()).sqlite"])
        #expect(outcome.status == 2)
        #expect(outcome.errors.contains(problem), "\(outcome.errors)")
    }
}
