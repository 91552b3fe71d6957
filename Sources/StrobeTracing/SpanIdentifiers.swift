#if StrobeTracing
/// Random span and trace ids from one thread's generator: a counter run
/// through splitmix64 from a random seed, so each id costs a few
/// multiplications and no atomic operation. Each thread seeds its own from
/// the system's generator; two threads' ids collide only if their runs of
/// the 2^64-long sequence overlap.
struct SpanIdentifiers {
    private var state: UInt64

    init() {
        var generator = SystemRandomNumberGenerator()
        state = generator.next()
    }

    /// A non-zero 64-bit id.
    mutating func next() -> UInt64 {
        while true {
            state &+= 0x9E37_79B9_7F4A_7C15
            let value = Self.mix(state)
            if value != 0 { return value }
        }
    }

    /// A non-zero 128-bit trace id.
    mutating func nextTraceID() -> StrobeSpanContext.TraceID {
        StrobeSpanContext.TraceID(high: next(), low: next())
    }

    private static func mix(_ seed: UInt64) -> UInt64 {
        var z = seed
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
#endif
