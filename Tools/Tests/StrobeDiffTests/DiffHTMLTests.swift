import Foundation
import StrobeDiff
import StrobeJudgement
import StrobeTestSupport
import Testing

/// The HTML report fits the window it opens in, and no row's change
/// contradicts the central values printed beside it.
@Suite struct DiffHTMLTests {
    static let chromium = "/usr/bin/chromium"

    /// Three processes a side of `metric`, each process's samples as given.
    static func set(_ metric: String, unit: String = "ns", side: String, _ processes: [[Double]]) -> SampleSet {
        var set = SampleSet()
        for (index, samples) in processes.enumerated() {
            set.series.append(
                .init(
                    metric: metric, unit: unit, better: .lower, samples: samples, dimensions: [:], source: side,
                    run: "\(side)\(index)"))
        }
        set.sources = [side]
        return set
    }

    /// A metric whose medians of all samples fall (12 → 11) while the
    /// processes' medians, which the test compares, rise (30 → 35).
    static func contradicting() -> (SampleSet, SampleSet) {
        let metric = "decode/cache misses"
        return (
            set(metric, unit: "count", side: "b", [[10, 10, 10], [12, 30, 30], [12, 30, 30]]),
            set(metric, unit: "count", side: "c", [[11, 11, 11], [11, 35, 35], [11, 35, 35]])
        )
    }

    @Test func aRowWhoseMediansPointAgainstTheChangeShowsTheCentersTheTestCompared() throws {
        let (baseline, candidate) = Self.contradicting()
        let report = try Judgement.compare(baseline: baseline, candidate: candidate)
        let row = try #require(report.rows.first)
        #expect(row.baseline.median == 12 && row.candidate.median == 11)
        #expect(row.baselineCenter == 30 && row.candidateCenter == 35)
        #expect((row.shift?.ratio ?? 0) > 1)
        let html = report.renderHTML()
        #expect(html.contains("30 → 35&nbsp;*"), "\(html)")
        #expect(!html.contains(">12 → 11</td>"))
        #expect(html.contains("the centers the test compared"))
        #expect(html.contains("decode/cache misses 12 → 11"))
        let markdown = report.renderMarkdown()
        #expect(markdown.contains("30 → 35 *") && markdown.contains("\\* the centers the test compared"))
        #expect(report.renderText().contains("where the medians point the other way from the change"))
    }

    @Test func rowsWhoseMediansAgreeShowThem() throws {
        let metric = "decode/wall"
        let report = try Judgement.compare(
            baseline: Self.set(metric, side: "b", [[100, 101, 99], [102, 100, 101], [99, 100, 98]]),
            candidate: Self.set(metric, side: "c", [[120, 121, 119], [122, 120, 121], [119, 120, 118]]))
        let html = report.renderHTML()
        #expect(html.contains(">100&nbsp;ns → 120&nbsp;ns</td>"), "\(html)")
        #expect(!html.contains("the centers the test compared"))
    }

    /// A report with long names, long changes and many columns.
    static func wideReport() throws -> DiffReport {
        var baseline = SampleSet()
        var candidate = SampleSet()
        let metrics = [
            "apply lens with a rather long test name/interval:lens apply stage with a long interval name:sum",
            "apply lens with a rather long test name/wall", "apply lens with a rather long test name/instructions",
            "apply lens with a rather long test name/process.context_switches.involuntary",
            "capture frame/allocations.bytes", "capture frame/process.faults.minor",
        ]
        for (index, metric) in metrics.enumerated() {
            let level = 271_505_725.0 * Double(index + 1)
            for process in 0..<5 {
                let jitter = 1 + Double(process) * 0.003
                let unit = metric.hasSuffix("wall") || metric.hasSuffix(":sum") ? "ns" : "count"
                baseline.series.append(
                    .init(
                        metric: metric, unit: unit, better: .lower, samples: [level * jitter, level * jitter * 1.01],
                        dimensions: [:], source: "b", run: "b\(process)", round: process))
                candidate.series.append(
                    .init(
                        metric: metric, unit: unit, better: .lower,
                        samples: [level * 1.144 * jitter, level * 1.144 * jitter * 1.01], dimensions: [:],
                        source: "c", run: "c\(process)", round: process))
            }
        }
        baseline.sources = ["b"]
        candidate.sources = ["c"]
        return try Judgement.compare(baseline: baseline, candidate: candidate)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: chromium)))
    func theReportFitsA1280PixelWindow() throws {
        let html = try Self.wideReport().renderHTML()
        // The page measures itself once laid out, and Chromium prints the
        // DOM with the measure in it.
        let measured = html.replacingOccurrences(
            of: "</body>",
            with: "<script>document.body.setAttribute('data-scroll-width', "
                + "String(document.documentElement.scrollWidth))</script></body>")
        let path = NSTemporaryDirectory() + "strobe-diff-width-\(getpid()).html"
        try measured.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let outcome = try runProgram(
            Self.chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900", "--dump-dom",
                "file://" + path,
            ], timeLimit: 120)
        let match = try #require(outcome.output.firstMatch(of: #/data-scroll-width="(\d+)"/#), "\(outcome.errors)")
        let width = try #require(Int(match.1))
        #expect(width <= 1280, "the page is \(width) pixels wide")
    }
}
