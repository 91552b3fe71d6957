import ArgumentParser
import CStrobeBuildInfo
import Foundation
import StrobeResults

/// `strobe`: read traces, run perf tests, compare results.
@main
struct StrobeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strobe",
        abstract: "Read Strobe traces, run perf tests and compare their results.",
        discussion: """
            Exit status: 0 success; 1 a gated regression (diff, compare) or a failed measurement (run); \
            2 bad input: a flag, or a file that cannot be read or holds the wrong thing.
            """,
        version: StrobeCommand.version,
        subcommands: [
            SummarizeCommand.self, ExportCommand.self, RepairCommand.self, RecoverCommand.self, RunCommand.self,
            ResultsCommand.self, DiffCommand.self, DiffTracesCommand.self,
            CompareCommand.self, TrendCommand.self, HistoryCommand.self, IngestCommand.self, FleetCommand.self,
            ServeCommand.self,
        ]
    )

    /// `strobe 0.1.0 (commit 1a2b3c4d5e6f)`: the version and, when the build
    /// recorded it, the git commit it was built from.
    static var version: String {
        let commit = String(cString: cstrobe_build_commit())
        return "strobe \(StrobeVersion.current)" + (commit.isEmpty ? " (commit not recorded)" : " (commit \(commit))")
    }

    /// Parses the command line, runs the command and ends the process with
    /// the status ``exitStatus(reporting:)`` gives: commands throw, none
    /// exits by itself.
    static func main() async {
        var status: Int32 = 0
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            status = exitStatus(reporting: error)
        }
        Foundation.exit(status)
    }

    /// Reports `error` and gives the exit status for it: a
    /// ``CommandFailure``'s own; 0 after printing help; 2 for a flag the
    /// parser or a command's `validate()` refused, with the usage; 2 for
    /// any other error (a file that cannot be read, written or decoded),
    /// named by its description.
    static func exitStatus(reporting error: any Error) -> Int32 {
        if let failure = error as? CommandFailure {
            if let message = failure.message { printError("strobe: " + message) }
            return failure.status
        }
        let code = exitCode(for: error)
        if code == .success {
            print(fullMessage(for: error))
            return 0
        }
        if code == .validationFailure {
            // Every error of the command begins the same way.
            var message = fullMessage(for: error)
            if message.hasPrefix("Error: ") { message = "strobe: " + message.dropFirst("Error: ".count) }
            printError(message)
            return 2
        }
        printError("strobe: \(error)")
        return 2
    }

    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
