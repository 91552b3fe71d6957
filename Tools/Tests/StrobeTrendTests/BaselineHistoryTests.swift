import Foundation
import StrobeHistory
import StrobeResults
import StrobeStoreTestSupport
import StrobeTrend
import Testing

/// `strobe diff --baseline-history STORE`: a candidate judged against the
/// store's newest runs like it, since their last change.
@Suite(.serialized) struct BaselineHistoryTests {
    /// 30 nights of tests a–d on one host; `a` 10% slower from night 16 on.
    static func steppedStore(in directory: String) async throws -> (store: String, history: NightlyHistory) {
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 31)
        let runs = (0..<30).map { night in
            history.run(night: night, noise: &noise) { test, night in test == "a" && night >= 15 ? 1.10 : 1 }
        }
        return (try await TrendTests.store(runs, in: directory), history)
    }

    /// Five candidate processes as results files in `directory`, each
    /// test's level times `factor(test)`.
    static func candidate(
        _ history: NightlyHistory, in directory: String, seed: UInt64, factor: (String) -> Double
    ) throws -> String {
        let path = directory + "/candidate-\(seed)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var noise = TrendNoise(state: seed)
        for process in 0..<5 {
            var run = history.run(night: 29, noise: &noise) { test, _ in factor(test) }
            run.metadata.runID = "candidate-\(seed)-\(process)"
            run.metadata.tags["branch"] = "pull/7"
            try ResultsFile.write(run, to: path + "/candidate-\(process).strobe-results")
        }
        return path
    }

    @Test func theBaselineStartsAfterTheLastChange() async throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (store, history) = try await Self.steppedStore(in: directory)
        // At main's level now (a already 10% slower): nothing regressed,
        // though all 30 runs, a's older level among them, were allowed.
        let same = try Self.candidate(history, in: directory, seed: 1) { $0 == "a" ? 1.10 : 1 }
        let unchanged = try StrobeBinary.run([
            "diff", "--baseline-history", store, "--where", "branch=main", "--last", "30", "--candidate", same,
            "--format", "json",
        ])
        #expect(unchanged.status == 0, "\(unchanged.output)\n\(unchanged.errors)")
        #expect(
            (14...16).contains { unchanged.errors.contains("baseline: the newest \($0) of 30 runs") },
            "\(unchanged.errors)")
        // The step (night 16) placed within a night of the truth.
        #expect(
            history.commits[14...16].contains {
                unchanged.errors.contains("since the change at commit \($0.prefix(10)) (a/wall +")
            },
            "\(unchanged.errors)")
        let rows = try Self.rows(unchanged.output)
        #expect(rows["a/wall"] != "regression", "\(rows)")
        // b 20% slower than main: a regression, and only b.
        let slower = try Self.candidate(history, in: directory, seed: 2) { $0 == "a" ? 1.10 : $0 == "b" ? 1.20 : 1 }
        let regressed = try StrobeBinary.run([
            "diff", "--baseline-history", store, "--where", "branch=main", "--last", "12", "--candidate", slower,
            "--format", "json",
        ])
        #expect(regressed.status == 1, "\(regressed.output)\n\(regressed.errors)")
        #expect(regressed.errors.contains("baseline: the newest 12 of 30 runs"), "\(regressed.errors)")
        let verdicts = try Self.rows(regressed.output)
        #expect(verdicts["b/wall"] == "regression", "\(verdicts)")
        #expect(verdicts.filter { $0.value == "regression" }.count == 1, "\(verdicts)")
    }

    @Test func badInputIsNamedWithExitStatusTwo() async throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (store, history) = try await Self.steppedStore(in: directory)
        let candidate = try Self.candidate(history, in: directory, seed: 3) { _ in 1 }
        let cases: [([String], String)] = [
            (
                ["--baseline", candidate, "--baseline-history", store],
                "give either --baseline PATH or --baseline-history STORE, not both"
            ),
            (["--baseline-history", store, "--last", "0"], "--last must be 1 or more, not 0"),
            (["--baseline", candidate, "--where", "branch=main"], "--where goes with --baseline-history"),
            (["--baseline-history", directory + "/missing.sqlite"], "missing.sqlite: no such store"),
            (["--baseline-history", store, "--where", "branch"], "--where branch: write KEY=VALUE"),
            (
                ["--baseline-history", store, "--where", "branch=release"],
                "none of its 0 runs matching the --where conditions is like the candidate's"
            ),
        ]
        for (arguments, message) in cases {
            let outcome = try StrobeBinary.run(["diff", "--candidate", candidate] + arguments)
            #expect(outcome.status == 2, "\(arguments): \(outcome.output)")
            #expect(outcome.errors.contains(message), "\(arguments): \(outcome.errors)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/missing.sqlite"))
    }

    /// Each row's verdict, by name, from a JSON diff report.
    static func rows(_ json: String) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let rows = object?["rows"] as? [[String: Any]] ?? []
        return Dictionary(
            rows.compactMap { row in
                (row["name"] as? String).flatMap { name in (row["verdict"] as? String).map { (name, $0) } }
            }, uniquingKeysWith: { first, _ in first })
    }
}
