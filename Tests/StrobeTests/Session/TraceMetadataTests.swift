import CStrobe
import Foundation
import StrobeCrashRecovery
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import Strobe
@testable import StrobeEncoding

/// The session's metadata and sampling probability reach the trace, a
/// flight-recorder dump and a crash file, as Perfetto's official schema and
/// StrobeReader read them.
@Suite(.serialized, .processWide)
struct TraceMetadataTests {
    static let metadata = TraceMetadata(
        appName: "Lens", appVersion: "5.2", build: "5201", deviceModel: "iPhone15,2", osVersion: "18.1",
        dimensions: ["device.class": "mid", "country": "FR"])

    /// The double 1.0 reads back as the integer 1 through the decoder's JSON.
    static var expected: [String: OfficialDecoder.Value] {
        [
            "app.name": .string("Lens"), "app.version": .string("5.2"), "app.build": .string("5201"),
            "device.model": .string("iPhone15,2"), "os.version": .string("18.1"), "device.class": .string("mid"),
            "country": .string("FR"), "sampling.probability": .int(1),
        ]
    }

    /// Checks one file with both readers.
    static func check(_ path: String) throws {
        let official = try OfficialDecoder.decode(path)
        #expect(official.errors.isEmpty)
        let events = official.instants.filter { $0.name == TraceMetadata.eventName }
        #expect(events.count == 1)
        if let event = events.first {
            #expect(event.args == expected)
            #expect(official.track(event.track)?.kind == "process")
        }
        let trace = try TraceReader.read(contentsOf: path)
        let origin = try #require(trace.origin)
        #expect(origin.appVersion == "5.2")
        #expect(origin.deviceModel == "iPhone15,2")
        #expect(origin.values["device.class"] == "mid")
        #expect(origin.values.count == 7)
        #expect(origin.samplingProbability == 1)
        #expect(TraceSummary(trace: trace).renderText().contains("app.version: 5.2"))
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func aTraceCarriesItsMetadata() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.metadata = Self.metadata
        try TraceSession.record(configuration) {
            for _ in 0..<10 { Trace.interval("work") {} }
        }
        try Self.check(path)
        #expect(try TraceReader.read(contentsOf: path).intervals(named: "work").count == 10)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func aDumpAndACrashFileCarryTheMetadata() throws {
        let crashFile = temporaryTracePath() + ".strobe-crash"
        let dump = temporaryTracePath() + ".dump"
        let recovered = crashFile + ".pftrace"
        defer { for path in [crashFile, dump, recovered] { try? FileManager.default.removeItem(atPath: path) } }
        var configuration = TraceConfiguration()
        configuration.whenBufferFull = .overwriteOldest
        configuration.bufferSizePerThread = 64 << 10
        configuration.processSamplingInterval = .zero
        configuration.crashCapture = .init(path: crashFile)
        configuration.metadata = Self.metadata
        let session = try TraceSession.start(configuration)
        for _ in 0..<100 { Trace.interval("work") {} }
        #expect(cstrobe_crash_write_now(SIGSEGV, 0) == 0)
        try session.dump(to: dump)
        try session.stop()
        _ = try CrashRecovery.recover(crashFile: crashFile, writingTo: recovered)
        try Self.check(dump)
        try Self.check(recovered)
    }

    @Test func aTraceWithoutMetadataHasNoOrigin() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        try TraceSession.record(configuration) { Trace.interval("work") {} }
        let trace = try TraceReader.read(contentsOf: path)
        #expect(trace.origin == nil)
        #expect(trace.instants.isEmpty)
    }

    @Test func aSampledSessionRecordsItsProbabilityAlone() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.samplingProbability = 0.5
        var sampled = false
        for _ in 0..<64 where !sampled {
            let session = try TraceSession.start(configuration)
            sampled = session.isSampled
            if sampled { Trace.interval("work") {} }
            try session.stop()
        }
        try #require(sampled, "one of 64 sessions at probability 0.5 records")
        let origin = try #require(try TraceReader.read(contentsOf: path).origin)
        #expect(origin.values.isEmpty)
        #expect(origin.samplingProbability == 0.5)
    }

    @Test(arguments: [
        (["": "x"], "empty name"), (["app.version": "1"], "reserved name"),
        (["sampling.probability": "1"], "reserved name"),
    ])
    func badDimensionsAreRefusedByName(dimensions: [String: String], problem: String) {
        var configuration = TraceConfiguration(outputPath: temporaryTracePath())
        configuration.metadata.dimensions = dimensions
        #expect {
            try TraceSession.start(configuration)
        } throws: { error in
            "\(error)".contains(problem)
        }
    }

    @Test func theEnvironmentGivesTheMetadata() throws {
        let configuration = try #require(
            try TraceConfiguration.fromEnvironment([
                "STROBE_TRACE_OUTPUT": "/tmp/t.pftrace",
                "STROBE_TRACE_METADATA": "app.version=5.2, device.class=mid,app.build=77,note=a=b",
            ]))
        #expect(
            configuration.metadata
                == TraceMetadata(
                    appVersion: "5.2", build: "77", dimensions: ["device.class": "mid", "note": "a=b"]))
        for bad in ["app.version", "=x", "sampling.probability=1"] {
            #expect(throws: TraceSessionError.self) {
                try TraceConfiguration.fromEnvironment(["STROBE_TRACE_OUTPUT": "/tmp/t", "STROBE_TRACE_METADATA": bad])
            }
        }
        #expect(try TraceConfiguration.fromEnvironment(["STROBE_TRACE_METADATA": "app.version=1"]) == nil)
    }

    @Test func theCrashSectionRoundTrips() throws {
        var configuration = TraceConfiguration()
        configuration.metadata = Self.metadata
        configuration.samplingProbability = 0.01
        let metadata = SessionMetadata(configuration)
        let back = try #require(SessionMetadata(serialized: metadata.serialized))
        #expect(back.samplingProbability == 0.01)
        #expect(back.entries.map(\.name) == metadata.entries.map(\.name))
        #expect(back.entries.map(\.value) == metadata.entries.map(\.value))
        #expect(SessionMetadata(serialized: Array("sampling.probability\u{0}x\u{0}".utf8)) == nil)
        #expect(SessionMetadata(serialized: Array("a\u{0}b".utf8)) == nil)
    }
}
