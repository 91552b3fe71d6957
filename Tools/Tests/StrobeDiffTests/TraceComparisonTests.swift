import Foundation
import StrobeFlameGraph
import StrobeStatistics
import StrobeTestSupport
import StrobeTraceComparison
import Testing

/// Two sides of traces compared per interval name: the same side against
/// itself changes nothing; a slower interval with a function new inside it
/// is called slower and names the function.
@Suite struct TraceComparisonTests {
    /// A side of `count` instances of `lens apply` taking about `duration`
    /// ns each (busy for `cpu` of it), sampled at 1 kHz in `stacks`, and
    /// of `capture frame` unchanged.
    static func side(
        duration: Double, cpu: Double, stacks: [[String]: Int], count: Int = 300, seed: UInt64
    ) -> TraceSide {
        var generator = SeededGenerator(seed: seed)
        var side = TraceSide()
        side.sources = ["side-\(seed).pftrace"]
        var apply = TraceSide.Instances()
        var capture = TraceSide.Instances()
        for _ in 0..<count {
            let noise = 1 + (generator.uniform() - 0.5) * 0.1
            apply.durations.append(duration * noise)
            apply.cpuTimes.append(cpu * noise)
            apply.blockedTimes.append((duration - cpu) * noise)
            capture.durations.append(4e6 * (1 + (generator.uniform() - 0.5) * 0.1))
        }
        apply.stacks = stacks
        apply.nanosecondsPerSample = 1e6
        side.names = ["lens apply": apply, "capture frame": capture]
        return side
    }

    static let before: [[String]: Int] = [["worker", "apply(_:)", "applyBand"]: 3000]
    static let after: [[String]: Int] = [
        ["worker", "apply(_:)", "applyBand"]: 3000, ["worker", "apply(_:)", "makeToneCurve()", "powf"]: 900,
    ]

    @Test func aSideAgainstItselfChangesNothing() {
        let side = Self.side(duration: 10e6, cpu: 9e6, stacks: Self.before, seed: 1)
        let comparison = TraceComparison(baseline: side, candidate: side)
        #expect(!comparison.hasChanges)
        #expect(comparison.headline.hasPrefix("no interval changed"))
        for change in comparison.intervals {
            #expect(change.duration.verdict == .unchanged && change.duration.shift?.ratio == 1)
            #expect(change.functions.isEmpty)
        }
        let graph = comparison.flameGraphs.first
        #expect(graph?.frames.allSatisfy { $0.change == .unchanged } == true)
    }

    @Test func aSlowerIntervalIsCalledSlowerAndNamesTheFunctionNewInsideIt() throws {
        let baseline = Self.side(duration: 10e6, cpu: 9e6, stacks: Self.before, seed: 1)
        let candidate = Self.side(duration: 13e6, cpu: 12e6, stacks: Self.after, seed: 2)
        let comparison = TraceComparison(baseline: baseline, candidate: candidate)
        let apply = try #require(comparison.intervals.first)
        #expect(apply.name == "lens apply" && apply.duration.verdict == .slower)
        #expect(apply.cpuTime?.verdict == .slower)
        #expect(apply.blockedTime?.verdict == .unchanged)
        let ratio = try #require(apply.duration.shift?.ratio)
        #expect(abs(ratio - 1.3) < 0.03, "\(ratio)")
        #expect(comparison.intervals.last?.duration.verdict == .unchanged)
        let first = try #require(apply.functions.first)
        #expect(first.change == .new && ["makeToneCurve()", "powf"].contains(first.function))
        #expect(apply.functions.contains { $0.function == "makeToneCurve()" && $0.change == .new })
        // 900 samples of 1 ms over 300 instances: 3 ms per instance.
        #expect(apply.functions.contains { $0.function == "makeToneCurve()" && abs($0.candidate - 3e6) < 1 })
        // The callers whose change makeToneCurve() carries give way to it.
        #expect(!apply.functions.contains { ["worker", "apply(_:)"].contains($0.function) }, "\(apply.functions)")
        let graph = try #require(comparison.flameGraphs.first)
        #expect(graph.frames.first { $0.name == "makeToneCurve()" }?.change == .new)
        let text = comparison.renderText()
        #expect(text.contains("lens apply") && text.contains("makeToneCurve()") && text.contains("slower"))
        #expect(comparison.renderJSON().contains("\"verdict\" : \"slower\""))
        let html = comparison.renderHTML()
        #expect(html.contains("<div class=\"flame\">") && html.contains("\"makeToneCurve()\""))
    }

    /// A spin four times as long, where a handful of functions (the
    /// tracer's own, a syscall) land one sample on one side and none on the
    /// other: the spin is named first, and a single sample is not a new or
    /// gone function.
    @Test func theFunctionThatMovedMostLeadsAndOneSampleIsNoChange() throws {
        var before: [[String]: Int] = [["main", "spin"]: 100]
        var after: [[String]: Int] = [["main", "spin"]: 400, ["main", "clock_gettime"]: 20]
        for name in ["end()", "defer", "record"] { before[["main", name]] = 1 }
        for name in ["begin()", "getrusage", "fill_rusage", "closure", "rusage"] { after[["main", name]] = 1 }
        let baseline = Self.side(duration: 10e6, cpu: 10e6, stacks: before, count: 10, seed: 1)
        let candidate = Self.side(duration: 40e6, cpu: 40e6, stacks: after, count: 10, seed: 2)
        let apply = try #require(TraceComparison(baseline: baseline, candidate: candidate).intervals.first)
        #expect(apply.duration.verdict == .slower)
        #expect(apply.functions.first?.function == "spin", "\(apply.functions)")
        #expect(apply.functions.map(\.function) == ["spin", "clock_gettime"], "\(apply.functions)")
    }

    @Test(.enabled(if: BrowserPage.available))
    func thePageRendersWithNoError() throws {
        let baseline = Self.side(duration: 10e6, cpu: 9e6, stacks: Self.before, seed: 1)
        let candidate = Self.side(duration: 13e6, cpu: 12e6, stacks: Self.after, seed: 2)
        let page = try BrowserPage(rendering: TraceComparison(baseline: baseline, candidate: candidate).renderHTML())
        #expect(page.errors.isEmpty, "\(page.errors)")
        #expect(page.dom.contains("<g class=\"f new deep\""))
    }
}
