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

/// `--html-link` of the commands whose Markdown comment can point at the
/// HTML report of the same comparison (`strobe diff`, `compare`).
struct ReportLinkOption: ParsableArguments {
    @Option(
        name: .customLong("html-link"),
        help: """
            With --format markdown: link the comment to the HTML report at this URL \
            (its flame graphs; default: none).
            """)
    var url: String?
}
