import Foundation
import StrobeHistory
import StrobeResults
import StrobeTrend
import Testing

/// A change of one of the runner's exact counts reads in its unit, with
/// the levels on either side, in every format: "+96 allocations per
/// iteration (14 → 110)", never a percentage with an interval of no width.
@Suite struct TrendCountTextTests {
    /// 20 nights of one test whose counts are `counts(night)` in every
    /// iteration (or, with `vary`, off by up to ±2 from night to night),
    /// with instructions that step with them.
    static func runs(
        _ history: NightlyHistory, vary: Bool = false, counts: (Int) -> (allocations: Double, bytes: Double)
    ) -> [HistoryRun] {
        var noise = TrendNoise(state: 41)
        return (0..<20).map { night in
            let (allocations, bytes) = counts(night)
            let jitter = vary ? (noise.uniform() * 4).rounded(.down) - 2 : 0
            let instructions = 2.72e8 * (allocations > 50 ? 1.144 : 1) * (1 + 0.0001 * noise.normal())
            var metadata = RunMetadata(
                suite: "demo", gitCommit: history.commits[night], host: "ci-1", os: "Linux", cpuModel: "Intel Xeon",
                coreCount: 2, buildConfiguration: "release",
                timestamp: (1_700_000_000 + Int64(night) * 86_400) * 1_000_000_000, tags: [:],
                runID: "ci-1-night\(night + 1)")
            metadata.simulated = true
            let test = PerfTestResult(
                name: "apply lens",
                metrics: [
                    PerfMetric(name: "instructions", unit: "count", samples: Array(repeating: instructions, count: 5)),
                    PerfMetric(
                        name: "allocations", unit: "count", samples: Array(repeating: allocations + jitter, count: 5)),
                    PerfMetric(name: "allocations.bytes", unit: "bytes", samples: Array(repeating: bytes, count: 5)),
                ])
            return HistoryRun(record: RunRecord(run: PerfRun(metadata: metadata, tests: [test])))
        }
    }

    static func report(_ runs: [HistoryRun], _ history: NightlyHistory) throws -> TrendReport {
        var options = TrendOptions()
        options.commitOrder = history.commits
        return try TrendAnalysis.analyze(runs, source: "files", options: options)
    }

    @Test func aStepOfAnExactCountIsADifferenceOfItsLevelsInEveryFormat() throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 20, in: directory)
        let report = try Self.report(
            Self.runs(history) { night in night >= 10 ? (110, 5_445_000) : (14, 36_000) }, history)
        let allocations = try #require(report.changes.first { $0.metric == "allocations" })
        #expect(allocations.firstAfter.slot == 10, "\(report.changes.map(\.series))")
        #expect(allocations.levelBefore == 14 && allocations.levelAfter == 110 && allocations.levelsRepeat)
        #expect(allocations.changeText() == "+96 allocations per iteration (14 → 110)")
        #expect(allocations.shortChangeText == "+96 allocations")
        let bytes = try #require(report.changes.first { $0.metric == "allocations.bytes" })
        #expect(bytes.changeText() == "+5.16 MiB per iteration (35.2 KiB → 5.19 MiB)", "\(bytes.changeText())")
        let instructions = try #require(report.changes.first { $0.metric == "instructions" })
        #expect(
            instructions.changeText().hasPrefix("+14.4% instructions per iteration (272 M → 311 M)"),
            "\(instructions.changeText())")

        let text = report.renderText()
        #expect(text.contains("demo/apply lens/allocations: +96 allocations per iteration (14 → 110), p "), "\(text)")
        let markdown = report.renderMarkdown()
        #expect(markdown.contains("| +96 allocations per iteration (14 → 110) |"), "\(markdown)")
        let html = report.renderHTML()
        #expect(html.contains("+96 allocations per iteration (14 → 110)"))
        #expect(html.contains("· +96 allocations<"), "\(html)")
        for output in [text, markdown, html] {
            // No count of the three is told as a percentage.
            #expect(!output.contains("+685.7%") && !output.contains("+15025"), "\(output)")
        }
        let json = report.renderJSON()
        let decoded = try JSONDecoder().decode(TrendReport.self, from: Data(json.utf8))
        let fromJSON = try #require(decoded.changes.first { $0.metric == "allocations" })
        #expect(fromJSON.levelBefore == 14 && fromJSON.levelAfter == 110 && fromJSON.levelsRepeat)
    }

    @Test func aStepOfAVaryingCountCarriesItsIntervalInTheCountsUnit() throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 20, in: directory)
        let report = try Self.report(
            Self.runs(history, vary: true) { night in night >= 10 ? (110, 36_000) : (14, 36_000) }, history)
        let allocations = try #require(report.changes.first { $0.metric == "allocations" })
        #expect(!allocations.levelsRepeat)
        let text = allocations.changeText()
        // "+96 allocations per iteration [+93.x, +98.x] (14 → 110)": a
        // difference and its interval, both in allocations.
        let pattern =
            #/^\+9[0-9](\.[0-9])? allocations per iteration \[\+[0-9.]+, \+[0-9.]+\] \(1[0-9](\.[0-9])? → 1[01][0-9](\.[0-9])?\)$/#
        #expect(text.wholeMatch(of: pattern) != nil, "\(text)")
        #expect(!text.contains("%"))
    }
}
