/// What a metric of a results file measures, told from its name and unit:
/// the one table the runner, `strobe diff` and `strobe compare`, the run
/// history and the trend read to tell a time from a count, and work the code
/// alone sets from a reading of the machine.
///
/// | kind | metrics | set by |
/// |---|---|---|
/// | ``wallTime`` | `wall` | the code and the machine |
/// | ``cpuTime`` | `process.cpu` (user + system) | the code and the machine |
/// | ``cpuTimePart`` | `process.cpu.user`, `thread.cpu.system`, … | the code and the machine, split by timer ticks |
/// | ``resourceReading`` | other `process.` and `thread.` metrics: context switches, page faults, resident memory | the machine's answer to the code |
/// | ``instructions`` | `instructions` | the code (counted) |
/// | ``exactCount`` | `allocations`, `allocations.bytes`, `allocations.remaining`, `retains`, `releases` | the code (counted) |
/// | ``duration`` | any other metric in a unit of time: an interval's duration or CPU time, the critical path | the code and the machine |
/// | ``reported`` | anything else: a value the test reports, a trace counter, an interval's count, a CSV column | the code |
public enum MetricKind: String, Sendable, Hashable, CaseIterable {
    /// The measure block's wall time.
    case wallTime
    /// The CPU time of the process's threads, user and system together.
    case cpuTime
    /// The user or the system part of a process's or thread's CPU time.
    case cpuTimePart
    /// Any other reading of the process or of the measuring thread.
    case resourceReading
    /// The user-space instructions the measure block executed.
    case instructions
    /// One of the runner's exact counts of the measure block.
    case exactCount
    /// Any other metric in a unit of time.
    case duration
    /// Any other metric.
    case reported

    /// The name of the measure block's wall time.
    public static let wallName = "wall"
    /// The name of the CPU time of the process's threads, user and system
    /// together.
    public static let cpuTotalName = "process.cpu"
    /// The name of the user CPU time of the process's threads, one part of
    /// ``cpuTotalName``.
    public static let cpuUserName = "process.cpu.user"
    /// The name of the system (kernel) CPU time of the process's threads,
    /// the other part of ``cpuTotalName``.
    public static let cpuSystemName = "process.cpu.system"
    /// The name of the instruction count.
    public static let instructionsName = "instructions"

    /// The runner's exact counts, in the order they are reported, each with
    /// what one of it and several of it are called ("1 allocation", "96
    /// allocations"); the bytes carry their unit instead.
    public static let exactCounts: [(name: String, one: String, many: String)] = [
        ("allocations", "allocation", "allocations"),
        ("allocations.bytes", "byte", "bytes"),
        ("allocations.remaining", "remaining allocation", "remaining allocations"),
        ("retains", "retain", "retains"),
        ("releases", "release", "releases"),
    ]

    /// The runner's exact counts' names, in the order they are reported.
    public static let exactCountNames = exactCounts.map(\.name)

    /// What `count` of the exact count `metric` are called: "allocation"
    /// for 1, "allocations" for 96; nil for a metric that is not one of
    /// the runner's exact counts.
    public static func noun(ofExactCount metric: String, count: Double) -> String? {
        exactCounts.first { $0.name == metric }.map { abs(count) == 1 ? $0.one : $0.many }
    }

    /// The units of time.
    public static let timeUnits: Set<String> = ["ns", "us", "µs", "ms", "s"]

    /// The kind of the metric `metric` (its own name, without a `TEST/`
    /// part) in `unit`.
    public init(metric: String, unit: String) {
        switch metric {
        case Self.wallName: self = .wallTime
        case Self.instructionsName: self = .instructions
        case Self.cpuTotalName: self = .cpuTime
        case _ where Self.exactCountNames.contains(metric): self = .exactCount
        case _ where metric.hasPrefix("process.") || metric.hasPrefix("thread."):
            self = metric.contains(".cpu.") ? .cpuTimePart : .resourceReading
        case _ where metric.contains(".cpu") || Self.timeUnits.contains(unit): self = .duration
        default: self = .reported
        }
    }

    /// Whether the code alone sets it, counted: the instructions and the
    /// exact counts, which repeat from process to process of one build.
    public var isCountedWork: Bool { self == .instructions || self == .exactCount }

    /// Whether it is the CPU time of the process or of a thread, whole or
    /// in part: time spent executing, which the counted work covers for a
    /// test that waits as for one that does not.
    public var isCPUTime: Bool { self == .cpuTime || self == .cpuTimePart }

    /// Whether it is a time: the wall time, a CPU time or a duration.
    public var isTime: Bool { [.wallTime, .cpuTime, .cpuTimePart, .duration].contains(self) }

    /// Whether a run under simulation or emulation (`metadata.simulated`:
    /// the suite ran under callgrind or QEMU) sets it rather than the code:
    /// every time and every reading of the process or thread. Its
    /// instructions, exact counts and reported values are the code's.
    public var isSimulatorReading: Bool { isTime || self == .resourceReading }
}

extension PerfMetric {
    /// What the metric measures (``MetricKind``).
    public var kind: MetricKind { MetricKind(metric: name, unit: unit) }
}
