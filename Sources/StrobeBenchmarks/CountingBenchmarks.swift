import CStrobe
import CStrobeCounting
import Foundation
import StrobeTestSupport

/// What exact counting costs: an allocation and a retain with the counting
/// window open, and a retain through the wrapper with it closed, each
/// against its baseline in the same run. The loops run on one thread.
enum CountingBenchmarks {
    typealias Retain = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer
    typealias Release = @convention(c) (UnsafeMutableRawPointer) -> Void

    static func run() {
        // Short loops, many times, each figure the fastest: on a shared
        // machine a long loop is mostly its neighbours' noise.
        let allocations = 200_000
        let retains = 1_000_000
        // The program's swift_retain is the counting wrapper; the runtime's
        // own is the next definition.
        guard let runtime = dlopen("libswiftCore.so", RTLD_NOW | RTLD_NOLOAD),
            let wrapperRetain = dlsym(nil, "swift_retain"), let wrapperRelease = dlsym(nil, "swift_release"),
            let runtimeRetain = dlsym(runtime, "swift_retain"), let runtimeRelease = dlsym(runtime, "swift_release")
        else {
            print("counting: the Swift runtime's swift_retain was not found; no figures")
            return
        }
        let wrapper = (
            unsafeBitCast(wrapperRetain, to: Retain.self), unsafeBitCast(wrapperRelease, to: Release.self)
        )
        let direct = (unsafeBitCast(runtimeRetain, to: Retain.self), unsafeBitCast(runtimeRelease, to: Release.self))
        // Warm the allocator, the thread's record and the lookups.
        _ = timeAllocations(allocations)
        cstrobe_counting_begin(0, 1)
        _ = timeAllocations(1000)
        _ = timeRetains(1000, wrapper)
        _ = cstrobe_counting_end()

        var closedAllocation = Double.infinity
        var openAllocation = Double.infinity
        var countedAllocations: UInt64 = 0
        var directRetain = Double.infinity
        var closedRetain = Double.infinity
        var openRetain = Double.infinity
        var countedRetains: UInt64 = 0
        for _ in 0..<25 {
            closedAllocation = min(closedAllocation, timeAllocations(allocations) / Double(allocations))
            cstrobe_counting_begin(0, 0)
            openAllocation = min(openAllocation, timeAllocations(allocations) / Double(allocations))
            countedAllocations = cstrobe_counting_end().allocations

            directRetain = min(directRetain, timeRetains(retains, direct) / Double(retains))
            closedRetain = min(closedRetain, timeRetains(retains, wrapper) / Double(retains))
            cstrobe_counting_begin(0, 1)
            openRetain = min(openRetain, timeRetains(retains, wrapper) / Double(retains))
            countedRetains = cstrobe_counting_end().retains
        }
        let machine = BenchmarkMachine.current
        print("counting: CPU \(machine.modelName) (family \(machine.family), model \(machine.model))")
        Figure(
            name: "malloc + free of 32 bytes, counting window open", value: openAllocation, unit: "ns/allocation",
            baselineName: "the same with the window closed, same run", baselineValue: closedAllocation,
            extra: [
                "counted_per_allocation": Double(countedAllocations) / Double(allocations),
                "counting_cost_ns": openAllocation - closedAllocation,
            ]
        ).printLine()
        Figure(
            name: "swift_retain + swift_release through the wrapper, window closed", value: closedRetain,
            unit: "ns/retain", baselineName: "the runtime's own swift_retain + swift_release, same run",
            baselineValue: directRetain, extra: ["wrapper_cost_ns": closedRetain - directRetain]
        ).printLine()
        Figure(
            name: "swift_retain + swift_release through the wrapper, window open", value: openRetain,
            unit: "ns/retain", baselineName: "the runtime's own swift_retain + swift_release, same run",
            baselineValue: directRetain,
            extra: [
                "counted_per_retain": Double(countedRetains) / Double(retains),
                "counting_cost_ns": openRetain - directRetain,
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

/// `count` retains and releases of one object through `functions`, called
/// by address so that the optimizer cannot pair them away.
@inline(never)
func timeRetains(
    _ count: Int, _ functions: (CountingBenchmarks.Retain, CountingBenchmarks.Release)
) -> Double {
    let target = Unmanaged.passRetained(RetainTarget())
    defer { target.release() }
    let object = target.toOpaque()
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count {
        _ = functions.0(object)
        functions.1(object)
    }
    return Double(cstrobe_monotonic_ns() - start)
}
