/// The rusage deltas Strobe attaches to the end of an interval, as debug
/// annotations (arguments) of its end event, in the order the SDK's records
/// store them. The SDK writes these names; the reader gathers them back
/// into one resource-usage value, and exports spell them out again.
public enum ResourceUsageArgument: Int, CaseIterable, Sendable {
    /// CPU time in user mode, in nanoseconds.
    case userNanoseconds
    /// CPU time in the kernel, in nanoseconds.
    case systemNanoseconds
    /// Context switches the thread asked for.
    case voluntarySwitches
    /// Context switches forced on the thread.
    case involuntarySwitches
    /// Page faults served without I/O.
    case minorFaults
    /// Page faults that needed I/O.
    case majorFaults

    /// What every name starts with.
    public static let prefix = "rusage."

    /// The argument's name in the trace.
    public var name: String {
        switch self {
        case .userNanoseconds: return "rusage.user_ns"
        case .systemNanoseconds: return "rusage.system_ns"
        case .voluntarySwitches: return "rusage.voluntary_switches"
        case .involuntarySwitches: return "rusage.involuntary_switches"
        case .minorFaults: return "rusage.minor_faults"
        case .majorFaults: return "rusage.major_faults"
        }
    }

    /// The argument named `name`, or nil for any other name.
    public init?(name: String) {
        guard name.hasPrefix(Self.prefix), let match = Self.allCases.first(where: { $0.name == name }) else {
            return nil
        }
        self = match
    }
}
