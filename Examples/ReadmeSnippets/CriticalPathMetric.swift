// docs/perf-tests.md ("The critical path of a threaded test").
import Dispatch
import Strobe
import StrobePerf

/// Half of the work the snippet's two workers share.
@inline(never)
func parseHalf() {
    var state: UInt64 = 0x9E37
    for step in 0..<1_000_000 { state = (state ^ UInt64(step)) &* 0x2545_F491_4F6C_DD1D }
    if state == 1 { print(state) }
}

func criticalPathTest() -> PerfTest {
    let parseInTwoThreads = PerfTest(
        "parse in two threads", metrics: [.interval("parse in two threads", .criticalPath)]
    ) { _ in
        Trace.interval("parse in two threads") {
            let workers = DispatchGroup()
            for worker in 0..<2 {
                DispatchQueue.global().async(group: workers) {
                    Trace.interval(worker == 0 ? "parse worker 0" : "parse worker 1") { parseHalf() }
                }
            }
            workers.wait()
        }
    }
    return parseInTwoThreads
}
