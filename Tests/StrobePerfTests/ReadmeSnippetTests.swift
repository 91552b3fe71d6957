import Foundation
import StrobeTestTraits
import Testing

/// Every ```swift block of README.md and of the pages in docs/ is source
/// the build compiles: it appears in a file of Examples/ReadmeSnippets (the
/// `ReadmeSnippets` target, built in Swift 6 language mode with the rest of
/// the package), or the line before its fence says why not:
/// `<!-- not compiled: REASON -->`.
@Suite(.processWide)
struct ReadmeSnippetTests {
    /// The repository's root, three folders above this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let snippetFolder = root.appendingPathComponent("Examples/ReadmeSnippets")
    /// The folder's one file that is not a block of the docs: the app code
    /// the blocks call.
    static let supportFile = "AppCode.swift"

    /// README.md, then every Markdown page of docs/ by name, each named by
    /// its path from the repository's root.
    static func pages() throws -> [(name: String, text: String)] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return try (["README.md"] + docs).map {
            name in (name, try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8))
        }
    }

    /// The Swift blocks of every page, each with the page it is on.
    static func blocks() throws -> [(page: String, block: SnippetCheck.Block)] {
        try pages().flatMap { page in SnippetCheck.swiftBlocks(in: page.text).map { (page.name, $0) } }
    }

    static func snippetFiles() throws -> [(name: String, lines: [String])] {
        try FileManager.default.contentsOfDirectory(atPath: snippetFolder.path).filter { $0.hasSuffix(".swift") }
            .sorted().map {
                name in
                (name, try String(contentsOf: snippetFolder.appendingPathComponent(name), encoding: .utf8).lines)
            }
    }

    @Test func theReadmeAndTheDocsPagesAreRead() throws {
        let names = try Self.pages().map(\.name)
        #expect(names.first == "README.md")
        #expect(names.contains("docs/recording.md"))
        #expect(names.contains("docs/perf-tests.md"))
        let pagesWithBlocks = Set(try Self.blocks().map(\.page))
        #expect(pagesWithBlocks.contains("README.md"))
        #expect(pagesWithBlocks.contains { $0.hasPrefix("docs/") })
    }

    @Test func everySwiftBlockOfTheDocsIsCompiled() throws {
        let blocks = try Self.blocks()
        let files = try Self.snippetFiles()
        #expect(blocks.count >= 8)
        for (page, block) in blocks where block.notCompiledBecause == nil {
            let holders = files.filter { SnippetCheck.source($0.lines, holds: block.lines) }
            let first = block.lines.first ?? ""
            #expect(
                !holders.isEmpty,
                "\(page) line \(block.line): the block starting \"\(first)\" is in no file of Examples/ReadmeSnippets"
            )
        }
        for (page, block) in blocks {
            if let reason = block.notCompiledBecause {
                #expect(!reason.isEmpty, "\(page) line \(block.line): give the reason")
            }
        }
    }

    @Test func everySnippetFileHoldsABlockOfTheDocs() throws {
        let blocks = try Self.blocks().map(\.block).filter { $0.notCompiledBecause == nil }
        let files = try Self.snippetFiles()
        #expect(files.contains { $0.name == Self.supportFile })
        for file in files where file.name != Self.supportFile {
            #expect(
                blocks.contains { SnippetCheck.source(file.lines, holds: $0.lines) },
                "\(file.name) holds no block of README.md or docs/*.md")
        }
    }

    @Test func theCheckFindsBlocksAsWrittenAndRefusesChangedOnes() {
        let markdown = """
            Text.

            ```swift
            import Strobe

            let session = try TraceSession.start(configuration)

            try session.stop()
            ```

            <!-- not compiled: a package manifest -->
            ```swift
            let package = Package(name: "app")
            ```

            ```sh
            swift build
            ```

            ```swift
            configuration.signposts = [.probes]
            ```
            """
        let blocks = SnippetCheck.swiftBlocks(in: markdown)
        #expect(blocks.map(\.line) == [3, 12, 20])
        #expect(blocks.map(\.notCompiledBecause) == [nil, "a package manifest", nil])
        #expect(
            blocks[0].lines == [
                "import Strobe", "", "let session = try TraceSession.start(configuration)", "", "try session.stop()",
            ])

        let source = """
            import Foundation
            import Strobe

            func run(configuration: TraceConfiguration) throws {
                let session = try TraceSession.start(configuration)

                try session.stop()
            }
            """.lines
        // The body inside a function, indented as a whole, with its import
        // at the top of the file.
        #expect(SnippetCheck.source(source, holds: blocks[0].lines))
        // A changed line, a missing import or a block indented unevenly is
        // not the block.
        #expect(
            !SnippetCheck.source(
                source.map { $0.replacingOccurrences(of: "stop()", with: "stop(now)") }, holds: blocks[0].lines))
        #expect(!SnippetCheck.source(source.filter { $0 != "import Strobe" }, holds: blocks[0].lines))
        #expect(
            !SnippetCheck.source(
                source.map { $0 == "    try session.stop()" ? "        try session.stop()" : $0 },
                holds: blocks[0].lines))
        #expect(!SnippetCheck.source(source, holds: blocks[2].lines))
    }
}

/// Finds a Markdown text's Swift blocks and checks that a source file holds
/// one as written.
enum SnippetCheck {
    /// A ```swift block: the line of its fence (from 1), its lines, and the
    /// reason given on the line above the fence when it is not compiled.
    struct Block {
        var line: Int
        var lines: [String]
        var notCompiledBecause: String?
    }

    static func swiftBlocks(in markdown: String) -> [Block] {
        let lines = markdown.lines
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            guard lines[index] == "```swift" else {
                index += 1
                continue
            }
            let fence = index
            var body: [String] = []
            index += 1
            while index < lines.count, lines[index] != "```" {
                body.append(lines[index])
                index += 1
            }
            var reason: String?
            if fence > 0 {
                let above = lines[fence - 1].trimmingCharacters(in: .whitespaces)
                if above.hasPrefix("<!-- not compiled:"), above.hasSuffix("-->") {
                    reason = String(above.dropFirst("<!-- not compiled:".count).dropLast(3)).trimmingCharacters(
                        in: .whitespaces)
                }
            }
            blocks.append(Block(line: fence + 1, lines: body, notCompiledBecause: reason))
            index += 1
        }
        return blocks
    }

    /// Whether `source` holds `block`: its leading `import` lines are
    /// imports of the file, and the rest appears as consecutive lines, each
    /// with the same indentation added (a block of statements sits in a
    /// function), blank lines matching blank lines.
    static func source(_ source: [String], holds block: [String]) -> Bool {
        var imports: [String] = []
        var rest = block[...]
        while let first = rest.first, first.hasPrefix("import ") || (first.isEmpty && !imports.isEmpty) {
            if !first.isEmpty { imports.append(first) }
            rest = rest.dropFirst()
        }
        while rest.last?.isEmpty == true { rest = rest.dropLast() }
        guard imports.allSatisfy(source.contains) else { return false }
        guard let first = rest.first else { return true }
        let body = Array(rest)
        for start in source.indices where source[start].hasSuffix(first) && start + body.count <= source.count {
            let indent = source[start].dropLast(first.count)
            guard indent.allSatisfy({ $0 == " " }) else { continue }
            let matches = body.indices.allSatisfy { offset in
                let line = source[start + offset]
                return body[offset].isEmpty ? line.allSatisfy(\.isWhitespace) : line == indent + body[offset]
            }
            if matches { return true }
        }
        return false
    }
}

extension String {
    /// The text's lines, without their line breaks.
    fileprivate var lines: [String] {
        split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}
