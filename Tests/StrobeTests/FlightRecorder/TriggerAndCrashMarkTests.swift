import CStrobe
import Foundation
import StrobeCrashRecovery
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import Strobe
@testable import StrobeEncoding

/// A dump's trigger mark and a recovered crash's mark are the same kind of
/// packet: the official decoder reads both as an instant on the metadata
/// sequence, at an absolute CLOCK_BOOTTIME time, on the thread's track, with
/// their annotations spelled out.
@Suite(.serialized, .processWide)
struct TriggerAndCrashMarkTests {
    /// CLOCK_BOOTTIME's id in Perfetto's BuiltinClock.
    static let boottimeClock: UInt32 = 6

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func triggerMarkAndCrashMarkDecodeTheSameWay() throws {
        let directory = FlightRecorderTriggerTests.freshDirectory()
        let crashFile = temporaryTracePath() + ".strobe-crash"
        let recoveredPath = crashFile + ".pftrace"
        defer {
            for path in [directory, crashFile, recoveredPath] { try? FileManager.default.removeItem(atPath: path) }
        }
        var configuration = FlightRecorderTriggerTests.configuration(
            directory: directory, before: .milliseconds(100), after: .milliseconds(50))
        configuration.crashCapture = .init(path: crashFile)
        let session = try TraceSession.start(configuration)
        FlightRecorderTriggerTests.frames(for: .milliseconds(60), length: .milliseconds(2))
        let beforeTrigger = cstrobe_boottime_ns()
        #expect(session.trigger("checkout failed"))
        let afterTrigger = cstrobe_boottime_ns()
        FlightRecorderTriggerTests.frames(for: .milliseconds(80), length: .milliseconds(2))
        FlightRecorderTriggerTests.waitForDumps(session, count: 1)
        let beforeCrash = cstrobe_boottime_ns()
        #expect(cstrobe_crash_write_now(SIGSEGV, 0x1234) == 0)
        let afterCrash = cstrobe_boottime_ns()
        try session.stop()
        let thread = Int(cstrobe_thread_id())

        let dumps = FlightRecorderTriggerTests.dumps(in: directory)
        try #require(dumps.count == 1, "one dump: \(dumps)")
        let dump = try OfficialDecoder.decode(directory + "/" + dumps[0])
        #expect(dump.errors.isEmpty, "\(dump.errors)")
        try CrashRecovery.recover(crashFile: crashFile, writingTo: recoveredPath)
        let recovered = try OfficialDecoder.decode(recoveredPath)
        #expect(recovered.errors.isEmpty, "\(recovered.errors)")

        let trigger = try #require(dump.instants.first { $0.name == TriggerMark.name })
        let crash = try #require(recovered.instants.first { $0.name == "crash" })
        #expect(dump.instants.filter { $0.name == TriggerMark.name }.count == 1)
        #expect(recovered.instants.filter { $0.name == "crash" }.count == 1)

        // The same packet: on the metadata sequence, whose state holds no
        // interned names, at an absolute CLOCK_BOOTTIME time, on the track of
        // the thread that triggered and crashed, without categories.
        for (mark, trace) in [(trigger, dump), (crash, recovered)] {
            #expect(mark.sequence == TraceEncoder.metadataSequenceID, "\(mark.name)")
            #expect(mark.clock == Self.boottimeClock, "\(mark.name)")
            #expect(trace.track(mark.track)?.kind == "thread", "\(mark.name)")
            #expect(trace.track(mark.track)?.tid == thread, "\(mark.name)")
            #expect(mark.categories.isEmpty, "\(mark.name)")
        }
        #expect(trigger.track == crash.track)
        // Each at the time it happened: the crash's raw time converted with
        // the crash file's clock readings.
        #expect(trigger.ts >= beforeTrigger && trigger.ts <= afterTrigger)
        #expect(crash.ts >= beforeCrash && crash.ts <= afterCrash)
        // Both after the events recorded before them, on the same track.
        let lastFrame = try #require(recovered.slices(named: "frame").map(\.ts).max())
        #expect(crash.ts > lastFrame)
        #expect(recovered.slices(named: "frame").allSatisfy { $0.track == crash.track })

        // Typed annotations, keys as they always were.
        #expect(trigger.args["reason"] == .string("checkout failed"))
        #expect(trigger.args["before_ns"] == .int(100_000_000))
        #expect(trigger.args["after_ns"] == .int(50_000_000))
        #expect(trigger.args["suppressed_triggers"] == .int(0))
        #expect(crash.args["signal"] == .string("SIGSEGV"))
        #expect(crash.args["signal code"] == .int(0))
        #expect(crash.args["fault address"] == .string("0x1234"))
        #expect(crash.args.count == 3)
    }
}
