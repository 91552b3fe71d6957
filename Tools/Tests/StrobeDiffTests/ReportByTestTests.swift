import Foundation
import StrobeProcessRunner
import StrobeResults
import StrobeToolFormatting
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement
@testable import StrobeStatistics

/// What a comparison gates by default, the floors of resource counts, and a
/// report that reads per test.
@Suite struct ReportByTestTests {
    /// One process's metrics of a single-threaded test, as the runner
    /// writes them: `slowdown` multiplies its times.
    static func suiteProcess(
        _ test: String, wall: Double, threadShare: Double = 1, switches: [Double] = [1, 1, 1],
        generator: inout SeededGenerator
    ) -> PerfTestResult {
        let noise = { (generator: inout SeededGenerator) in exp(0.01 * generator.normal()) }
        let walls = (0..<3).map { _ in wall * noise(&generator) }
        let user = walls.map { $0 * 0.97 }
        let system = walls.map { _ in 0.0 }
        return PerfTestResult(
            name: test,
            metrics: [
                PerfMetric(name: "wall", unit: "ns", samples: walls),
                PerfMetric(name: "process.cpu.user", unit: "ns", samples: user),
                PerfMetric(name: "process.cpu.system", unit: "ns", samples: system),
                PerfMetric(name: "process.context_switches.voluntary", unit: "count", samples: switches),
                PerfMetric(name: "process.faults.minor", unit: "count", samples: [0, 0, 0]),
                PerfMetric(name: "thread.cpu.user", unit: "ns", samples: user.map { $0 * threadShare }),
                PerfMetric(name: "thread.cpu.system", unit: "ns", samples: system),
                PerfMetric(name: "thread.context_switches.voluntary", unit: "count", samples: switches),
                PerfMetric(name: "thread.faults.minor", unit: "count", samples: [0, 0, 0]),
                PerfMetric(name: "interval:parse:sum", unit: "ns", samples: walls.map { $0 * 0.9 }),
            ])
    }

    /// Writes `rounds` rounds of a suite of three tests per side into a
    /// scratch directory and loads them; the candidate is `slowdown` slower
    /// in `slowed` tests.
    static func suite(
        rounds: Int, slowdown: Double, slowed: Set<String> = ["decode", "encode", "load"], threadShare: Double = 1,
        candidateSwitches: [Double] = [1, 1, 1], seed: UInt64
    ) throws -> (baseline: SampleSet, candidate: SampleSet) {
        var generator = SeededGenerator(seed: seed)
        let root = NSTemporaryDirectory() + "strobe-report-by-test-\(getpid())-\(seed)"
        try? FileManager.default.removeItem(atPath: root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        for side in ["baseline", "candidate"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(side)", withIntermediateDirectories: true)
        }
        for round in 1...rounds {
            for side in ["baseline", "candidate"] {
                let processFactor = exp(0.02 * generator.normal())
                let tests = ["decode": 7e7, "encode": 1.2e8, "load": 2.6e8].sorted { $0.key < $1.key }.map {
                    test, wall in
                    let factor = side == "candidate" && slowed.contains(test) ? 1 + slowdown : 1
                    return suiteProcess(
                        test, wall: wall * processFactor * factor, threadShare: threadShare,
                        switches: side == "candidate" ? candidateSwitches : [1, 1, 1], generator: &generator)
                }
                var metadata = RunMetadata(suite: "yaml", runID: "\(side)-\(round)", round: round)
                metadata.samplesAreLaunches = false
                try ResultsFile.write(
                    PerfRun(metadata: metadata, tests: tests), to: "\(root)/\(side)/round-\(round).strobe-results")
            }
        }
        return (try SampleSet.load(["\(root)/baseline"]), try SampleSet.load(["\(root)/candidate"]))
    }

    @Test func wallCPUAndTheSuitesMetricsGateResourceCountsAreReported() throws {
        // The candidate's voluntary context switches go 1 → 2.
        let (baseline, candidate) = try Self.suite(rounds: 6, slowdown: 0, candidateSwitches: [2, 2, 2], seed: 1)
        let report = try Judgement.compare(baseline: baseline, candidate: candidate)
        let gated = Set(report.rows.filter(\.gates).map(\.name))
        #expect(
            gated
                == Set(
                    ["decode", "encode", "load"].flatMap {
                        ["\($0)/wall", "\($0)/process.cpu", "\($0)/interval:parse:sum"]
                    }))
        let switches = try #require(report.rows.first { $0.name == "decode/process.context_switches.voluntary" })
        #expect(!switches.gates)
        #expect(switches.absoluteFloor == 1)
        #expect(switches.verdict == .unchanged)
        // The CPU total is user + system of each iteration.
        let cpu = try #require(report.rows.first { $0.name == "load/process.cpu" })
        #expect(abs(cpu.baseline.median / 2.6e8 - 0.97) < 0.05)
        // A policy may still gate a resource count.
        let policy = try ComparisonPolicy.parse(
            "metrics:\n  - match: context_switches\n    gate: true\n", file: "p.yml")
        let gating = try Judgement.compare(baseline: baseline, candidate: candidate, policy: policy)
        #expect(gating.rows.contains { $0.name == "decode/process.context_switches.voluntary" && $0.gates })
    }

    @Test func countsThatAreAlmostAlwaysZeroReadUnchanged() {
        // Minor faults and system time: zero in most processes, a blip in a
        // few, on both sides alike.
        func replicates(_ blips: Set<Int>, value: Double) -> [Replicate] {
            (0..<8).map {
                Replicate(id: "p\($0)", round: $0, samples: blips.contains($0) ? [0, value, 0] : [0, 0, 0])
            }
        }
        let faults = ComparisonPolicy().settings(for: "decode/process.faults.minor", unit: "count")
        let system = ComparisonPolicy().settings(for: "decode/process.cpu.system", unit: "ns")
        #expect(faults.absoluteFloor == 1 && !faults.gates)
        #expect(system.absoluteFloor == MetricDefaults.cpuTimeFloor && !system.gates)
        #expect(ComparisonPolicy().settings(for: "decode/wall", unit: "ns") == .init(absoluteFloor: 0, gates: true))
        let rows = ComparisonEngine.compare([
            .init(
                name: "decode/process.faults.minor", unit: "count", better: .lower,
                baseline: replicates([2], value: 1),
                candidate: replicates([5], value: 1), absoluteFloor: faults.absoluteFloor, gates: false),
            .init(
                name: "decode/process.cpu.system", unit: "ns", better: .lower,
                baseline: replicates([1, 6], value: 4e6),
                candidate: replicates([3], value: 4e6), absoluteFloor: system.absoluteFloor, gates: false),
        ])
        #expect(rows.map(\.verdict) == [.unchanged, .unchanged])
        // With no floor, blips that move the processes' medians could not
        // be anything but inconclusive; blips that leave every median at 0
        // give the same summaries on both sides, which is unchanged.
        func medianBlips(_ blips: Set<Int>) -> [Replicate] {
            (0..<8).map { Replicate(id: "p\($0)", round: $0, samples: blips.contains($0) ? [1, 1, 0] : [0, 0, 0]) }
        }
        let bare = ComparisonEngine.compare([
            .init(
                name: "decode/process.faults.minor", unit: "count", better: .lower,
                baseline: medianBlips([2, 4]), candidate: medianBlips([5]), gates: false),
            .init(
                name: "decode/process.faults.major", unit: "count", better: .lower,
                baseline: replicates([2, 4], value: 1), candidate: replicates([5], value: 1), gates: false),
        ])
        #expect(bare[0].verdict == .inconclusive)
        #expect(bare[1].verdict == .unchanged)
    }

    @Test func theHeadlineCountsTestsAndSingleThreadedCopiesFold() throws {
        let (baseline, candidate) = try Self.suite(rounds: 6, slowdown: 0.6, seed: 2)
        let report = try Judgement.compare(baseline: baseline, candidate: candidate)
        #expect(report.headline.hasPrefix("3 tests slower: decode +6"), "\(report.headline)")
        #expect(report.headline.contains(", encode +6") && report.headline.contains(", load +6"))
        #expect(report.tests.map(\.outcome) == [.slower, .slower, .slower])
        #expect(
            report.metricCounts.hasPrefix("gated metrics: 9 regressions, 0 improvements, 0 unchanged, 0 inconclusive"))
        // The thread's copies of the process's numbers are folded away.
        #expect(report.foldedTests == ["decode", "encode", "load"])
        #expect(!report.rows.contains { $0.name.contains("/thread.") })
        let text = report.renderText()
        #expect(text.contains("decode, encode and load ran on one thread"))
        #expect(report.renderMarkdown().contains("ran on one thread"))
        #expect(report.renderHTML().contains("ran on one thread"))
        // Tests are named once, their gated metrics first.
        let table = text.split(separator: "\n").filter { $0.contains(" pairs ") }
        #expect(table.first?.hasPrefix("decode  wall ") == true, "\(text)")
        #expect(table.filter { $0.hasPrefix("decode") }.count == 1)
        // A multi-threaded test keeps both.
        let (threads, threadsCandidate) = try Self.suite(rounds: 4, slowdown: 0, threadShare: 0.4, seed: 3)
        let unfolded = try Judgement.compare(baseline: threads, candidate: threadsCandidate)
        #expect(unfolded.foldedTests.isEmpty)
        #expect(unfolded.rows.contains { $0.name == "decode/thread.cpu.user" })
    }

    @Test func aMixedOutcomeNamesEachKindOfTest() throws {
        let (baseline, candidate) = try Self.suite(rounds: 8, slowdown: 0.3, slowed: ["encode"], seed: 4)
        let report = try Judgement.compare(baseline: baseline, candidate: candidate)
        #expect(report.headline.hasPrefix("1 test slower: encode +2"), "\(report.renderText())")
        #expect(report.headline.hasSuffix("; 2 tests inconclusive: decode, load"), "\(report.headline)")
        // One line per undecided test, its wall time explained.
        let text = report.renderText()
        #expect(text.contains("\ninconclusive:\n  decode/wall: "))
        #expect(text.contains("(also inconclusive: process.cpu, interval:parse:sum)"))
        #expect(!text.contains("  decode/process.cpu: "))
    }

    @Test func warningsAreGroupedByKind() {
        // One process on a side, for 16 metrics of three tests.
        var baseline = SampleSet()
        var candidate = SampleSet()
        var generator = SeededGenerator(seed: 8)
        for test in ["decode", "encode", "load"] {
            for metric in ["wall", "process.cpu", "a", "b", "c", "d"].prefix(test == "load" ? 4 : 6) {
                let samples = { (generator: inout SeededGenerator) in
                    (0..<10).map { _ in 100 * exp(0.02 * generator.normal()) }
                }
                baseline.series.append(
                    .init(
                        metric: "\(test)/\(metric)", unit: "ns", better: .lower, samples: samples(&generator),
                        dimensions: [:],
                        source: "b"))
                candidate.series.append(
                    .init(
                        metric: "\(test)/\(metric)", unit: "ns", better: .lower, samples: samples(&generator),
                        dimensions: [:],
                        source: "c"))
            }
        }
        let report = try? Judgement.compare(baseline: baseline, candidate: candidate)
        let warnings = report?.warnings ?? []
        #expect(warnings.count == 1, "\(warnings)")
        #expect(
            warnings.first?.contains(": wall, process.cpu, a and 3 more metrics of decode, encode, load")
                == true, "\(warnings)")
    }

    @Test func tablesStayAlignedWithWideNamesAndColour() throws {
        var baseline = SampleSet()
        var candidate = SampleSet()
        var generator = SeededGenerator(seed: 9)
        for (test, wall) in [("cold start", 1.4e7), ("解码", 2e5), ("a very long test name indeed", 3e9)] {
            for round in 0..<4 {
                for (side, factor) in [(0, 1.0), (1, 1.3)] {
                    let series = SampleSet.Series(
                        metric: "\(test)/wall", unit: "ns", better: .lower,
                        samples: (0..<3).map { _ in wall * factor * exp(0.01 * generator.normal()) }, dimensions: [:],
                        source: "s", run: "\(side)-\(round)", round: round)
                    if side == 0 { baseline.series.append(series) } else { candidate.series.append(series) }
                }
            }
        }
        let report = try Judgement.compare(baseline: baseline, candidate: candidate)
        for colour in [false, true] {
            let lines = report.renderText(colour: colour).split(separator: "\n").map(String.init)
            let rows = lines.filter { $0.contains(" pairs ") }
            #expect(rows.count == 3)
            // Every column ends at the same terminal column on every row.
            let ends = rows.map { line -> Int in
                let prefix = line[..<line.range(of: " pairs ")!.upperBound]
                return TextTable.displayWidth(of: String(prefix))
            }
            #expect(Set(ends).count == 1, "\(rows)")
            let verdictStarts = rows.map { line -> Int in
                TextTable.displayWidth(of: String(line[..<line.range(of: "regression")!.lowerBound]))
            }
            #expect(Set(verdictStarts).count == 1, "\(rows)")
            // Colour wraps the verdict only: a line starts with its text.
            #expect(rows.allSatisfy { !$0.hasPrefix("\u{1B}") })
        }
    }
}
