import Foundation

/// A small, fast, seeded generator (SplitMix64) with uniform and normal draws,
/// for the simulations and tests of the statistics, the gate and the CLI.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    private var spare: Double?

    /// A generator that always produces the same sequence for `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Standard normal (Box–Muller).
    public mutating func normal() -> Double {
        if let spare {
            self.spare = nil
            return spare
        }
        let u = max(uniform(), .leastNonzeroMagnitude)
        let v = uniform()
        let radius = (-2 * log(u)).squareRoot()
        spare = radius * sin(2 * .pi * v)
        return radius * cos(2 * .pi * v)
    }
}
