import Foundation
import Strobe
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// Sessions starting, stopping, refusing and sampling.
@Suite(.serialized, .processWide)
struct SessionLifecycleTests {
    @Test func sessionsStartAndStopWhileThreadsRecord() throws {
        let running = Atomic2()
        let threads = (0..<3).map { index in
            Thread {
                var count = 0
                while running.isRunning {
                    count += 1
                    if count % 64 == 0 { usleep(50) }
                    Trace.begin("racing")
                    Trace.counter("racing counter", index)
                    Trace.instant("racing instant")
                    Trace.end()
                }
                running.finished()
            }
        }
        threads.forEach { $0.start() }
        var paths: [String] = []
        for round in 0..<8 {
            let path = temporaryTracePath("race\(round)")
            paths.append(path)
            let session = try TraceSession.start(RecordingTests.configuration(path))
            usleep(UInt32.random(in: 100...5000))
            try session.stop()
        }
        running.stop()
        while running.finishedCount < threads.count { usleep(1000) }
        defer { paths.forEach { try? FileManager.default.removeItem(atPath: $0) } }
        if OfficialDecoder.isUsable {
            for path in paths {
                let trace = try OfficialDecoder.decode(path)
                #expect(trace.stat("tokenizer_skipped_packets") == 0)
                #expect(!trace.errors.contains("parse_error"))
            }
        }
    }

    @Test func secondSessionIsRefusedWhileOneRuns() throws {
        let session = try TraceSession.start(TraceConfiguration())
        #expect(throws: TraceSessionError.alreadyRecording) {
            _ = try TraceSession.start(TraceConfiguration())
        }
        try session.stop()
    }

    @Test func unwritablePathNamesTheFileAndErrno() throws {
        let error = try #require(throws: TraceSessionError.self) {
            _ = try TraceSession.start(TraceConfiguration(outputPath: "/nonexistent-dir/x.pftrace"))
        }
        #expect(error.kind == .cannotCreateFile)
        #expect(error.path == "/nonexistent-dir/x.pftrace")
        #expect(error.errno == ENOENT)
        #expect(
            error.description
                == "cannot create trace file /nonexistent-dir/x.pftrace: No such file or directory (errno \(ENOENT))")
    }

    @Test func unsampledSessionRecordsNothing() throws {
        var configuration = TraceConfiguration(outputPath: temporaryTracePath())
        configuration.samplingProbability = 0
        let session = try TraceSession.start(configuration)
        #expect(!session.isSampled)
        #expect(!Trace.isRecording)
        try session.stop()
        #expect(!FileManager.default.fileExists(atPath: configuration.outputPath!))
    }
}

/// A stop flag and a finish count shared with recording threads.
final class Atomic2: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var finishedThreads = 0
    var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return running
    }
    var finishedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return finishedThreads
    }
    func stop() {
        lock.lock()
        running = false
        lock.unlock()
    }
    func finished() {
        lock.lock()
        finishedThreads += 1
        lock.unlock()
    }
}
