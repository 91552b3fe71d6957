import Foundation
import StrobeTestSupport
import Testing

/// `strobe compare --git` on a repository of two commits whose "build"
/// copies a shell script into place (and counts itself), so that the
/// worktrees, their keys and the working tree are tested in seconds.
@Suite(.serialized) struct CompareGitCommandTests {
    /// A repository whose program sleeps 10 ms at its first commit and
    /// 100 ms at its second, in a folder of its own.
    struct Fixture {
        var folder: String
        var repository: String { folder + "/repo" }
        var count: String { folder + "/builds" }
        /// The build: the script into .build/release/{product}, and a line
        /// in the count.
        var build: String {
            "mkdir -p .build/release && cp prog.sh .build/release/{product} && chmod +x .build/release/{product} "
                + "&& echo built >> '\(count)'"
        }

        init() throws {
            folder = NSTemporaryDirectory() + "strobe-compare-git-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder + "/repo", withIntermediateDirectories: true)
            try git("init", "-q")
            try write("sleep 0.01\n", to: "prog.sh")
            try git("add", "prog.sh")
            try git("commit", "-q", "-m", "fast")
            try write("sleep 0.1\n", to: "prog.sh")
            try git("commit", "-q", "-a", "-m", "slow")
        }

        func write(_ text: String, to name: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: repository + "/" + name))
        }

        @discardableResult
        func git(_ arguments: String...) throws -> String {
            let outcome = try runProgram(
                "/usr/bin/env", ["git", "-C", repository, "-c", "user.name=t", "-c", "user.email=t@t"] + arguments)
            #expect(outcome.status == 0, "git \(arguments): \(outcome.errors)")
            return outcome.output
        }

        /// The results files of `side` in the results directory `name`.
        func results(_ name: String, side: String) throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: folder + "/" + name + "/" + side)
                .filter { $0.hasSuffix(".strobe-results") }.count
        }

        /// Builds so far.
        var builds: Int {
            ((try? String(contentsOfFile: count, encoding: .utf8)) ?? "").split(separator: "\n").count
        }

        /// `strobe compare ARGUMENTS` run in the repository.
        func compare(_ arguments: [String]) throws -> ProgramOutcome {
            try runProgram(
                "/bin/sh",
                ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", repository, builtProgram("strobe"), "compare"]
                    + arguments, environment: ["CI": "true"])
        }

        /// `compare --git RANGE` of the program, per launch, with the
        /// fixture's build, its results in `results`.
        func compareGit(_ range: String, results: String, build: String? = nil) throws -> ProgramOutcome {
            try compare([
                "--git", range, "--product", "prog", "--build-command", build ?? self.build, "--process",
                "--metric", "wall", "--min-rounds", "3", "--max-time", "6s", "--results-dir", folder + "/" + results,
            ])
        }
    }

    @Test func twoRevisionsAreBuiltOnceEachAndCompared() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }
        let status = try fixture.git("status", "--porcelain")
        let branch = try fixture.git("symbolic-ref", "HEAD")

        // The verdict on 10 ms against 100 ms rests on wall times, which a
        // loaded machine can leave undecided in the budget (exit status 0);
        // what is checked is that both builds ran, one process per side and
        // round.
        let first = try fixture.compareGit("HEAD~1", results: "first")
        #expect(first.status == 1 || first.status == 0, "\(first.output)\(first.errors)")
        #expect(first.errors.contains("strobe compare: building baseline HEAD~1 ("), "\(first.errors)")
        #expect(first.errors.contains("strobe compare: building candidate the working tree ("), "\(first.errors)")
        #expect(try fixture.results("first", side: "baseline") >= 3)
        #expect(try fixture.results("first", side: "candidate") == fixture.results("first", side: "baseline"))
        #expect(fixture.builds == 2)

        // The same base, and HEAD by name: the same trees, so nothing is built.
        let second = try fixture.compareGit("HEAD~1..HEAD", results: "second")
        #expect(second.status == 1 || second.status == 0, "\(second.output)\(second.errors)")
        #expect(try fixture.results("second", side: "candidate") >= 3)
        #expect(second.errors.components(separatedBy: "nothing to build").count == 3, "\(second.errors)")
        #expect(fixture.builds == 2)
        // The user's checkout is as it was.
        #expect(try fixture.git("status", "--porcelain") == status)
        #expect(try fixture.git("symbolic-ref", "HEAD") == branch)
    }

    @Test func aDirtyWorkingTreeIsComparedAsItIsAndLeftAlone() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }
        try fixture.write("sleep 0.01\n", to: "prog.sh")
        try fixture.write("new\n", to: "untracked.txt")
        let status = try fixture.git("status", "--porcelain")
        let index = try fixture.git("ls-files", "--stage")

        let outcome = try fixture.compareGit("HEAD", results: "dirty")
        #expect(outcome.status == 0 || outcome.status == 1, "\(outcome.errors)")
        #expect(outcome.errors.contains("the working tree with uncommitted changes (on "), "\(outcome.errors)")
        #expect(outcome.errors.contains("compared as it is"), "\(outcome.errors)")
        #expect(fixture.builds == 2)
        // The candidate's worktree holds the uncommitted files; the user's
        // index, status and stash are untouched.
        let worktrees = try fixture.git("worktree", "list", "--porcelain")
        let paths = worktrees.split(separator: "\n").filter { $0.hasPrefix("worktree ") && $0.contains("/builds/") }
        #expect(paths.count == 2)
        let copies = paths.map { String($0.dropFirst("worktree ".count)) + "/untracked.txt" }
        #expect(copies.filter { FileManager.default.fileExists(atPath: $0) }.count == 1)
        #expect(try fixture.git("status", "--porcelain") == status)
        #expect(try fixture.git("ls-files", "--stage") == index)
        #expect(try fixture.git("stash", "list").isEmpty)
    }

    @Test func aFailedBuildNamesTheRevisionAndTheCommand() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(atPath: fixture.folder) }
        let failed = try fixture.compareGit("HEAD~1..HEAD", results: "failed", build: "echo no compiler here; exit 3")
        #expect(failed.status == 2)
        #expect(failed.errors.contains("building baseline HEAD~1 ("), "\(failed.errors)")
        #expect(failed.errors.contains("failed: `echo no compiler here; exit 3`"), "\(failed.errors)")
        #expect(failed.errors.contains("exited with status 3"), "\(failed.errors)")
        #expect(failed.errors.contains("no compiler here"), "\(failed.errors)")

        let unknown = try fixture.compareGit("no-such-branch", results: "unknown")
        #expect(unknown.status == 2)
        #expect(unknown.errors.contains("--git: no-such-branch names no commit"), "\(unknown.errors)")

        let both = try fixture.compare(["--git", "HEAD~1", "--product", "prog", "--baseline", "true"])
        #expect(both.status == 2)
        #expect(both.errors.contains("without --baseline and --candidate"), "\(both.errors)")

        let noProduct = try fixture.compare(["--git", "HEAD~1"])
        #expect(noProduct.status == 2)
        #expect(noProduct.errors.contains("--git needs --product NAME"), "\(noProduct.errors)")
        #expect(fixture.builds == 0)
    }
}
