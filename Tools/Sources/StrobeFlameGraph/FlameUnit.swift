/// What a flame graph's amounts count.
public enum FlameUnit: String, Sendable, Hashable, Codable {
    /// CPU time, in nanoseconds (samples × the time one stands for).
    case nanoseconds
    /// CPU samples.
    case samples
    /// Counted instructions.
    case instructions

    /// What the amounts are, for a caption: "CPU time", "CPU samples",
    /// "instructions".
    public var quantity: String {
        switch self {
        case .nanoseconds: return "CPU time"
        case .samples: return "CPU samples"
        case .instructions: return "instructions"
        }
    }

    /// The short name the page's script formats amounts by.
    var scriptName: String {
        switch self {
        case .nanoseconds: return "ns"
        case .samples: return "samples"
        case .instructions: return "instructions"
        }
    }
}
