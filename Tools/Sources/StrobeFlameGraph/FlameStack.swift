import StrobeResults

/// One call stack of a side of a differential flame graph, with the amount
/// spent in it: CPU time or samples (a sampled profile), or instructions.
public struct FlameStack: Sendable, Hashable {
    /// Function names, the outermost caller first.
    public var frames: [String]
    /// What was spent with exactly this stack, in the graph's unit.
    public var amount: Double

    /// A stack and its amount.
    public init(frames: [String], amount: Double) {
        self.frames = frames
        self.amount = amount
    }

    /// The stacks of `profiles` (the processes of one side), each stack's
    /// CPU time per iteration averaged over the processes: a process's
    /// samples × the time a sample stands for ÷ its iterations, summed over
    /// the processes and divided by their number.
    public static func perIteration(_ profiles: [CallStackProfile]) -> [FlameStack] {
        guard !profiles.isEmpty else { return [] }
        var amounts: [[String]: Double] = [:]
        let share = 1 / Double(profiles.count)
        for profile in profiles {
            let scale = profile.nanosecondsPerSample / Double(max(profile.iterations, 1)) * share
            for stack in profile.stacks {
                let names = stack.frames.compactMap {
                    profile.functions.indices.contains($0) ? profile.functions[$0] : nil
                }
                amounts[names, default: 0] += Double(stack.samples) * scale
            }
        }
        return amounts.map { FlameStack(frames: $0.key, amount: $0.value) }
    }
}
