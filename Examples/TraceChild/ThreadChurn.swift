import Foundation
import Strobe

#if canImport(Glibc)
import Glibc
#endif

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
            if (start / batch) % 125 == 124 { print("resident \(residentBytes())") }
        }
        try session.stop()
        print("threads \(session.statistics.threads) discarded \(session.statistics.discardedEvents)")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("TraceChild: \(error)\n".utf8))
        exit(1)
    }
}

/// This process's resident memory in bytes, from `/proc/self/statm`.
private func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
