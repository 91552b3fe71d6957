import CStrobe

/// The nanoseconds, on the monotonic clock, that `count` runs of `body`
/// take, each given its index. Inlined, so the loop is the caller's own and
/// the closure costs nothing.
@inline(__always)
func nanoseconds(repeating count: Int, _ body: (Int) -> Void) -> Double {
    let start = cstrobe_monotonic_ns()
    for index in 0..<count { body(index) }
    return Double(cstrobe_monotonic_ns() - start)
}
