// A perf suite whose functions are known: "parse document" spends about 60%
// of its CPU time in Document.tokenize, 30% in Document.index and 10% in
// Document.render, each a fixed amount of arithmetic (not a fixed time), so
// the machine's noise reaches it as it reaches real code.
// PROFILE_SUITE_SLOWER=tokenize (or index, render) gives that function 10%
// more work: the truth `strobe compare --profile` is checked against.
// PROFILE_SUITE_SCALE (default 1: about 60 ms per iteration in release)
// scales the work of all three; PROFILE_SUITE_FACTOR (default 1.1) is the
// slower function's factor.
//
// Three more tests run the same functions in the shapes a suite's tests
// take, for the truth that the function named is the one that changed
// wherever it ran, and that counts repeat from process to process: "parse
// in parallel" splits the work over DispatchQueue.concurrentPerform's worker
// threads, "parse in tasks" over a task group's child tasks, and "index
// words" allocates (arrays and a dictionary of them) around the same calls.
//
// "parse in two threads" gives two worker threads half of "parse document"'s
// work each, inside intervals `parse worker 0` and `parse worker 1`, and
// joins them; PROFILE_SUITE_SERIAL=1 makes worker 1 wait for worker 0 before
// its work instead of after it (the same instructions and allocations): the
// truth the critical path metric is checked against.
import Dispatch
import Foundation
import Strobe
import StrobePerf
import Synchronization

/// The three functions, each a loop of a fixed number of steps.
enum Document {
    /// Steps per unit of work: about 1.5 ms in release on this machine
    /// kind, times PROFILE_SUITE_SCALE.
    static let stepsPerUnit = Int(1_000_000 * scale)

    @inline(never)
    static func tokenize(units: Double) -> UInt64 { churn(Int(units * Double(stepsPerUnit)), seed: 0x9E37) }

    @inline(never)
    static func index(units: Double) -> UInt64 { churn(Int(units * Double(stepsPerUnit)), seed: 0x85EB) }

    @inline(never)
    static func render(units: Double) -> UInt64 { churn(Int(units * Double(stepsPerUnit)), seed: 0xC2B2) }

    @inline(__always)
    private static func churn(_ steps: Int, seed: UInt64) -> UInt64 {
        var state = seed
        for step in 0..<steps {
            state = (state ^ UInt64(truncatingIfNeeded: step)) &* 0x2545_F491_4F6C_DD1D
            state ^= state >> 29
        }
        return state
    }
}

/// The function PROFILE_SUITE_SLOWER names, if any.
let slower = ProcessInfo.processInfo.environment["PROFILE_SUITE_SLOWER"] ?? ""
for name in [slower] where !name.isEmpty && !["tokenize", "index", "render"].contains(name) {
    FileHandle.standardError.write(Data("PROFILE_SUITE_SLOWER=\(name): expected tokenize, index or render\n".utf8))
    exit(2)
}

/// The factor PROFILE_SUITE_SCALE sets on all the work.
let scale = ProcessInfo.processInfo.environment["PROFILE_SUITE_SCALE"].flatMap(Double.init) ?? 1
if !(scale > 0 && scale <= 100) {
    FileHandle.standardError.write(Data("PROFILE_SUITE_SCALE: expected a number above 0, at most 100\n".utf8))
    exit(2)
}

/// How much more work the slower function does.
let factor = ProcessInfo.processInfo.environment["PROFILE_SUITE_FACTOR"].flatMap(Double.init) ?? 1.10
if !(factor > 0 && factor <= 100) {
    FileHandle.standardError.write(Data("PROFILE_SUITE_FACTOR: expected a number above 0, at most 100\n".utf8))
    exit(2)
}

/// `factor` times the work for the function named, else as given.
func units(_ name: String, _ base: Double) -> Double { name == slower ? base * factor : base }

let parseDocument = PerfTest("parse document") { _ in
    var sink: UInt64 = 0
    for _ in 0..<4 {
        sink &+= Document.tokenize(units: units("tokenize", 6))
        sink &+= Document.index(units: units("index", 3))
        sink &+= Document.render(units: units("render", 1))
    }
    if sink == 1 { print(sink) }
}

/// One quarter of "parse document"'s work.
@inline(never)
func parseQuarter() -> UInt64 {
    Document.tokenize(units: units("tokenize", 6)) &+ Document.index(units: units("index", 3))
        &+ Document.render(units: units("render", 1))
}

let parseInParallel = PerfTest("parse in parallel") { _ in
    let sink = Atomic<UInt64>(0)
    DispatchQueue.concurrentPerform(iterations: 4) { _ in sink.wrappingAdd(parseQuarter(), ordering: .relaxed) }
    if sink.load(ordering: .relaxed) == 1 { print("1") }
}

let parseInTasks = PerfTest("parse in tasks") { _ in
    let sink = await withTaskGroup(of: UInt64.self) { group in
        for _ in 0..<4 { group.addTask { parseQuarter() } }
        return await group.reduce(0, &+)
    }
    if sink == 1 { print(sink) }
}

let indexWords = PerfTest("index words") { _ in
    var index: [UInt64: [UInt64]] = [:]
    for part in 0..<4 {
        let word = parseQuarter()
        index[word % 61, default: []].append(UInt64(part))
        index[UInt64(part), default: []] += Array(repeating: word, count: 100 + part)
    }
    if index.count == 1 { print(index) }
}

/// Whether worker 1 of "parse in two threads" waits for worker 0 before
/// its work (PROFILE_SUITE_SERIAL=1) rather than after it.
let serialWorkers = ProcessInfo.processInfo.environment["PROFILE_SUITE_SERIAL"] == "1"
if let value = ProcessInfo.processInfo.environment["PROFILE_SUITE_SERIAL"], !["0", "1"].contains(value) {
    FileHandle.standardError.write(Data("PROFILE_SUITE_SERIAL=\(value): expected 0 or 1\n".utf8))
    exit(2)
}

/// What the workers of "parse in two threads" computed, kept so that the
/// work is not optimized away.
final class WorkerSink: Sendable {
    let value = Atomic<UInt64>(0)
}

/// Two quarters of "parse document"'s work inside `parse worker N`.
@inline(never)
func parseHalf(worker: Int) -> UInt64 {
    Trace.interval(worker == 0 ? "parse worker 0" : "parse worker 1") { parseQuarter() &+ parseQuarter() }
}

let parseInTwoThreads = PerfTest(
    "parse in two threads", metrics: [.interval("parse in two threads", .criticalPath)]
) { _ in
    let sink = WorkerSink()
    let workerZeroDone = DispatchSemaphore(value: 0)
    let joined = DispatchSemaphore(value: 0)
    Trace.interval("parse in two threads") {
        Thread {
            sink.value.wrappingAdd(parseHalf(worker: 0), ordering: .relaxed)
            workerZeroDone.signal()
            joined.signal()
        }.start()
        Thread {
            // Both ways wait once for worker 0: before the work, or after it.
            if serialWorkers { workerZeroDone.wait() }
            sink.value.wrappingAdd(parseHalf(worker: 1), ordering: .relaxed)
            if !serialWorkers { workerZeroDone.wait() }
            joined.signal()
        }.start()
        joined.wait()
        joined.wait()
    }
    if sink.value.load(ordering: .relaxed) == 1 { print("1") }
}

await PerfSuite(
    "ProfileSuite", tests: [parseDocument, parseInParallel, parseInTasks, indexWords, parseInTwoThreads]
).main()
