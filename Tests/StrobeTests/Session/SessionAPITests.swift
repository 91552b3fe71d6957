import Foundation
import Strobe
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

private struct Planned: Error, Equatable {}

/// `TraceSession.record`, `beginAsync` without a parent, and `Trace.Name`
/// equality.
@Suite(.serialized, .processWide)
struct SessionAPITests {
    static func configuration(_ path: String?) -> TraceConfiguration {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        return configuration
    }

    @Test func recordRunsTheBodyInASessionAndReturnsItsValue() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let value = try TraceSession.record(Self.configuration(path)) {
            #expect(Trace.isRecording)
            Trace.interval("inside") { usleep(100) }
            return 42
        }
        #expect(value == 42)
        #expect(!Trace.isRecording)
        #expect(try TraceReader.read(contentsOf: path).intervals(named: "inside").count == 1)
    }

    @Test func recordStopsTheSessionWhenTheBodyThrowsAndThrowsTheBodysError() async throws {
        #expect(throws: Planned()) {
            try TraceSession.record(Self.configuration(nil)) { throw Planned() }
        }
        #expect(!Trace.isRecording)
        await #expect(throws: Planned()) {
            try await TraceSession.record(Self.configuration(nil)) {
                try await Task.sleep(nanoseconds: 1000)
                throw Planned()
            }
        }
        #expect(!Trace.isRecording)
        // The session is gone: another one starts.
        try TraceSession.record(Self.configuration(nil)) {}
    }

    @Test(.enabled(if: FileManager.default.isWritableFile(atPath: "/dev/full")))
    func recordThrowsTheWriteErrorThatStopFinds() throws {
        let error = try #require(throws: TraceSessionError.self) {
            try TraceSession.record(Self.configuration("/dev/full")) {
                Trace.interval("lost") {}
            }
        }
        #expect(error.kind == .writeFailed)
        #expect(error.path == "/dev/full")
        #expect(error.errno == ENOSPC)
        #expect(error.description.hasPrefix("cannot write trace file /dev/full: "))
        #expect(!Trace.isRecording)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func beginAsyncWithoutAParentNestsUnderTheTasksInnermostInterval() async throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await TraceSession.record(Self.configuration(path)) {
            await Trace.interval("request") {
                await Task.yield()
                let flow = Trace.Flow()
                Trace.beginAsync(Trace.Name("late name"), flow: flow, renamable: true)
                    .end(renamedTo: Trace.Name("renamed"))
                Trace.beginAsync(Trace.Name("reported"), startedAgo: .microseconds(50)).end()
                Trace.beginAsync(Trace.Name("root"), parent: nil).end()
            }
        }
        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        let request = try #require(trace.slices(named: "request").first)
        let renamed = try #require(trace.slices(named: "renamed").first)
        let reported = try #require(trace.slices(named: "reported").first)
        let root = try #require(trace.slices(named: "root").first)
        #expect(trace.track(renamed.track)?.parent == request.track)
        #expect(trace.track(reported.track)?.parent == request.track)
        #expect(trace.track(root.track)?.parent == trace.track(request.track)?.parent)
    }

    @Test func namesAreEqualByTextHoweverTheyWereMade() {
        let text: StaticString = "upload"
        let literal = Trace.Name(text)
        let built = Trace.Name(String("up") + "load")
        // One is a literal's address, the other an interned id.
        #expect(literal.word != built.word)
        #expect(literal == built)
        #expect(literal.hashValue == built.hashValue)
        let copy: StaticString = "upload"
        #expect(Set([literal, built, Trace.Name(copy)]).count == 1)
        let other: StaticString = "download"
        #expect(Trace.Name(other) != literal)
        #expect(Trace.Name(String("down") + "load") != built)
        let empty: StaticString = ""
        #expect(Trace.Name(empty) == Trace.Name(String()))
    }
}
