import StrobeFlameGraph
import StrobeResults
import StrobeStatistics

/// Two sides of traces compared per interval name: the change of each
/// name's duration, thread CPU time and blocked time over its instances,
/// and the differential profile of the CPU samples inside them.
///
/// Each measure's instances are compared as independent samples: a
/// duration's change is the Hodges–Lehmann shift of the candidate's over the
/// baseline's (a ratio, on log values when all are positive), with its
/// distribution-free interval and the Mann–Whitney p-value; CPU and blocked
/// time, which rusage counts in clock ticks, by the ratio of their means;
/// the p-values adjusted by
/// Benjamini–Hochberg across every name's measures. A change is called when
/// its adjusted p-value is at most ``Options/alpha`` and its interval lies
/// wholly beyond ``Options/minimumEffect``. Instances of one process share
/// its state (its caches, its CPU's clock), so a shift of the whole process
/// reads as a change: compare several traces a side to see past it.
public struct TraceComparison: Sendable {
    /// How changes are called.
    public struct Options: Sendable, Hashable {
        /// The level of the intervals and of the false discovery rate.
        public var alpha = 0.05
        /// The smallest relative change called one.
        public var minimumEffect = JudgementDefaults.relativeFloor
        /// At most this many instances a side enter the shift estimate
        /// (evenly spaced in time); the p-value uses them all.
        public var instancesEstimated = 2000

        /// 5%, 2%, 2,000 instances.
        public init() {}
    }

    /// What a measure's change was called.
    public enum Verdict: String, Sendable, Hashable, Codable {
        /// Larger, past the floor.
        case slower
        /// Smaller, past the floor.
        case faster
        /// Within the floor, or not told apart from no change.
        case unchanged
        /// On one side only.
        case missing
    }

    /// One measure of one name on both sides.
    public struct MeasureChange: Sendable, Hashable, Codable {
        /// Instances measured on each side.
        public var baselineCount: Int
        /// Instances measured on the candidate's side.
        public var candidateCount: Int
        /// Medians (means when ``byMeans``), in nanoseconds.
        public var baselineMedian: Double
        /// The candidate's median (mean when ``byMeans``).
        public var candidateMedian: Double
        /// The shift as a ratio with its interval; nil when it cannot be
        /// estimated (a side without instances, a baseline median of 0).
        public var shift: ShiftEstimate?
        /// The Mann–Whitney p-value.
        public var pValue: Double
        /// Adjusted across every measure compared.
        public var adjustedPValue: Double = 1
        /// What the change is called.
        public var verdict: Verdict = .unchanged
        /// Whether the sides were compared by their means (CPU and blocked
        /// time) rather than by the shift of all their instances.
        public var byMeans = false
    }

    /// One interval name compared.
    public struct IntervalChange: Sendable, Hashable, Codable {
        /// The name.
        public var name: String
        /// Its durations.
        public var duration: MeasureChange
        /// Its thread CPU time, where both sides captured it.
        public var cpuTime: MeasureChange?
        /// Its time off the CPU, where both sides captured CPU time.
        public var blockedTime: MeasureChange?
        /// The length of its instances' critical paths, when asked for.
        public var criticalPath: MeasureChange?
        /// Waits on the critical path of at least half the candidate's
        /// instances and of under a tenth of the baseline's.
        public var newWaits: [String] = []
        /// The functions whose inclusive CPU time per instance moved most,
        /// from the samples inside the instances.
        public var functions: [FunctionMove] = []
        /// What ``functions`` count: CPU time, or samples when the traces
        /// name no rate; nil when no samples fell inside on both sides.
        public var profileUnit: FlameUnit?
    }

    /// A function's inclusive amount inside an interval's instances, per
    /// instance, on both sides.
    public struct FunctionMove: Sendable, Hashable, Codable {
        /// The function.
        public var function: String
        /// Per instance, in the graph's unit (nanoseconds, or samples).
        public var baseline: Double
        /// The candidate's.
        public var candidate: Double
        /// How it changed (`new`, `gone`, `slower`, `faster`).
        public var change: FrameChange
    }

    /// The options used.
    public var options: Options
    /// The baseline's traces.
    public var baselineSources: [String]
    /// The candidate's traces.
    public var candidateSources: [String]
    /// Every name either side has, changed ones first (largest change
    /// first), then by name.
    public var intervals: [IntervalChange]
    /// The differential flame graph of each name whose instances hold
    /// samples on both sides, changed names first.
    public var flameGraphs: [DifferentialFlameGraph]

    /// Compares `candidate` with `baseline`.
    public init(baseline: TraceSide, candidate: TraceSide, options: Options = Options()) {
        self.options = options
        baselineSources = baseline.sources
        candidateSources = candidate.sources
        var changes: [IntervalChange] = []
        for name in Set(baseline.names.keys).union(candidate.names.keys).sorted() {
            let base = baseline.names[name] ?? TraceSide.Instances()
            let cand = candidate.names[name] ?? TraceSide.Instances()
            var change = IntervalChange(
                name: name, duration: Self.measure(base.durations, cand.durations, options: options))
            if !base.cpuTimes.isEmpty, !cand.cpuTimes.isEmpty {
                change.cpuTime = Self.meanMeasure(base.cpuTimes, cand.cpuTimes, options: options)
                change.blockedTime = Self.meanMeasure(base.blockedTimes, cand.blockedTimes, options: options)
            }
            if !base.criticalPaths.isEmpty || !cand.criticalPaths.isEmpty {
                change.criticalPath = Self.measure(base.criticalPaths, cand.criticalPaths, options: options)
                change.newWaits = cand.paths.newWaits(since: base.paths).map(\.description)
            }
            changes.append(change)
        }
        Self.judge(&changes, options: options)
        var graphs: [String: DifferentialFlameGraph] = [:]
        for index in changes.indices {
            let name = changes[index].name
            let (base, unit) = baseline.flameStacks(of: name)
            let (cand, candidateUnit) = candidate.flameStacks(of: name)
            guard !base.isEmpty, !cand.isEmpty, unit == candidateUnit else { continue }
            let total = base.reduce(0) { $0 + $1.amount }
            var graph = DifferentialFlameGraph(
                title: "\(name) — duration \(changes[index].duration.verdict.rawValue)", unit: unit, baseline: base,
                candidate: cand, floor: options.minimumEffect / 4 * total)
            graph.per = "instance"
            changes[index].functions = Self.functionMoves(
                base, cand, floor: graph.floor,
                samplesPerAmount: (baseline.samplesPerAmount(of: name), candidate.samplesPerAmount(of: name)))
            changes[index].profileUnit = unit
            graphs[name] = graph
        }
        intervals = changes.sorted { Self.order($0) < Self.order($1) }
        flameGraphs = intervals.compactMap { graphs[$0.name] }
    }

    /// Whether any name's duration, CPU time or blocked time changed.
    public var hasChanges: Bool {
        intervals.contains { change in
            [change.duration, change.cpuTime, change.blockedTime, change.criticalPath].contains {
                ($0?.verdict ?? .unchanged) != .unchanged
            }
        }
    }
}
