import Foundation
import Strobe
import StrobeTestSupport

/// `TraceChild churn THREADS TRACEPATH`: starts THREADS short-lived threads,
/// sixteen at a time, each recording an interval, a counter of its index
/// and an instant, into a session writing TRACEPATH; prints this process's
/// resident bytes after every 2,000 threads (`resident BYTES`), then the
/// session's counts (`threads N discarded D`). A process of its own, so
/// that what another test allocates meanwhile does not move the figures.
func runThreadChurn(_ arguments: [String]) -> Never {
    guard arguments.count == 2, let total = Int(arguments[0]), total > 0 else {
        FileHandle.standardError.write(Data("usage: TraceChild churn THREADS TRACEPATH\n".utf8))
        exit(64)
    }
    var configuration = TraceConfiguration(outputPath: arguments[1])
    configuration.processSamplingInterval = .zero
    configuration.flushInterval = .milliseconds(10)
    configuration.bufferSizePerThread = 64 << 10
    do {
        let session = try TraceSession.start(configuration)
        let batch = 16
        for start in stride(from: 0, to: total, by: batch) {
            let group = DispatchGroup()
            for index in start..<min(start + batch, total) {
                group.enter()
                Thread {
                    Trace.begin("churn")
                    Trace.counter("churn index", index)
                    Trace.instant("churn instant")
                    Trace.end()
                    group.leave()
                }.start()
            }
            group.wait()
            if (start / batch) % 125 == 124 { print("resident \(ProcessMemory.residentBytes())") }
        }
        try session.stop()
        print("threads \(session.statistics.threads) discarded \(session.statistics.discardedEvents)")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("TraceChild: \(error)\n".utf8))
        exit(1)
    }
}
