import StrobeResults

/// One call stack of a side of a differential flame graph, with the amount
/// spent in it: CPU time or samples (a sampled profile), or instructions.
public struct FlameStack: Sendable, Hashable, Codable {
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

    /// The stacks of several measurements of one thing (runs of a test),
    /// each stack's amount averaged over them: summed, then divided by the
    /// number of measurements (a stack one of them lacks counts 0 there).
    /// Sorted by amount, largest first, then by frames.
    public static func mean(of measurements: [[FlameStack]]) -> [FlameStack] {
        guard !measurements.isEmpty else { return [] }
        var amounts: [[String]: Double] = [:]
        for stacks in measurements {
            for stack in stacks { amounts[stack.frames, default: 0] += stack.amount }
        }
        let share = 1 / Double(measurements.count)
        return ordered(amounts.map { FlameStack(frames: $0.key, amount: $0.value * share) })
    }

    /// The most stacks ``largest(_:)`` keeps.
    public static let keptStacks = 2000

    /// At most ``keptStacks`` of `stacks`, the largest: what a store keeps
    /// of a test's profile. Sorted by amount, largest first, then by frames.
    public static func largest(_ stacks: [FlameStack]) -> [FlameStack] {
        Array(ordered(stacks).prefix(keptStacks))
    }

    /// `stacks` by amount, largest first, then by frames: one order for
    /// equal input, whatever order a dictionary gave.
    static func ordered(_ stacks: [FlameStack]) -> [FlameStack] {
        stacks.sorted { a, b in
            a.amount != b.amount ? a.amount > b.amount : a.frames.lexicographicallyPrecedes(b.frames)
        }
    }
}
