/// The user-space instructions a test's measured iterations executed in one
/// process, per function, as a simulation (callgrind) counted them.
///
/// Unlike a ``CallStackProfile``, nothing here is sampled: every instruction
/// of the measure blocks is counted once, so a function's count repeats from
/// process to process and a change of a fraction of a percent in one
/// function shows at once, however short the test.
public struct InstructionProfile: Sendable, Hashable, Codable {
    /// What one function executed per iteration.
    public struct FunctionCount: Sendable, Hashable {
        /// Instructions with the function on the stack: its own and those
        /// of everything it called (a recursive call counted once).
        public var inclusive: Double
        /// Instructions of the function's own code.
        public var exclusive: Double
    }

    /// Function names, demangled; counts and calls refer to them by index.
    public var functions: [String]
    /// Each function's own instructions over all measured iterations.
    public var exclusive: [UInt64]
    /// Each function's inclusive instructions over all measured iterations.
    public var inclusive: [UInt64]
    /// The call graph's edges, as (caller, callee) indices.
    public var calls: [Call]
    /// The measured iterations counted.
    public var iterations: Int
    /// Every instruction the measured iterations executed.
    public var total: UInt64

    /// One edge of the call graph.
    public struct Call: Sendable, Hashable, Codable {
        /// The calling function's index.
        public var caller: Int
        /// The called function's index.
        public var callee: Int

        /// An edge from `caller` to `callee`.
        public init(caller: Int, callee: Int) {
            self.caller = caller
            self.callee = callee
        }
    }

    /// A profile; `exclusive` and `inclusive` have an entry per function.
    public init(
        functions: [String] = [], exclusive: [UInt64] = [], inclusive: [UInt64] = [], calls: [Call] = [],
        iterations: Int = 0, total: UInt64 = 0
    ) {
        self.functions = functions
        self.exclusive = exclusive
        self.inclusive = inclusive
        self.calls = calls
        self.iterations = iterations
        self.total = total
    }

    /// Instructions per iteration of the whole measure block.
    public var totalPerIteration: Double { Double(total) / Double(max(iterations, 1)) }

    /// Instructions per iteration of every function, by name (functions of
    /// one name, such as two copies of a specialization, add up).
    public var countPerIteration: [String: FunctionCount] {
        let scale = 1 / Double(max(iterations, 1))
        var counts: [String: FunctionCount] = [:]
        for (index, name) in functions.enumerated() {
            let own = index < exclusive.count ? Double(exclusive[index]) * scale : 0
            let all = index < inclusive.count ? Double(inclusive[index]) * scale : 0
            counts[name, default: FunctionCount(inclusive: 0, exclusive: 0)].inclusive += all
            counts[name, default: FunctionCount(inclusive: 0, exclusive: 0)].exclusive += own
        }
        return counts
    }

    /// For each function, the functions it calls, directly or through
    /// others.
    public var callees: [String: Set<String>] {
        var direct: [Int: Set<Int>] = [:]
        for call in calls where call.caller != call.callee { direct[call.caller, default: []].insert(call.callee) }
        var below: [String: Set<String>] = [:]
        for caller in direct.keys {
            var seen: Set<Int> = []
            var pending = Array(direct[caller] ?? [])
            while let next = pending.popLast() {
                guard next != caller, seen.insert(next).inserted else { continue }
                pending += direct[next] ?? []
            }
            let names = Set(seen.compactMap { functions.indices.contains($0) ? functions[$0] : nil })
            below[functions[caller], default: []].formUnion(names.subtracting([functions[caller]]))
        }
        return below
    }

    /// Adds another iteration's (or process's) counts of the same code:
    /// functions matched by name, calls by their names.
    public mutating func merge(_ other: InstructionProfile) {
        var index: [String: Int] = [:]
        for (position, name) in functions.enumerated() { index[name] = position }
        var mapped: [Int] = []
        for (position, name) in other.functions.enumerated() {
            if let existing = index[name] {
                mapped.append(existing)
            } else {
                index[name] = functions.count
                mapped.append(functions.count)
                functions.append(name)
                exclusive.append(0)
                inclusive.append(0)
            }
            let target = mapped[position]
            if position < other.exclusive.count { exclusive[target] &+= other.exclusive[position] }
            if position < other.inclusive.count { inclusive[target] &+= other.inclusive[position] }
        }
        var edges = Set(calls)
        for call in other.calls where mapped.indices.contains(call.caller) && mapped.indices.contains(call.callee) {
            edges.insert(Call(caller: mapped[call.caller], callee: mapped[call.callee]))
        }
        calls = edges.sorted { ($0.caller, $0.callee) < ($1.caller, $1.callee) }
        iterations += other.iterations
        total &+= other.total
    }
}
