import CStrobe
import Foundation
import Strobe
import StrobeCrashRecovery
import StrobeEncoding
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// Crash capture in this process: the crash file's writer, its format and
/// versions, the handler's installation, and `strobe recover`'s refusals.
/// Crashing children are in ``CrashedChildTests``.
@Suite(.serialized, .processWide) struct CrashCaptureTests {
    static var strobe: String { builtProgram("strobe") }

    /// A crash file written in this process (the handler's writer, without a
    /// signal) next to a snapshot of the same rings: the same events.
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func recoveredEventsMatchASnapshotOfTheSameRings() throws {
        let crashFile = temporaryTracePath() + ".strobe-crash"
        let snapshot = temporaryTracePath() + ".snapshot"
        let recoveredPath = crashFile + ".pftrace"
        defer {
            for path in [crashFile, snapshot, recoveredPath] { try? FileManager.default.removeItem(atPath: path) }
        }
        var configuration = TraceConfiguration()
        configuration.whenBufferFull = .overwriteOldest
        configuration.bufferSizePerThread = 64 << 10
        configuration.processSamplingInterval = .zero
        configuration.crashCapture = .init(path: crashFile)
        let session = try TraceSession.start(configuration)
        let runTime = Trace.Name("run-time \(UInt32.random(in: 0...UInt32.max))")
        let category = Trace.Category("crash.match")
        for index in 0..<3_000 {
            Trace.begin("outer", arguments: ["index": .int(Int64(index)), "text": "value \(index % 5)"])
            Trace.instant(runTime)
            Trace.counter("count", Int64(index))
            Trace.counter("ratio", Double(index) / 3)
            Trace.instant("in category", category: category)
            let interval = Trace.beginAsync("async")
            interval.end()
            Trace.end()
        }
        runOnNewThread {
            for index in 0..<50 { Trace.interval("other thread") { Trace.counter("other", index) } }
        }
        #expect(cstrobe_crash_write_now(SIGSEGV, 0x1234) == 0)
        try session.dump(to: snapshot)
        try session.stop()

        let outcome = try CrashRecovery.recover(crashFile: crashFile, writingTo: recoveredPath)
        #expect(outcome.signalName == "SIGSEGV")
        #expect(outcome.faultAddress == 0x1234)
        let recovered = try OfficialDecoder.decode(recoveredPath)
        let expected = try OfficialDecoder.decode(snapshot)
        #expect(recovered.errors.isEmpty && expected.errors.isEmpty)
        func names(_ trace: OfficialDecoder.Decoded) -> [String: Int] {
            var counts: [String: Int] = [:]
            for slice in trace.slices {
                let arguments = slice.args.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                counts["slice \(slice.name) \(slice.categories) \(arguments)", default: 0] += 1
            }
            for instant in trace.instants where instant.name != "crash" {
                counts["instant \(instant.name) \(instant.categories)", default: 0] += 1
            }
            for counter in trace.counters where !(counter.name ?? "").hasPrefix("process.") {
                counts["counter \(counter.name ?? "") \(counter.value)", default: 0] += 1
            }
            return counts
        }
        let (got, want) = (names(recovered), names(expected))
        let differing = Set(got.keys).union(want.keys).filter { got[$0] != want[$0] }
        #expect(
            differing.isEmpty, "\(differing.sorted().prefix(10).map { "\($0): \(got[$0] ?? 0) vs \(want[$0] ?? 0)" })")
        #expect(got.count > 100)
        // Timestamps agree within the calibration's error.
        let recoveredTimes = recovered.slices(named: "outer").map(\.ts).sorted()
        let expectedTimes = expected.slices(named: "outer").map(\.ts).sorted()
        #expect(recoveredTimes.count == expectedTimes.count)
        for (a, b) in zip(recoveredTimes, expectedTimes) { #expect(max(a, b) - min(a, b) < 20_000) }
        #expect(recovered.instants.filter { $0.name == "crash" }.count == 1)
    }

    @Test func handlerIsInstalledOnlyWhileASessionWithCrashCaptureRuns() throws {
        func currentAction(_ signal: Int32) -> UInt {
            var action = sigaction()
            sigaction(signal, nil, &action)
            return unsafeBitCast(action.__sigaction_handler.sa_sigaction, to: UInt.self)
        }
        let before = [SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP].map(currentAction)
        var configuration = TraceConfiguration()
        configuration.processSamplingInterval = .zero
        let plain = try TraceSession.start(configuration)
        #expect([SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP].map(currentAction) == before)
        try plain.stop()

        configuration.crashCapture = .init(path: temporaryTracePath() + ".strobe-crash")
        let capturing = try TraceSession.start(configuration)
        let during = [SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP].map(currentAction)
        for (index, action) in during.enumerated() { #expect(action != before[index]) }
        try capturing.stop()
        #expect([SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP].map(currentAction) == before)
        #expect(!FileManager.default.fileExists(atPath: configuration.crashCapture!.path))
    }

    /// An app's handler installed over Strobe's calls it and then returns,
    /// so the process survives the signal: the crash file is written, and
    /// the next session captures crashes again instead of finding the
    /// handler busy.
    @Test func aSignalTheProcessSurvivesLeavesTheNextCaptureFree() throws {
        let path = temporaryTracePath() + ".strobe-crash"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var original = sigaction()
        sigaction(SIGTRAP, nil, &original)
        // A harmless action before the sessions, for Strobe to hand the
        // signal to.
        var quiet = sigaction()
        quiet.__sigaction_handler.sa_sigaction = { _, _, _ in }
        quiet.sa_flags = SA_SIGINFO
        sigaction(SIGTRAP, &quiet, nil)
        defer { sigaction(SIGTRAP, &original, nil) }

        var configuration = TraceConfiguration()
        configuration.processSamplingInterval = .zero
        configuration.whenBufferFull = .overwriteOldest
        configuration.crashCapture = .init(path: path)
        let first = try TraceSession.start(configuration)
        Trace.interval("before the signal") {}
        var app = sigaction()
        app.__sigaction_handler.sa_sigaction = { signal, info, context in
            replacedTrapAction.__sigaction_handler.sa_sigaction?(signal, info, context)
        }
        app.sa_flags = SA_SIGINFO
        sigaction(SIGTRAP, &app, &replacedTrapAction)
        raise(SIGTRAP)
        try first.stop()
        // The app takes its handler away again.
        sigaction(SIGTRAP, &replacedTrapAction, nil)
        let written = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(written > 0, "the handler wrote the crash file")

        try FileManager.default.removeItem(atPath: path)
        let second = try TraceSession.start(configuration)
        #expect(cstrobe_crash_write_now(SIGABRT, 0) == 0, "the second session's capture is armed")
        try second.stop()
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func crashFileInAMissingDirectoryIsRefusedAtStart() {
        var configuration = TraceConfiguration()
        configuration.crashCapture = .init(path: "/nonexistent-strobe-directory/app.strobe-crash")
        #expect(throws: TraceSessionError.self) { try TraceSession.start(configuration) }
    }
    /// Events a full buffer discarded before the crash are counted in the
    /// recovered trace, as many as the session counted: a discard is
    /// counted without the recorder's lock, and the handler reads that count.
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func discardsBeforeACrashAreCountedInTheRecoveredTrace() throws {
        let crashFile = temporaryTracePath() + ".strobe-crash"
        let recoveredPath = crashFile + ".pftrace"
        defer { for path in [crashFile, recoveredPath] { try? FileManager.default.removeItem(atPath: path) } }
        var configuration = TraceConfiguration()
        configuration.whenBufferFull = .discardNewest
        configuration.bufferSizePerThread = 64 << 10
        configuration.flushInterval = .seconds(60)
        configuration.processSamplingInterval = .zero
        configuration.crashCapture = .init(path: crashFile)
        let session = try TraceSession.start(configuration)
        for index in 0..<20_000 { Trace.counter("fill", index) }
        let discarded = session.statistics.discardedEvents
        #expect(discarded > 0, "20,000 counters (480 kB) overflow a 64 kB buffer")
        #expect(cstrobe_crash_write_now(SIGSEGV, 0) == 0)
        try session.stop()

        _ = try CrashRecovery.recover(crashFile: crashFile, writingTo: recoveredPath)
        let recovered = try OfficialDecoder.decode(recoveredPath)
        #expect(recovered.errors.isEmpty)
        #expect(recovered.stat("chunks_discarded") == Double(discarded))
        #expect(recovered.counters.contains { $0.name == "fill" })
    }

    // MARK: - Bad input

    /// A small, complete crash file written in this process, by a session
    /// with `metadata`.
    static func sampleCrashFile(metadata: TraceMetadata = TraceMetadata()) throws -> [UInt8] {
        let path = temporaryTracePath("sample") + ".strobe-crash"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration()
        configuration.metadata = metadata
        configuration.whenBufferFull = .overwriteOldest
        configuration.bufferSizePerThread = 16 << 10
        configuration.processSamplingInterval = .zero
        configuration.crashCapture = .init(path: path)
        let session = try TraceSession.start(configuration)
        for index in 0..<20 { Trace.interval("sample") { Trace.counter("sample index", index) } }
        let written = cstrobe_crash_write_now(SIGABRT, 0)
        try session.stop()
        #expect(written == 0)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func everyTruncationAndCorruptionIsAnErrorNamingTheOffset() throws {
        let bytes = try Self.sampleCrashFile()
        #expect((try? CrashRecovery.trace(fromCrashFile: bytes, path: "sample")) != nil)
        for length in 0..<bytes.count {
            do {
                _ = try CrashRecovery.trace(fromCrashFile: Array(bytes[0..<length]), path: "cut")
                Issue.record("a file cut to \(length) of \(bytes.count) bytes was accepted")
            } catch {
                let offset = try #require(error.offset)
                #expect(offset <= length)
                #expect(error.description.hasPrefix("cut: byte \(offset): "))
            }
        }
        // Flipped bytes are either refused or recovered, never a crash.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var damaged = bytes
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(
                    in: 0...255, using: &generator)
            }
            _ = try? CrashRecovery.trace(fromCrashFile: damaged, path: "damaged")
        }
    }

    // MARK: - Versions

    /// The version word of a crash file.
    static func version(of bytes: [UInt8]) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[8 + $1]) << (8 * UInt64($1)) }
    }

    /// `bytes` with its version word set to `version`.
    static func replacingVersion(of bytes: [UInt8], with version: UInt64) -> [UInt8] {
        var bytes = bytes
        for index in 0..<8 { bytes[8 + index] = UInt8(truncatingIfNeeded: version >> (8 * UInt64(index))) }
        return bytes
    }

    /// A file with only the first layout's sections keeps version 1, which
    /// every reader reads; a file with a METADATA section is version 2, and
    /// this reader reads both.
    @Test func onlyAFileWithANewSectionHasTheNewVersion() throws {
        let plain = try Self.sampleCrashFile()
        #expect(Self.version(of: plain) == UInt64(CSTROBE_CRASH_VERSION_FIRST))
        #expect(!Self.sections(of: plain).contains(UInt64(CSTROBE_CRASH_SECTION_METADATA)))
        let plainTrace = try CrashRecovery.trace(fromCrashFile: plain, path: "plain").trace
        #expect(TraceReader.read(bytes: plainTrace).origin == nil)

        let tagged = try Self.sampleCrashFile(metadata: TraceMetadata(appVersion: "4.2"))
        #expect(Self.version(of: tagged) == UInt64(CSTROBE_CRASH_VERSION))
        #expect(Self.version(of: tagged) == 2)
        #expect(Self.sections(of: tagged).contains(UInt64(CSTROBE_CRASH_SECTION_METADATA)))
        let taggedTrace = try CrashRecovery.trace(fromCrashFile: tagged, path: "tagged").trace
        #expect(TraceReader.read(bytes: taggedTrace).origin?.values["app.version"] == "4.2")

        // Files written before the version changed carry METADATA as
        // version 1; they are still read.
        let older = Self.replacingVersion(of: tagged, with: 1)
        let olderTrace = try CrashRecovery.trace(fromCrashFile: older, path: "older").trace
        #expect(TraceReader.read(bytes: olderTrace).origin?.values["app.version"] == "4.2")
    }

    /// A file newer than this reader is refused as newer, naming the file,
    /// the version it has and the versions this reader reads, not as a
    /// damaged file; version 0 was never written.
    @Test func aNewerFileIsRefusedAsNewer() throws {
        let newer = Self.replacingVersion(of: try Self.sampleCrashFile(), with: UInt64(CSTROBE_CRASH_VERSION) + 1)
        let error = try #require(throws: CrashRecoveryError.self) {
            try CrashRecovery.trace(fromCrashFile: newer, path: "app.strobe-crash")
        }
        #expect(error.offset == 8)
        #expect(
            error.description.hasPrefix(
                "app.strobe-crash: byte 8: crash file version 3 is newer than this strobe reads (versions 1 to 2)"))
        let zero = Self.replacingVersion(of: newer, with: 0)
        let refused = try #require(throws: CrashRecoveryError.self) {
            try CrashRecovery.trace(fromCrashFile: zero, path: "zero")
        }
        #expect(refused.description == "zero: byte 8: not a valid crash file: version 0")
    }

    /// The section tags of `bytes`, in order.
    static func sections(of bytes: [UInt8]) -> [UInt64] {
        func word(_ offset: Int) -> UInt64 {
            (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
        }
        var tags: [UInt64] = []
        var offset = 8 + Int(word(16))
        while offset + 16 <= bytes.count {
            tags.append(word(offset))
            offset += 16 + Int(word(offset + 8))
        }
        return tags
    }

    /// The byte offset of the first record of the first chunk in `bytes`.
    static func firstRecordOffset(_ bytes: [UInt8]) -> Int? {
        func word(_ offset: Int) -> UInt64 {
            (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
        }
        var offset = 8 + Int(word(16))
        while offset + 16 <= bytes.count {
            if word(offset) == UInt64(CSTROBE_CRASH_SECTION_CHUNK), word(offset + 8) >= 40 { return offset + 16 + 24 }
            offset += 16 + Int(word(offset + 8))
        }
        return nil
    }

    /// Records no recorder writes, as a damaged file may hold them: a name
    /// word that is neither a literal nor an interned name, and an instant
    /// claiming a resource-usage attachment. Recovery names the first and
    /// counts the second as invalid, and never reads through either.
    @Test func foreignRecordsAreNamedOrCountedNeverFollowed() throws {
        let sample = try Self.sampleCrashFile()
        let offset = try #require(Self.firstRecordOffset(sample))
        func replacingFirstRecord(_ words: [UInt64]) -> [UInt8] {
            var bytes = sample
            for (index, word) in words.enumerated() {
                for byte in 0..<8 {
                    bytes[offset + index * 8 + byte] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(byte)))
                }
            }
            return bytes
        }
        let instant = RecordLayout.instant << 56
        let strangeName = try CrashRecovery.trace(
            fromCrashFile: replacingFirstRecord([instant | 5, 0xFFF5_0000_0000_1234]), path: "strange"
        ).outcome
        #expect(strangeName.unknownNames == 1)
        #expect(strangeName.invalidRecords == 0)
        let withUsage = (RecordLayout.instant | RecordLayout.withResourceUsage | RecordLayout.withArguments) << 56
        let foreignKind = try CrashRecovery.trace(
            fromCrashFile: replacingFirstRecord([withUsage | 5]), path: "foreign"
        ).outcome
        #expect(foreignKind.invalidRecords >= 1)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: strobe)))
    func recoverRefusesBadFilesWithStatusTwo() throws {
        let sample = try Self.sampleCrashFile()
        var wrongVersion = sample
        wrongVersion[8] = 99
        // The last section's header starts at or before the cut.
        let inputs: [(name: String, bytes: [UInt8], message: String)] = [
            ("garbage", Array("this is not a crash file\n".utf8), "byte 0: not a Strobe crash file: wrong magic"),
            ("empty", [], "byte 0: not a Strobe crash file"),
            ("version", wrongVersion, "byte 8: crash file version 99"),
            ("truncated", Array(sample.prefix(sample.count - 20)), "byte \(sample.count - 24): truncated"),
            ("cut header", Array(sample.prefix(40)), "byte 40: truncated"),
        ]
        for input in inputs {
            let path = temporaryTracePath("bad-\(input.name)")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try Data(input.bytes).write(to: URL(fileURLWithPath: path))
            let outcome = try runProgram(Self.strobe, ["recover", path, "-o", path + ".pftrace"])
            #expect(outcome.status == 2, "\(input.name): \(outcome.errors)")
            #expect(outcome.errors.contains("\(path): \(input.message)"), "\(input.name): \(outcome.errors)")
            #expect(!FileManager.default.fileExists(atPath: path + ".pftrace"))
        }
        let good = temporaryTracePath("good")
        defer {
            try? FileManager.default.removeItem(atPath: good)
            try? FileManager.default.removeItem(atPath: good + ".pftrace")
        }
        try Data(sample).write(to: URL(fileURLWithPath: good))
        let outcome = try runProgram(Self.strobe, ["recover", good])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.output.contains("SIGABRT"))
        #expect(FileManager.default.fileExists(atPath: good + ".pftrace"))
    }
}

/// The action an app's handler replaced, which it calls in turn.
nonisolated(unsafe) private var replacedTrapAction = sigaction()
