import Foundation
import StrobeTestSupport
import Testing

/// One comparison, one number: `strobe diff` of `strobe compare`'s results
/// shows the estimates, intervals and verdicts `strobe compare` decided,
/// in every format, unless `--rejudge` asks for a new judgement, which then
/// says it is one.
@Suite(.serialized) struct RecordedDecisionsTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func diffOfCompareResultsShowsWhatCompareDecided() throws {
        let output = CompareCommandTests.scratch("recorded")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let reportPath = output + ".json"
        defer { try? FileManager.default.removeItem(atPath: reportPath) }
        let policy = output + ".policy.yml"
        defer { try? FileManager.default.removeItem(atPath: policy) }
        try "alpha: 0.01\nmetrics:\n  - match: \"wall$\"\n    summary: minimum\n".write(
            toFile: policy, atomically: true, encoding: .utf8)
        let compare = try runProgram(
            CompareCommandTests.strobe,
            [
                "compare", "--process", "--name", "sleeper", "--baseline", "sleep 0.02", "--candidate", "sleep 0.05",
                "--metric", "wall", "--min-rounds", "4", "--max-time", "20s", "--results-dir", output, "--format",
                "json", "--output", reportPath, "--policy", policy,
            ], environment: ["CI": "true"])
        #expect(compare.status == 1, "\(compare.errors)")
        #expect(FileManager.default.fileExists(atPath: output + "/decisions.json"))
        let decided = try Self.json(
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: reportPath)), as: UTF8.self))
        let decidedRows = try #require(decided["rows"] as? [[String: Any]])
        #expect(decidedRows.first?["verdict"] as? String == "regression")
        let sides = ["--baseline", output + "/baseline", "--candidate", output + "/candidate"]

        // JSON: every row and every test verdict as compare decided it.
        let diff = try runProgram(CompareCommandTests.strobe, ["diff"] + sides + ["--format", "json"])
        #expect(diff.status == 1, "\(diff.errors)")
        let shown = try Self.json(diff.output)
        #expect((shown["rows"] as? NSArray) == (decided["rows"] as? NSArray))
        #expect((shown["testVerdicts"] as? NSArray) == (decided["testVerdicts"] as? NSArray))
        #expect((shown["origin"] as? [String: Any])?["kind"] as? String == "recorded")
        // The other formats say whose verdicts they show, with the same
        // change and interval.
        let verdicts = try #require(decided["testVerdicts"] as? [[String: Any]])
        let shift = try #require(verdicts.first?["shift"] as? [String: Double])
        let ratio = try #require(shift["ratio"])
        let percent = String(format: "%+.0f%%", (ratio - 1) * 100)
        for format in ["text", "markdown", "html"] {
            let rendered = try runProgram(CompareCommandTests.strobe, ["diff"] + sides + ["--format", format])
            #expect(rendered.status == 1)
            #expect(rendered.output.contains("Verdicts as strobe compare decided them"), "\(format)")
            #expect(rendered.output.contains("sleeper " + percent) || rendered.output.contains("sleeper  " + percent))
        }

        // The policy and alpha compare used show its decisions still (as
        // the demo's pull-request comment is written); a flag that changes
        // the judgement needs --rejudge.
        let same = try runProgram(
            CompareCommandTests.strobe, ["diff"] + sides + ["--policy", policy, "--alpha", "0.01", "--format", "json"])
        #expect(same.status == 1, "\(same.errors)")
        #expect((try Self.json(same.output)["origin"] as? [String: Any])?["kind"] as? String == "recorded")
        let refused = try runProgram(CompareCommandTests.strobe, ["diff"] + sides + ["--alpha", "0.05"])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("--alpha changes the judgement") && refused.errors.contains("--rejudge"))
        try "alpha: 0.01\nmetrics:\n  - match: \"wall$\"\n    summary: median\n".write(
            toFile: policy, atomically: true, encoding: .utf8)
        let otherPolicy = try runProgram(CompareCommandTests.strobe, ["diff"] + sides + ["--policy", policy])
        #expect(otherPolicy.status == 2)
        #expect(otherPolicy.errors.contains("--policy changes the judgement"), "\(otherPolicy.errors)")

        // --rejudge judges every round again at once, and says so.
        let rejudged = try runProgram(CompareCommandTests.strobe, ["diff"] + sides + ["--format", "json", "--rejudge"])
        let again = try Self.json(rejudged.output)
        #expect((again["origin"] as? [String: Any])?["kind"] as? String == "rejudged")
        let text = try runProgram(CompareCommandTests.strobe, ["diff"] + sides + ["--rejudge"])
        #expect(text.output.contains("Re-judged (--rejudge)"), "\(text.output)")

        // A decisions file that lost a key is refused, naming where.
        let decisions = output + "/decisions.json"
        let kept = try String(contentsOfFile: decisions, encoding: .utf8)
        let broken = kept.replacing(#/"better" : "(lower|higher)",\s*/#, with: "", maxReplacements: 1)
        #expect(broken != kept)
        try broken.write(toFile: decisions, atomically: true, encoding: .utf8)
        let unreadable = try runProgram(CompareCommandTests.strobe, ["diff"] + sides)
        #expect(unreadable.status == 2)
        #expect(unreadable.errors.contains(decisions), "\(unreadable.errors)")
        #expect(unreadable.errors.contains(#/\.better: no such key/#), "\(unreadable.errors)")
        try kept.write(toFile: decisions, atomically: true, encoding: .utf8)

        // Results that changed since compare decided are judged again, with
        // the reason.
        let files = try FileManager.default.contentsOfDirectory(atPath: output + "/baseline").sorted()
        try FileManager.default.copyItem(
            atPath: output + "/baseline/" + files[0], toPath: output + "/baseline/extra-" + files[0])
        let changed = try runProgram(CompareCommandTests.strobe, ["diff"] + sides)
        #expect(changed.output.contains("Re-judged (the results changed since strobe compare decided)"))
    }
}
