import StrobeResults

/// What the judging of a test's functions reads from either kind of
/// per-function profile: the test's amount per iteration, each function's
/// inclusive amount per iteration, and which functions each one calls.
protocol FunctionAmounts: Sendable, Hashable {
    /// The whole test's amount per iteration.
    var totalPerIteration: Double { get }
    /// Each function's inclusive amount per iteration.
    var inclusivePerIteration: [String: Double] { get }
    /// The functions each function calls.
    var callees: [String: Set<String>] { get }
}

extension CallStackProfile: FunctionAmounts {
    var totalPerIteration: Double { cpuPerIteration }
    var inclusivePerIteration: [String: Double] { timePerIteration.mapValues(\.inclusive) }
}

extension InstructionProfile: FunctionAmounts {
    var inclusivePerIteration: [String: Double] { countPerIteration.mapValues(\.inclusive) }
}
