import Foundation
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import Strobe

extension Trace.Category {
    fileprivate static let media = Trace.Category("media")
    fileprivate static let netHTTP = Trace.Category("net.http")
    fileprivate static let netDNS = Trace.Category("net.dns")
    fileprivate static let disk = Trace.Category("disk")
}

/// Sessions record the categories their patterns choose, change them while
/// running, and write them as Perfetto's interned categories.
@Suite(.serialized, .processWide)
struct CategoryTests {
    static func configuration(_ path: String, categories: [String] = ["*"]) -> TraceConfiguration {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.categories = categories
        return configuration
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func categoriesAreInternedOnEveryKindOfEvent() async throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = try TraceSession.start(Self.configuration(path))
        Trace.interval("decode", category: .media) {
            Trace.begin("frame", category: .media)
            Trace.instant("keyframe", category: .media, arguments: ["index": 3])
            Trace.counter("queued", 4, category: .netHTTP)
            Trace.end(category: .media)
            Trace.begin("plain")
            Trace.end()
        }
        await Trace.interval("fetch", category: .netHTTP) {
            await Task.yield()
            Trace.beginAsync("resolve", category: .netDNS).end()
        }
        try session.stop()
        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        #expect(trace.slices(named: "decode").first?.categories == ["media"])
        #expect(trace.slices(named: "frame").first?.categories == ["media"])
        #expect(trace.slices(named: "plain").first?.categories == [])
        #expect(trace.instants.first { $0.name == "keyframe" }?.categories == ["media"])
        #expect(trace.slices(named: "fetch").first?.categories == ["net.http"])
        let resolve = try #require(trace.slices(named: "resolve").first)
        #expect(resolve.categories == ["net.dns"])
        #expect(trace.track(resolve.track)?.parent == trace.slices(named: "fetch").first?.track)
        #expect(trace.counters.contains { $0.name == "queued" && $0.value == 4 })
        // The frame is nested in decode on the thread's track.
        let frame = try #require(trace.slices(named: "frame").first)
        #expect(frame.depth == 1)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func patternsChooseCategoriesAndEventsWithoutOneAreAlwaysRecorded() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = try TraceSession.start(Self.configuration(path, categories: ["media", "net.*", "-net.dns"]))
        #expect(Trace.Category.media.isEnabled && Trace.Category.netHTTP.isEnabled)
        #expect(!Trace.Category.netDNS.isEnabled && !Trace.Category.disk.isEnabled)
        Trace.interval("media on", category: .media) {}
        Trace.interval("http on", category: .netHTTP) {}
        Trace.interval("dns off", category: .netDNS) {}
        Trace.interval("disk off", category: .disk) {}
        Trace.instant("disk instant off", category: .disk)
        Trace.counter("disk counter off", 1, category: .disk)
        #expect(Trace.beginAsync("disk async off", category: .disk).id == 0)
        // Named after the session started: the running patterns apply.
        let late = Trace.Category("net.late")
        Trace.interval("late on", category: late) {}
        Trace.interval("uncategorized") {}
        try session.stop()
        #expect(!Trace.Category.media.isEnabled)
        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        let names = Set(trace.slices.map(\.name) + trace.instants.map(\.name))
        #expect(names.isSuperset(of: ["media on", "http on", "late on", "uncategorized"]))
        #expect(names.isDisjoint(with: ["dns off", "disk off", "disk instant off", "disk async off"]))
        #expect(!trace.counters.contains { $0.name == "disk counter off" })
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func categoriesChangeWhileTheSessionRunsAndTheTraceStaysNested() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = try TraceSession.start(Self.configuration(path, categories: ["media"]))
        Trace.interval("disk before", category: .disk) {}
        try session.setCategories(["disk"])
        Trace.interval("disk after", category: .disk) {}
        Trace.interval("media after", category: .media) {}

        // A begin skipped while its category was off: its end is dropped.
        Trace.begin("outer", category: .disk)
        Trace.begin("skipped", category: .media)
        try session.setCategories(["*"])
        Trace.end(category: .media)
        // A begin whose end is skipped: it ends with the interval around it.
        Trace.begin("unended", category: .media)
        try session.setCategories(["disk"])
        Trace.end(category: .media)
        Trace.end(category: .disk)
        // The scoped form pairs its ends whatever happens in between.
        Trace.interval("scoped", category: .disk) {
            try? session.setCategories(["media"])
        }
        try session.stop()
        #expect(throws: TraceSessionError.self) { try session.setCategories([""]) }

        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        let names = trace.slices.map(\.name)
        #expect(!names.contains("disk before") && !names.contains("skipped") && !names.contains("media after"))
        #expect(names.contains("disk after"))
        let outer = try #require(trace.slices(named: "outer").first)
        let unended = try #require(trace.slices(named: "unended").first)
        let scoped = try #require(trace.slices(named: "scoped").first)
        #expect(outer.dur != nil && unended.dur != nil && scoped.dur != nil)
        #expect(unended.depth == 1 && outer.depth == 0 && scoped.depth == 0)
        #expect(unended.ts + unended.dur! == outer.ts + outer.dur!)
    }

    /// An end in a category whose begin was skipped while the category was
    /// off, arriving after the category was turned on, closes nothing: the
    /// intervals around it, plain or in another category, keep their own
    /// ends, and the trace counts the end as left out.
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func anEndWhoseBeginWasSkippedLeavesTheEnclosingIntervalsOpen() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = try TraceSession.start(Self.configuration(path, categories: ["disk"]))
        Trace.begin("plain outer")
        Trace.begin("disk outer", category: .disk)
        Trace.begin("skipped", category: .media)
        try session.setCategories(["*"])
        Trace.end(category: .media)
        Trace.instant("inside both")
        Trace.end(category: .disk)
        Trace.instant("inside plain")
        Trace.end()
        Trace.instant("after")
        // Slow paths as well: an end in a category past a plain level.
        Trace.begin("plain again")
        Trace.end(category: .media)
        Trace.instant("inside plain again")
        Trace.end()
        try session.stop()
        #expect(session.statistics.unmatchedEnds == 0)

        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        #expect(trace.stat("patches_failed") == 2)
        func instant(_ name: String) throws -> UInt64 { try #require(trace.instants.first { $0.name == name }).ts }
        func end(_ name: String) throws -> UInt64 {
            let slice = try #require(trace.slices(named: name).first)
            return slice.ts + (try #require(slice.dur, "\(name) has an end"))
        }
        #expect(try end("disk outer") >= instant("inside both") && end("disk outer") <= instant("inside plain"))
        #expect(try end("plain outer") >= instant("inside plain") && end("plain outer") <= instant("after"))
        #expect(try end("plain again") >= instant("inside plain again"))
        #expect(trace.slices(named: "skipped").isEmpty)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func aWrappedFlightRecorderKeepsCategoriesOfWhatSurvives() throws {
        let path = temporaryTracePath()
        let dumpPath = temporaryTracePath("dump")
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: dumpPath)
        }
        var configuration = Self.configuration(path, categories: ["media", "net.*"])
        configuration.whenBufferFull = .overwriteOldest
        configuration.bufferSizePerThread = 256 << 10
        let session = try TraceSession.start(configuration)
        for index in 0..<40_000 {
            Trace.interval("frame", category: .media) {
                Trace.counter("bytes", index, category: .netHTTP)
                Trace.instant("tick", category: .disk)
            }
        }
        try session.dump(to: dumpPath)
        try session.stop()
        #expect(session.statistics.overwrittenEvents > 0)
        let trace = try OfficialDecoder.decode(dumpPath)
        #expect(trace.errors.isEmpty)
        let frames = trace.slices(named: "frame")
        #expect(frames.count > 1000)
        #expect(frames.allSatisfy { $0.categories == ["media"] })
        #expect(trace.instants.allSatisfy { $0.name != "tick" })
    }

    @Test func patternsMatchNamesAndGlobs() {
        #expect(CategorySelection.matches("net.http", "net.*"))
        #expect(CategorySelection.matches("net.", "net.*"))
        #expect(!CategorySelection.matches("network", "net.*"))
        #expect(CategorySelection.matches("a.b.c", "*.c"))
        #expect(CategorySelection.matches("abcbc", "a*bc"))
        #expect(CategorySelection.matches("anything", "*"))
        #expect(!CategorySelection.matches("media", "medi"))
        let selection = CategorySelection(patterns: ["net.*", "-net.dns", "media"])
        #expect(selection.enables("net.http") && selection.enables("media"))
        #expect(!selection.enables("net.dns") && !selection.enables("disk"))
        #expect(!CategorySelection(patterns: []).enables("media"))
    }

    @Test func theEnvironmentListsCategoriesAndBadPatternsAreNamed() throws {
        let environment = [
            TraceSession.outputEnvironmentVariable: "/tmp/x.pftrace",
            TraceConfiguration.categoriesEnvironmentVariable: "media, net.*,-net.dns",
        ]
        let configuration = try #require(try TraceConfiguration.fromEnvironment(environment))
        #expect(configuration.categories == ["media", "net.*", "-net.dns"])
        var bad = environment
        bad[TraceConfiguration.categoriesEnvironmentVariable] = "media,,disk"
        #expect {
            _ = try TraceConfiguration.fromEnvironment(bad)
        } throws: { error in
            "\(error)".contains(TraceConfiguration.categoriesEnvironmentVariable)
        }
        var configurationWithBadPattern = TraceConfiguration(outputPath: nil)
        configurationWithBadPattern.categories = ["-"]
        #expect(throws: TraceSessionError.self) { try TraceSession.start(configurationWithBadPattern) }
    }

    @Test func withoutASessionNoCategoryIsEnabled() {
        #expect(!Trace.Category.media.isEnabled)
        #expect(Trace.Category("media") == .media)
        #expect(Trace.Category.netHTTP.name == "net.http")
    }
}
