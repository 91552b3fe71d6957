import Foundation
import StrobeJudgement

/// What `strobe compare` decided, kept beside its results
/// (`RESULTS_DIR/decisions.json`) so that every later rendering of those
/// results shows the same verdicts, estimates and intervals.
///
/// A sequential comparison keeps each verdict from the look that reached
/// it, at that look's level; judging all rounds again at once, at the full
/// alpha, gives other numbers. `strobe diff` of the results shows these
/// decisions unless asked to judge again (`--rejudge`), and then says so.
public struct RecordedDecisions: Sendable, Codable {
    /// The file's name in the results directory.
    public static let fileName = "decisions.json"

    /// The baseline's results files the decisions were made on, relative
    /// to the results directory, sorted.
    public var baselineFiles: [String]
    /// The candidate's results files, relative to the results directory,
    /// sorted.
    public var candidateFiles: [String]
    /// The report as `strobe compare` delivered it.
    public var report: DiffReport
    /// The policy it was judged under, if one was given: `strobe diff` with
    /// the same policy shows these decisions, with another judges again.
    public var policy: ComparisonPolicy?

    /// The decisions of `report`, made on the files it names, which lie
    /// under `directory`, under `policy`.
    public init(report: DiffReport, directory: String, policy: ComparisonPolicy? = nil) {
        self.report = report
        self.policy = policy
        baselineFiles = Self.relative(report.baselineSources, to: directory)
        candidateFiles = Self.relative(report.candidateSources, to: directory)
    }

    /// Writes the decisions to `directory`'s decisions file.
    public func write(to directory: String) throws(DiffError) {
        let path = Self.path(in: directory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            try encoder.encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw DiffError(path: path, problem: "cannot write the decisions: \(error.localizedDescription)")
        }
    }

    /// The decisions recorded in `directory`, or nil when it has none.
    ///
    /// - Throws: ``DiffError`` when the file is there but cannot be read.
    public static func read(from directory: String) throws(DiffError) -> RecordedDecisions? {
        let path = path(in: directory)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return try decoder.decode(RecordedDecisions.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch let error as DecodingError {
            throw DiffError(
                path: path, problem: "cannot read the decisions strobe compare recorded: \(Self.describe(error))")
        } catch {
            throw DiffError(path: path, problem: "cannot read the decisions strobe compare recorded: \(error)")
        }
    }

    /// Where in the file a decoding error is and what it is, in a sentence:
    /// `report.rows[3].better: no such key`.
    static func describe(_ error: DecodingError) -> String {
        func place(_ path: [any CodingKey]) -> String {
            let text = path.reduce(into: "") { text, key in
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text.isEmpty ? "the top level" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(place(context.codingPath + [key])): no such key"
        case .valueNotFound(_, let context):
            return "\(place(context.codingPath)): null where a value belongs"
        case .typeMismatch(let type, let context):
            return "\(place(context.codingPath)): not a \(type)"
        case .dataCorrupted(let context):
            return "\(place(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// The decisions file of `directory`.
    public static func path(in directory: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent(fileName).path
    }

    /// The results directory of one `strobe compare` whose two sides
    /// `baseline` and `candidate` are: each a single directory, the two
    /// beside each other in a directory that holds a decisions file. Nil
    /// otherwise.
    public static func directory(baseline: [String], candidate: [String]) -> String? {
        guard baseline.count == 1, candidate.count == 1 else { return nil }
        let sides = [baseline[0], candidate[0]].map { URL(fileURLWithPath: $0).standardizedFileURL }
        var isDirectory: ObjCBool = false
        for side in sides {
            guard FileManager.default.fileExists(atPath: side.path, isDirectory: &isDirectory), isDirectory.boolValue
            else { return nil }
        }
        let parents = sides.map { $0.deletingLastPathComponent().path }
        guard parents[0] == parents[1], sides[0].path != sides[1].path,
            FileManager.default.fileExists(atPath: path(in: parents[0]))
        else { return nil }
        return parents[0]
    }

    /// Whether the decisions were made on exactly the results files that
    /// `baseline` and `candidate` were loaded from (no round added or
    /// removed since).
    public func matches(baseline: SampleSet, candidate: SampleSet, directory: String) -> Bool {
        Self.relative(baseline.sources, to: directory) == baselineFiles
            && Self.relative(candidate.sources, to: directory) == candidateFiles
    }

    /// The recorded report, marked as recorded at `path`, with only the
    /// rows whose metric `metricFilter` finds (the verdicts, estimates and
    /// intervals of those rows unchanged).
    public func recordedReport(path: String, metricFilter: Regex<AnyRegexOutput>? = nil) -> DiffReport {
        var shown = report
        shown.origin = DecisionOrigin(kind: .recorded, path: path)
        if let metricFilter {
            shown.rows = shown.rows.filter { (try? metricFilter.firstMatch(in: $0.name)) != nil }
            shown.testVerdicts = shown.tests
            let tests = Set(shown.tests.map(\.displayName))
            shown.functionChanges = shown.functionChanges.filter { tests.contains($0.test) }
        }
        return shown
    }

    /// `paths` relative to `directory` (both standardized), sorted; a path
    /// outside it stays whole.
    static func relative(_ paths: [String], to directory: String) -> [String] {
        let base = URL(fileURLWithPath: directory).standardizedFileURL.path
        let prefix = base.hasSuffix("/") ? base : base + "/"
        return paths.map { path in
            let full = URL(fileURLWithPath: path).standardizedFileURL.path
            return full.hasPrefix(prefix) ? String(full.dropFirst(prefix.count)) : full
        }.sorted()
    }
}
