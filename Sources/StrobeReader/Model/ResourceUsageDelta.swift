import PerfettoWire

/// What `getrusage` counted over an interval (``Interval/resourceUsage``):
/// the end's counts less the begin's. It is the type the SDK reads rusage
/// into, named here for what an interval holds.
public typealias ResourceUsageDelta = ResourceUsage
