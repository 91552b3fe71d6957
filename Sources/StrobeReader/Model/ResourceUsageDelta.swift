/// What `getrusage` counted over an interval.
public struct ResourceUsageDelta: Sendable, Hashable, Codable {
    /// CPU time in user mode, in nanoseconds.
    public var userNanoseconds: Int64 = 0
    /// CPU time in the kernel, in nanoseconds.
    public var systemNanoseconds: Int64 = 0
    /// Context switches the thread asked for (it blocked).
    public var voluntarySwitches: Int64 = 0
    /// Context switches forced on the thread (it was preempted).
    public var involuntarySwitches: Int64 = 0
    /// Page faults served without I/O.
    public var minorFaults: Int64 = 0
    /// Page faults that needed I/O.
    public var majorFaults: Int64 = 0

    /// User plus system CPU time.
    public var cpuNanoseconds: Int64 { userNanoseconds + systemNanoseconds }
}
