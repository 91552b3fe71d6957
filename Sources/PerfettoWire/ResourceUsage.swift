/// What `getrusage` counts, field by field as ``ResourceUsageArgument`` names
/// them: CPU time, context switches and page faults.
///
/// One type for both uses: the SDK reads the counts so far (for the
/// perf-test runner, which subtracts two readings), and the reader gives
/// the difference over an interval that the SDK wrote as the arguments of
/// its end.
public struct ResourceUsage: Sendable, Hashable, Codable {
    /// CPU time in user mode, in nanoseconds.
    public var userNanoseconds: Int64
    /// CPU time in the kernel, in nanoseconds.
    public var systemNanoseconds: Int64
    /// Context switches the thread asked for (it blocked).
    public var voluntarySwitches: Int64
    /// Context switches forced on the thread (it was preempted).
    public var involuntarySwitches: Int64
    /// Page faults served without I/O.
    public var minorFaults: Int64
    /// Page faults that needed I/O.
    public var majorFaults: Int64

    /// Counts of zero, or of the values given.
    public init(
        userNanoseconds: Int64 = 0, systemNanoseconds: Int64 = 0, voluntarySwitches: Int64 = 0,
        involuntarySwitches: Int64 = 0, minorFaults: Int64 = 0, majorFaults: Int64 = 0
    ) {
        self.userNanoseconds = userNanoseconds
        self.systemNanoseconds = systemNanoseconds
        self.voluntarySwitches = voluntarySwitches
        self.involuntarySwitches = involuntarySwitches
        self.minorFaults = minorFaults
        self.majorFaults = majorFaults
    }

    /// The count that `argument` names.
    package subscript(argument: ResourceUsageArgument) -> Int64 {
        get {
            switch argument {
            case .userNanoseconds: return userNanoseconds
            case .systemNanoseconds: return systemNanoseconds
            case .voluntarySwitches: return voluntarySwitches
            case .involuntarySwitches: return involuntarySwitches
            case .minorFaults: return minorFaults
            case .majorFaults: return majorFaults
            }
        }
        set {
            switch argument {
            case .userNanoseconds: userNanoseconds = newValue
            case .systemNanoseconds: systemNanoseconds = newValue
            case .voluntarySwitches: voluntarySwitches = newValue
            case .involuntarySwitches: involuntarySwitches = newValue
            case .minorFaults: minorFaults = newValue
            case .majorFaults: majorFaults = newValue
            }
        }
    }
}
