import Foundation
import StrobeFlameGraph
import StrobeHistory
import StrobeResults
import StrobeStoreTestSupport
import StrobeTestSupport
import StrobeTrend
import Testing

/// The differential flame graph of a change the code made, on the history
/// dashboard: the profiled runs after the step against those before it.
@Suite struct TrendFlameGraphTests {
    /// A profile of `iterations` iterations whose stacks spend `blur` ms
    /// in `render → blur` and, from the change on, `curve` ms in
    /// `render → makeToneCurve()`, at 1 ms a sample.
    static func profile(blur: Int, curve: Int) -> CallStackProfile {
        var stacks = [CallStackProfile.Stack(frames: [0, 1, 2], samples: 4 * blur)]
        if curve > 0 { stacks.append(.init(frames: [0, 1, 3], samples: 4 * curve)) }
        return CallStackProfile(
            functions: ["main", "render", "blur", "makeToneCurve()"], stacks: stacks,
            nanosecondsPerSample: 1_000_000, iterations: 4, method: "perf_event")
    }

    /// Thirty nights on one host, each with a run of the pinned reference
    /// build: test `b` of the nightly build is 15% slower from night 16,
    /// its profile gaining `makeToneCurve()` there; `a` is unchanged. Every
    /// nightly run profiled unless `profiled` says no.
    static func nights(
        _ history: NightlyHistory, profiled: (Int) -> Bool = { _ in true }
    ) -> [PerfRun] {
        var noise = TrendNoise(state: 5)
        return (0..<30).flatMap { night in
            var run = history.run(night: night, build: "nightly", tests: ["a", "b"], noise: &noise) { test, night in
                test == "b" && night >= 15 ? 1.15 : 1
            }
            if profiled(night) {
                run.tests[0].profile = profile(blur: 10, curve: 0)
                run.tests[1].profile = profile(blur: 10, curve: night >= 15 ? 2 : 0)
            }
            return [run, history.run(night: night, build: "reference", tests: ["a", "b"], noise: &noise)]
        }
    }

    static func report(_ runs: [PerfRun], _ history: NightlyHistory) throws -> (TrendReport, [HistoryRun]) {
        let stored = runs.map { HistoryRun(record: RunRecord(run: $0)) }
        var options = TrendOptions()
        options.commitOrder = history.commits
        options.reference = HistoryFilter(.tag("build"), "reference")
        return (try TrendAnalysis.analyze(stored, source: "test", options: options), stored)
    }

    @Test func theCodesStepDrawsTheFunctionItBroughtAsNew() throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        let (report, runs) = try Self.report(Self.nights(history), history)
        let change = try #require(report.codeChanges.first { $0.test == "b" })
        #expect(report.codeChanges.allSatisfy { $0.test == "b" }, "\(report.codeChanges.map(\.series))")
        let graphs = report.flameGraphs(runs: runs)
        #expect(graphs.count == 1)
        let graph = try #require(graphs.first)
        #expect(graph.title.hasPrefix("b at \(change.shortRange) — the code's: wall +"), "\(graph.title)")
        #expect(graph.title.hasSuffix("(5 runs before, 5 after)"), "\(graph.title)")
        let curve = try #require(graph.frames.first { $0.name == "makeToneCurve()" })
        #expect(curve.change == .new && curve.baseline == 0 && curve.candidate == 2_000_000)
        let blur = try #require(graph.frames.first { $0.name == "blur" })
        #expect(blur.change == .unchanged && blur.baseline == 10_000_000)
        #expect(try #require(graph.frames.first { $0.name == "render" }).change == .slower)
        #expect(graph.notes["makeToneCurve()"] == "new in the test's profile from this change")
        // The page carries the graph and its script, nothing fetched.
        let html = report.renderHTML(flameGraphs: graphs)
        #expect(
            html.contains("Differential flame graphs of the code's changes") && html.contains("\"makeToneCurve()\""))
        #expect(!html.contains("src=") && !html.contains("<link") && !html.contains("fetch("))
        #expect(!report.renderHTML().contains("<script"))
    }

    @Test func aChangeWithoutProfiledRunsOnASideDrawsNothing() throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        let (report, runs) = try Self.report(Self.nights(history) { $0 >= 15 }, history)
        #expect(report.codeChanges.contains { $0.test == "b" })
        #expect(report.flameGraphs(runs: runs).isEmpty)
    }

    @Test(.enabled(if: BrowserPage.available))
    func theDashboardDrawsTheGraphInTheBrowserWithNoError() async throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        let store = try await TrendTests.store(Self.nights(history), in: directory)
        let html = try TrendTests.dashboard(store, repository: history.repository, in: directory).html
        let rendered = try BrowserPage(rendering: html)
        #expect(rendered.errors.isEmpty, "\(rendered.errors)")
        #expect(rendered.dom.contains("<g class=\"f new"), "\(rendered.dom.suffix(2000))")
        #expect(rendered.dom.contains("makeToneCurve()"))
        let shot = try BrowserPage.screenshot(of: html, width: 1100, height: 1500)
        #expect(BrowserPage.isPNG(shot.png, width: 1100, height: 1500))
        #expect(shot.png.count > 20_000, "the screenshot holds \(shot.png.count) bytes")
    }
}
