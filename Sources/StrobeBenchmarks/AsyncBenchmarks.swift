import CStrobe
import Dispatch
import Strobe
import StrobeTestSupport

#if StrobeTracing
import StrobeTracing
#endif

/// What task-local nesting costs an async interval: measured inside a task,
/// inside an open async `Trace.interval`, beside the same interval given its
/// parent explicitly (no lookup), in the same run.
enum AsyncBenchmarks {
    static func run() {
        let count = 200_000
        // Warm the chunk pool.
        CoreBenchmarks.withSession { _ = blockOn { await timeImplicitParents(count) } }
        let explicit = median(runs: 7) {
            CoreBenchmarks.withSession { blockOn { await timeExplicitParents(count) } / Double(count) }
        }
        let implicit = median(runs: 7) {
            CoreBenchmarks.withSession { blockOn { await timeImplicitParents(count) } / Double(count) }
        }
        let lookup = median(runs: 7) { blockOn { await timeTaskLocalLookups(count * 5) } / Double(count * 5) }
        Figure(
            name: "task-local lookup of the innermost async interval", value: lookup, unit: "ns/lookup",
            baselineName: "clock_gettime(CLOCK_MONOTONIC)", baselineValue: CoreBenchmarks.clockBaseline(),
            target: "value <= 25 ns"
        ).printLine()
        Figure(
            name: "beginAsync + end nested by the task-local lookup", value: implicit, unit: "ns/interval",
            baselineName: "beginAsync(_:parent:) + end, parent given (no lookup), same run", baselineValue: explicit
        ).printLine()
        let scoped = median(runs: 7) {
            CoreBenchmarks.withSession { blockOn { await timeScopedIntervals(count) } / Double(count) }
        }
        Figure(
            name: "async Trace.interval (begin, task-local scope, end)", value: scoped, unit: "ns/interval",
            baselineName: "beginAsync(_:parent:) + end, parent given, same run", baselineValue: explicit
        ).printLine()
        #if StrobeTracing
        // With StrobeTracing loaded, a begin also asks it for the current
        // span's interval (a second task-local read and a context lookup).
        _ = StrobeTracer()
        let bridged = median(runs: 7) {
            CoreBenchmarks.withSession { blockOn { await timeImplicitParents(count) } / Double(count) }
        }
        Figure(
            name: "beginAsync + end nested by the task-local lookup, StrobeTracing loaded", value: bridged,
            unit: "ns/interval", baselineName: "the same without StrobeTracing, same run",
            baselineValue: implicit, extra: ["added_ns": bridged - implicit]
        ).printLine()
        #endif
    }
}

/// Runs `body` in a task of its own and waits for its result.
func blockOn(_ body: @escaping @Sendable () async -> Double) -> Double {
    let semaphore = DispatchSemaphore(value: 0)
    let result = Mutex2Results()
    Task.detached {
        result.append(await body())
        semaphore.signal()
    }
    semaphore.wait()
    return result.values[0]
}

@inline(never)
func timeExplicitParents(_ count: Int) async -> Double {
    await Trace.interval("outer") {
        await Task.yield()
        let parent = Trace.AsyncInterval(parentID: Trace.innermostTaskInterval)
        let name = Trace.Name("span")
        let start = cstrobe_monotonic_ns()
        for _ in 0..<count { Trace.beginAsync(name, parent: parent).end() }
        return Double(cstrobe_monotonic_ns() - start)
    }
}

@inline(never)
func timeImplicitParents(_ count: Int) async -> Double {
    await Trace.interval("outer") {
        let name = Trace.Name("span")
        await Task.yield()
        let start = cstrobe_monotonic_ns()
        for _ in 0..<count { Trace.beginAsync(name).end() }
        return Double(cstrobe_monotonic_ns() - start)
    }
}

@inline(never)
func timeScopedIntervals(_ count: Int) async -> Double {
    await Trace.interval("outer") {
        let name = Trace.Name("span")
        let start = cstrobe_monotonic_ns()
        for _ in 0..<count { await Trace.interval(name) { await noWork() } }
        return Double(cstrobe_monotonic_ns() - start)
    }
}

@inline(never)
func noWork() async {}

@inline(never)
func timeTaskLocalLookups(_ count: Int) async -> Double {
    await Trace.interval("outer") {
        await Task.yield()
        var sink: UInt64 = 0
        let start = cstrobe_monotonic_ns()
        for _ in 0..<count { sink &+= Trace.innermostTaskInterval }
        let elapsed = Double(cstrobe_monotonic_ns() - start)
        if sink == 1 { print(sink) }
        return elapsed
    }
}
