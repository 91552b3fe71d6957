import Foundation
import Strobe
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// Full buffers, rings and unbalanced calls: what is lost is counted and the
/// trace stays readable.
@Suite(.serialized, .processWide)
struct BufferLimitTests {
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func discardedEventsAreCountedExactly() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = RecordingTests.configuration(path)
        configuration.bufferSizePerThread = 64 << 10
        configuration.flushInterval = .milliseconds(5)
        let threadCount = 4
        let pairsPerThread = 50_000
        let session = try TraceSession.start(configuration)
        do {
            let group = DispatchGroup()
            for _ in 0..<threadCount {
                group.enter()
                Thread {
                    for index in 0..<pairsPerThread {
                        // Pauses let the writer drain, so recording resumes
                        // after each run of discarded events. On a loaded
                        // machine the writer may need longer than one flush
                        // interval, so the pause lasts until it has written.
                        if index % 5000 == 4999 { RecordingTests.waitForWrite(session) }
                        Trace.begin("stress")
                        if index % 7 == 0 { Trace.counter("stress counter", index) }
                        Trace.end()
                    }
                    group.leave()
                }.start()
            }
            group.wait()
        }
        try session.stop()
        let statistics = session.statistics
        let emitted = threadCount * pairsPerThread * 2 + threadCount * ((pairsPerThread + 6) / 7)
        let trace = try OfficialDecoder.decode(path)
        let stress = trace.slices(named: "stress")
        let inFile = stress.count * 2 + trace.counters.filter { $0.name == "stress counter" }.count
        let discarded = Int(trace.stat("chunks_discarded"))
        #expect(discarded > 0, "the buffer is small enough that some events must be discarded")
        #expect(inFile + discarded == emitted)
        #expect(Int(statistics.discardedEvents) == discarded)
        // An interval whose begin was kept keeps its end.
        #expect(stress.allSatisfy { $0.dur != nil })
        #expect(trace.errors.isEmpty)
        #expect(trace.stat("tokenizer_skipped_packets") == 0)
        #expect(trace.stat("packets_dropped_marks") > 0)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func ringWrapKeepsEverySurvivingEventVisible() throws {
        let recordingPath = temporaryTracePath()
        let dumpPath = temporaryTracePath("dump")
        defer {
            try? FileManager.default.removeItem(atPath: recordingPath)
            try? FileManager.default.removeItem(atPath: dumpPath)
        }
        var configuration = RecordingTests.configuration(recordingPath)
        configuration.whenBufferFull = .overwriteOldest
        configuration.bufferSizePerThread = 64 << 10
        let session = try TraceSession.start(configuration)
        let pairs = 40_000
        Trace.begin("held open")
        for index in 0..<pairs {
            Trace.begin("ring")
            if index == pairs - 1 { Trace.instant("last") }
            Trace.end()
        }
        try session.dump(to: dumpPath)
        Trace.end()
        try session.stop()

        let statistics = session.statistics
        #expect(statistics.overwrittenEvents > 0)
        for path in [dumpPath, recordingPath] {
            let trace = try OfficialDecoder.decode(path)
            #expect(trace.errors.isEmpty, "\(path): \(trace.errors.prefix(3))")
            #expect(trace.stat("tokenizer_skipped_packets") == 0)
            let ring = trace.slices(named: "ring")
            #expect(ring.count > 1000, "a wrapped 64 KiB ring still shows thousands of slices")
            #expect(trace.instants.contains { $0.name == "last" })
            let recorded = Int(trace.stat("chunks_written"))
            let overwritten = Int(trace.stat("chunks_overwritten"))
            #expect(overwritten > 0)
            let inFile = ring.count * 2 + trace.instants.count + trace.slices(named: "held open").count * 2
            // Every event still in the ring is in the file; ends whose begin
            // was overwritten are the only ones left out.
            #expect(inFile <= recorded - overwritten)
            #expect(recorded - overwritten - inFile < 64)
        }
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func unbalancedCallsNeverCorruptTheTrace() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let long = String(repeating: "é", count: 5000)
        let statistics = try RecordingTests.record(RecordingTests.configuration(path)) {
            Trace.end()
            Trace.end()
            Trace.begin("")
            Trace.end()
            Trace.begin(Trace.Name(long))
            Trace.end()
            Trace.begin("never ended")
            Trace.instant(Trace.Name(""))
        }
        #expect(statistics.unmatchedEnds == 2)
        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        #expect(trace.slices.contains { $0.name.isEmpty && $0.dur != nil })
        let longSlice = try #require(trace.slices.first { $0.name.hasPrefix("éé") })
        #expect(longSlice.name.utf8.count <= Trace.Name.maximumLength)
        #expect(longSlice.name.utf8.count > Trace.Name.maximumLength - 4)
        let open = try #require(trace.slices(named: "never ended").first)
        #expect(open.dur == nil)
    }
}
