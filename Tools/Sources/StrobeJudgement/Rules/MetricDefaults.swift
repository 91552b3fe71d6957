import Foundation
import StrobeResults
import StrobeStatistics

/// What a metric is judged by when no policy rule says otherwise: whether it
/// gates and its absolute floor, from its name and unit.
///
/// A user who asks "did it get slower?" means each test's wall time and CPU
/// time, and the metrics the suite names (trace intervals and counters,
/// values a test reports, CSV columns), and the measure block's allocation
/// count: those gate. The runner's other exact counts (bytes allocated,
/// allocations remaining, retains, releases) are reported. The resource
/// counts explain a change but are not one: context switches, page faults,
/// the CPU time split into user and system, resident memory (`process.*` and
/// `thread.*` other than the CPU total) are reported, not gated.
///
/// The absolute floors follow what measured the metric:
/// - CPU time split into user and system (`*.cpu.user`, `*.cpu.system`):
///   Linux measures a thread's run time exactly but splits it between user
///   and system in the ratio of timer-tick samples, so a move of less than
///   about a tick (``cpuTimeFloor``, 4 ms at the common 250 Hz) is the
///   split's own noise;
/// - context switches and page faults: one count (``countFloor``), so that
///   "1 → 2" is not a change;
/// - maximum resident memory: one page (``pageFloor``, 4 KiB);
/// - everything else: none (the relative floor alone).
public enum MetricDefaults {
    /// The absolute floor of a CPU-time component: about one timer tick.
    public static let cpuTimeFloor = 4_000_000.0
    /// The absolute floor of a context-switch or page-fault count, and the
    /// least floor of one of the runner's exact counts whose value varies:
    /// one count.
    public static let countFloor = 1.0
    /// The absolute floor of maximum resident memory, in bytes.
    static let pageFloor = 4096.0

    /// The name of the derived total CPU time of a test
    /// (`process.cpu.user` + `process.cpu.system` of each iteration).
    static let cpuTotal = MetricKind.cpuTotalName

    /// The metric's own name: what follows the last `/` of `TEST/METRIC`
    /// (the whole name when there is none).
    public static func metricPart(of name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return name }
        return String(name[name.index(after: slash)...])
    }

    /// The test's name: what precedes the last `/` of `TEST/METRIC`, or the
    /// whole name of a metric that names no test (a CSV column).
    public static func testPart(of name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return name }
        return String(name[..<slash])
    }

    /// What the metric `name` (`TEST/METRIC` or `METRIC`) in `unit`
    /// measures: the one table of kinds (``MetricKind``).
    public static func kind(of name: String, unit: String) -> MetricKind {
        MetricKind(metric: metricPart(of: name), unit: unit)
    }

    /// The kind of `name` where only its name is known: a unit tells only a
    /// ``MetricKind/duration`` from a ``MetricKind/reported`` value, which
    /// the name-only rules here do not ask.
    static func kind(of name: String) -> MetricKind { kind(of: name, unit: "") }

    /// Whether the metric is one of the runner's resource metrics (a
    /// `process.` or `thread.` metric other than the CPU total), which are
    /// reported but do not gate by default.
    static func isResourceMetric(_ name: String) -> Bool {
        [.cpuTimePart, .resourceReading].contains(kind(of: name))
    }

    /// Whether the metric gates by default: not a resource metric, and not
    /// an exact count other than the allocations (``gatedExactCounts``).
    public static func gates(_ name: String) -> Bool { !isResourceMetric(name) && !isReportedExactCount(name) }

    /// The default absolute floor of the metric, in its unit.
    public static func absoluteFloor(_ name: String, unit: String) -> Double {
        guard isResourceMetric(name) else { return 0 }
        let metric = metricPart(of: name)
        if unit == "ns", metric.hasSuffix(".cpu.user") || metric.hasSuffix(".cpu.system") { return cpuTimeFloor }
        if unit == "count", metric.contains(".context_switches.") || metric.contains(".faults.") { return countFloor }
        if unit == "bytes", metric.hasSuffix(".max_rss") { return pageFloor }
        return 0
    }
}
