import CStrobe
import CStrobeCounting
import StrobeTestSupport

/// What exact counting costs a measure block: an allocation and a retain
/// with the counting window open, against the same loop with it closed, in
/// the same run. The window counts on every thread; these loops run on one.
enum CountingBenchmarks {
    static func run() {
        let allocations = 2_000_000
        let retains = 10_000_000
        // Warm the allocator's caches and the runtime's hooks.
        _ = timeAllocations(allocations / 10)
        cstrobe_counting_begin(pthread_self(), 0, 1)
        _ = timeRetains(retains / 10)
        _ = cstrobe_counting_end()

        var closedAllocation = Double.infinity
        var openAllocation = Double.infinity
        var counted: UInt64 = 0
        var closedRetain = Double.infinity
        var openRetain = Double.infinity
        var countedRetains: UInt64 = 0
        for _ in 0..<5 {
            closedAllocation = min(closedAllocation, timeAllocations(allocations) / Double(allocations))
            cstrobe_counting_begin(pthread_self(), 0, 0)
            openAllocation = min(openAllocation, timeAllocations(allocations) / Double(allocations))
            counted = cstrobe_counting_end().allocations

            closedRetain = min(closedRetain, timeRetains(retains) / Double(retains))
            cstrobe_counting_begin(pthread_self(), 0, 1)
            openRetain = min(openRetain, timeRetains(retains) / Double(retains))
            countedRetains = cstrobe_counting_end().retains
        }
        let machine = BenchmarkMachine.current
        print("counting: CPU \(machine.modelName) (family \(machine.family), model \(machine.model))")
        Figure(
            name: "malloc + free of 32 bytes, allocations counted", value: openAllocation, unit: "ns/allocation",
            baselineName: "the same with no counting window open, same run", baselineValue: closedAllocation,
            extra: [
                "counted_per_allocation": Double(counted) / Double(allocations),
                "counting_cost_ns": openAllocation - closedAllocation,
            ]
        ).printLine()
        Figure(
            name: "swift_retain + swift_release, retains counted", value: openRetain, unit: "ns/retain",
            baselineName: "the same with no counting window open, same run", baselineValue: closedRetain,
            extra: [
                "counted_per_retain": Double(countedRetains) / Double(retains),
                "counting_cost_ns": openRetain - closedRetain,
            ]
        ).printLine()
    }
}

/// A class instance to retain.
final class RetainTarget {
    var value = 0
}

@inline(never)
func timeAllocations(_ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count {
        let block = UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 8)
        block.storeBytes(of: 1, as: Int.self)
        block.deallocate()
    }
    return Double(cstrobe_monotonic_ns() - start)
}

@inline(never)
func timeRetains(_ count: Int) -> Double {
    let target = Unmanaged.passRetained(RetainTarget())
    defer { target.release() }
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count {
        _ = target.retain()
        target.release()
    }
    return Double(cstrobe_monotonic_ns() - start)
}
