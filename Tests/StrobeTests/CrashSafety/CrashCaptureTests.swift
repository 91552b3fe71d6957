import CStrobe
import Foundation
import Strobe
import StrobeCrashRecovery
import StrobeEncoding
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// Crash capture: a child that dies of each fatal signal leaves a crash file
/// that `strobe recover` turns into a trace holding its last moments, with
/// the crash marked, and the crash reporter installed before the session
/// still runs.
@Suite(.serialized, .processWide) struct CrashCaptureTests {
    static var traceChild: String { builtProgram("TraceChild") }

    static var childIsBuilt: Bool { FileManager.default.isExecutableFile(atPath: traceChild) }

    static var strobe: String { builtProgram("strobe") }

    /// The signal Swift's `fatalError` raises: `ud2` on x86-64, `brk` on arm64.
    static var fatalErrorSignal: Int32 {
        #if arch(arm64)
        return SIGTRAP
        #else
        return SIGILL
        #endif
    }

    /// The ways the child dies, and the signal each ends it with.
    static let crashes: [(how: String, signal: Int32)] = [
        ("segv", SIGSEGV), ("bus", SIGBUS), ("ill", SIGILL), ("abrt", SIGABRT), ("fpe", SIGFPE),
        ("trap", SIGTRAP), ("fatal", fatalErrorSignal), ("overflow", SIGSEGV),
    ]

    /// ThreadSanitizer's options for a crashing child when the tests run
    /// under `make tsan`: the sanitizer leaves the fatal signals to the
    /// program's handlers (by default it reports them itself and aborts
    /// before crash capture runs). Ignored by children built without it.
    static var childSanitizerOptions: String {
        let inherited = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] ?? ""
        let signals = ["segv", "sigbus", "sigill", "abort", "sigfpe", "sigtrap"].map { "handle_\($0)=0" }
        return ([inherited] + signals + ["allow_user_segv_handler=1"]).filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// Runs the child until it dies as `how` says; returns its outcome and
    /// the crash file's path.
    static func crashChild(_ how: String, marker: String? = nil) throws -> (ProgramOutcome, String) {
        let crashFile = temporaryTracePath("crash-\(how)") + ".strobe-crash"
        let outcome = try runProgram(
            traceChild, ["crash-capture", how, crashFile] + (marker.map { [$0] } ?? []),
            // The runtime's backtracer (chained to, as any earlier handler)
            // symbolicates for seconds; the marker test covers chaining.
            environment: ["SWIFT_BACKTRACE": "enable=no", "TSAN_OPTIONS": childSanitizerOptions])
        return (outcome, crashFile)
    }

    @Test(.enabled(if: childIsBuilt && OfficialDecoder.isUsable), arguments: crashes.map(\.how))
    func crashedChildLeavesItsLastMoments(how: String) throws {
        let signal = Self.crashes.first { $0.how == how }!.signal
        let (outcome, crashFile) = try Self.crashChild(how)
        let tracePath = crashFile + ".pftrace"
        defer {
            try? FileManager.default.removeItem(atPath: crashFile)
            try? FileManager.default.removeItem(atPath: tracePath)
        }
        #expect(outcome.status == signal, "\(how): \(outcome.errors)")

        let recovered = try CrashRecovery.recover(crashFile: crashFile, writingTo: tracePath)
        #expect(recovered.signal == signal)
        #expect(recovered.signalName == CrashRecovery.signalName(signal))
        #expect(recovered.lostEvents == 0)
        #expect(recovered.unknownNames == 0)
        #expect(recovered.threads >= 2)
        if how == "segv" { #expect(recovered.faultAddress == 8) }

        let trace = try OfficialDecoder.decode(tracePath)
        #expect(trace.errors.isEmpty, "\(trace.errors)")

        // The crash, on the thread that recorded the steps, after them.
        let crashes = trace.instants.filter { $0.name == "crash" }
        #expect(crashes.count == 1)
        let crash = try #require(crashes.first)
        #expect(crash.args["signal"] == .string(CrashRecovery.signalName(signal)))
        #expect(crash.args["fault address"] == .string("0x" + String(recovered.faultAddress, radix: 16)))
        let steps = trace.slices(named: "step")
        let lastStep = try #require(steps.max { $0.ts < $1.ts })
        #expect(crash.track == lastStep.track)
        #expect(crash.ts >= lastStep.ts)
        #expect(trace.track(crash.track)?.tid == Int(recovered.threadID))

        // The last 100 ms of numbered steps, without a gap, up to the last.
        let indices = trace.counters.filter { $0.name == "step index" }.sorted { $0.ts < $1.ts }
        let last = try #require(indices.last)
        let lastIndex = Int64(last.value)
        let window = indices.filter { $0.ts + 100_000_000 >= last.ts }
        let first = try #require(window.first)
        #expect(indices.first!.ts + 100_000_000 <= last.ts, "the file covers less than 100 ms")
        for (offset, sample) in window.enumerated() {
            #expect(Int64(sample.value) == Int64(first.value) + Int64(offset), "a gap before step \(sample.value)")
        }
        let lastInstant = try #require(trace.instants.first { $0.name == "last step" })
        #expect(lastInstant.args["index"] == .int(lastIndex))
        #expect(crash.ts >= lastInstant.ts)
        #expect(crash.ts - lastInstant.ts < 1_000_000_000)

        // Names interned at run time and categories keep their text; the
        // other thread's events are there too.
        #expect(trace.instants.contains { $0.name.hasPrefix("run-time name ") })
        #expect(trace.instants.contains { $0.name == "categorized" && $0.categories == ["crash.test"] })
        #expect(!trace.slices(named: "worker step").isEmpty)
        #expect(trace.stat("invalid_packets") == 0)
    }

    @Test(.enabled(if: childIsBuilt), arguments: ["segv", "abrt", "fatal"])
    func previousHandlerRunsAfterTheCrashFileIsWritten(how: String) throws {
        let marker = temporaryTracePath("marker-\(how)")
        defer { try? FileManager.default.removeItem(atPath: marker) }
        let (outcome, crashFile) = try Self.crashChild(how, marker: marker)
        defer { try? FileManager.default.removeItem(atPath: crashFile) }
        let signal = Self.crashes.first { $0.how == how }!.signal
        #expect(outcome.status == signal, "\(how): \(outcome.errors)")
        let text = try String(contentsOfFile: marker, encoding: .utf8)
        #expect(text == "previous handler: \(signal)\n")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: crashFile)))
        let recovered = try CrashRecovery.trace(fromCrashFile: bytes, path: crashFile).outcome
        #expect(recovered.signal == signal)
        #expect(recovered.events > 0)
    }

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
