import ArgumentParser
import Foundation

/// `strobe compare --git BASE[..HEAD]` and how each revision is built.
struct GitCompareOptions: ParsableArguments {
    @Option(
        name: .customLong("git"),
        help: ArgumentHelp(
            "Build and compare two revisions of this repository: BASE against the working tree as it is, or "
                + "BASE..HEAD; instead of --baseline and --candidate.",
            valueName: "range"))
    var range: String?

    @Option(help: "With --git, the suite's product, built at each revision ({product} in the two flags below).")
    var product: String?

    @Option(
        name: .customLong("package-path"),
        help: "With --git, the suite's package directory, relative to the repository's top.")
    var packagePath = "."

    @Option(
        name: .customLong("build-command"),
        help: "With --git, how each revision is built, in its package directory (through /bin/sh -c).")
    var buildCommand = "swift build -c release --product {product}"

    @Option(
        name: .customLong("suite-executable"),
        help: "With --git, the suite's executable, relative to the package directory of a built revision.")
    var suiteExecutable = ".build/release/{product}"

    @Option(
        name: .customLong("suite-arguments"),
        help: "With --git, arguments given to the suite on both sides (a shell fragment, e.g. \"--tag os=ci\").")
    var suiteArguments = ""

    @Option(
        name: .customLong("git-builds"),
        help: "With --git, where each revision's worktree and build are kept (default: strobe/builds in .git).")
    var buildsDirectory: String?

    /// The first problem with the flags given beside `baseline` and
    /// `candidate`, if any.
    func problem(baseline: String?, candidate: String?) -> String? {
        guard let range else {
            if product != nil { return "--product needs --git" }
            return nil
        }
        if baseline != nil || candidate != nil {
            return "--git \(range) builds both sides; give it without --baseline and --candidate"
        }
        if range.isEmpty { return "--git: give BASE or BASE..HEAD" }
        guard let product, !product.isEmpty else {
            return "--git needs --product NAME: the suite's product, built at each revision"
        }
        if packagePath.hasPrefix("/") { return "--package-path \(packagePath): give it relative to the repository" }
        return nil
    }

    /// With `--git`, builds both revisions and gives the command line of
    /// each side; nil without it.
    func sides() throws(CommandFailure) -> (baseline: String, candidate: String)? {
        guard let range, let product else { return nil }
        let parsed = try GitRange(parsing: range)
        let here = FileManager.default.currentDirectoryPath
        guard let repository = GitRepository(here) else {
            throw .badInput("--git \(range): \(here) is not inside a git working tree")
        }
        let base = try repository.revision(parsed.base)
        let candidate: GitRevision
        var headCommit = ""
        if let head = parsed.head {
            candidate = try repository.revision(head)
        } else {
            (candidate, headCommit) = try repository.workingTree()
        }
        let builds: RevisionBuilds
        do {
            builds = RevisionBuilds(
                repository: repository,
                directory: try buildsDirectory.map(Self.absolute) ?? repository.commonDirectory() + "/strobe/builds",
                packagePath: packagePath, command: buildCommand, executable: suiteExecutable, product: product)
        } catch {
            throw .badInput("--git \(range): cannot find the repository's git directory: \(error)")
        }
        let candidateLabel = candidate.label(head: headCommit)
        if candidate.dirty {
            builds.note(
                "the candidate is \(candidateLabel), compared as it is: tracked files as they are now and "
                    + "untracked files git does not ignore")
        }
        let baseBuild = try builds.build(base, side: "baseline", label: base.label())
        let candidateBuild = try builds.build(candidate, side: "candidate", label: candidateLabel)
        let arguments = suiteArguments.isEmpty ? "" : " " + suiteArguments
        return (Self.quoted(baseBuild.executable) + arguments, Self.quoted(candidateBuild.executable) + arguments)
    }

    /// `path` made absolute against the current directory.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// `text` quoted for /bin/sh.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
