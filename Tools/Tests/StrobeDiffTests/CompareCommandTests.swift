import Foundation
import StrobeDiff
import StrobeProcessRunner
import StrobeResults
import StrobeStatistics
import StrobeTestSupport
import Testing

/// `strobe compare` and `strobe diff` run as a user runs them: the built
/// `strobe` beside the test bundle, real child processes, exit statuses.
@Suite(.serialized) struct CompareCommandTests {
    static let strobe = builtProgram("strobe")

    static func scratch(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "strobe-compare-\(name)-\(getpid())"
        try? FileManager.default.removeItem(atPath: path)
        return path
    }

    @Test func aSlowerProgramIsARegressionAndTheResultsStayUsable() throws {
        let output = Self.scratch("slower")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let report = output + ".json"
        defer { try? FileManager.default.removeItem(atPath: report) }
        let outcome = try runProgram(
            Self.strobe,
            [
                "compare", "--process", "--name", "sleeper", "--baseline", "sleep 0.02", "--candidate", "sleep 0.06",
                "--metric", "wall", "--min-rounds", "4", "--max-time", "20s", "--results-dir", output, "--format",
                "json",
                "--output", report,
            ], environment: ["CI": "true"])
        #expect(outcome.status == 1, "\(outcome.errors)")
        #expect(outcome.errors.contains("compare: round 4"))
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let rows = try #require(json["rows"] as? [[String: Any]])
        #expect(rows.count == 1)
        #expect(rows[0]["verdict"] as? String == "regression")
        #expect((rows[0]["test"] as? [String: Any])?["method"] as? String == "paired rounds")
        // Each round wrote one results file per side, with its round.
        let files = try FileManager.default.contentsOfDirectory(atPath: output + "/baseline")
        #expect(files.count >= 4)
        let run = try ResultsFile.read(output + "/baseline/" + files.sorted()[0])
        #expect(run.metadata.round != nil && !run.metadata.runID.isEmpty)
        // strobe diff shows what compare decided, paired by round.
        let diff = try runProgram(
            Self.strobe,
            [
                "diff", "--baseline", output + "/baseline", "--candidate", output + "/candidate", "--metric", "wall",
            ])
        #expect(diff.status == 1)
        #expect(diff.output.contains("pairs") && diff.output.contains("regression"))
    }

    /// At a floor launches can keep: beside the other suites' processes a
    /// launch of `sleep 0.01` takes 12 ms on a quiet core and 15 ms on a
    /// busy one, and one comparison of CI's (an AMD EPYC, family 25 model
    /// 17) called 19 such pairs +18% [+2.4, +37.0] at the default floor.
    @Test func theSameProgramOnBothSidesRaisesNothing() throws {
        let output = Self.scratch("same")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let outcome = try runProgram(
            Self.strobe,
            [
                "compare", "--process", "--baseline", "sleep 0.01", "--candidate", "sleep 0.01", "--metric", "wall",
                "--max-time", "4s", "--min-effect", "40", "--results-dir", output,
            ], environment: ["CI": "true"])
        #expect(outcome.status == 0, "\(outcome.output)\(outcome.errors)")
        #expect(!outcome.output.contains("regression "))
    }

    @Test func aLogGetsALinePerLookAndOtherwiseOneEveryTenSeconds() throws {
        let output = Self.scratch("progress")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let start = Date()
        let outcome = try runProgram(
            Self.strobe,
            [
                "compare", "--process", "--baseline", "sleep 0.005", "--candidate", "sleep 0.005", "--metric", "wall",
                "--max-time", "6s", "--min-effect", "50", "--results-dir", output,
            ], environment: ["CI": "true"])
        let seconds = Date().timeIntervalSince(start)
        // What is checked is the log; the verdict of an A/A comparison is a
        // false alarm in up to alpha of runs (more on a loaded machine, for
        // launches of 5 ms), which theSameProgramOnBothSidesRaisesNothing
        // covers at a floor launches can keep.
        #expect(outcome.status == 0 || outcome.status == 1, "\(outcome.errors)")
        let lines = outcome.errors.split(separator: "\n").filter { $0.hasPrefix("compare: round") }
        let looks = lines.filter { $0.contains(": look ") }
        #expect(!looks.isEmpty)
        #expect(lines.count - looks.count <= 1 + Int(seconds / 10), "\(outcome.errors)")
        #expect(looks.first?.contains("round 2, ") == true && looks.first?.contains("look 1, ") == true)
    }

    @Test func helpShowsEveryDefault() throws {
        let help = try runProgram(Self.strobe, ["compare", "--help"]).output
        let options = help.components(separatedBy: "OPTIONS:").last ?? ""
        // Every option but the two commands and --help says its default.
        let entries = options.components(separatedBy: "\n  --").dropFirst().map { "--" + $0 }
        #expect(entries.count >= 17)
        for entry in entries
        where !entry.hasPrefix("--baseline") && !entry.hasPrefix("--candidate") && !entry.hasPrefix("--version") {
            #expect(entry.contains("default"), "\(entry)")
        }
        let flat = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.contains("the suite's own, 2 for a PerfSuite"))
        #expect(!flat.contains("(default 3m). (default: 3m)"))
    }

    @Test func badInputExitsWithTwoAndSaysWhy() throws {
        let output = Self.scratch("bad")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let cases: [([String], String)] = [
            (["compare", "--candidate", "true"], "give the baseline's command with --baseline CMD"),
            (
                ["compare", "--baseline", "true", "--candidate", "true", "--max-time", "soon"],
                "'--max-time <max-time>': \"soon\" is not a duration"
            ),
            (
                ["compare", "--baseline", "true", "--candidate", "true", "--min-rounds", "1"],
                "--min-rounds must be at least 2"
            ),
            (
                ["compare", "--baseline", "exit 3", "--candidate", "true", "--results-dir", output],
                "exited with status 3"
            ),
            (
                ["compare", "--process", "--profile", "--baseline", "true", "--candidate", "true"],
                "--profile samples a perf suite's measure blocks; it cannot be used with --process"
            ),
        ]
        for (arguments, message) in cases {
            let outcome = try runProgram(Self.strobe, arguments, environment: ["CI": "true"])
            #expect(outcome.status == 2, "\(arguments)")
            #expect(outcome.errors.contains(message), "\(outcome.errors)")
            try? FileManager.default.removeItem(atPath: output)
        }
        // An output directory that already holds results is refused.
        try FileManager.default.createDirectory(atPath: output + "/baseline", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: output + "/baseline/old.strobe-results", contents: Data([1])))
        let refused = try runProgram(
            Self.strobe, ["compare", "--baseline", "true", "--candidate", "true", "--results-dir", output])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("already holds results"))
        let policy = try runProgram(
            Self.strobe, ["diff", "--baseline", output, "--candidate", output, "--policy", "/nonexistent.yml"])
        #expect(policy.status == 2)
        #expect(policy.errors.contains("/nonexistent.yml: cannot read the policy"))
    }

    static let profileSuite = builtProgram("ProfileSuite")

    /// A suite whose tokenizer does half as much work again on the
    /// candidate's side, profiled: the slower test names the tokenizer
    /// first.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: profileSuite)))
    func aProfiledComparisonNamesTheFunctionBehindTheSlowerTest() throws {
        let output = Self.scratch("profiled")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let report = output + ".json"
        defer { try? FileManager.default.removeItem(atPath: report) }
        // At scale 0.15 the chooser predicts about 10 s of callgrind on a
        // loaded machine, half its 20 s budget: at 0.3 it predicted 20.08 s
        // on an Intel Xeon at load 13 and counted with QEMU, which names no
        // function.
        let suite =
            "env PROFILE_SUITE_SCALE=0.15 PROFILE_SUITE_FACTOR=1.5 \(Self.profileSuite) --filter '^parse document$'"
        let outcome = try runProgram(
            Self.strobe,
            [
                "compare", "--profile", "--baseline", suite, "--candidate", "PROFILE_SUITE_SLOWER=tokenize \(suite)",
                "--max-time", "30s", "--results-dir", output, "--format", "json", "--output", report,
            ], environment: ["CI": "true"])
        #expect(outcome.status == 1, "\(outcome.errors)")
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let tests = try #require(json["functionChanges"] as? [[String: Any]])
        let parse = try #require(tests.first { $0["test"] as? String == "parse document" })
        let functions = try #require(parse["functions"] as? [[String: Any]])
        let first = try #require(functions.first)
        #expect(first["function"] as? String == "ProfileSuite.Document.tokenize(units:)", "\(functions.prefix(3))")
        #expect(first["changed"] as? Bool == true)
        // Anything else named moved by a small part of the tokenizer's
        // change (under a loaded machine, a neighbour's cache can move a
        // function that did the same work by a percent or two).
        let lead = first["change"] as? Double ?? 0
        let others = functions.dropFirst().filter { $0["changed"] as? Bool == true && $0["explainedBy"] == nil }
        for other in others { #expect(abs(other["change"] as? Double ?? 0) < lead / 4, "\(other)") }
        // Each process kept its profile in its results file.
        let files = try FileManager.default.contentsOfDirectory(atPath: output + "/candidate")
        let run = try ResultsFile.read(output + "/candidate/" + files.sorted()[0])
        #expect((run.tests.first?.profile?.sampleCount ?? 0) > 0)
        // strobe diff shows the same functions in text.
        let diff = try runProgram(
            Self.strobe, ["diff", "--baseline", output + "/baseline", "--candidate", output + "/candidate"])
        #expect(diff.output.contains("functions behind the verdicts"))
        #expect(diff.output.contains("ProfileSuite.Document.tokenize(units:)"))
    }
}
