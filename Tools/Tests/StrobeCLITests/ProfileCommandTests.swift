import Foundation
import Strobe
import StrobeReader
import StrobeTestSupport
import Testing

/// `strobe summarize --profile` and `strobe export --format folded` on a
/// trace with CPU samples recorded here.
extension StrobeCLITests {
    /// Spins for `nanoseconds` of the thread's CPU time. The loop calls
    /// nothing but `clock_gettime`: a sample taken in a function that keeps
    /// no frame pointer (as the runtime's generic iterators in a debug
    /// build may not) loses that function's caller from its stack.
    @inline(never)
    static func profiledSpin(nanoseconds: UInt64) -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        let deadline = UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec) + nanoseconds
        var state: UInt64 = 1
        while true {
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            if UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec) >= deadline { return state }
            var round = 0
            while round < 1000 {
                state = state &* 6_364_136_223_846_793_005 &+ 1
                round += 1
            }
        }
    }

    /// A trace with 10 intervals `busy` (spinning `spinMilliseconds`, with
    /// rusage) and 10 `idle` (sleeping), and CPU samples at 999 Hz.
    static func writeProfiledTrace(_ path: String, spinMilliseconds: UInt64 = 20) throws {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.cpuProfile = .init(frequency: 999)
        var sink: UInt64 = 0
        try TraceSession.record(configuration) {
            for _ in 0..<10 {
                Trace.interval("busy", capturing: .resourceUsage) {
                    sink &+= profiledSpin(nanoseconds: spinMilliseconds * 1_000_000)
                }
                Trace.interval("idle") { usleep(2000) }
            }
        }
        if sink == 0 { print("0") }
    }

    @Test func summarizeProfileListsTopFunctionsWithinAnInterval() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/profiled.pftrace"
        try Self.writeProfiledTrace(trace)

        let text = try Self.strobe("summarize", trace, "--profile", "--interval", "busy", "--top", "5")
        #expect(text.status == 0, "\(text.errors)")
        #expect(text.output.contains("CPU samples at 999 Hz"))
        #expect(text.output.contains("Top functions, whole trace"))
        #expect(text.output.contains("Top functions, interval \"busy\""))
        #expect(text.output.contains("StrobeCLITests.StrobeCLITests.profiledSpin(nanoseconds:)"))

        let json = try Self.strobe("summarize", trace, "--profile", "--interval", "busy", "--format", "json")
        #expect(json.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let sections = try #require(object?["sections"] as? [[String: Any]])
        #expect(sections.count == 2)
        let busy = try #require(sections.last)
        #expect(busy["instances"] as? Int == 10)
        let rows = try #require(busy["functions"] as? [[String: Any]])
        let spin = try #require(
            rows.first { $0["function"] as? String == "StrobeCLITests.StrobeCLITests.profiledSpin(nanoseconds:)" })
        #expect((spin["inclusivePercent"] as? Double ?? 0) >= 95)

        let folded = try Self.strobe("export", trace, "--format", "folded")
        #expect(folded.status == 0)
        let lines = folded.output.split(separator: "\n")
        let total = lines.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        let profile = try CPUProfile.read(contentsOf: trace)
        #expect(total == profile.samples.count)
        #expect(lines.contains { $0.contains(";StrobeCLITests.StrobeCLITests.profiledSpin(nanoseconds:)") })
    }

    @Test func profileFlagsRefuseBadInputWithStatusTwo() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let profiled = folder + "/profiled.pftrace"
        try Self.writeProfiledTrace(profiled)
        let plain = folder + "/plain.pftrace"
        try Self.writeTrace(plain)

        let noInterval = try Self.strobe("summarize", profiled, "--profile", "--interval", "no such interval")
        #expect(noInterval.status == 2)
        #expect(noInterval.errors.contains("--interval \"no such interval\""))
        let noSamples = try Self.strobe("summarize", plain, "--profile")
        #expect(noSamples.status == 2)
        #expect(noSamples.errors.contains("no CPU samples"))
        let withoutProfile = try Self.strobe("summarize", profiled, "--interval", "busy")
        #expect(withoutProfile.status == 2)
        #expect(withoutProfile.errors.contains("--interval needs --profile"))
        let foldNothing = try Self.strobe("export", plain, "--format", "folded")
        #expect(foldNothing.status == 2)
        #expect(foldNothing.errors.contains("no CPU samples to fold"))
    }
}
