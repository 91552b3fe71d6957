import Foundation
import StrobeDiff
import StrobeFlameGraph
import StrobeJudgement
import StrobeResults
import StrobeTestSupport
import Testing

/// The differential flame graph of a changed test: a frame new in the
/// candidate is marked new, one that grew slower, one that moved by less
/// than the floor unchanged, one gone from the candidate gone; and the page
/// draws them in a browser with no error.
@Suite struct FlameGraphTests {
    /// A profile of 10 iterations sampled at 1 ms a sample, of `stacks`
    /// (frames joined by `;`, with their samples).
    static func profile(_ stacks: [(String, Int)]) -> CallStackProfile {
        var builder = CallStackProfileBuilder(nanosecondsPerSample: 1e6)
        for (stack, samples) in stacks { builder.add(stack.split(separator: ";").map(String.init), samples: samples) }
        for _ in 0..<10 { builder.finishIteration(lostSamples: 0, method: "cpu_timer") }
        return builder.profile
    }

    static let baselineStacks = [
        ("main;apply lens;applyBand", 200), ("main;apply lens;oldFilter", 30), ("main;capture frame;read", 100),
    ]
    static let candidateStacks = [
        ("main;apply lens;applyBand", 200), ("main;apply lens;makeToneCurve();powf", 120),
        ("main;capture frame;read", 101),
    ]

    static func graph() -> DifferentialFlameGraph {
        DifferentialFlameGraph(
            title: "apply lens", unit: .nanoseconds,
            baseline: FlameStack.perIteration([profile(baselineStacks)]),
            candidate: FlameStack.perIteration([profile(candidateStacks)]), floor: 1e6)
    }

    static func frame(_ graph: DifferentialFlameGraph, _ name: String) throws -> DifferentialFlameGraph.Frame {
        try #require(graph.frames.first { $0.name == name }, "no frame \(name)")
    }

    @Test func aNewFrameIsNewAGrownOneSlowerASteadyOneUnchangedAndAMissingOneGone() throws {
        let graph = Self.graph()
        #expect(try Self.frame(graph, "makeToneCurve()").change == .new)
        #expect(try Self.frame(graph, "powf").change == .new)
        let apply = try Self.frame(graph, "apply lens")
        #expect(apply.change == .slower)
        // 23 ms → 32 ms per iteration (samples × 1 ms ÷ 10 iterations).
        #expect(abs(apply.baseline - 23e6) < 1 && abs(apply.candidate - 32e6) < 1)
        #expect(try Self.frame(graph, "capture frame").change == .unchanged)
        #expect(try Self.frame(graph, "oldFilter").change == .gone)
        #expect(try Self.frame(graph, "applyBand").change == .unchanged)
        // The colours: new frames magenta, a slower one red, unchanged ones
        // the neutral shade, a gone one pale.
        #expect(FrameChange.colour(.new, baseline: 0, candidate: 1) == "#ad1457")
        let red = FrameChange.colour(.slower, baseline: apply.baseline, candidate: apply.candidate)
        let channels = stride(from: 1, to: 7, by: 2).map {
            Int(red[red.index(red.startIndex, offsetBy: $0)...red.index(red.startIndex, offsetBy: $0 + 1)], radix: 16)
                ?? 0
        }
        #expect(channels[0] > channels[1] + 40 && channels[0] > channels[2] + 40, "\(red)")
        #expect(FrameChange.colour(.faster, baseline: 2, candidate: 1) != red)
        #expect(FrameChange.colour(.unchanged, baseline: 1, candidate: 1) == "#e3dccf")
    }

    @Test func widthsAreTheCandidatesAmountsWithGoneFramesAddedAtTheirBaselineWidth() throws {
        let graph = Self.graph()
        let root = try #require(graph.root)
        #expect(root.width == 1 && root.start == 0)
        // The candidate's 421 samples and the 30 gone ones.
        let apply = try Self.frame(graph, "apply lens")
        #expect(abs(apply.width - 350.0 / 451) < 1e-9)
        let capture = try Self.frame(graph, "capture frame")
        let main = try Self.frame(graph, "main")
        #expect(abs(capture.start - (main.start + apply.width)) < 1e-9)
        // Each frame lies inside its caller.
        for frame in graph.frames where frame.depth > 0 {
            #expect(
                graph.frames.contains {
                    $0.depth == frame.depth - 1 && $0.start <= frame.start + 1e-12
                        && frame.start + frame.width <= $0.start + $0.width + 1e-12
                })
        }
    }

    @Test func aGraphKeepsAtMostItsFrameLimitAndSaysHowManyItLeftOut() {
        var stacks: [FlameStack] = []
        for index in 0..<400 { stacks.append(FlameStack(frames: ["f\(index)", "deep"], amount: Double(index + 1))) }
        var limits = DifferentialFlameGraph.Limits()
        limits.maximumFrames = 100
        limits.maximumDepth = 1
        let graph = DifferentialFlameGraph(
            title: "many", unit: .samples, baseline: stacks, candidate: stacks, floor: 1, limits: limits)
        // The root and the 99 widest; no frame below the depth limit.
        #expect(graph.frames.count == 100 && graph.frames.allSatisfy { $0.depth <= 1 })
        #expect(graph.frames.dropFirst().allSatisfy { Int($0.name.dropFirst()) ?? 0 >= 301 })
        #expect(graph.leftOut == 301)
        #expect(graph.depthCut)
        #expect(graph.frames.allSatisfy { $0.change == .unchanged })
        #expect(FlameGraphHTML.section([graph], heading: "h").contains("narrower frames left out"))
    }

    /// Three processes a side of a test whose wall time grew 40%, each
    /// process profiled.
    static func report() throws -> (DiffReport, SampleSet, SampleSet) {
        func side(_ name: String, scale: Double, stacks: [(String, Int)]) -> SampleSet {
            var set = SampleSet()
            for process in 0..<3 {
                let run = "\(name)\(process)"
                set.series.append(
                    .init(
                        metric: "apply lens/wall", unit: "ns", better: .lower,
                        samples: [100, 101, 99, 100].map { ($0 + Double(process)) * scale * 1e6 }, dimensions: [:],
                        source: name, run: run))
                set.profiles.append(
                    ProcessProfile(test: "apply lens", run: run, round: nil, dimensions: [:], profile: profile(stacks)))
            }
            set.sources = [name]
            return set
        }
        let baseline = side("b", scale: 1, stacks: baselineStacks)
        let candidate = side("c", scale: 1.4, stacks: candidateStacks)
        return (try Judgement.compare(baseline: baseline, candidate: candidate), baseline, candidate)
    }

    @Test func theReportOfASlowerTestDrawsItsGraphAndTheCommentLinksToIt() throws {
        let (report, baseline, candidate) = try Self.report()
        let graphs = report.flameGraphs(baseline: baseline, candidate: candidate)
        let graph = try #require(graphs.first)
        #expect(graphs.count == 1 && graph.title.hasPrefix("apply lens — slower"))
        #expect(try Self.frame(graph, "makeToneCurve()").change == .new)
        #expect(graph.notes["makeToneCurve()"]?.contains("new") == true)
        let html = report.renderHTML(flameGraphs: graphs)
        #expect(html.contains("Differential flame graphs") && html.contains("\"makeToneCurve()\""))
        // Self-contained: nothing loaded from anywhere.
        #expect(!html.contains("src=") && !html.contains("<link") && !html.contains("fetch("))
        #expect(!report.renderMarkdown().contains("flame graphs"))
        let markdown = report.renderMarkdown(reportLink: "report.html")
        #expect(markdown.contains("[differential flame graphs](report.html)"))
        #expect(markdown.contains("| function |"))
    }

    @Test(.enabled(if: BrowserPage.available))
    func theBrowserDrawsTheGraphWithNoErrorAndZoomsWithoutOne() throws {
        let (report, baseline, candidate) = try Self.report()
        var html = report.renderHTML(flameGraphs: report.flameGraphs(baseline: baseline, candidate: candidate))
        // A click on the frame of makeToneCurve() zooms into it.
        html = html.replacingOccurrences(
            of: "</body>",
            with: "<script>var g=[].find.call(document.querySelectorAll('div.flame g'),function(e){"
                + "return e.textContent.indexOf('makeToneCurve')==0});"
                + "document.body.setAttribute('data-zoom-width',g.querySelector('rect').getAttribute('width'));"
                + "g.dispatchEvent(new MouseEvent('click',{bubbles:true}));"
                + "document.body.setAttribute('data-zoomed',[].filter.call(document.querySelectorAll('div.flame g'),"
                + "function(e){return e.textContent.indexOf('makeToneCurve')==0})[0].querySelector('rect')"
                + ".getAttribute('width'))</script></body>")
        let page = try BrowserPage(rendering: html)
        #expect(page.errors.isEmpty, "\(page.errors)")
        #expect(page.dom.contains("<g class=\"f new deep\""), "\(page.dom.suffix(3000))")
        #expect(page.dom.contains("<g class=\"f slower"))
        let before = try #require(page.dom.firstMatch(of: #/data-zoom-width="([0-9.]+)"/#).flatMap { Double($0.1) })
        let after = try #require(page.dom.firstMatch(of: #/data-zoomed="([0-9.]+)"/#).flatMap { Double($0.1) })
        #expect(after > 2 * before, "\(before) → \(after)")
        // Drawn: a screenshot of the page as a reader sees it.
        let shot = try BrowserPage.screenshot(
            of: report.renderHTML(flameGraphs: report.flameGraphs(baseline: baseline, candidate: candidate)),
            width: 1100, height: 1500)
        #expect(BrowserPage.isPNG(shot.png, width: 1100, height: 1500))
        #expect(shot.png.count > 20_000, "the screenshot holds \(shot.png.count) bytes")
    }
}
