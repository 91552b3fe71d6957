import Foundation
import Strobe
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

extension Trace.Category {
    fileprivate static let orphanOn = Trace.Category("orphan.on")
    fileprivate static let orphanOff = Trace.Category("orphan.off")
}

/// Ends whose begin is not in the trace are left out by the writer, and
/// counted in the trace's statistics (`patches_failed` of the thread's
/// buffer), where both decoders and `strobe summarize` see them.
@Suite(.serialized, .processWide)
struct OrphanEndTests {
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func anEndWithoutItsBeginIsCountedInTheTraceStatistics() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.categories = ["orphan.on"]
        let session = try TraceSession.start(configuration)
        Trace.begin("kept", category: .orphanOn)
        // Begun while its category is off: the begin is skipped, the end is
        // recorded and has nothing to close.
        Trace.begin("skipped", category: .orphanOff)
        try session.setCategories(["*"])
        Trace.end(category: .orphanOff)
        Trace.interval("after", category: .orphanOff) {}
        try session.stop()

        let official = try OfficialDecoder.decode(path)
        #expect(official.errors.isEmpty)
        #expect(official.stat("patches_failed") == 1)
        #expect(Set(official.slices.map(\.name)) == ["kept", "after"])
        #expect(official.slices(named: "after").first?.dur != nil)

        let trace = try TraceReader.read(contentsOf: path)
        #expect(trace.loss.orphanEnds == 1)
        #expect(!trace.loss.isEmpty)
        #expect(trace.loss.unmatchedEnds == 0)
        let text = TraceSummary(trace: trace, frameBudget: 16_670_000).renderText()
        #expect(text.contains("ends left out by the writer (begin not in the trace): 1"))
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func aTraceWithEveryBeginCountsNoOrphanEnds() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let session = try TraceSession.start(configuration)
        Trace.interval("whole") { Trace.interval("inner", category: .orphanOn) {} }
        try session.stop()

        #expect(try OfficialDecoder.decode(path).stat("patches_failed") == 0)
        let trace = try TraceReader.read(contentsOf: path)
        #expect(trace.loss.orphanEnds == 0)
        #expect(trace.loss.isEmpty)
    }
}
