import Foundation

/// One side of `strobe compare --git`: a commit, or the working tree as it
/// is, and the tree its files make, which keys its build.
struct GitRevision: Equatable {
    /// What the user named (`HEAD~1`, `main`), or nil for the working tree.
    var name: String?
    /// The commit checked out to build it: the named commit, or for a
    /// working tree with changes a commit made of its files (with `HEAD` as
    /// its parent, on no branch).
    var commit: String
    /// The object name of its tree: the same files build the same program,
    /// so builds are kept under it.
    var tree: String
    /// Whether it is a working tree that differs from `HEAD`.
    var dirty: Bool

    /// `HEAD~1 (1a2b3c4d5e6f)` (a commit named by its object name: only
    /// that, shortened), `the working tree (1a2b3c4d5e6f)` or `the working
    /// tree with uncommitted changes (on 1a2b3c4d5e6f)`.
    func label(head: String = "") -> String {
        let short = String(commit.prefix(12))
        if let name { return commit.hasPrefix(name) ? short : "\(name) (\(short))" }
        return dirty
            ? "the working tree with uncommitted changes (on \(head.prefix(12)))" : "the working tree (\(short))"
    }
}

/// `--git BASE` (the working tree against BASE) or `--git BASE..HEAD`.
struct GitRange: Equatable {
    /// The baseline's revision.
    var base: String
    /// The candidate's revision; nil for the working tree as it is.
    var head: String?

    /// Parses `BASE` or `BASE..HEAD`; a symmetric range (`A...B`) or an
    /// empty side is bad input.
    init(parsing text: String) throws(CommandFailure) {
        if text.contains("...") {
            throw .badInput("--git \(text): give BASE or BASE..HEAD (two dots; a symmetric range compares nothing)")
        }
        let parts = text.components(separatedBy: "..")
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty }) else {
            throw .badInput("--git \(text): give BASE or BASE..HEAD, e.g. --git main or --git HEAD~1..HEAD")
        }
        base = parts[0]
        head = parts.count == 2 ? parts[1] : nil
    }
}

extension GitRepository {
    /// The top directory of the working tree.
    func topLevel() throws -> String {
        try Self.git(["-C", directory, "rev-parse", "--show-toplevel"]).trimmingCharacters(in: .newlines)
    }

    /// The directory git keeps what all worktrees share in (`.git` of a
    /// plain clone), as an absolute path.
    func commonDirectory() throws -> String {
        let path = try Self.git(["-C", directory, "rev-parse", "--git-common-dir"]).trimmingCharacters(in: .newlines)
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: directory).appendingPathComponent(path).standardizedFileURL.path
    }

    /// The commit `name` names, and its tree; bad input naming it when it
    /// names none.
    func revision(_ name: String) throws(CommandFailure) -> GitRevision {
        do {
            let commit = try Self.git(["-C", directory, "rev-parse", "--verify", "--quiet", "\(name)^{commit}"])
                .trimmingCharacters(in: .newlines)
            let tree = try Self.git(["-C", directory, "rev-parse", "\(commit)^{tree}"])
                .trimmingCharacters(in: .newlines)
            return GitRevision(name: name, commit: commit, tree: tree, dirty: false)
        } catch {
            throw .badInput("--git: \(name) names no commit in \(directory)")
        }
    }

    /// The working tree as it is: its tracked files as they are now and the
    /// untracked ones git does not ignore, read through an index of its own
    /// (the user's index, branch and files are not touched). When they
    /// differ from `HEAD`, a commit of them (`HEAD` its parent, fixed
    /// author and dates, so the same files give the same commit) is written
    /// into the object store, on no branch, to check out.
    func workingTree() throws(CommandFailure) -> (revision: GitRevision, head: String) {
        let head = try revision("HEAD")
        let index = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-index-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: index) }
        do {
            let userIndex = try Self.git([
                "-C", directory, "rev-parse", "--path-format=absolute", "--git-path", "index",
            ])
            .trimmingCharacters(in: .newlines)
            // A copy of the user's index, so that files unchanged since it
            // was written are not read again.
            if FileManager.default.fileExists(atPath: userIndex) {
                try FileManager.default.copyItem(atPath: userIndex, toPath: index.path)
            }
            let own = ["GIT_INDEX_FILE": index.path]
            let top = try topLevel()
            _ = try Self.git(["-C", top, "add", "--all", "."], environment: own)
            let tree = try Self.git(["-C", top, "write-tree"], environment: own).trimmingCharacters(in: .newlines)
            guard tree != head.tree else {
                return (GitRevision(name: nil, commit: head.commit, tree: tree, dirty: false), head.commit)
            }
            let fixed = [
                "GIT_AUTHOR_NAME": "strobe compare", "GIT_AUTHOR_EMAIL": "strobe@localhost",
                "GIT_COMMITTER_NAME": "strobe compare", "GIT_COMMITTER_EMAIL": "strobe@localhost",
                "GIT_AUTHOR_DATE": "@0 +0000", "GIT_COMMITTER_DATE": "@0 +0000",
            ]
            let commit = try Self.git(
                ["-C", top, "commit-tree", tree, "-p", head.commit, "-m", "strobe compare: the working tree"],
                environment: fixed
            ).trimmingCharacters(in: .newlines)
            return (GitRevision(name: nil, commit: commit, tree: tree, dirty: true), head.commit)
        } catch {
            throw .badInput("--git: cannot read the working tree of \(directory): \(error)")
        }
    }
}
