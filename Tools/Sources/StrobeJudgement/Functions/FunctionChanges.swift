import Foundation
import StrobeResults
import StrobeStatistics

/// How one function's CPU time per iteration changed: the difference of the
/// sides' means, judged with the process as the replicate.
public struct FunctionChange: Sendable, Hashable, Codable {
    /// The function, as the profile names it (`LensKit.Lens.makeToneCurve()`).
    public var function: String
    /// Mean CPU time per iteration with the function on the stack
    /// (inclusive), in nanoseconds, over the baseline's processes.
    public var baseline: Double
    /// The same over the candidate's processes.
    public var candidate: Double
    /// The estimated change, candidate − baseline, in nanoseconds per
    /// iteration (paired by round when rounds are given).
    public var change: Double
    /// The confidence interval of ``change``.
    public var lower: Double
    /// The upper end of that interval.
    public var upper: Double
    /// The test's p-value.
    public var pValue: Double
    /// That p-value adjusted by Benjamini–Hochberg across the test's functions.
    public var adjustedPValue: Double
    /// Whether the change is decided: adjusted p-value at most the level and
    /// the change past the floor.
    public var changed: Bool
    /// Where to look instead: a changed callee that accounts for at least
    /// 2/3 of this function's change, or, for a library's function (one of
    /// the standard library, the C library, code with no symbol), the
    /// changed caller whose own code calls it more.
    public var explainedBy: String?
    /// What the numbers count: CPU time in nanoseconds, or instructions.
    public var unit: FunctionUnit = .nanoseconds

    /// No baseline process sampled it.
    public var isNew: Bool { baseline == 0 && candidate > 0 }
    /// No candidate process sampled it.
    public var isGone: Bool { candidate == 0 && baseline > 0 }

    /// "new", "gone", "slower", "faster" or "unchanged".
    public var label: String {
        guard changed else { return "unchanged" }
        if isNew { return "new" }
        if isGone { return "gone" }
        return change > 0 ? "slower" : "faster"
    }

    /// `LensKit.Lens.makeToneCurve() +21.3 ms [+19.8, +22.9] new`.
    public var summary: String {
        [function, signedChange, interval, label].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// The change in its unit: `+21.3 ms`, `+84.0 K instructions`.
    public var signedChange: String { unit.signed(change) }

    /// `[+19.8, +22.9]`: the interval in the unit ``change`` is shown in;
    /// empty when its ends print as one number (a count that repeats in
    /// every process: the difference is exact, as `+39.2 M instructions`
    /// says without `[+39.2, +39.2]`).
    public var interval: String {
        let low = unit.signed(lower, unit: false, scaledAs: change)
        let high = unit.signed(upper, unit: false, scaledAs: change)
        return low == high ? "" : "[\(low), \(high)]"
    }

    /// A signed duration in the unit that suits it (or that suits
    /// `reference`): `+21.3 ms`, `-480 µs`.
    package static func signed(_ nanoseconds: Double, unit: Bool = true, scaledAs reference: Double? = nil) -> String {
        FunctionUnit.nanoseconds.signed(nanoseconds, unit: unit, scaledAs: reference)
    }
}

/// The functions behind one test's verdict: each function's change in
/// inclusive CPU time per iteration, most telling first.
public struct TestFunctionChanges: Sendable, Hashable, Codable {
    /// The test (`TEST`, with ` [GROUP]` under `--group-by`).
    public var test: String
    /// Processes profiled on each side.
    public var baselineProcesses: Int
    /// Processes profiled on the candidate's side.
    public var candidateProcesses: Int
    /// The test's mean sampled CPU time per iteration, baseline side, in
    /// nanoseconds (its instructions per iteration, with ``unit``
    /// ``FunctionUnit/instructions``).
    public var baselineCPU: Double
    /// The same on the candidate's side.
    public var candidateCPU: Double
    /// The smallest change called a change, per iteration, in ``unit``.
    public var floor: Double
    /// Every function judged: the changed ones not explained by a callee
    /// first (largest change first), then the rest (largest change first).
    public var functions: [FunctionChange]
    /// What the numbers count: sampled CPU time, or counted instructions.
    public var unit: FunctionUnit = .nanoseconds

    /// What a report lists: the changed functions that no callee explains,
    /// then the largest unchanged ones until there are `minimum` rows, at
    /// most `limit` rows.
    public func listed(limit: Int = 5, minimum: Int = 3) -> [FunctionChange] {
        let lead = functions.filter { $0.changed && $0.explainedBy == nil }
        let rest = functions.filter { !$0.changed }.sorted { ($0.baseline, $0.function) > ($1.baseline, $1.function) }
        return Array((lead + rest.prefix(max(minimum - lead.count, 0))).prefix(limit))
    }

    /// The function a reader should look at first: the largest change of
    /// the code under test that no changed callee explains; nil when nothing
    /// changed, or only a library's code (``unnamedReason`` says why).
    public var leading: FunctionChange? {
        functions.first { $0.changed && $0.explainedBy == nil && !FunctionComparison.isLibrary($0.function) }
    }
}

/// Judges the functions of a profiled test: each function's inclusive CPU
/// time per iteration (its samples × the time a sample stands for ÷ the
/// iterations), one value per process, compared as ``ReplicateTest``
/// compares a metric's replicates (paired by round, Welch's test
/// otherwise) on the linear scale, with Benjamini–Hochberg across the
/// test's functions at the comparison's level.
public enum FunctionComparison {
    /// A function is judged when it holds at least this share of the test's
    /// CPU time on either side: smaller ones cannot explain a verdict.
    public static let smallestShare = 0.01
    /// A function that holds at least this share of the test's samples on
    /// both sides wraps the whole test (the thread's entry, the measure
    /// block's closure): its change is the test's own, which the verdict
    /// already says. The innermost such function of the code under test is
    /// judged still (``wrappers(holding:among:callees:)``).
    public static let wrapperShare = 0.98
    /// A changed callee explains a function when its change is at least this
    /// share of the function's, in the same direction: two thirds.
    public static let explainedShare = 2.0 / 3

    /// The functions behind the verdict of each test in `tests` that both
    /// sides profiled, keyed by test name (`TEST` or `TEST [GROUP]`).
    ///
    /// The floor of a change is a quarter of `options.minimumEffect` of the
    /// test's baseline CPU time per iteration (0.5% at the default 2%): a
    /// function's change counts when it moves the test by that much.
    public static func changes(
        tests: [TestVerdict], baseline: [ProcessProfile], candidate: [ProcessProfile], groupBy: String?,
        options: ComparisonOptions
    ) -> [String: TestFunctionChanges] {
        eachTest(tests, baseline: baseline, candidate: candidate, groupBy: groupBy) { verdict, base, cand in
            compare(test: verdict.displayName, baseline: base, candidate: cand, options: options)
        }
    }

    /// One test's functions, judged.
    public static func compare(
        test: String, baseline: [ProcessProfile], candidate: [ProcessProfile], options: ComparisonOptions
    ) -> TestFunctionChanges {
        let rule = Rule(
            unit: .nanoseconds, relativeFloor: options.minimumEffect / 4, smallestShare: smallestShare, tolerance: nil)
        return judge(test: test, baseline: baseline, candidate: candidate, rule: rule, options: options)
    }

    /// `compare` of each test in `tests` whose processes both sides have
    /// (of its group, under `groupBy`), keyed by test name (`TEST` or
    /// `TEST [GROUP]`).
    static func eachTest<Amounts>(
        _ tests: [TestVerdict], baseline: [ProcessFunctionProfile<Amounts>],
        candidate: [ProcessFunctionProfile<Amounts>], groupBy: String?,
        compare: (TestVerdict, [ProcessFunctionProfile<Amounts>], [ProcessFunctionProfile<Amounts>]) ->
            TestFunctionChanges
    ) -> [String: TestFunctionChanges] {
        var result: [String: TestFunctionChanges] = [:]
        for verdict in tests {
            func matches(_ process: ProcessFunctionProfile<Amounts>) -> Bool {
                process.test == verdict.test && (groupBy.map { process.dimensions[$0] ?? "" } ?? "") == verdict.group
            }
            let base = baseline.filter(matches)
            let cand = candidate.filter(matches)
            guard !base.isEmpty, !cand.isEmpty else { continue }
            result[verdict.displayName] = compare(verdict, base, cand)
        }
        return result
    }

    /// One test's functions, judged by `rule`: each process's amounts, and
    /// the calls of every process on either side.
    static func judge<Amounts: FunctionAmounts>(
        test: String, baseline: [ProcessFunctionProfile<Amounts>], candidate: [ProcessFunctionProfile<Amounts>],
        rule: Rule, options: ComparisonOptions
    ) -> TestFunctionChanges {
        func processes(_ side: [ProcessFunctionProfile<Amounts>]) -> [ProcessFunctions] {
            side.map { entry in
                ProcessFunctions(
                    id: entry.run, round: entry.round, total: entry.profile.totalPerIteration,
                    values: entry.profile.inclusivePerIteration)
            }
        }
        var callees: [String: Set<String>] = [:]
        for entry in baseline + candidate {
            callees.merge(entry.profile.callees) { $0.union($1) }
        }
        return judge(
            test: test, baseline: processes(baseline), candidate: processes(candidate), callees: callees, rule: rule,
            options: options)
    }

    /// The functions the runner's frames call directly, the measure block,
    /// through the thunks and partial applications that forward to it.
    /// `callees` holds every function below each one; a direct callee is
    /// one below no other function below the caller.
    static func measureBlocks(callees: [String: Set<String>]) -> Set<String> {
        func direct(_ caller: String) -> Set<String> {
            let below = callees[caller] ?? []
            let deeper = below.reduce(into: Set<String>()) { $0.formUnion((callees[$1] ?? []).subtracting([$1])) }
            return below.subtracting(deeper)
        }
        var blocks = Set(callees.keys.filter(isRunnerFrame).flatMap(direct).filter { !isRunnerFrame($0) })
        var forwarders = blocks.filter(isForwarder)
        while let forwarder = forwarders.popFirst() {
            for callee in direct(forwarder) where blocks.insert(callee).inserted && isForwarder(callee) {
                forwarders.insert(callee)
            }
        }
        return blocks
    }

    /// Whether `function` only forwards a call: a thunk or a partial
    /// application.
    static func isForwarder(_ function: String) -> Bool {
        ["thunk for ", "reabstraction thunk", "partial apply for ", "partial apply forwarder for "].contains {
            function.hasPrefix($0)
        }
    }

    /// One process's inclusive amount per iteration of each function of a
    /// test, and of the whole test, in the unit its source counts.
    struct ProcessFunctions {
        var id: String
        var round: Int?
        var total: Double
        var values: [String: Double]
    }

    /// How one source's amounts are judged.
    struct Rule {
        /// What the amounts count.
        var unit: FunctionUnit
        /// The floor of a function's change, as a share of the test's
        /// baseline total per iteration.
        var relativeFloor: Double
        /// The least share of the test a function must hold on a side to
        /// be judged.
        var smallestShare: Double
        /// The relative spread across a side's processes up to which a
        /// function's amount is judged as deterministic (counted
        /// instructions); nil for sampled amounts.
        var tolerance: Double?
    }

    /// The one judging path of both sources: each function's amounts, one
    /// per process, compared as a metric's replicates (or, within the
    /// rule's tolerance, as a deterministic count), Benjamini–Hochberg
    /// across the test's functions, then the explanations down and up the
    /// call tree.
    static func judge(
        test: String, baseline base: [ProcessFunctions], candidate cand: [ProcessFunctions],
        callees: [String: Set<String>], rule: Rule, options: ComparisonOptions
    ) -> TestFunctionChanges {
        func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }
        let baseTotal = mean(base.map(\.total))
        let candTotal = mean(cand.map(\.total))
        let floor = rule.relativeFloor * baseTotal
        // The runner's own frames, the measure block the runner calls, and a
        // thread pool's frames are never judged: what they hold is the part
        // of the test that ran on one thread or another (the block of a test
        // that hands its work to a `concurrentPerform` holds the measuring
        // thread's share, 4 or 3 of 8 work items from process to process);
        // the work itself is under the test's functions, which sum every
        // thread.
        let allNames = Set(base.flatMap(\.values.keys) + cand.flatMap(\.values.keys))
        let measureBlocks = Self.measureBlocks(callees: callees)
        let names = allNames.filter { !isRunnerFrame($0) && !isThreadPoolFrame($0) && !measureBlocks.contains($0) }
        func sideMeans(_ name: String) -> (base: Double, cand: Double) {
            (mean(base.map { $0.values[name] ?? 0 }), mean(cand.map { $0.values[name] ?? 0 }))
        }
        let wrapping = wrappers(
            holding: { name in
                let (baseMean, candMean) = sideMeans(name)
                return (baseTotal > 0 ? baseMean / baseTotal : 0, candTotal > 0 ? candMean / candTotal : 0)
            }, among: allNames, callees: callees)
        var judged: [(name: String, base: Double, cand: Double, test: ReplicateTestResult)] = []
        for name in names.sorted() where !wrapping.contains(name) {
            let (baseMean, candMean) = sideMeans(name)
            let share = max(baseTotal > 0 ? baseMean / baseTotal : 0, candTotal > 0 ? candMean / candTotal : 0)
            guard share >= rule.smallestShare else { continue }
            let replicates = { (side: [ProcessFunctions]) in
                side.map { Replicate(id: $0.id, round: $0.round, samples: [$0.values[name] ?? 0]) }
            }
            let result =
                rule.tolerance.flatMap {
                    ReplicateTest.withinTolerance(
                        baseline: replicates(base), candidate: replicates(cand), tolerance: $0, logScaleAllowed: false)
                }
                ?? ReplicateTest.compare(
                    baseline: replicates(base), candidate: replicates(cand), summary: .median, logScaleAllowed: false)
            judged.append((name, baseMean, candMean, result))
        }
        let adjusted = MultipleComparisons.benjaminiHochberg(judged.map(\.test.pValue))
        var functions = zip(judged, adjusted).map { entry, adjustedP in
            let interval = entry.test.interval(confidence: 1 - options.alpha)
            return FunctionChange(
                function: entry.name, baseline: entry.base, candidate: entry.cand, change: entry.test.estimate,
                lower: interval.lower, upper: interval.upper, pValue: entry.test.pValue, adjustedPValue: adjustedP,
                changed: adjustedP <= options.alpha && abs(entry.test.estimate) >= floor && floor > 0,
                explainedBy: nil, unit: rule.unit)
        }
        // Down the call tree: a changed function is explained by a callee
        // (not a library's) that changed in the same direction by 2/3 of
        // as much or more. A callee Benjamini–Hochberg did not call changed
        // can still explain it when its own p-value, Bonferroni-adjusted
        // over the callees that could (hierarchical testing: the callees are
        // tested only because their caller was found changed), is at most
        // the level; it is then changed too, and its callees are tried in
        // turn.
        var settled = false
        while !settled {
            settled = true
            for index in functions.indices where functions[index].changed && functions[index].explainedBy == nil {
                let function = functions[index]
                let below = callees[function.function] ?? []
                let candidates = functions.indices.filter { other in
                    let callee = functions[other]
                    return below.contains(callee.function) && !isLibrary(callee.function)
                        && !isClosure(callee.function, in: function.function)
                        && callee.change * function.change > 0
                        && abs(callee.change) >= explainedShare * abs(function.change) && abs(callee.change) >= floor
                }
                let passing = candidates.filter {
                    functions[$0].changed || functions[$0].pValue * Double(candidates.count) <= options.alpha
                }
                guard let chosen = passing.max(by: { abs(functions[$0].change) < abs(functions[$1].change) }) else {
                    continue
                }
                functions[index].explainedBy = functions[chosen].function
                if !functions[chosen].changed {
                    functions[chosen].changed = true
                    settled = false
                }
            }
        }
        // A library's change inside a changed caller of the code under test
        // (more calls to `IndexingIterator.next()` from a loop that runs
        // longer) is that caller's: it points there.
        for index in functions.indices
        where functions[index].changed && functions[index].explainedBy == nil && isLibrary(functions[index].function) {
            let library = functions[index]
            let callers = functions.filter { caller in
                caller.changed && !isLibrary(caller.function)
                    && (callees[caller.function] ?? []).contains(library.function)
                    && caller.change * library.change > 0
            }
            // The innermost of them: the one no other of them is below.
            let innermost = callers.filter { caller in
                !callers.contains { other in
                    other.function != caller.function && (callees[caller.function] ?? []).contains(other.function)
                }
            }
            functions[index].explainedBy = innermost.max { abs($0.change) < abs($1.change) }?.function
        }
        // The code under test before the libraries it calls: a library's
        // change is also its caller's, whose name says more.
        functions.sort { a, b in
            let aLeads = a.changed && a.explainedBy == nil
            let bLeads = b.changed && b.explainedBy == nil
            if aLeads != bLeads { return aLeads }
            if aLeads, isLibrary(a.function) != isLibrary(b.function) { return !isLibrary(a.function) }
            if a.changed != b.changed { return a.changed }
            return (abs(a.change), b.function) > (abs(b.change), a.function)
        }
        return TestFunctionChanges(
            test: test, baselineProcesses: base.count, candidateProcesses: cand.count, baselineCPU: baseTotal,
            candidateCPU: candTotal, floor: floor, functions: functions, unit: rule.unit)
    }

    /// Whether `callee` is a closure written inside `function` (`closure #1
    /// in closure #2 in F` inside `F`): its time is the function's own, and
    /// the function's name is the one a reader looks for.
    public static func isClosure(_ callee: String, in function: String) -> Bool {
        callee.hasPrefix("closure #") && callee.hasSuffix(" in " + function)
            || callee.hasPrefix("partial apply for closure #") && callee.hasSuffix(" in " + function)
    }

    /// Whether `function` is the standard library's, Foundation's, the C
    /// library's or code no symbol names: such a callee does not explain
    /// the change of the code that called it (a slower `Array.append` says
    /// less than the function that appends more).
    public static func isLibrary(_ function: String) -> Bool {
        var name = Substring(function)
        let wrappers = [
            "generic specialization ", "function signature specialization ", "specialized ",
            "partial apply forwarder for ", "merged ",
        ]
        while let prefix = wrappers.first(where: { name.hasPrefix($0) }) {
            // "generic specialization <...> of NAME": skip to NAME.
            if prefix.hasSuffix("specialization "), let of = name.range(of: "> of ") {
                name = name[of.upperBound...]
            } else {
                name = name.dropFirst(prefix.count)
            }
        }
        if name.hasPrefix("static ") { name = name.dropFirst("static ".count) }
        name = withoutOutlinedPart(name)
        if name.hasSuffix("(no symbol)") { return true }
        let modules = [
            "Swift.", "Foundation.", "FoundationEssentials.", "FoundationInternationalization.", "_Concurrency.",
            "Dispatch.", "Synchronization.", "_StringProcessing.", "Glibc.", "Strobe.",
        ]
        if modules.contains(where: { name.hasPrefix($0) }) { return true }
        // A C symbol (`powf`, `__memmove_avx_unaligned`) has no module.
        return !name.contains(".")
    }

    /// `name` without the suffixes a compiler gives the parts it outlines
    /// or clones of a function (`_dispatch_worker_thread.cold.5`,
    /// `memcpy.part.0`, `f.isra.0`, `g.constprop.3`): the part belongs to
    /// the function it was cut from.
    static func withoutOutlinedPart(_ name: Substring) -> Substring {
        var name = name
        let parts = [".cold", ".part", ".isra", ".constprop", ".lto_priv", ".localalias"]
        while true {
            var trimmed = name
            while let last = trimmed.last, last.isNumber { trimmed = trimmed.dropLast() }
            if trimmed.hasSuffix("."), trimmed.count < name.count { trimmed = trimmed.dropLast() }
            guard let part = parts.first(where: { trimmed.hasSuffix($0) }), trimmed.count > part.count else {
                return name
            }
            name = trimmed.dropLast(part.count)
        }
    }
}
