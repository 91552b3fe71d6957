import Foundation

/// Which functions of a profile can be named as the one behind a change:
/// not the perf runner's own frames, not the wrappers around the whole test
/// but the innermost one, not a library's code.
extension FunctionComparison {
    /// Whether `function` is the perf runner's own (StrobePerf's: the loop
    /// that calls the measure block, `(1) suspend resume partial function
    /// for StrobePerf.PerfRunner.runIteration(...)`, a closure in it). Its
    /// inclusive amount is whatever part of the test ran on the runner's
    /// thread (all of it for a single-threaded test, the main thread's share
    /// of a `concurrentPerform`), never code under test, so it is not judged.
    public static func isRunnerFrame(_ function: String) -> Bool {
        ownerName(of: function).hasPrefix("StrobePerf.")
    }

    /// Whether `function` is a thread pool's machinery, whose inclusive
    /// amount is whichever share of the test's parallel work ran under it:
    /// a thread's entry (`start_thread`, `clone3`), a worker's loop
    /// (`_dispatch_worker_thread`, `_dispatch_root_queue_drain`, the
    /// cooperative pool's `swift::runJobInEstablishedExecutorContext`) or
    /// the call that hands work to the workers and does a share itself
    /// (`DispatchQueue.concurrentPerform`, `dispatch_apply`). Which thread
    /// takes which part moves from process to process with the scheduler
    /// (the calling thread's share of ProfileSuite's `concurrentPerform` was
    /// 3 million instructions apart between two processes of one build under
    /// callgrind, on an Intel Xeon at load 1.6 to 2.3), so its amount
    /// moves without the code; the work is judged in the functions under it,
    /// whose amounts sum every thread. So is a thread's exit in glibc
    /// (`__libc_thread_freeres`, which empties the thread's allocator cache,
    /// and the destructors of its thread-local data), whose amount is what
    /// the heap's history left in that cache: 18,837 instructions in one
    /// process of ProfileSuite's two-thread test and 2,912 in another of the
    /// same build, under callgrind on an Intel Xeon with one core busy.
    public static func isThreadPoolFrame(_ function: String) -> Bool {
        let name = withoutOutlinedPart(ownerName(of: function))
        let prefixes = [
            "_dispatch_", "dispatch_", "Dispatch.DispatchQueue.concurrentPerform",
            "Dispatch.DispatchQueue._concurrentPerform", "swift::runJobInEstablishedExecutorContext",
            "swift_job_run", "(below main)",
        ]
        if prefixes.contains(where: { name.hasPrefix($0) }) { return true }
        let entries = ["start_thread", "clone", "clone3", "__clone", "__clone3", "thread_start"]
        let exits = [
            "__libc_thread_freeres", "__malloc_arena_thread_freeres", "tcache_thread_shutdown",
            "__nptl_deallocate_tsd", "__call_tls_dtors",
        ]
        return entries.contains(String(name)) || exits.contains(String(name))
    }

    /// The function a frame's code belongs to: `function` without the words
    /// a compiler puts before a closure, a thunk, a specialization or an
    /// async function's part (`(1) suspend resume partial function for F`,
    /// `closure #2 in closure #1 in F`, `partial apply for F`: F).
    static func ownerName(of function: String) -> Substring {
        var name = Substring(function)
        let prefixes = [
            "partial apply for ", "partial apply forwarder for ", "specialized ", "merged ", "static ",
            "async function pointer to ", "thunk for ", "implicit closure #", "closure #", "generic specialization ",
            "function signature specialization ", "suspend resume partial function for ",
            "await resume partial function for ",
        ]
        while true {
            // "(1) suspend resume partial function for F": drop the "(1) ".
            if name.hasPrefix("("), let close = name.firstIndex(of: ")"),
                name[name.index(after: name.startIndex)..<close].allSatisfy(\.isNumber)
            {
                name = name[name.index(after: close)...].drop { $0 == " " }
                continue
            }
            guard let prefix = prefixes.first(where: { name.hasPrefix($0) }) else { return name }
            if prefix.hasSuffix("#") || prefix.hasSuffix("specialization ") {
                // "closure #1 in F", "generic specialization <Int> of F": F.
                let marker = prefix.hasSuffix("#") ? " in " : "> of "
                guard let range = name.range(of: marker) else { return name }
                name = name[range.upperBound...]
            } else {
                name = name.dropFirst(prefix.count)
            }
        }
    }

    /// Whether `function` is a closure (`closure #1 in F`, its async parts
    /// and thunks included): a measure block is one, and when it holds the
    /// whole test its change is the test's.
    static func isClosureFrame(_ function: String) -> Bool {
        var name = Substring(function)
        for prefix in ["partial apply for ", "specialized "] where name.hasPrefix(prefix) {
            name = name.dropFirst(prefix.count)
        }
        if name.hasPrefix("("), let close = name.firstIndex(of: ")") {
            name = name[name.index(after: close)...].drop { $0 == " " }
            for part in ["suspend resume partial function for ", "await resume partial function for "]
            where name.hasPrefix(part) {
                name = name.dropFirst(part.count)
            }
        }
        return name.hasPrefix("closure #") || name.hasPrefix("implicit closure #")
    }

    /// The functions judged as wrapping the whole test: those holding at
    /// least ``wrapperShare`` of it on both sides, but the innermost of them
    /// (one none of whose callees wraps the test too) when it is a named
    /// function of the code under test, not the measure block's closure: a
    /// measure block that is one function call holds all of the test in
    /// that function, which is the one a reader looks for.
    static func wrappers(
        holding share: (String) -> (base: Double, cand: Double), among names: Set<String>,
        callees: [String: Set<String>]
    ) -> Set<String> {
        let wrapping = names.filter { name in
            let (base, cand) = share(name)
            return base >= wrapperShare && cand >= wrapperShare
        }
        // The innermost link of the chain of wrappers (`callees` holds every
        // function below one, directly or not): a wrapper none of whose
        // callees wraps the test, through which the wrappers above it call
        // everything they call. A helper every function of the test funnels
        // into (a loop all three call) holds the whole test too, but the
        // measure block also calls its callers, which say more.
        let innermost = wrapping.filter { name in
            let below = callees[name] ?? []
            return !isLibrary(name) && !isRunnerFrame(name) && !isClosureFrame(name)
                && below.allSatisfy { $0 == name || !wrapping.contains($0) }
                && wrapping.allSatisfy { other in
                    let calls = callees[other] ?? []
                    return other == name || !calls.contains(name) || calls.subtracting(wrapping).isSubset(of: below)
                }
        }
        return wrapping.subtracting(innermost)
    }
}

extension TestFunctionChanges {
    /// Why no function is named as the one behind the test's change, when
    /// none is (``leading`` is nil): only library code changed, the test
    /// moved by less than a function must, a function moved by the floor
    /// but not beyond the noise, or the change is spread over functions
    /// none of which moved by the floor.
    public var unnamedReason: String? {
        guard leading == nil else { return nil }
        let library = functions.filter { $0.changed && $0.explainedBy == nil }
        if let first = library.first {
            let more = library.count > 1 ? " and \(library.count - 1) more" : ""
            return "library code only: \(first.function)\(more) changed, called from no function of the code "
                + "under test that changed with it"
        }
        let moved = abs(candidateCPU - baselineCPU)
        if moved < floor {
            return "too small: the test moved by \(unit.signed(candidateCPU - baselineCPU)) per iteration, "
                + "less than the \(unit.signed(floor).dropFirst()) one function must"
        }
        // A function that moved by the floor or more, but not surely.
        if let unsure = functions.first(where: { !$0.changed && abs($0.change) >= floor && floor > 0 }) {
            return "not told from the noise: \(unsure.function) moved by \(unsure.signedChange) \(unsure.interval), "
                + "an interval that holds no change"
        }
        return "spread over many functions: the test moved by \(unit.signed(candidateCPU - baselineCPU)) per "
            + "iteration, and none of its functions by \(unit.signed(floor).dropFirst()) or more"
    }
}
