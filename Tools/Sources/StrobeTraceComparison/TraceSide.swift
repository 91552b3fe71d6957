import Foundation
import StrobeFlameGraph
import StrobeReader
import StrobeResults

/// One side of a comparison of traces: per interval name, each finished
/// instance's duration, thread CPU time and blocked time, and the CPU
/// samples taken inside the instances.
public struct TraceSide: Sendable {
    /// What one name's instances measured.
    public struct Instances: Sendable, Hashable {
        /// Each finished instance's duration, in nanoseconds.
        public var durations: [Double] = []
        /// Each instance's thread CPU time (its CPU time, else its rusage's
        /// user + system), in nanoseconds, for those that captured one.
        public var cpuTimes: [Double] = []
        /// Each instance's duration less its CPU time (off the CPU: waiting,
        /// blocked or preempted), for those that captured CPU time.
        public var blockedTimes: [Double] = []
        /// The call stacks of the samples inside the instances (each sample
        /// once, however many instances of the name hold it), with their
        /// counts.
        public var stacks: [[String]: Int] = [:]
        /// CPU time one sample stands for, in nanoseconds; nil when no
        /// trace with samples says its rate.
        public var nanosecondsPerSample: Double?
        /// Each instance's critical path length (``CriticalPath/length``),
        /// in nanoseconds, when it was asked for.
        public var criticalPaths: [Double] = []
        /// How many instances' critical paths crossed each wait and each
        /// interval name.
        public var paths = CriticalPathTally()

        /// No instances.
        public init() {}
    }

    /// The traces read, in order.
    public var sources: [String] = []
    /// By interval name.
    public var names: [String: Instances] = [:]

    /// An empty side.
    public init() {}

    /// Adds one trace's intervals and CPU samples, and the critical path of
    /// each instance of the names in `criticalPathOf`.
    public mutating func add(
        intervals: [Interval], profile: CPUProfile, source: String, criticalPathOf: Set<String> = []
    ) {
        sources.append(source)
        var byName: [String: [Interval]] = [:]
        for interval in intervals where interval.duration != nil { byName[interval.name, default: []].append(interval) }
        let period = profile.frequency.flatMap { $0 > 0 ? 1e9 / Double($0) : nil }
        for (name, list) in byName {
            var entry = names[name] ?? Instances()
            for interval in list {
                let duration = Double(interval.duration ?? 0)
                entry.durations.append(duration)
                let cpu =
                    interval.cpuTime.map { Double($0) }
                    ?? interval.resourceUsage.map { Double($0.userNanoseconds + $0.systemNanoseconds) }
                if let cpu {
                    entry.cpuTimes.append(cpu)
                    entry.blockedTimes.append(max(duration - cpu, 0))
                }
            }
            if criticalPathOf.contains(name) {
                for interval in list {
                    guard let path = CriticalPath.of(interval, in: intervals) else { continue }
                    entry.criticalPaths.append(Double(path.length))
                    entry.paths.add(CriticalPathRecord.Iteration([path]))
                }
            }
            if !profile.isEmpty {
                for sample in profile.samples(within: list) {
                    let frames = profile.stacks[sample.stack].map { profile.functions[$0] }
                    entry.stacks[frames, default: 0] += 1
                }
                if let period { entry.nanosecondsPerSample = entry.nanosecondsPerSample ?? period }
            }
            names[name] = entry
        }
    }

    /// The side of the trace files `paths` names: each a trace, or a
    /// directory whose `.pftrace` files are read (not its subdirectories).
    ///
    /// - Throws: ``TraceComparisonError`` naming the path that cannot be
    ///   read, holds no trace, or is a directory without one.
    public static func load(_ paths: [String], criticalPathOf: Set<String> = []) throws(TraceComparisonError)
        -> TraceSide
    {
        var side = TraceSide()
        for path in paths {
            for file in try files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw TraceComparisonError(path: file, problem: "cannot be read")
                }
                let bytes = [UInt8](data)
                let trace = TraceReader.read(bytes: bytes, source: file)
                if let problem = trace.notATrace { throw TraceComparisonError(path: file, problem: problem.problem) }
                side.add(
                    intervals: Array(trace.intervals), profile: CPUProfile.read(bytes: bytes), source: file,
                    criticalPathOf: criticalPathOf)
            }
        }
        return side
    }

    /// The trace files at `path`.
    static func files(at path: String) throws(TraceComparisonError) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TraceComparisonError(path: path, problem: "no such file or directory")
        }
        guard isDirectory.boolValue else { return [path] }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let traces = entries.filter { $0.hasSuffix(".pftrace") }.sorted().map { "\(path)/\($0)" }
        guard !traces.isEmpty else { throw TraceComparisonError(path: path, problem: "holds no .pftrace file") }
        return traces
    }

    /// The stacks of `name`'s samples as a flame graph's side: CPU time per
    /// instance when the rate is known (samples per instance otherwise).
    func flameStacks(of name: String) -> (stacks: [FlameStack], unit: FlameUnit) {
        guard let entry = names[name], !entry.durations.isEmpty else { return ([], .samples) }
        let scale = (entry.nanosecondsPerSample ?? 1) / Double(entry.durations.count)
        let stacks = entry.stacks.map { FlameStack(frames: $0.key, amount: Double($0.value) * scale) }
        return (stacks, entry.nanosecondsPerSample == nil ? .samples : .nanoseconds)
    }

    /// How many samples one unit of ``flameStacks(of:)``'s amounts stands
    /// for: the instances over the time a sample stands for.
    func samplesPerAmount(of name: String) -> Double {
        guard let entry = names[name] else { return 1 }
        return Double(entry.durations.count) / (entry.nanosecondsPerSample ?? 1)
    }
}

/// A trace that cannot be compared, with the path that names it.
public struct TraceComparisonError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file or directory.
    public var path: String
    /// What is wrong with it.
    public var problem: String

    /// A problem with `path`.
    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    /// `PATH: PROBLEM`.
    public var description: String { "\(path): \(problem)" }
}
