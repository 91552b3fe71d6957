import Foundation
import StrobeHistory
import StrobeHistoryStore
import StrobeResults
import StrobeStoreTestSupport
import Testing

/// A history whose runs mix two builds (a pinned reference measured beside
/// each night's build): `strobe trend` without `--reference` takes the
/// pinned build as the reference by itself, or refuses naming the flag,
/// and never answers "no change" over the mixture. Reading a store never
/// creates or changes one.
@Suite(.serialized) struct InterleavedBuildTests {
    /// Thirty nights of a candidate build (tests a and b 30% slower from
    /// night 16) and the pinned build beside each, tagged `build=CANDIDATE`
    /// and `build=REFERENCE`.
    static func mixedStore(candidate: String, reference: String, in directory: String) async throws -> (
        String, NightlyHistory
    ) {
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 41)
        var runs: [PerfRun] = []
        for night in 0..<30 {
            var run = history.run(night: night, build: "candidate", noise: &noise) { test, night in
                (test == "a" || test == "b") && night >= 15 ? 1.3 : 1
            }
            run.metadata.tags["build"] = candidate
            runs.append(run)
            var pinned = history.run(night: night, build: "reference", noise: &noise)
            pinned.metadata.tags["build"] = reference
            runs.append(pinned)
        }
        let path = directory + "/history.sqlite"
        let store = try await HistoryStores.open(.sqlite(path: path))
        try await store.add(runs)
        await store.close()
        return (path, history)
    }

    @Test func thePinnedBuildIsTakenAsTheReferenceWithoutTheFlag() async throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (store, history) = try await Self.mixedStore(
            candidate: "candidate", reference: "reference", in: directory)
        let report = try TrendTests.trend(["--history", store, "--repository", history.repository])
        #expect(report.runCount == 30 && report.referenceRunCount == 30, "\(report.runCount)")
        #expect(report.reference == "build=reference")
        #expect(report.changes.map(\.test).sorted() == ["a", "b"], "\(report.changes)")
        #expect(report.changes.allSatisfy { $0.cause == .code && $0.firstAfter.commit == history.commits[15] })
        #expect(report.notes.contains { $0.hasPrefix("reference runs: build=reference, found by their tag") })
        // The text says so too, and groups both changes under one range.
        let text = try StrobeBinary.run(["trend", "--history", store, "--repository", history.repository])
        #expect(text.status == 0, "\(text.errors)")
        #expect(text.output.contains("2 changes at "), "\(text.output)")
        #expect(text.output.components(separatedBy: "confirm it:").count == 2, "one recipe: \(text.output)")
    }

    @Test func buildsWithNoPinnedNameAreRefusedNamingTheFlag() async throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (store, history) = try await Self.mixedStore(candidate: "pr", reference: "main", in: directory)
        let outcome = try StrobeBinary.run(["trend", "--history", store, "--repository", history.repository])
        #expect(outcome.status == 2, "\(outcome.output)")
        #expect(outcome.errors.contains("the runs differ in their tag build (main: 30 runs, pr: 30 runs)"))
        #expect(outcome.errors.contains("--reference build=VALUE"), "\(outcome.errors)")
        // Named, it is analysed; grouped by the tag, each build is a series.
        let named = try TrendTests.trend([
            "--history", store, "--repository", history.repository, "--reference", "build=main",
        ])
        #expect(named.changes.map(\.test).sorted() == ["a", "b"], "\(named.changes)")
        let grouped = try TrendTests.trend([
            "--history", store, "--repository", history.repository, "--group-by", "build",
        ])
        #expect(grouped.changes.contains { $0.test == "a" && $0.group == "pr" }, "\(grouped.changes)")
    }

    @Test func readingNeverCreatesOrChangesAStore() async throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let empty = directory + "/empty.pftrace"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let missing = directory + "/nope/x.sqlite"
        let reads: [([String], String)] = [
            (["trend", "--history", empty], "empty.pftrace: not a history store"),
            (["trend", "--history", missing], "x.sqlite: no history store there"),
            (
                ["history", "export", "--history", missing, "--format", "csv", "-o", directory + "/x.csv"],
                "no history store there"
            ),
            (["history", "list", "--history", empty], "not a history store"),
            (["fleet", "--history", empty, "--metric", "lens apply"], "not a history store"),
            (["fleet", "--history", missing, "--metric", "lens apply"], "no history store there"),
            (
                ["diff", "--baseline-history", empty, "--candidate", directory + "/c.csv"],
                "not a history store"
            ),
        ]
        for (arguments, message) in reads {
            let outcome = try StrobeBinary.run(arguments)
            #expect(outcome.status == 2, "\(arguments): \(outcome.output)")
            #expect(outcome.errors.contains(message), "\(arguments): \(outcome.errors)")
        }
        let size = try FileManager.default.attributesOfItem(atPath: empty)[.size] as? Int
        #expect(size == 0)
        #expect(!FileManager.default.fileExists(atPath: directory + "/nope"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/x.csv"))
        // A writing command says that it created the store.
        let (store, _) = try await Self.mixedStore(candidate: "candidate", reference: "reference", in: directory)
        let exported = directory + "/runs"
        let export = try StrobeBinary.run([
            "history", "export", "--history", store, "--format", "results", "-o", exported,
        ])
        #expect(export.status == 0, "\(export.errors)")
        let fresh = directory + "/fresh.sqlite"
        let add = try StrobeBinary.run(["history", "add", exported, "--history", fresh])
        #expect(add.status == 0, "\(add.errors)")
        #expect(add.errors.contains("strobe: created the history store \(fresh)"), "\(add.errors)")
        let again = try StrobeBinary.run(["history", "add", exported, "--history", fresh])
        #expect(!again.errors.contains("created"), "\(again.errors)")

        // What the store holds, with counts, to write filters without guessing.
        let list = try StrobeBinary.run(["history", "list", "--history", store])
        #expect(list.status == 0, "\(list.errors)")
        #expect(list.output.hasPrefix("\(store): 60 runs, 0 fleet traces\n"), "\(list.output)")
        #expect(list.output.contains("  suites:   nightly (60)\n"), "\(list.output)")
        #expect(list.output.contains("  tests:    nightly/a (60), nightly/b (60), nightly/c (60), nightly/d (60)\n"))
        #expect(list.output.contains("  hosts:    ci-1 (60)\n"), "\(list.output)")
        #expect(list.output.contains("build = candidate (30), reference (30)"), "\(list.output)")
    }
}
