import Foundation
import StrobeStatistics
import StrobeToolFormatting

/// What a function comparison counts per iteration: CPU time the profiler
/// sampled, or instructions a simulation counted.
public enum FunctionUnit: String, Sendable, Hashable, Codable, CaseIterable {
    /// Sampled CPU time, in nanoseconds.
    case nanoseconds
    /// Counted user-space instructions.
    case instructions

    /// What the numbers are, for a heading: "CPU time", "instructions".
    public var quantity: String {
        switch self {
        case .nanoseconds: return "CPU time"
        case .instructions: return "instructions"
        }
    }

    /// A signed amount in the scale that suits it (or that suits
    /// `reference`): `+21.3 ms`, `-480 µs`, `+84.0 K instructions`; without
    /// the unit when `unit` is false.
    public func signed(_ value: Double, unit: Bool = true, scaledAs reference: Double? = nil) -> String {
        let magnitude = abs(reference ?? value)
        let (divisor, name): (Double, String)
        switch self {
        case .nanoseconds:
            (divisor, name) = magnitude >= 1e9 ? (1e9, "s") : magnitude >= 1e6 ? (1e6, "ms") : (1e3, "µs")
        case .instructions:
            let (step, prefix) = HumanFormat.countScale(of: magnitude)
            (divisor, name) = (step, prefix.isEmpty ? "instructions" : "\(prefix) instructions")
        }
        let scaled = magnitude / divisor
        let decimals = self == .instructions && divisor == 1 ? 0 : scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2
        let text = String(format: "%.\(decimals)f", value / divisor)
        let signedText = text.hasPrefix("-") ? text : "+" + text
        return unit ? "\(signedText) \(name)" : signedText
    }

    /// An amount per iteration for a table: `21.3 ms`, `4.12 M instructions`, `0` for none.
    public func amount(_ value: Double) -> String {
        value == 0 ? "0" : String(signed(value).dropFirst())
    }
}
