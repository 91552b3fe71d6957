import Foundation
import StrobeProcessRunner
import StrobeReader
import StrobeResults
import StrobeToolFormatting
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement
@testable import StrobeStatistics

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
    static func process(serial: Bool, seed: UInt64, side: String, round: Int, scale: Double = 1) -> PerfRun {
        var walls: [Double] = []
        var lengths: [Double] = []
        var record = CriticalPathRecord(interval: "apply lens")
        for iteration in 0..<5 {
            let (root, intervals) = CriticalPathTests.iteration(serial: serial, seed: seed * 100 + UInt64(iteration))
            guard let path = CriticalPath.of(root, in: intervals) else { continue }
            walls.append(Double(path.wall) * scale)
            lengths.append(Double(path.length) * scale)
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

    /// `rounds` rounds a side (eight unless told) written as results files
    /// and judged; `serialRounds`, when given, are the candidate's rounds
    /// that run serialized, in place of `candidateSerial`; `scales` (per
    /// side, per round) stretch a process's times as a loaded machine does.
    static func report(
        baselineSerial: Bool, candidateSerial: Bool, seed: UInt64, rounds: Int = 8, serialRounds: Set<Int>? = nil,
        scales: [String: [Double]] = [:]
    ) throws -> DiffReport {
        let root = NSTemporaryDirectory() + "strobe-critical-path-verdict-\(getpid())-\(seed)"
        try? FileManager.default.removeItem(atPath: root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (side, serial) in [("baseline", baselineSerial), ("candidate", candidateSerial)] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(side)", withIntermediateDirectories: true)
            for round in 1...rounds {
                let serialHere = side == "candidate" ? serialRounds.map { $0.contains(round) } ?? serial : serial
                let run = process(
                    serial: serialHere, seed: seed * 1000 + UInt64(round) * 10 + (side == "baseline" ? 0 : 1),
                    side: side, round: round, scale: scales[side]?[round - 1] ?? 1)
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

    /// Processes a loaded machine stretched by up to 2.2 times, three a
    /// side: the path's length cannot tell a serialized build from the
    /// baseline, but a wait on every path of every candidate process and on
    /// none of the baseline's decides the longer path.
    static let loaded = ["baseline": [1.0, 2.2, 0.6], "candidate": [0.55, 1.3, 0.7]]

    @Test func aNewWaitInEveryCandidateProcessDecidesWhatTheTimeCannot() throws {
        let report = try Self.report(
            baselineSerial: false, candidateSerial: true, seed: 4, rounds: 3, scales: Self.loaded)
        let path = try #require(report.rows.first { $0.name == "apply lens/interval:apply lens:critical_path" })
        #expect(path.verdict == .regression && path.decidedByWaits == true)
        #expect(path.adjustedPValue > path.level, "the time alone decides it: \(path.adjustedPValue)")
        let sentence = try #require(report.tests.first?.criticalPath)
        #expect(sentence.contains("(decided by its waits): " + Self.serialized), "\(sentence)")
        #expect(report.renderText().contains("regression (by its waits)"))
        // Three processes a side this loaded size nothing: the sentence
        // gives the estimate so far, not an interval as if it did.
        let shift = try #require(path.shift)
        #expect(!SizedInterval.sizes(shift) && path.notMeasuredFarEnough == true, "\(shift)")
        #expect(sentence.contains(" so far, not measured far enough to size it (decided by its waits)"), "\(sentence)")
        #expect(!sentence.contains("inf"), "\(sentence)")
        #expect(CriticalPathComparison.signedPercent(0.2512) == "+25%")
        #expect(CriticalPathComparison.signedPercent(-0.015) == "-1.5%")
        let evidence = try #require(report.criticalPaths?.first?.waitEvidence?.first)
        #expect(evidence.candidateCrossings == 15 && evidence.baselineCrossings == 0)
        #expect(evidence.candidateProcesses == 3 && evidence.baselineProcesses == 0)
        // Gone from every baseline process: the shorter path is decided.
        let shorter = try Self.report(
            baselineSerial: true, candidateSerial: false, seed: 5, rounds: 3,
            scales: ["baseline": Self.loaded["candidate"]!, "candidate": Self.loaded["baseline"]!])
        let gone = try #require(shorter.rows.first { $0.name == "apply lens/interval:apply lens:critical_path" })
        #expect(gone.verdict == .improvement && gone.decidedByWaits == true)
    }

    /// A wait on the paths of one candidate process of three is more than
    /// half of no side's paths and decides nothing; nor does a build
    /// against itself.
    @Test func oneProcessThatRanSerialDecidesNothing() throws {
        let report = try Self.report(
            baselineSerial: false, candidateSerial: false, seed: 6, rounds: 3, serialRounds: [2])
        let path = try #require(report.rows.first { $0.name == "apply lens/interval:apply lens:critical_path" })
        #expect(path.decidedByWaits == nil)
        #expect(path.verdict == .inconclusive || path.verdict == .unchanged, "\(path.verdict)")
        let same = try Self.report(
            baselineSerial: false, candidateSerial: false, seed: 7, rounds: 3, scales: Self.loaded)
        #expect(same.rows.allSatisfy { $0.decidedByWaits == nil })
    }

    /// Fisher's exact test against values computed by hand: all five events
    /// on one side of two fives is 1 in C(10, 5) = 252.
    @Test func fishersExactTestMatchesHandComputedValues() {
        let allOnOneSide = HypergeometricDistribution.fisherGreater(
            candidateEvents: 5, candidateTotal: 5, baselineEvents: 0, baselineTotal: 5)
        #expect(abs(allOnOneSide - 1.0 / 252) < 1e-12)
        // 3 of 4 against 1 of 4: P(X >= 3) = (C(4,3)C(4,1) + C(4,4)C(4,0)) / C(8,4) = 17/70.
        let some = HypergeometricDistribution.fisherGreater(
            candidateEvents: 3, candidateTotal: 4, baselineEvents: 1, baselineTotal: 4)
        #expect(abs(some - 17.0 / 70) < 1e-12)
        let none = HypergeometricDistribution.fisherGreater(
            candidateEvents: 0, candidateTotal: 4, baselineEvents: 4, baselineTotal: 4)
        #expect(abs(none - 1) < 1e-12)
        #expect(
            HypergeometricDistribution.fisherGreater(
                candidateEvents: 1, candidateTotal: 0, baselineEvents: 0, baselineTotal: 4) == 1)
    }

    @Test func aRecordNamesTheMetricTheSuiteDeclares() {
        #expect(
            CriticalPathRecord(interval: "apply lens").metric == TraceMetric.interval("apply lens", .criticalPath).name)
        #expect(HTMLText.withCode("a `b` c `d") == "a <code>b</code> c `d")
        #expect(HTMLText.withCode("<`x`>") == "&lt;<code>x</code>&gt;")
    }
}
