import Foundation
import StrobeResults

/// Results files to add to a history, read in full before anything is
/// added: a file that cannot be read or does not parse stops the command
/// with nothing of it stored.
public enum HistoryInput {
    /// A run read from a file.
    public struct Entry: Sendable, Hashable {
        /// The file it came from.
        public var file: String
        /// The run, ready to store.
        public var record: RunRecord
    }

    /// Reads every path: a results file, or a directory searched
    /// recursively for `.strobe-results` files.
    ///
    /// With `recognizeComparisons`, a file in `DIR/baseline` or
    /// `DIR/candidate`, where DIR holds both (the layout `strobe compare`
    /// writes), is recorded as that side of a comparison named after DIR
    /// and the runs it holds.
    ///
    /// - Throws: ``HistoryError`` naming the path that is missing, the
    ///   directory that holds no results, or the file that does not parse
    ///   (with its problem, as ``ResultsFileError`` says it).
    public static func load(_ paths: [String], recognizeComparisons: Bool = false) throws(HistoryError) -> [Entry] {
        var entries: [Entry] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw HistoryError(.badResults, "\(path): no such file or directory")
            }
            let files: [String]
            if isDirectory.boolValue {
                files = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? [])
                    .filter { $0.hasSuffix("." + ResultsFile.fileExtension) }.sorted().map { path + "/" + $0 }
                guard !files.isEmpty else {
                    throw HistoryError(.badResults, "\(path): directory holds no .\(ResultsFile.fileExtension) files")
                }
            } else {
                files = [path]
            }
            for file in files {
                do {
                    entries.append(Entry(file: file, record: RunRecord(run: try ResultsFile.read(file))))
                } catch {
                    throw HistoryError(.badResults, error.description)
                }
            }
        }
        if recognizeComparisons { nameComparisons(&entries) }
        return entries
    }

    /// Marks the entries that lie in a `strobe compare` directory with
    /// their side and the comparison: DIR's name and the first 12 hex
    /// digits of the SHA-256 of its runs' sorted keys, so that importing the
    /// same directory again names it the same.
    static func nameComparisons(_ entries: inout [Entry]) {
        var members: [String: [Int]] = [:]
        for (index, entry) in entries.enumerated() {
            let parent = (entry.file as NSString).deletingLastPathComponent
            let side = (parent as NSString).lastPathComponent
            guard side == "baseline" || side == "candidate" else { continue }
            let root = (parent as NSString).deletingLastPathComponent
            var isDirectory: ObjCBool = false
            let other = root + "/" + (side == "baseline" ? "candidate" : "baseline")
            guard FileManager.default.fileExists(atPath: other, isDirectory: &isDirectory), isDirectory.boolValue else {
                continue
            }
            entries[index].record.side = side
            members[root, default: []].append(index)
        }
        for (root, indices) in members {
            let keys = indices.map { entries[$0].record.key }.sorted().joined(separator: "\n")
            let digest = String(SHA256Digest.hex(Array(keys.utf8)).prefix(12))
            let name = (URL(fileURLWithPath: root).standardizedFileURL.lastPathComponent) + "-" + digest
            for index in indices { entries[index].record.comparison = name }
        }
    }
}
