import ArgumentParser

/// The formats a command's report is written in.
enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case text, markdown, json, html
}

/// `--format` and `--output` of a command that writes a report (`strobe
/// diff`, `compare`, `fleet`, `trend`).
struct ReportOutputOptions: ParsableArguments {
    @Option(help: "text, markdown, json or html (a self-contained page).")
    var format: ReportFormat = .text

    @Option(
        name: [.customShort("o"), .customLong("output")], help: "Write the report here (default: standard output).")
    var path: String?
}
