import Foundation
import StrobeResults
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement
@testable import StrobeStatistics

/// The functions behind an instructions verdict: each function's inclusive
/// instructions per iteration, counted by a simulation, judged like the
/// count and explained like the sampled profile.
@Suite struct InstructionFunctionTests {
    /// A simulated process's counts of "apply lens": per stack (outermost
    /// frame first) the instructions its innermost frame executes per
    /// iteration, each times `1 + jitter`.
    static func process(
        _ stacks: [([String], Double)], run: String, round: Int, jitter: Double = 0, iterations: Int = 5
    ) -> ProcessInstructions {
        var names: [String] = []
        var index: [String: Int] = [:]
        func id(_ name: String) -> Int {
            if let existing = index[name] { return existing }
            index[name] = names.count
            names.append(name)
            return names.count - 1
        }
        var exclusive: [Double] = []
        var inclusive: [Double] = []
        var calls: Set<InstructionProfile.Call> = []
        for (frames, perIteration) in stacks {
            let ids = frames.map(id)
            while exclusive.count < names.count {
                exclusive.append(0)
                inclusive.append(0)
            }
            let amount = perIteration * Double(iterations) * (1 + jitter)
            exclusive[ids[ids.count - 1]] += amount
            for frame in Set(ids) { inclusive[frame] += amount }
            for (caller, callee) in zip(ids, ids.dropFirst()) {
                calls.insert(InstructionProfile.Call(caller: caller, callee: callee))
            }
        }
        let profile = InstructionProfile(
            functions: names, exclusive: exclusive.map { UInt64($0.rounded()) },
            inclusive: inclusive.map { UInt64($0.rounded()) }, calls: Array(calls), iterations: iterations,
            total: UInt64(exclusive.reduce(0, +).rounded()))
        return ProcessInstructions(test: "apply lens", run: run, round: round, dimensions: [:], profile: profile)
    }

    static let root = ["main", "closure #1 in LensPerfTests.applyLens"]
    static let apply = root + ["LensKit.Lens.apply(to:rows:into:)"]
    static let baselineStacks: [([String], Double)] = [
        (apply + ["LensKit.Lens.grade(_:)"], 3.0e6),
        (apply, 2.0e6),
        (apply + ["LensKit.Lens.vignette(_:)"], 0.8e6),
        (apply + ["Swift.Array.append(_:)"], 0.2e6),
        (root + ["LensKit.Image.capture(frame:)"], 1.0e6),
    ]

    /// Three processes a side, each count off by a few parts in a million.
    static func compare(
        _ baseline: [([String], Double)], _ candidate: [([String], Double)]
    ) -> TestFunctionChanges {
        let jitters = [0.0, 2e-6, -3e-6]
        let base = jitters.enumerated().map { process(baseline, run: "b\($0)", round: $0, jitter: $1) }
        let cand = jitters.enumerated().map { process(candidate, run: "c\($0)", round: $0, jitter: -$1) }
        return FunctionComparison.compare(
            test: "apply lens", baselineInstructions: base, candidateInstructions: cand,
            options: ComparisonOptions())
    }

    @Test func theInnermostChangedFunctionLeadsAndItsLibraryCallIsItsOwn() throws {
        // A tone curve built on every call: 60 K instructions of its own,
        // 40 K more in the libm it calls.
        let candidate =
            Self.baselineStacks + [
                (Self.apply + ["LensKit.Lens.makeToneCurve()"], 60e3),
                (Self.apply + ["LensKit.Lens.makeToneCurve()", "powf"], 40e3),
            ]
        let changes = Self.compare(Self.baselineStacks, candidate)
        #expect(changes.unit == .instructions)
        #expect(abs(changes.floor - 7e6 * MetricDefaults.instructionFloor / 4) < 1)
        let leading = try #require(changes.leading)
        #expect(leading.function == "LensKit.Lens.makeToneCurve()")
        #expect(leading.isNew && leading.label == "new")
        #expect(leading.signedChange == "+100 K instructions")
        #expect(leading.lower == leading.change && leading.upper == leading.change)
        let byName = Dictionary(uniqueKeysWithValues: changes.functions.map { ($0.function, $0) })
        #expect(byName["LensKit.Lens.apply(to:rows:into:)"]?.explainedBy == "LensKit.Lens.makeToneCurve()")
        #expect(byName["powf"]?.explainedBy == "LensKit.Lens.makeToneCurve()")
        // The wrappers that hold the whole test are not listed.
        #expect(byName["main"] == nil && byName["closure #1 in LensPerfTests.applyLens"] == nil)
        // Functions that did not move are unchanged, however large.
        #expect(byName["LensKit.Lens.grade(_:)"]?.changed == false)
        #expect(changes.listed().first?.function == "LensKit.Lens.makeToneCurve()")
    }

    @Test func aColdLibraryPartNeverLeads() throws {
        #expect(FunctionComparison.isLibrary("_dispatch_worker_thread.cold.5"))
        #expect(FunctionComparison.isLibrary("memcpy.part.0"))
        #expect(!FunctionComparison.isLibrary("LensKit.Lens.vignette(_:)"))
        // 90 K more instructions in an outlined part of the C library,
        // under the vignette that calls it.
        let candidate =
            Self.baselineStacks + [
                (Self.apply + ["LensKit.Lens.vignette(_:)", "memcpy.part.0"], 90e3)
            ]
        let changes = Self.compare(Self.baselineStacks, candidate)
        let leading = try #require(changes.leading)
        #expect(leading.function == "LensKit.Lens.vignette(_:)")
        let cold = try #require(changes.functions.first { $0.function == "memcpy.part.0" })
        #expect(cold.changed && cold.explainedBy == "LensKit.Lens.vignette(_:)")
    }

    @Test func aReportPrefersCountedFunctionsAndLabelsThemInInstructions() throws {
        let (baseline, candidate) = InstructionGateTests.sides(cand: 4.08e6)
        var report = try Judgement.compare(
            baseline: baseline, candidate: candidate, look: InstructionGateTests.firstLook())
        let grown =
            Self.baselineStacks + [(Self.apply + ["LensKit.Lens.makeToneCurve()"], 84e3)]
        report.attachFunctionChanges(
            baseline: [], candidate: [],
            baselineInstructions: (0..<3).map { Self.process(Self.baselineStacks, run: "b\($0)", round: $0) },
            candidateInstructions: (0..<3).map { Self.process(grown, run: "c\($0)", round: $0) })
        let functions = try #require(report.functionChanges.first)
        #expect(functions.unit == .instructions)
        let text = report.renderText()
        #expect(text.contains("inclusive instructions per iteration"), "\(text)")
        #expect(text.contains("+84.0 K instructions"), "\(text)")
        #expect(report.renderMarkdown().contains("`LensKit.Lens.makeToneCurve()` +84.0 K instructions new"))
        #expect(report.renderHTML().contains("+84.0 K instructions"))
    }
}
