import CStrobe
import Foundation
import ProfileWorkload
import StrobeReader
import StrobeTestSupport
import Testing

@testable import Strobe
@testable import StrobeEncoding

/// The CPU profiler against a workload whose profile is known
/// (`ProfileWorkload`: 60/30/10% of each thread's CPU time in three
/// functions, each slice inside an interval named after it).
///
/// Nested in ``RecordingTests`` so that it never runs beside another session.
extension RecordingTests {
    @Suite struct CPUProfileTests {
        static let heavy = ProfileWorkload.truth[0].function

        /// Records the workload with `profile` and reads the trace back.
        static func record(
            _ profile: TraceConfiguration.CPUProfile, milliseconds: Int, name: String = #function
        ) throws -> (path: String, trace: ParsedTrace, profile: CPUProfile, statistics: TraceSession.Statistics) {
            let path = temporaryTracePath(name)
            var configuration = TraceConfiguration(outputPath: path)
            configuration.cpuProfile = profile
            let session = try TraceSession.start(configuration)
            ProfileWorkload.run(threads: 2, milliseconds: milliseconds)
            try session.stop()
            return (
                path, try TraceReader.read(contentsOf: path), try CPUProfile.read(contentsOf: path), session.statistics
            )
        }

        /// The stacks, innermost frame first, of the samples in `inside`
        /// that are not in `function`, most frequent first, and how far
        /// each lies from the nearer end of the interval it fell in (of
        /// `intervals`): what a failed attribution check prints.
        static func strayStacks(
            _ profile: CPUProfile, _ inside: [CPUProfile.Sample], _ function: String, _ intervals: [Interval]
        ) -> String {
            var counts: [String: Int] = [:]
            var margins: [String] = []
            for sample in inside {
                let names = profile.stacks[sample.stack].map { profile.functions[$0] }
                guard !names.contains(function) else { continue }
                counts[names.reversed().prefix(4).joined(separator: " < "), default: 0] += 1
                let margin = intervals.compactMap { interval -> UInt64? in
                    guard interval.tid == sample.tid, let end = interval.end, interval.start <= sample.time,
                        sample.time < end
                    else { return nil }
                    return min(sample.time - interval.start, end - sample.time)
                }.min()
                if let margin { margins.append(String(format: "%.1f µs", Double(margin) / 1000)) }
            }
            return counts.sorted { $0.value > $1.value }.prefix(5).map { "\($0.value)× \($0.key)" }
                .joined(separator: "; ") + "; from the interval's nearer end: " + margins.joined(separator: ", ")
        }

        @Test(.enabled(if: OfficialDecoder.isUsable))
        func samplesResolveUnderTheOfficialSchema() throws {
            let recorded = try Self.record(.init(frequency: 999), milliseconds: 300)
            defer { try? FileManager.default.removeItem(atPath: recorded.path) }
            let official = try OfficialProfile.decode(recorded.path)
            #expect(official.errors.isEmpty, "\(official.errors.prefix(5))")
            #expect(official.samples.count == Int(recorded.statistics.cpuSamples))
            #expect(official.samples.count > 200)
            let pid = Int(getpid())
            #expect(official.samples.allSatisfy { $0.pid == pid && $0.cpu_mode == 2 && !$0.frames.isEmpty })
            // Demangled Swift names, in this test binary, with its build id.
            let heavyFrames = official.samples.flatMap(\.frames).filter { $0.function == Self.heavy }
            #expect(!heavyFrames.isEmpty)
            let executable = try #require(heavyFrames.first?.mapping_path)
            #expect(executable == ProcessInfo.processInfo.arguments[0] || executable.hasSuffix(".xctest"))
            // The build id as the ELF's note has it, 20 raw bytes.
            var noteBytes = [UInt8](repeating: 0, count: 64)
            let noteLength = cstrobe_elf_build_id(executable, &noteBytes, noteBytes.count)
            let note = noteBytes.prefix(noteLength).map { String(format: "%02x", $0) }.joined()
            #expect(noteLength == 20)
            #expect(heavyFrames.allSatisfy { $0.build_id == note })
            // Mappings carry their file offset as `exact_offset`; the
            // sequence says its timebase.
            #expect(!official.mappings.isEmpty)
            #expect(official.mappings.allSatisfy { $0.exact_offset != nil && $0.start_offset == nil })
            #expect(official.defaults.count == 1)
            #expect(official.defaults.first?.frequency == 999)
            #expect(official.defaults.first?.counter == 1 && official.defaults.first?.timestamp_clock == 4)
            #expect(!official.samples.flatMap(\.frames).contains { ($0.function ?? "").hasPrefix("$s") })
            // The reader agrees with the official decoder, sample for sample.
            #expect(recorded.profile.samples.count == official.samples.count)
            #expect(recorded.profile.unresolvedSamples == 0)
            for (mine, theirs) in zip(recorded.profile.samples, official.samples) {
                #expect(mine.time == theirs.ts && mine.tid == Int64(theirs.tid))
                #expect(
                    recorded.profile.stacks[mine.stack].map { recorded.profile.functions[$0] }
                        == theirs.frames.map { $0.function ?? "" })
            }
            #expect(recorded.profile.method == (recorded.profile.fallbackReason == nil ? "perf_event" : "cpu_timer"))
            #expect(recorded.profile.frequency == 999)
            #expect(recorded.profile.lostSamples == Int(recorded.statistics.lostCPUSamples))
            #expect(recorded.profile.lostRecords == recorded.profile.lostSamples)
            #expect(recorded.profile.unsampledThreads == 0, "\(recorded.profile.samplerFailure ?? "")")
            #expect(official.lost_records == recorded.profile.lostSamples)
        }

        /// The shares of CPU time the profile gives the three functions are
        /// within 3 percentage points of the truth, and the samples inside
        /// each function's interval are in that function.
        @Test(arguments: [TraceConfiguration.CPUProfile.Method.automatic, .cpuTimer])
        func sharesMatchTheTruth(method: TraceConfiguration.CPUProfile.Method) throws {
            let recorded = try Self.record(.init(frequency: 999, method: method), milliseconds: 1500)
            defer { try? FileManager.default.removeItem(atPath: recorded.path) }
            let profile = recorded.profile
            if method == .cpuTimer {
                #expect(profile.method == "cpu_timer")
                #expect(profile.fallbackReason == "the cpuTimer method was asked for")
            }
            let workload = profile.samples.filter { sample in
                profile.stacks[sample.stack].contains { index in
                    ProfileWorkload.truth.contains { $0.function == profile.functions[index] }
                }
            }
            // Under ThreadSanitizer only the structure is checked. It holds
            // a signal back until the thread reaches one of its hooks, which
            // moves the timer's samples. And every access of the workload
            // runs through its runtime, whose frames keep no frame pointer
            // and use more than the 512 bytes of stack a sample copies, so
            // a sample there stops at the workload's helper (`spin`) and
            // never reaches its caller (with 4 KiB copied it does); and
            // fewer samples reach the workload (350 to 700, against more
            // than 1,500 natively).
            if ProcessMemory.isThreadSanitized {
                #expect(!workload.isEmpty)
                return
            }
            // The timer expires on the kernel's tick (CONFIG_HZ), so it takes
            // fewer samples than asked for; its shares are held to three
            // standard errors where that is wider than 3 points. The timer
            // samples the whole process, so suites that run beside this one
            // take a share of its samples. With two busy loops beside it (an
            // AMD EPYC, family 25 model 17, load average 5.9) the timer's
            // samples of the workload fell from about 240 to 38 to 45.
            #expect(
                workload.count > (method == .automatic ? 1500 : 30),
                "\(workload.count) of \(profile.samples.count), lost \(profile.lostSamples)")
            for (function, share) in ProfileWorkload.truth {
                let measured = profile.share(of: workload) { $0 == function }
                let standardError = (share * (1 - share) / Double(max(workload.count, 1))).squareRoot()
                let tolerance = method == .automatic ? 0.03 : max(0.03, 3 * standardError)
                #expect(abs(measured - share) <= tolerance, "\(function): \(measured) against \(share)")
            }
            // Nine in ten samples inside a function's interval, of those
            // unwound past their innermost frame, are in that function: a
            // clock that did not line the samples up with the intervals
            // would give about a third. Stacks of one frame say nothing of
            // the clock and are held under 2% of their own: before the
            // unwinder took a `ret` after `pop rbp` (the spin loop's
            // `IndexingIterator.next()` in a debug build) they were 7% to
            // 9% of the samples inside the intervals, with both methods
            // (AMD EPYC, family 25 model 17), and 0% to 0.5% after. The
            // timer's few samples (19 to 71 in one interval's name with two
            // busy loops beside it) are held to three standard errors past
            // both bounds, as its shares are.
            for (index, name) in ProfileWorkload.intervalNames.enumerated() {
                let intervals = recorded.trace.intervals(named: name)
                let inside = profile.samples(within: intervals)
                let unwound = inside.filter { profile.stacks[$0.stack].count > 1 }
                let attributed = profile.share(of: unwound) { $0 == ProfileWorkload.truth[index].function }
                let standardError = (0.9 * 0.1 / Double(max(unwound.count, 1))).squareRoot()
                let bound = method == .automatic ? 0.9 : 0.9 - 3 * standardError
                #expect(!unwound.isEmpty)
                let strays = Self.strayStacks(profile, inside, ProfileWorkload.truth[index].function, intervals)
                #expect(
                    attributed >= bound,
                    "\(name): \(attributed) of \(unwound.count) samples; the others' stacks: \(strays)")
                let oneFrame = Double(inside.count - unwound.count) / Double(max(inside.count, 1))
                let oneFrameBound =
                    method == .automatic ? 0.02 : 0.02 + 3 * (0.02 * 0.98 / Double(max(inside.count, 1))).squareRoot()
                #expect(
                    oneFrame < oneFrameBound, "\(name): \(oneFrame) of \(inside.count) samples in one frame: \(strays)")
            }
            // The walk reaches the workload's caller on both threads.
            let threads = Set(workload.map(\.tid))
            #expect(threads.count == 2)
            #expect(profile.share(of: workload) { $0.hasPrefix("ProfileWorkload.ProfileWorkload.rounds(") } > 0.95)
        }

        /// A writer that never drains during the run: each thread's ring
        /// fills, and the samples it had no room for are counted, in the
        /// session's statistics, the closing mark and the loss packets.
        @Test func samplesARingHasNoRoomForAreCounted() throws {
            let path = temporaryTracePath()
            defer { try? FileManager.default.removeItem(atPath: path) }
            var configuration = TraceConfiguration(outputPath: path)
            configuration.cpuProfile = .init(frequency: 5000)
            configuration.flushInterval = .seconds(1000)
            configuration.processSamplingInterval = .zero
            let session = try TraceSession.start(configuration)
            // About 4,000 samples per thread, three times what a ring holds
            // of this workload's shallow stacks (the ring's size does not
            // depend on the frequency, so a high one fills it sooner).
            ProfileWorkload.run(threads: 2, milliseconds: 800)
            try session.stop()
            let profile = try CPUProfile.read(contentsOf: path)
            // The timer samples on the kernel's tick: too few to fill a ring.
            guard profile.method == "perf_event" else { return }
            let statistics = session.statistics
            #expect(statistics.lostCPUSamples > 100, "\(statistics)")
            #expect(profile.lostSamples == Int(statistics.lostCPUSamples))
            #expect(profile.lostRecords == Int(statistics.lostCPUSamples))
            #expect(profile.samples.count == Int(statistics.cpuSamples))
        }

        /// Cut or damaged traces never stop the profile's reader: it keeps
        /// what it could read, and never more samples than the whole file.
        @Test func damagedTracesAreReadAsFarAsTheyGo() throws {
            let recorded = try Self.record(.init(frequency: 999), milliseconds: 200)
            defer { try? FileManager.default.removeItem(atPath: recorded.path) }
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: recorded.path)))
            let whole = CPUProfile.read(bytes: bytes)
            #expect(whole.samples.count == recorded.profile.samples.count)
            var generator = SystemRandomNumberGenerator()
            for cut in stride(from: 0, to: bytes.count, by: max(bytes.count / 300, 1)) {
                let profile = CPUProfile.read(bytes: Array(bytes[..<cut]))
                #expect(profile.samples.count <= whole.samples.count)
                _ = profile.topFunctions(limit: 5)
                _ = profile.folded()
            }
            for _ in 0..<300 {
                var damaged = bytes
                for _ in 0..<4 { damaged[Int.random(in: 0..<damaged.count, using: &generator)] = .random(in: 0...255) }
                let profile = CPUProfile.read(bytes: damaged)
                _ = profile.samples(within: Array(recorded.trace.intervals))
                _ = profile.topFunctions(limit: 5)
            }
        }

        @Test func environmentVariableSetsTheProfile() throws {
            let base = [TraceSession.outputEnvironmentVariable: "/tmp/x.pftrace"]
            let variable = TraceConfiguration.CPUProfile.environmentVariable
            let plain = try #require(try TraceConfiguration.fromEnvironment(base.merging([variable: "999hz"]) { $1 }))
            #expect(plain.cpuProfile == .init(frequency: 999, method: .automatic))
            let timer = try #require(
                try TraceConfiguration.fromEnvironment(base.merging([variable: "100Hz, timer"]) { $1 }))
            #expect(timer.cpuProfile == .init(frequency: 100, method: .cpuTimer))
            #expect(try TraceConfiguration.fromEnvironment(base)?.cpuProfile == nil)
            for bad in ["fast", "0hz", "20000hz", "999hz,kernel", "999"] {
                #expect(throws: TraceSessionError.self) {
                    _ = try TraceConfiguration.fromEnvironment(base.merging([variable: bad]) { $1 })
                }
            }
        }

        @Test func profileNeedsAStreamingSession() {
            var configuration = TraceConfiguration(outputPath: nil)
            configuration.cpuProfile = .init()
            #expect(throws: TraceSessionError.self) { _ = try TraceSession.start(configuration) }
            configuration.outputPath = temporaryTracePath()
            configuration.cpuProfile = .init(frequency: 0)
            #expect(throws: TraceSessionError.self) { _ = try TraceSession.start(configuration) }
        }

        /// A thread's ring holds half a second of its samples at the asked
        /// frequency, between 128 KiB and 512 KiB.
        @Test func ringsHoldHalfASecondOfSamples() {
            #expect(CPUProfiler.ringBytes(periodNanoseconds: 1_000_000_000 / 999) == 512 << 10)
            #expect(CPUProfiler.ringBytes(periodNanoseconds: 1_000_000_000 / 499) == 256 << 10)
            #expect(CPUProfiler.ringBytes(periodNanoseconds: 1_000_000_000 / 99) == 128 << 10)
            #expect(CPUProfiler.ringBytes(periodNanoseconds: 1_000) == 512 << 10)
        }

        @Test func swiftNamesAreShortened() {
            let cases: [(String, String)] = [
                ("LensKit.ToneCurve.build(for: Swift.Int) -> [Swift.Float]", "LensKit.ToneCurve.build(for:)"),
                (
                    "static LensKit.Lens.apply(_: LensKit.Image, strength: Swift.Double) throws -> LensKit.Image",
                    "LensKit.Lens.apply(_:strength:)"
                ),
                (
                    "static M.T.(spin in _C508D9F5F0665B2482169E102775C26F)(Swift.UInt64) -> Swift.UInt64",
                    "M.T.spin(_:)"
                ),
                (
                    "closure #1 (Swift.Int) -> Swift.Int in M.f(x: (Swift.Int) -> Swift.Int) -> ()",
                    "closure #1 in M.f(x:)"
                ),
                (
                    "generic specialization <Swift.Int> of M.g<A>(_: A) -> A",
                    "generic specialization <Swift.Int> of M.g(_:)"
                ),
                ("M.h() async -> Swift.Int", "M.h()"),
                (
                    "generic specialization <Swift.SIMD4<Swift.Float>> of Swift.pointwiseMax<A where A: "
                        + "Swift.SIMD>(_: A, _: A) -> A",
                    "generic specialization <Swift.SIMD4<Swift.Float>> of Swift.pointwiseMax(_:_:)"
                ),
                ("Swift.Array<Swift.Int>.append(_: Swift.Int) -> ()", "Swift.Array<Swift.Int>.append(_:)"),
                (
                    "merged function signature specialization <Arg[1] = Dead> of static M.T.f(nanoseconds: "
                        + "Swift.UInt64) -> Swift.UInt64",
                    "M.T.f(nanoseconds:)"
                ),
                (
                    "function signature specialization <Arg[0] = Exploded> of function signature specialization "
                        + "<Arg[3] = Exploded> of L.Lens.(grade in _A9CE)"
                        + "(_: Swift.UnsafeMutableBufferPointer<Swift.Float>, from: Swift.Int) -> ()",
                    "L.Lens.grade(_:from:)"
                ),
                ("memcpy", "memcpy"),
                (
                    "(extension in Swift):Swift.Collection.map<A, B where B: Swift.Error>((A.Element) throws(B) -> "
                        + "A1) throws(B) -> Swift.Array<A1>",
                    "Swift.Collection.map(_:)"
                ),
            ]
            for (demangled, expected) in cases { #expect(SwiftSymbolName.shortened(demangled) == expected) }
        }
    }
}
