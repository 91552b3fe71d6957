/// The CPU samples of a test's measured iterations in one process, merged:
/// each distinct call stack with the samples taken in it.
///
/// A suite run with `--profile` keeps one per test; `strobe compare
/// --profile` and `strobe diff` judge each function's CPU time per
/// iteration with the process as the replicate, as they judge a metric.
public struct CallStackProfile: Sendable, Hashable, Codable {
    /// One distinct call stack.
    public struct Stack: Sendable, Hashable, Codable {
        /// Indices into ``CallStackProfile/functions``, the root first.
        public var frames: [Int]
        /// The samples taken in it.
        public var samples: Int

        /// A stack with its sample count.
        public init(frames: [Int], samples: Int) {
            self.frames = frames
            self.samples = samples
        }
    }

    /// What one function cost per iteration.
    public struct FunctionTime: Sendable, Hashable {
        /// CPU time in samples that had the function anywhere on the stack,
        /// in nanoseconds per iteration.
        public var inclusive: Double
        /// CPU time in samples that had it innermost, in nanoseconds per
        /// iteration.
        public var exclusive: Double
    }

    /// Function names; stacks refer to them by index.
    public var functions: [String]
    /// Each distinct call stack and its samples.
    public var stacks: [Stack]
    /// The CPU time one sample stands for, in nanoseconds (1e9 / the rate).
    public var nanosecondsPerSample: Double
    /// The measured iterations the samples were taken in.
    public var iterations: Int
    /// Samples the profiler lost (a ring full, a thread gone).
    public var lostSamples: Int
    /// How the samples were taken: `perf_event` or `cpu_timer`.
    public var method: String

    /// A profile.
    public init(
        functions: [String] = [], stacks: [Stack] = [], nanosecondsPerSample: Double, iterations: Int,
        lostSamples: Int = 0, method: String = ""
    ) {
        self.functions = functions
        self.stacks = stacks
        self.nanosecondsPerSample = nanosecondsPerSample
        self.iterations = iterations
        self.lostSamples = lostSamples
        self.method = method
    }

    /// Every sample.
    public var sampleCount: Int { stacks.reduce(0) { $0 + $1.samples } }

    /// The CPU time the samples stand for, per iteration, in nanoseconds:
    /// what a function's ``FunctionTime`` is a share of.
    public var cpuPerIteration: Double {
        Double(sampleCount) * nanosecondsPerSample / Double(max(iterations, 1))
    }

    /// CPU time per iteration of every function sampled, by name. A function
    /// on a stack twice (recursion) counts once in its inclusive time.
    public var timePerIteration: [String: FunctionTime] {
        var inclusive = [Int](repeating: 0, count: functions.count)
        var exclusive = [Int](repeating: 0, count: functions.count)
        var seen = [Int](repeating: -1, count: functions.count)
        for (index, stack) in stacks.enumerated() {
            for frame in stack.frames where functions.indices.contains(frame) && seen[frame] != index {
                seen[frame] = index
                inclusive[frame] += stack.samples
            }
            if let leaf = stack.frames.last, functions.indices.contains(leaf) { exclusive[leaf] += stack.samples }
        }
        let scale = nanosecondsPerSample / Double(max(iterations, 1))
        var times: [String: FunctionTime] = [:]
        for (index, name) in functions.enumerated() where inclusive[index] > 0 {
            times[name, default: FunctionTime(inclusive: 0, exclusive: 0)].inclusive += Double(inclusive[index]) * scale
            times[name, default: FunctionTime(inclusive: 0, exclusive: 0)].exclusive += Double(exclusive[index]) * scale
        }
        return times
    }

    /// For each function, the functions found below it on some stack.
    public var callees: [String: Set<String>] {
        var below: [String: Set<String>] = [:]
        for stack in stacks {
            let names = stack.frames.compactMap { functions.indices.contains($0) ? functions[$0] : nil }
            for (depth, name) in names.enumerated() where depth + 1 < names.count {
                below[name, default: []].formUnion(names[(depth + 1)...].filter { $0 != name })
            }
        }
        return below
    }

    /// The name a profile keeps for a frame's function: code no symbol
    /// covers (`libm.so.6+0x72c29`, an address alone) is named by its file,
    /// `libm.so.6 (no symbol)`, so its samples add up instead of scattering
    /// over one name per address.
    public static func functionName(_ frame: String) -> String {
        if let plus = frame.range(of: "+0x", options: .backwards),
            !frame[plus.upperBound...].isEmpty, frame[plus.upperBound...].allSatisfy(\.isHexDigit),
            !frame[..<plus.lowerBound].contains(" ")
        {
            return "\(frame[..<plus.lowerBound]) (no symbol)"
        }
        if frame.hasPrefix("0x"), frame.dropFirst(2).allSatisfy(\.isHexDigit) { return "(no symbol)" }
        return frame
    }
}

/// Builds a ``CallStackProfile`` a sample at a time, interning function
/// names and stacks.
public struct CallStackProfileBuilder: Sendable {
    private var functionIndex: [String: Int] = [:]
    private var stackIndex: [[Int]: Int] = [:]
    /// The profile so far.
    public private(set) var profile: CallStackProfile

    /// An empty profile of samples worth `nanosecondsPerSample` each.
    public init(nanosecondsPerSample: Double) {
        profile = CallStackProfile(nanosecondsPerSample: nanosecondsPerSample, iterations: 0)
    }

    /// Adds `samples` samples of the stack `frames` (function names, root
    /// first, as the trace names them).
    public mutating func add(_ frames: [String], samples: Int = 1) {
        var indices: [Int] = []
        indices.reserveCapacity(frames.count)
        for frame in frames {
            let name = CallStackProfile.functionName(frame)
            if let index = functionIndex[name] {
                indices.append(index)
            } else {
                functionIndex[name] = profile.functions.count
                indices.append(profile.functions.count)
                profile.functions.append(name)
            }
        }
        if let index = stackIndex[indices] {
            profile.stacks[index].samples += samples
        } else {
            stackIndex[indices] = profile.stacks.count
            profile.stacks.append(CallStackProfile.Stack(frames: indices, samples: samples))
        }
    }

    /// Counts one more measured iteration, `lost` lost samples, and the
    /// method the iteration's trace says sampled it.
    public mutating func finishIteration(lostSamples lost: Int, method: String?) {
        profile.iterations += 1
        profile.lostSamples += lost
        if let method, profile.method.isEmpty { profile.method = method }
    }
}
