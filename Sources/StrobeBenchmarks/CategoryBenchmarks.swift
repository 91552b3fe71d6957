import CStrobe
import Strobe
import StrobeTestSupport

/// What categories cost: an event in a category the session leaves off,
/// beside an event with no session, and a pair in a recorded category,
/// beside a pair without one, each in the same run.
enum CategoryBenchmarks {
    static let off = Trace.Category("bench.off")
    static let on = Trace.Category("bench.on")

    static func run() {
        let runs = CoreBenchmarks.runs
        let count = CoreBenchmarks.eventsPerRun
        var configuration = CoreBenchmarks.quietConfiguration()
        configuration.categories = ["bench.on"]
        CoreBenchmarks.withSession(configuration) { _ = timeCategorizedPairs(on, count / 2) }
        let noSession = median(runs: runs) { timePairs(count * 10) / Double(count * 20) }
        let disabled = median(runs: runs) {
            CoreBenchmarks.withSession(configuration) { timeCategorizedPairs(off, count * 10) / Double(count * 20) }
        }
        Figure(
            name: "event in a category that is off, per call", value: disabled, unit: "ns/call",
            baselineName: "disabled (no session), per call, same run", baselineValue: noSession,
            target: "value <= 1 ns"
        ).printLine()
        let plain = median(runs: runs) {
            CoreBenchmarks.withSession(configuration) { timePairs(count / 2) / Double(count / 2) }
        }
        let categorized = median(runs: runs) {
            CoreBenchmarks.withSession(configuration) { timeCategorizedPairs(on, count / 2) / Double(count / 2) }
        }
        Figure(
            name: "begin+end pair in a recorded category", value: categorized, unit: "ns/pair",
            baselineName: "begin+end pair without a category, same run", baselineValue: plain
        ).printLine()
    }
}

@inline(never)
func timeCategorizedPairs(_ category: Trace.Category, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count {
        Trace.begin("benchmark interval", category: category)
        Trace.end(category: category)
    }
    return Double(cstrobe_monotonic_ns() - start)
}
