import Foundation

/// A git repository read through the `git` command: the order of its
/// commits and the commits of a range.
struct GitRepository {
    /// The directory, as `git -C` takes it.
    var directory: String

    /// The repository at `directory`, or nil when it is not inside one (or
    /// git is missing).
    init?(_ directory: String) {
        self.directory = directory
        guard let inside = try? Self.git(["-C", directory, "rev-parse", "--is-inside-work-tree"]),
            inside.trimmingCharacters(in: .whitespacesAndNewlines) == "true"
        else { return nil }
    }

    /// Every commit of every branch, oldest first, parents before children
    /// (`git rev-list --topo-order --reverse --all`).
    func commitOrder() throws -> [String] {
        try Self.git(["-C", directory, "rev-list", "--topo-order", "--reverse", "--all"])
            .split(separator: "\n").map(String.init)
    }

    /// The commits of `before..after`, newest first, as `git log --oneline`
    /// shows them: at most `limit`, and how many more there are.
    func commits(from before: String, to after: String, limit: Int) -> (commits: [String], more: Int) {
        guard let text = try? Self.git(["-C", directory, "log", "--oneline", "--no-decorate", "\(before)..\(after)"])
        else {
            return ([], 0)
        }
        let lines = text.split(separator: "\n").map(String.init)
        return (Array(lines.prefix(limit)), max(0, lines.count - limit))
    }

    /// Why a command failed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The standard output of `git ARGUMENTS` (with `environment` added to
    /// this process's); throws when it exits non-zero.
    static func git(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description: String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return String(decoding: data, as: UTF8.self)
    }
}
