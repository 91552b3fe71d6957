import Foundation
import Strobe
import StrobeTestSupport

/// `TraceChild churn THREADS TRACEPATH`: starts THREADS short-lived threads,
/// sixteen at a time, each recording an interval, a counter of its index
/// and an instant, into a session writing TRACEPATH; prints this process's
/// resident bytes after every 2,000 threads (`resident BYTES`), then the
/// session's counts (`threads N discarded D`). A process of its own, so
/// that what another test allocates meanwhile does not move the figures.
///
/// Every 128 threads it lets the writer catch up (``waitForTheWriter``): an
/// exited thread's buffer is freed once the writer has drained it, and its
/// chunks go to a pool the session keeps, so a writer starved of CPU (the
/// tools' test build on both cores beside it) lets hundreds of exited
/// threads' buffers wait, and the pool keeps that high-water mark: 25 to 67
/// MB over 10,000 threads in one CI run (AMD EPYC, 2 cores), none of it
/// lost or leaked. Waiting measures what the figures are for: what a thread
/// leaves behind once it is gone.
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
            if (start / batch) % 8 == 7 { waitForTheWriter(session) }
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

/// Returns once the session's writer has appended nothing for 30 ms (three
/// of its 10 ms flushes), or after 2 s.
func waitForTheWriter(_ session: TraceSession) {
    let deadline = ContinuousClock.now + .seconds(2)
    var written = session.statistics.bytesWritten
    var quiet = 0
    while quiet < 3, ContinuousClock.now < deadline {
        usleep(10_000)
        let now = session.statistics.bytesWritten
        quiet = now == written ? quiet + 1 : 0
        written = now
    }
}
