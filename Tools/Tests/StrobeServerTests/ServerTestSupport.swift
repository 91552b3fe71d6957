// Built with the package trait Server only (`--traits Server`, as the
// Makefile builds the tests).
#if Server
import Foundation
import Strobe

/// Traces the SDK writes in this process, one session at a time, each with
/// its own metadata so that their bytes differ.
enum ServerTraces {
    static let lock = NSLock()

    static func write(count: Int, in directory: String) throws -> [[UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        return try (0..<count).map { index in
            let path = directory + "/session-\(index).pftrace"
            var configuration = TraceConfiguration(outputPath: path)
            configuration.processSamplingInterval = .zero
            configuration.metadata = TraceMetadata(
                appName: "Lens", appVersion: index % 2 == 0 ? "5.1" : "5.2", dimensions: ["session": "\(index)"])
            try TraceSession.record(configuration) {
                for _ in 0..<40 { Trace.interval("apply lens") { _ = (0..<100).reduce(0, &+) } }
                Trace.counter("queue", Int64(index))
            }
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }
}
#endif
