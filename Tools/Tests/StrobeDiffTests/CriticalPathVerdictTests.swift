import Foundation
import StrobeProcessRunner
import StrobeReader
import StrobeResults
import StrobeToolFormatting
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement

/// The verdict of a suite test whose critical path changed says which
/// interval now waits for which, in every format; one whose path is
/// unchanged says nothing more.
@Suite struct CriticalPathVerdictTests {
    /// The waits sentence of a serialized "apply lens".
    static let serialized = "`lens worker 1` now waits for `lens worker 0` in `apply lens`"

    /// One process of a suite whose test "apply lens" runs
    /// ``CriticalPathTests/iteration(serial:seed:)`` five times: its wall
    /// time, its critical path's length and what the path crossed, as the
    /// runner writes them.
    static func process(serial: Bool, seed: UInt64, side: String, round: Int) -> PerfRun {
        var walls: [Double] = []
        var lengths: [Double] = []
        var record = CriticalPathRecord(interval: "apply lens")
        for iteration in 0..<5 {
            let (root, intervals) = CriticalPathTests.iteration(serial: serial, seed: seed * 100 + UInt64(iteration))
            guard let path = CriticalPath.of(root, in: intervals) else { continue }
            walls.append(Double(path.wall))
            lengths.append(Double(path.length))
            record.iterations.append(CriticalPathRecord.Iteration([path]))
        }
        var test = PerfTestResult(
            name: "apply lens",
            metrics: [
                PerfMetric(name: "wall", unit: "ns", samples: walls),
                PerfMetric(name: record.metric, unit: "ns", samples: lengths),
            ])
        test.criticalPaths = [record]
        return PerfRun(metadata: RunMetadata(suite: "lens", runID: "\(side)-\(round)", round: round), tests: [test])
    }

    /// Eight rounds a side written as results files and judged.
    static func report(baselineSerial: Bool, candidateSerial: Bool, seed: UInt64) throws -> DiffReport {
        let root = NSTemporaryDirectory() + "strobe-critical-path-verdict-\(getpid())-\(seed)"
        try? FileManager.default.removeItem(atPath: root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (side, serial) in [("baseline", baselineSerial), ("candidate", candidateSerial)] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(side)", withIntermediateDirectories: true)
            for round in 1...8 {
                let run = process(
                    serial: serial, seed: seed * 1000 + UInt64(round) * 10 + (side == "baseline" ? 0 : 1), side: side,
                    round: round)
                try ResultsFile.write(run, to: "\(root)/\(side)/round-\(round).strobe-results")
            }
        }
        return try Judgement.compare(
            baseline: SampleSet.load(["\(root)/baseline"]), candidate: SampleSet.load(["\(root)/candidate"]))
    }

    @Test func aSerializedTestsVerdictSaysWhichWorkerNowWaitsForWhich() throws {
        let report = try Self.report(baselineSerial: false, candidateSerial: true, seed: 1)
        let path = try #require(report.rows.first { $0.name == "apply lens/interval:apply lens:critical_path" })
        #expect(path.verdict == .regression)
        let verdict = try #require(report.tests.first)
        let sentence = try #require(verdict.criticalPath)
        #expect(sentence.hasPrefix("critical path +") && sentence.hasSuffix(": " + Self.serialized), "\(sentence)")
        #expect(!verdict.decision.contains("waits for"))
        #expect(report.testVerdicts.first?.criticalPath == sentence)
        #expect(report.renderText().contains(Self.serialized))
        #expect(report.renderText().contains("\n    " + sentence + "\n"))
        #expect(report.renderMarkdown().contains("**slower**: apply lens: regression ("))
        #expect(report.renderMarkdown().contains("\n  - " + sentence + "\n"))
        #expect(
            report.renderHTML().contains(
                "<code>lens worker 1</code> now waits for <code>lens worker 0</code> in <code>apply lens</code>"))
        // The JSON carries the waits and the sentence, and reads back.
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let decoded = try decoder.decode(DiffReport.self, from: Data(report.renderJSON().utf8))
        let comparison = try #require(decoded.criticalPaths?.first)
        #expect(comparison.newWaits == [CriticalPathRecord.Wait(waiter: "lens worker 1", waitedFor: "lens worker 0")])
        #expect(comparison.baselinePaths == 40 && comparison.candidatePaths == 40)
        #expect(decoded.testVerdicts.first?.criticalPath == sentence)
    }

    @Test func aShorterPathSaysWhichWaitIsGone() throws {
        let report = try Self.report(baselineSerial: true, candidateSerial: false, seed: 2)
        let sentence = try #require(report.tests.first?.criticalPath)
        #expect(sentence.hasPrefix("critical path -"), "\(sentence)")
        #expect(sentence.hasSuffix(": `lens worker 1` no longer waits for `lens worker 0` in `apply lens`"))
    }

    @Test func anUnchangedPathSaysNothingMore() throws {
        let report = try Self.report(baselineSerial: false, candidateSerial: false, seed: 3)
        let path = try #require(report.rows.first { $0.name == "apply lens/interval:apply lens:critical_path" })
        #expect(path.verdict != .regression && path.verdict != .improvement)
        #expect(report.tests.first?.criticalPath == nil)
        #expect(report.criticalPaths?.first?.newWaits == [])
        for text in [report.renderText(), report.renderMarkdown(), report.renderHTML()] {
            #expect(!text.contains("waits for") && !text.contains("critical path +"))
        }
    }

    @Test func aRecordNamesTheMetricTheSuiteDeclares() {
        #expect(
            CriticalPathRecord(interval: "apply lens").metric == TraceMetric.interval("apply lens", .criticalPath).name)
        #expect(HTMLText.withCode("a `b` c `d") == "a <code>b</code> c `d")
        #expect(HTMLText.withCode("<`x`>") == "&lt;<code>x</code>&gt;")
    }
}
