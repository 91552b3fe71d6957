import ArgumentParser

/// `strobe`: read traces, run perf tests, compare results.
@main
struct StrobeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strobe",
        abstract: "Read Strobe traces, run perf tests and compare their results.",
        subcommands: [
            SummarizeCommand.self, ExportCommand.self, RepairCommand.self, RunCommand.self, ResultsCommand.self, DiffCommand.self,
            CompareCommand.self, TrendCommand.self,
        ]
    )
}
