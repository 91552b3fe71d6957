import Foundation

/// The sections a benchmark program was asked to run: the names on its
/// command line, or every section when none is named.
///
/// An unknown name ends the program with status 2 and the list of sections,
/// before any section runs.
public struct BenchmarkSections {
    /// The program's name, the start of every message it writes.
    public let program: String
    /// Every section, in the order they run.
    public let all: [String]
    /// The sections named on the command line.
    public let named: Set<String>

    /// The sections of `program` named in `arguments` (by default the
    /// command line's).
    public init(program: String, all: [String], arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        self.program = program
        self.all = all
        named = Set(arguments)
        let unknown = named.subtracting(all).sorted()
        if !unknown.isEmpty {
            fail(
                "unknown section \(unknown.joined(separator: ", ")); sections: \(all.joined(separator: " "))",
                status: 2)
        }
    }

    /// Whether `section` runs: it was named, or no section was.
    public func includes(_ section: String) -> Bool {
        named.isEmpty || named.contains(section)
    }

    /// Runs `section` where it is included; a section that throws ends the
    /// program with status 1, its error on standard error.
    public func run(_ section: String, _ body: () async throws -> Void) async {
        guard includes(section) else { return }
        do {
            try await body()
        } catch {
            exit(status: 1, saying: "\(program) \(section): \(error)")
        }
    }

    /// Writes `PROGRAM: message` to standard error and exits with `status`.
    public func fail(_ message: String, status: Int32) -> Never {
        exit(status: status, saying: "\(program): \(message)")
    }

    private func exit(status: Int32, saying line: String) -> Never {
        FileHandle.standardError.write(Data((line + "\n").utf8))
        Foundation.exit(status)
    }
}
