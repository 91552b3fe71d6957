import Foundation
import StrobeCrashRecovery
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// Crash capture: a child that dies of each fatal signal leaves a crash file
/// that `strobe recover` turns into a trace holding its last moments, with
/// the crash marked, and the crash reporter installed before the session
/// still runs. Only the children record, but the recoveries take this
/// process's CPU time, which the CPU-timer profiler's tests share: the suite
/// runs in the process-wide turn.
@Suite(.serialized, .processWide) struct CrashedChildTests {
    static var traceChild: String { builtProgram("TraceChild") }

    static var childIsBuilt: Bool { FileManager.default.isExecutableFile(atPath: traceChild) }

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
}
