import Foundation
import StrobeReader
import StrobeTestSupport
import Testing

/// What a new user meets: bad input is exit status 2 with a message that
/// names the problem, flags share one vocabulary, and `--version` says
/// which commit the command was built from.
extension StrobeCLITests {
    @Test func badFilesAreRefusedWithExitStatusTwoAndPlainWords() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let empty = folder + "/empty.pftrace"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let text = folder + "/text.pftrace"
        try Data("hello, this is text\n".utf8).write(to: URL(fileURLWithPath: text))

        let repairEmpty = try Self.strobe("repair", empty)
        #expect(repairEmpty.status == 2, "\(repairEmpty.output)")
        #expect(repairEmpty.errors.contains("empty.pftrace: byte 0: not a trace: the file is empty"))
        let repairText = try Self.strobe("repair", text)
        #expect(repairText.status == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: text)).count == 20, "the file is left as it is")

        let summarize = try Self.strobe("summarize", text)
        #expect(summarize.status == 2)
        #expect(
            summarize.errors.contains(
                "text.pftrace: byte 0: not a trace: it begins with 0x68 (\"hello, this \"), where a trace begins with "
                    + "a packet (0x0a)"
            ), "\(summarize.errors)")
        #expect(!summarize.errors.contains("unknown Trace field"))

        let ingest = try Self.strobe("ingest", text, "--history", folder + "/fleet.sqlite")
        #expect(ingest.status == 2, "\(ingest.output)")
        #expect(ingest.errors.contains("the one file given is not a trace that can be stored"), "\(ingest.errors)")

        let trace = folder + "/app.pftrace"
        try Self.writeTrace(trace)
        let intoFolder = try Self.strobe("export", trace, "--format", "csv", "-o", folder)
        #expect(intoFolder.status == 2)
        #expect(intoFolder.errors.contains("cannot write \(folder): it is a directory"), "\(intoFolder.errors)")
        #expect(!intoFolder.errors.contains("NSCocoaErrorDomain"))
    }

    @Test func durationsNeedTheirUnitAndErrorsBeginAlike() throws {
        let bare = try Self.strobe("summarize", "x.pftrace", "--frame-budget", "16.67")
        #expect(bare.status == 2)
        #expect(bare.errors.hasPrefix("strobe: "), "\(bare.errors)")
        #expect(bare.errors.contains("\"16.67\" has no unit; write it with one: 16.67ms"), "\(bare.errors)")
        let timeout = try Self.strobe("run", "--timeout", "30", "--", "true")
        #expect(timeout.status == 2)
        #expect(timeout.errors.contains("\"30\" has no unit"), "\(timeout.errors)")
        let budget = try Self.strobe("compare", "--baseline", "true", "--candidate", "true", "--max-time", "soon")
        #expect(budget.status == 2)
        #expect(budget.errors.contains("\"soon\" is not a duration such as 16.67ms, 30s or 3m"), "\(budget.errors)")
    }

    @Test func oneVocabularyAcrossTheCommands() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for command in ["diff", "trend", "fleet"] {
            let help = try Self.strobe(command, "--help")
            #expect(help.output.contains("--group-by"), "\(command): \(help.output)")
            #expect(!help.output.contains("--by "), "\(command): \(help.output)")
            #expect(!help.output.contains("(default: 0.01). (default"), "\(command)")
        }
        let compare = try Self.strobe("compare", "--help")
        #expect(compare.output.contains("-o, --output <output>"), "\(compare.output)")
        #expect(compare.output.contains("--results-dir"), "\(compare.output)")
        #expect(!compare.output.contains("--report"), "\(compare.output)")
        // The report's file is checked before any round runs.
        let unwritable = try Self.strobe(
            "compare", "--baseline", "true", "--candidate", "true", "-o", folder, "--results-dir", folder + "/r")
        #expect(unwritable.status == 2)
        #expect(unwritable.errors.contains("--output \(folder): cannot write the report: it is a directory"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/r"))

        let version = try Self.strobe("--version")
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("strobe 0.1.0 (commit "), "\(version.output)")
    }
}
