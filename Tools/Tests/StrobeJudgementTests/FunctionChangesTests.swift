import Foundation
import StrobeResults
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement
@testable import StrobeStatistics

/// The functions behind a verdict: each function's CPU time per iteration
/// judged with the process as the replicate.
@Suite struct FunctionChangesTests {
    /// A process's profile of "apply lens": per stack its expected samples
    /// per iteration, drawn with Poisson-like noise over `iterations` and a
    /// process-wide speed factor (noise between processes).
    static func process(
        _ stacks: [([String], Double)], run: String, round: Int, iterations: Int,
        generator: inout SeededGenerator
    ) -> ProcessProfile {
        var builder = CallStackProfileBuilder(nanosecondsPerSample: 1e9 / 999)
        let speed = exp(0.05 * generator.normal())
        for (frames, perIteration) in stacks {
            let expected = perIteration * Double(iterations) * speed
            let count = max(0, Int((expected + expected.squareRoot() * generator.normal()).rounded()))
            if count > 0 { builder.add(frames, samples: count) }
        }
        for _ in 0..<iterations { builder.finishIteration(lostSamples: 0, method: "perf_event") }
        return ProcessProfile(test: "apply lens", run: run, round: round, dimensions: [:], profile: builder.profile)
    }

    static let root = ["libc.so.6+0x891f4", "LensPipeline.main", "closure #1 in LensPerfTests.applyLens"]
    static let baselineStacks: [([String], Double)] = [
        (root + ["LensKit.Lens.apply(to:rows:into:)", "LensKit.Lens.grade(_:)"], 30),
        (root + ["LensKit.Lens.apply(to:rows:into:)"], 20),
        (root + ["LensKit.Lens.apply(to:rows:into:)", "LensKit.Lens.vignette(_:)"], 8),
        (root + ["LensKit.Lens.apply(to:rows:into:)", "Swift.Array.append(_:)"], 2),
        (root + ["LensKit.Image.capture(frame:)"], 10),
    ]
    /// The baseline with a tone curve built on every call: 12 samples per
    /// iteration in the builder, 8 more in the libm it calls.
    static let candidateStacks: [([String], Double)] =
        baselineStacks + [
            (root + ["LensKit.Lens.apply(to:rows:into:)", "LensKit.Lens.makeToneCurve()"], 12),
            (root + ["LensKit.Lens.apply(to:rows:into:)", "LensKit.Lens.makeToneCurve()", "libm.so.6+0x72c29"], 5),
            (root + ["LensKit.Lens.apply(to:rows:into:)", "LensKit.Lens.makeToneCurve()", "libm.so.6+0x72bad"], 3),
        ]

    static func sides(
        baseline: [([String], Double)], candidate: [([String], Double)], processes: Int = 8, iterations: Int = 5,
        seed: UInt64
    ) -> (base: [ProcessProfile], cand: [ProcessProfile]) {
        var generator = SeededGenerator(seed: seed)
        var base: [ProcessProfile] = []
        var cand: [ProcessProfile] = []
        for round in 0..<processes {
            base.append(
                process(baseline, run: "b\(round)", round: round, iterations: iterations, generator: &generator))
            cand.append(
                process(candidate, run: "c\(round)", round: round, iterations: iterations, generator: &generator))
        }
        return (base, cand)
    }

    /// A counted function whose count repeats in every process has an
    /// exact difference: no interval of no width beside it.
    @Test func anExactDifferenceIsToldWithoutAnIntervalOfNoWidth() {
        var exact = FunctionChange(
            function: "LensKit.Lens.makeToneCurve()", baseline: 0, candidate: 39.2e6, change: 39.2e6, lower: 39.2e6,
            upper: 39.2e6, pValue: 0, adjustedPValue: 0, changed: true, unit: .instructions)
        #expect(exact.interval.isEmpty)
        #expect(exact.summary == "LensKit.Lens.makeToneCurve() +39.2 M instructions new", "\(exact.summary)")
        exact.lower = 38.1e6
        #expect(exact.interval == "[+38.1, +39.2]", "\(exact.interval)")
    }

    @Test func theFunctionThatAppearedLeadsAndItsCallersGiveWay() throws {
        let (base, cand) = Self.sides(baseline: Self.baselineStacks, candidate: Self.candidateStacks, seed: 3)
        let result = FunctionComparison.compare(
            test: "apply lens", baseline: base, candidate: cand, options: ComparisonOptions())
        let leading = try #require(result.leading)
        #expect(leading.function == "LensKit.Lens.makeToneCurve()")
        #expect(leading.isNew && leading.label == "new")
        // 20 samples per iteration at 999 Hz: about 20 ms.
        #expect(abs(leading.change - 20e6) < 3e6)
        #expect(leading.lower < leading.change && leading.change < leading.upper)
        // Lens.apply changed by as much, all of it in the builder below it.
        let apply = try #require(result.functions.first { $0.function == "LensKit.Lens.apply(to:rows:into:)" })
        #expect(apply.changed && apply.explainedBy == "LensKit.Lens.makeToneCurve()")
        #expect(!result.listed().contains { $0.function == apply.function })
        // libm's addresses add up as one function, new, whose change is its
        // caller's.
        let libm = try #require(result.functions.first { $0.function == "libm.so.6 (no symbol)" })
        #expect(libm.changed && libm.isNew && libm.explainedBy == "LensKit.Lens.makeToneCurve()")
        #expect(result.listed().filter(\.changed).map(\.function) == ["LensKit.Lens.makeToneCurve()"])
        // The frames around the whole test are not judged.
        #expect(!result.functions.contains { $0.function == "LensPipeline.main" })
        let grade = try #require(result.functions.first { $0.function == "LensKit.Lens.grade(_:)" })
        #expect(!grade.changed)
    }

    @Test func anAAComparisonRarelyNamesAFunction() {
        var named = 0
        for seed in UInt64(1)...200 {
            let (base, cand) = Self.sides(baseline: Self.baselineStacks, candidate: Self.baselineStacks, seed: seed)
            let result = FunctionComparison.compare(
                test: "apply lens", baseline: base, candidate: cand, options: ComparisonOptions())
            if result.functions.contains(where: \.changed) { named += 1 }
        }
        // Benjamini–Hochberg at 1% across the functions: about 1% of
        // comparisons where nothing changed name a function.
        #expect(named <= 6, "\(named) of 200 A/A comparisons named a function")
    }

    /// Lens.grade(_:) holds 30 of the test's 70 samples per iteration; made
    /// 10% slower, it moves the test by 4%. Over 24 processes of 10
    /// iterations (about the rounds `strobe compare` runs to decide a 4%
    /// change here), with 5% noise between processes, it leads the list in
    /// about 3 comparisons of 4; in the others the evidence is short of the
    /// level and no function leads.
    @Test func aFunctionTenPercentSlowerIsFoundAmongOthers() throws {
        var slower = Self.baselineStacks
        slower[0].1 *= 1.10
        var led = 0
        for seed in UInt64(1)...20 {
            let (base, cand) = Self.sides(
                baseline: Self.baselineStacks, candidate: slower, processes: 24, iterations: 10, seed: seed)
            let result = FunctionComparison.compare(
                test: "apply lens", baseline: base, candidate: cand, options: ComparisonOptions())
            if result.leading?.function == "LensKit.Lens.grade(_:)" { led += 1 }
            // Another function never leads: short of evidence, none does.
            #expect(result.leading == nil || result.leading?.function == "LensKit.Lens.grade(_:)", "seed \(seed)")
        }
        #expect(led >= 14, "grade(_:) led in \(led) of 20")
    }

    /// A function that moved by the floor within noise wider than its move
    /// is not named, and the reason says the noise hid it.
    @Test func aMoveTheNoiseHidesIsNotNamedAndTheReasonSaysSo() {
        let root = ["start_thread", "closure #1 in main.parse"]
        let base = [(root + ["main.digest()"], 30.0), (root + ["main.mix()"], 30.0)]
        let cand = [(root + ["main.digest()"], 31.5), (root + ["main.mix()"], 30.0)]
        let (baseline, candidate) = Self.sides(baseline: base, candidate: cand, processes: 3, iterations: 2, seed: 11)
        let result = FunctionComparison.compare(
            test: "apply lens", baseline: baseline, candidate: candidate, options: ComparisonOptions())
        #expect(result.leading == nil, "\(result.functions.map(\.summary))")
        let reason = result.unnamedReason ?? ""
        #expect(reason.hasPrefix("not told from the noise: main.digest()"), "\(reason)")
    }

    @Test func librariesAndCodeWithoutSymbolsAreLibraries() {
        #expect(FunctionComparison.isLibrary("Swift.Array.append(_:)"))
        #expect(
            FunctionComparison.isLibrary(
                "generic specialization <Swift.SIMD4<Swift.Float>> of Swift.pointwiseMax(_:_:)"))
        #expect(FunctionComparison.isLibrary("powf"))
        #expect(
            FunctionComparison.isLibrary(
                "function signature specialization <Arg[3] = [Closure Propagated : $s7LensKit, Argument Types : "
                    + "[Swift.Optional<LensKit.Job>LensKit.LensPipeline]> of generic specialization <(), Swift.Never> "
                    + "of static Strobe.Trace.interval(_:capturing:_:)"))
        #expect(FunctionComparison.isLibrary("libm.so.6 (no symbol)"))
        #expect(!FunctionComparison.isLibrary("LensKit.Lens.makeToneCurve()"))
        #expect(!FunctionComparison.isLibrary("closure #1 in LensKit.Lens.apply(to:rows:into:)"))
        #expect(CallStackProfile.functionName("libm.so.6+0x72c29") == "libm.so.6 (no symbol)")
        #expect(CallStackProfile.functionName("0x00007f00dead") == "(no symbol)")
        #expect(CallStackProfile.functionName("Swift.Int.+ infix(_:_:)") == "Swift.Int.+ infix(_:_:)")
    }

    @Test func reportsListTheFunctionsUnderTheChangedTest() throws {
        let (base, cand) = Self.sides(baseline: Self.baselineStacks, candidate: Self.candidateStacks, seed: 5)
        var baseline = SampleSet()
        var candidate = SampleSet()
        var generator = SeededGenerator(seed: 9)
        for (index, profile) in (base + cand).enumerated() {
            let isBase = index < base.count
            let wall = (isBase ? 60e6 : 80e6) * exp(0.02 * generator.normal())
            var run = PerfRun(
                metadata: RunMetadata(suite: "lens", runID: profile.run, round: profile.round!),
                tests: [
                    PerfTestResult(
                        name: "apply lens",
                        metrics: [PerfMetric(name: "wall", unit: "ns", samples: [wall, wall * 1.01, wall * 0.99])])
                ])
            run.tests[0].profile = profile.profile
            if isBase { baseline.add(run, source: "b\(index)") } else { candidate.add(run, source: "c\(index)") }
        }
        let report = try Judgement.compare(baseline: baseline, candidate: candidate)
        #expect(report.tests.first?.outcome == .slower)
        let text = report.renderText()
        #expect(text.contains("functions behind the verdicts"))
        let line = try #require(text.split(separator: "\n").first { $0.contains("makeToneCurve") })
        #expect(line.contains("new") && line.contains("ms"))
        let markdown = report.renderMarkdown()
        #expect(markdown.contains("<details><summary>Functions behind apply lens: `LensKit.Lens.makeToneCurve()`"))
        let json = report.renderJSON()
        #expect(json.contains("\"functionChanges\"") && json.contains("\"explainedBy\""))
        #expect(report.renderHTML().contains("<table class=\"functions\">"))
        // Without profiles there is no section.
        var plain = report
        plain.functionChanges = []
        #expect(!plain.renderText().contains("functions behind"))
    }
}
