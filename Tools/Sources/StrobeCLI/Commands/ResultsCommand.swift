import ArgumentParser
import Foundation
import StrobeProcessRunner
import StrobeResults

/// `strobe results export FILE --format json|csv`.
struct ResultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "results",
        abstract: "Work with perf results files.",
        subcommands: [ExportResultsCommand.self]
    )
}

/// `strobe results export`: results as JSON or CSV, for dashboards.
struct ExportResultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a results file as JSON or CSV.",
        discussion: """
            CSV has one row per sample: suite,test,metric,unit,better,run,round,iteration,value, then one \
            column per tag. It is the sample format `strobe diff` reads too.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, csv
    }

    @Argument(help: "The results file.")
    var file: String

    @Option(help: "json or csv.")
    var format: Format

    @Option(name: .shortAndLong, help: "Write here instead of standard output.")
    var output: String?

    func run() throws {
        let run = try ResultsFile.read(file)
        let text: String
        switch format {
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            text = String(decoding: try encoder.encode(run), as: UTF8.self) + "\n"
        case .csv:
            text = ResultsCSV.render(run)
        }
        try emit(text, to: output)
    }
}
