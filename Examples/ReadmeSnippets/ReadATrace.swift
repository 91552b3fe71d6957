// docs/trace-format.md: "Read a trace", from Swift.
import StrobeReader

func readATrace() throws -> (lensApplyDurations: [UInt64], summary: TraceSummary) {
    let trace = try TraceReader.read(contentsOf: "app.pftrace")
    let lens = trace.intervals(named: "lens apply").compactMap(\.duration)
    let summary = TraceSummary(trace: trace, frameBudget: 16_670_000)
    return (lens, summary)
}
