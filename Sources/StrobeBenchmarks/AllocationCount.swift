import CStrobeCounting

/// Heap allocations of a stretch of the benchmarks, on every thread of the
/// process, through the counting window of `CStrobeCounting`.
enum AllocationCount {
    /// Whether allocations are counted on this platform.
    static var isActive: Bool { cstrobe_counting_allocations_available() != 0 }

    /// The allocations `body` made, on any thread, with its value.
    static func during<Value>(_ body: () throws -> Value) rethrows -> (value: Value, allocations: UInt64) {
        cstrobe_counting_begin(0, 0)
        let value: Value
        do {
            value = try body()
        } catch {
            _ = cstrobe_counting_end()
            throw error
        }
        return (value, cstrobe_counting_end().allocations)
    }
}
