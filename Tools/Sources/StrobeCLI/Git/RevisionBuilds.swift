import Foundation

/// The builds of `strobe compare --git`: each revision checked out in a
/// scratch worktree of its own (`git worktree add --detach`) under
/// ``directory``, named by its tree, and built there with one command for
/// every side. A worktree that already holds a build made with the same
/// command is used as it is, so a second comparison against the same base
/// builds nothing; the user's checkout, index and branches are never
/// touched.
struct RevisionBuilds {
    /// The repository the revisions come from.
    var repository: GitRepository
    /// Where the worktrees are kept, one per tree.
    var directory: String
    /// The suite package's directory inside the repository ("." for its
    /// top).
    var packagePath: String
    /// How a worktree is built, run through /bin/sh -c in the package's
    /// directory; `{product}` stands for ``product``.
    var command: String
    /// The suite's executable, relative to the package's directory.
    var executable: String
    /// The product named by `--product`.
    var product: String

    /// The name of the file, in a built worktree, that holds the command
    /// it was built with.
    static let marker = ".strobe-build"

    /// The command line run to build, with the product put in.
    var resolvedCommand: String { command.replacingOccurrences(of: "{product}", with: product) }

    /// What one side's build gave.
    struct Built {
        /// The suite's executable, an absolute path.
        var executable: String
        /// The worktree it was built in.
        var worktree: String
        /// Seconds spent building; nil when the worktree held the build
        /// already.
        var seconds: Double?
    }

    /// Checks out `revision` (unless its worktree exists) and builds it
    /// (unless it was built with this command); `side` and `label` name it
    /// in the messages. A build that fails, or leaves no executable, is bad
    /// input naming the revision, the command and its log.
    func build(_ revision: GitRevision, side: String, label: String) throws(CommandFailure) -> Built {
        let worktree = directory + "/" + revision.tree
        let package = packagePath == "." ? worktree : worktree + "/" + packagePath
        let program = package + "/" + executable.replacingOccurrences(of: "{product}", with: product)
        let markerPath = worktree + "/" + Self.marker
        if FileManager.default.isExecutableFile(atPath: program),
            (try? String(contentsOfFile: markerPath, encoding: .utf8)) == resolvedCommand
        {
            note("\(side) \(label): built already in \(worktree); nothing to build")
            return Built(executable: program, worktree: worktree, seconds: nil)
        }
        try checkOut(revision, at: worktree, label: label)
        try? FileManager.default.removeItem(atPath: markerPath)
        note("building \(side) \(label) in \(package): \(resolvedCommand)")
        let log = worktree + "/.strobe-build.log"
        let start = Date()
        let status: Int32
        do {
            status = try Self.run(resolvedCommand, in: package, log: log)
        } catch {
            throw .badInput("cannot build \(side) \(label): `\(resolvedCommand)` in \(package): \(error)")
        }
        let seconds = Date().timeIntervalSince(start)
        guard status == 0 else {
            throw .badInput(
                "building \(side) \(label) failed: `\(resolvedCommand)` in \(package) exited with status \(status); "
                    + "its output is in \(log)" + Self.tail(of: log))
        }
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw .badInput(
                "building \(side) \(label) with `\(resolvedCommand)` left no executable at \(program); "
                    + "give --product or --suite-executable")
        }
        do {
            try Data(resolvedCommand.utf8).write(to: URL(fileURLWithPath: markerPath))
        } catch {
            throw .badInput("cannot write \(markerPath): \(error.localizedDescription)")
        }
        note(String(format: "built \(side) \(label) in %.0f s", seconds))
        return Built(executable: program, worktree: worktree, seconds: seconds)
    }

    /// A worktree of `revision`'s commit at `path`, detached, unless one is
    /// there already.
    private func checkOut(_ revision: GitRevision, at path: String, label: String) throws(CommandFailure) {
        if FileManager.default.fileExists(atPath: path + "/.git") { return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // A folder left without its checkout (a cache restored without
            // git's record of it) is checked out anew.
            // (--force: git may still record the folder as a worktree.)
            try? FileManager.default.removeItem(atPath: path)
            _ = try GitRepository.git(
                [
                    "-C", repository.directory, "worktree", "add", "--force", "--detach", "--quiet", path,
                    revision.commit,
                ])
        } catch {
            throw .badInput("cannot check out \(label) into \(path): \(error)")
        }
    }

    /// Prints `line` to standard error after `strobe compare: `.
    func note(_ line: String) {
        StrobeCommand.printError("strobe compare: " + line)
    }

    /// Runs `command` through /bin/sh -c in `directory`, its output and
    /// errors into the file at `log`; its exit status.
    static func run(_ command: String, in directory: String, log: String) throws -> Int32 {
        guard FileManager.default.createFile(atPath: log, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: log])
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The last lines of the file at `path`, after a colon and a line
    /// break each, or nothing when it is empty.
    static func tail(of path: String, lines count: Int = 15) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "" }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(count + 1)
        let kept = lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        return kept.isEmpty ? "" : "; its last lines:\n" + kept
    }
}
