#if StrobeTracing
import Synchronization

/// Random span and trace ids: a process-wide counter run through splitmix64
/// from a random seed, so each id costs an atomic add and a few
/// multiplications rather than a call into the system's generator.
enum SpanIdentifiers {
    private static let counter: Atomic<UInt64> = {
        var generator = SystemRandomNumberGenerator()
        return Atomic(generator.next())
    }()

    /// A non-zero 64-bit id.
    static func next() -> UInt64 {
        while true {
            let value = mix(counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue)
            if value != 0 { return value }
        }
    }

    /// A non-zero 128-bit trace id.
    static func nextTraceID() -> StrobeSpanContext.TraceID {
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
