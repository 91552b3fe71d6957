import Foundation
import StrobeResults
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement

/// The function that changed is named first wherever the test ran it: on
/// the runner's thread alone, on `concurrentPerform`'s worker threads, in a
/// task group's tasks; never the runner's own frames, the threads' entries
/// or a library, and when nothing is named the report says why.
@Suite struct WorkerThreadFunctionTests {
    static let runner =
        "(1) suspend resume partial function for StrobePerf.PerfRunner.runIteration(_:_:iteration:tracePath:"
        + "cpuProfile:profile:instructions:instructionProfile:measured:)"
    static let closure = "closure #1 in closure #1 in variable initialization expression of main.hashInParallel"
    static let digest = "main.Hashing.digest(_:)"
    static let mix = "main.Hashing.mix(_:)"

    /// A `concurrentPerform` of the hashing: a third of it on the runner's
    /// thread, two thirds on dispatch's workers; `digest` does `factor`
    /// times its work.
    static func parallel(factor: Double) -> [([String], Double)] {
        let main = ["start_thread", runner, "Dispatch.DispatchQueue.concurrentPerform(iterations:execute:)", closure]
        let worker = ["start_thread", "_dispatch_worker_thread", "_dispatch_root_queue_drain", closure]
        return [
            (main + [digest], 2.0e6 * factor), (main + [mix], 1.0e6), (main, 0.05e6),
            (worker + [digest], 4.0e6 * factor), (worker + [mix], 2.0e6), (worker, 0.1e6),
        ]
    }

    /// A task group's children run the hashing on the cooperative pool; the
    /// runner's frame awaits them.
    static func taskGroup(factor: Double) -> [([String], Double)] {
        let child = [
            "start_thread", "swift::runJobInEstablishedExecutorContext(swift::Job*)",
            "(1) await resume partial function for closure #1 in closure #1 in main.hashInTasks", "main.hash(_:)",
        ]
        return [
            ([runner], 0.02e6), (child + [digest], 6.0e6 * factor), (child + [mix], 3.0e6), (child, 0.1e6),
        ]
    }

    /// A measure block that is one call: the function holds all of the test.
    static func single(factor: Double) -> [([String], Double)] {
        [(["start_thread", runner, "closure #1 in main.hashOnce", digest], 5.0e6 * factor)]
    }

    static func compare(_ stacks: (Double) -> [([String], Double)], factor: Double) -> TestFunctionChanges {
        let base = (0..<3).map { InstructionFunctionTests.process(stacks(1), run: "b\($0)", round: $0) }
        let cand = (0..<3).map { InstructionFunctionTests.process(stacks(factor), run: "c\($0)", round: $0) }
        return FunctionComparison.compare(
            test: "apply lens", baselineInstructions: base, candidateInstructions: cand, options: ComparisonOptions())
    }

    /// Three baseline and three candidate processes whose stacks differ
    /// from process to process: `stacks(factor, process)` gives process
    /// 0–2 of the baseline (factor 1) and 3–5 of the candidate (`factor`).
    static func compare(
        test: String, factor: Double, _ stacks: (_ factor: Double, _ process: Int) -> [([String], Double)]
    ) -> TestFunctionChanges {
        let base = (0..<3).map { InstructionFunctionTests.process(stacks(1, $0), run: "b\($0)", round: $0) }
        let cand = (0..<3).map { InstructionFunctionTests.process(stacks(factor, $0 + 3), run: "c\($0)", round: $0) }
        return FunctionComparison.compare(
            test: test, baselineInstructions: base, candidateInstructions: cand, options: ComparisonOptions())
    }

    /// The build against itself (`compare(1)`) judges no thread pool frame
    /// and names nothing; with `digest` 2% slower (`compare(1.02)`) it is
    /// named first.
    static func expectNothingNamedThenDigestFirst(
        _ compare: (_ factor: Double) -> TestFunctionChanges, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let same = compare(1)
        #expect(
            !same.functions.contains { FunctionComparison.isThreadPoolFrame($0.function) },
            sourceLocation: sourceLocation)
        #expect(
            same.functions.allSatisfy { !$0.changed }, "\(same.functions.map(\.summary))",
            sourceLocation: sourceLocation)
        #expect(same.leading == nil, sourceLocation: sourceLocation)
        let changed = compare(1.02)
        #expect(
            changed.leading?.function == Self.digest, "\(changed.functions.map(\.summary))",
            sourceLocation: sourceLocation)
    }

    @Test(arguments: ["parallel", "task group", "single"])
    func aTwoPercentChangeIsNamedFirst(shape: String) throws {
        let stacks = shape == "parallel" ? Self.parallel : shape == "task group" ? Self.taskGroup : Self.single
        let result = Self.compare(stacks, factor: 1.02)
        let leading = try #require(result.leading, "\(result.functions.map(\.summary))")
        #expect(leading.function == Self.digest)
        #expect(result.listed().first?.function == Self.digest)
        #expect(!result.functions.contains { FunctionComparison.isRunnerFrame($0.function) })
        #expect(result.unnamedReason == nil)
    }

    @Test func anAAComparisonNamesNothingAndSaysWhy() {
        let result = Self.compare(Self.parallel, factor: 1)
        #expect(result.leading == nil)
        #expect(result.unnamedReason?.hasPrefix("too small") == true)
        #expect(DiffReport.noFunctionLine(result).hasPrefix("no function named: too small"))
    }

    /// A `concurrentPerform` whose calling thread takes a different share of
    /// the work in each process (a fifth to a half): the same build against
    /// itself judges no thread pool frame, whose amounts follow the share,
    /// and names nothing; a 2% change of `digest` is still named first.
    @Test func theShareEachThreadTookMovesNoFunction() throws {
        let main = ["start_thread", Self.runner, "Dispatch.DispatchQueue.concurrentPerform(iterations:execute:)"]
        let worker = ["start_thread", "_dispatch_worker_thread", "_dispatch_root_queue_drain"]
        func stacks(factor: Double, callerShare: Double) -> [([String], Double)] {
            let caller = main + ["dispatch_apply", "_dispatch_apply_invoke", Self.closure]
            let pool = worker + ["_dispatch_apply_invoke", Self.closure]
            return [
                (caller + [Self.digest], 6.0e6 * factor * callerShare), (caller + [Self.mix], 3.0e6 * callerShare),
                (pool + [Self.digest], 6.0e6 * factor * (1 - callerShare)),
                (pool + [Self.mix], 3.0e6 * (1 - callerShare)),
            ]
        }
        let shares = [0.2, 0.5, 0.35, 0.45, 0.25, 0.3]
        func compare(factor: Double) -> TestFunctionChanges {
            Self.compare(test: "hash in parallel", factor: factor) { stacks(factor: $0, callerShare: shares[$1]) }
        }
        Self.expectNothingNamedThenDigestFirst(compare)
    }

    /// ProfileSuite's `parse in parallel`, as callgrind counted it: the
    /// measure block (`closure #10`, called by the runner) calls
    /// `concurrentPerform`, whose work items run under their own closure on
    /// every thread; the block holds only the calling thread's items, 4 or 3
    /// of 8 from process to process. The same build against itself names
    /// nothing (it named the block in 6 of 10 comparisons); a 2% change of
    /// `digest` is still named first.
    @Test func theMeasureBlockOfAParallelTestIsNotJudged() throws {
        let block = "closure #10 @Sendable in ProfileSuite"
        let item = "partial apply forwarder for closure #1 @Sendable in closure #10 @Sendable in ProfileSuite"
        func stacks(factor: Double, callerItems: Double) -> [([String], Double)] {
            let caller = [
                "start_thread", Self.runner, block, "Dispatch.DispatchQueue.concurrentPerform(iterations:execute:)",
                "dispatch_apply", "_dispatch_apply_invoke", item,
            ]
            let pool = [
                "start_thread", "_dispatch_worker_thread", "_dispatch_root_queue_drain", "_dispatch_apply_invoke", item,
            ]
            let share = callerItems / 8
            return [
                (caller + [Self.digest], 8.0e6 * factor * share), (caller + [Self.mix], 4.0e6 * share),
                (pool + [Self.digest], 8.0e6 * factor * (1 - share)), (pool + [Self.mix], 4.0e6 * (1 - share)),
            ]
        }
        // The candidate's processes take the items in the other order.
        let items: [Double] = [4, 3, 4, 4, 3, 3]
        func compare(factor: Double) -> TestFunctionChanges {
            Self.compare(test: "parse in parallel", factor: factor) { stacks(factor: $0, callerItems: items[$1]) }
        }
        let same = compare(factor: 1)
        #expect(!same.functions.contains { $0.function == block }, "\(same.functions.map(\.summary))")
        #expect(same.functions.allSatisfy { !$0.changed }, "\(same.functions.map(\.summary))")
        let changed = compare(factor: 1.02)
        #expect(changed.leading?.function == Self.digest, "\(changed.functions.map(\.summary))")
    }

    /// ProfileSuite's `parse in two threads` against itself, as callgrind
    /// counted it with one core busy: each worker's exit empties its
    /// allocator cache in `__libc_thread_freeres`, 18,837 instructions in
    /// one process and 2,912 in another, as the heap's history left it
    /// (just past the floor of a 12.5 M test, where it was named). A
    /// thread's exit is not judged; a 2% change of `digest` is still named.
    @Test func aThreadsExitIsNotJudged() throws {
        let exit = ["start_thread", "__libc_thread_freeres", "__malloc_arena_thread_freeres"]
        func stacks(factor: Double, exitCost: Double) -> [([String], Double)] {
            let worker = ["start_thread", "closure #1 in main.parseInTwoThreads"]
            return [
                (worker + [Self.digest], 8.0e6 * factor), (worker + [Self.mix], 4.5e6),
                (exit, exitCost * 0.02), (exit + ["free"], exitCost * 0.98),
            ]
        }
        let costs: [Double] = [18_837, 18_838, 18_840, 2_912, 2_913, 2_911]
        func compare(factor: Double) -> TestFunctionChanges {
            Self.compare(test: "parse in two threads", factor: factor) { stacks(factor: $0, exitCost: costs[$1]) }
        }
        Self.expectNothingNamedThenDigestFirst(compare)
    }

    @Test func threadPoolFramesAreKnownByName() {
        for frame in [
            "start_thread", "clone3", "_dispatch_worker_thread", "_dispatch_worker_thread2.cold.1",
            "_dispatch_root_queue_drain", "dispatch_apply",
            "Dispatch.DispatchQueue.concurrentPerform(iterations:execute:)",
            "swift::runJobInEstablishedExecutorContext(swift::Job*)", "swift_job_run", "__libc_thread_freeres",
            "__malloc_arena_thread_freeres", "__nptl_deallocate_tsd",
        ] {
            #expect(FunctionComparison.isThreadPoolFrame(frame), "\(frame)")
        }
        for frame in [
            Self.closure, Self.digest, Self.runner, "Swift.MutableCollection.sort()", "memcpy", "swift_retain",
        ] {
            #expect(!FunctionComparison.isThreadPoolFrame(frame), "\(frame)")
        }
    }

    @Test func aLibraryAloneIsNotNamedAndTheReasonSaysSo() {
        let root = ["start_thread", Self.runner, "closure #1 in main.sortThem"]
        let stacks = { (factor: Double) -> [([String], Double)] in
            [(root + ["Swift.MutableCollection.sort()"], 4.0e6 * factor), (root + ["main.prepare()"], 4.0e6)]
        }
        let result = Self.compare(stacks, factor: 1.1)
        #expect(result.leading == nil)
        #expect(result.unnamedReason?.hasPrefix("library code only: Swift.MutableCollection.sort()") == true)
    }

    /// A helper all of the test's functions call holds the whole test, but
    /// is no wrapper of it: the function that calls it more is named.
    @Test func aHelperEveryFunctionCallsGivesWayToItsCaller() throws {
        let root = ["start_thread", Self.runner, "closure #1 in main.parse"]
        let stacks = { (factor: Double) -> [([String], Double)] in
            [
                (root + ["main.tokenize()", "main.churn()"], 6.0e6 * factor),
                (root + ["main.index()", "main.churn()"], 3.0e6),
            ]
        }
        let result = Self.compare(stacks, factor: 1.1)
        #expect(result.leading?.function == "main.tokenize()", "\(result.functions.map(\.summary))")
    }

    @Test func theRunnersFramesAreKnownByTheirOwner() {
        #expect(FunctionComparison.isRunnerFrame(Self.runner))
        #expect(FunctionComparison.isRunnerFrame("closure #2 in StrobePerf.PerfRunner.run(_:)"))
        #expect(FunctionComparison.isRunnerFrame("static StrobePerf.PerfRunner.measure(_:_:)"))
        #expect(!FunctionComparison.isRunnerFrame(Self.closure))
        #expect(!FunctionComparison.isRunnerFrame(Self.digest))
        #expect(!FunctionComparison.isRunnerFrame("_dispatch_worker_thread"))
        #expect(FunctionComparison.isClosureFrame(Self.closure))
        #expect(FunctionComparison.isClosureFrame("(1) await resume partial function for closure #1 in main.f"))
        #expect(!FunctionComparison.isClosureFrame(Self.digest))
    }
}
