import Foundation
import StrobeTestTraits
import Testing

@testable import Strobe
@testable import StrobeReader

/// Records traces with the SDK and reads them back. Sessions are process-wide,
/// so the suite runs one test at a time.
@Suite(.serialized, .processWide)
struct ReaderTests {
    static func temporaryPath(_ name: String = #function) -> String {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        return NSTemporaryDirectory() + "strobe-reader-\(getpid())-\(safe)-\(UInt32.random(in: 0...UInt32.max)).pftrace"
    }

    /// Records a varied trace into `path`.
    static func recordVariedTrace(_ path: String) throws {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let session = try TraceSession.start(configuration)
        Trace.setThreadName("reader main")
        let flow = Trace.Flow()
        Trace.interval("outer") {
            Trace.begin("inner", flow: flow, arguments: ["n": 7, "ratio": 0.5, "ok": true, "label": "hello, world"])
            Trace.counter("queue", 3)
            Trace.counter("load", 0.75)
            Trace.end()
            Trace.instant("tick", arguments: ["frame": 12])
        }
        Trace.interval("categorized", category: Trace.Category("reader.media")) {
            Trace.instant("categorized instant", category: Trace.Category("reader.net"))
        }
        Trace.interval("cpu", capturing: .resourceUsage) {
            var x = 0.0
            for index in 0..<200_000 { x += Double(index).squareRoot() }
            #expect(x > 0)
        }
        let async = Trace.beginAsync("download")
        let worker = Thread {
            Trace.setThreadName("reader worker")
            Trace.begin("receive", terminatingFlow: flow)
            async.end()
            Trace.end()
        }
        worker.start()
        while !worker.isFinished { usleep(500) }
        Trace.begin("left open")
        try session.stop()
    }

    static var pythonUsable: Bool {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import perfetto.protos.perfetto.trace.perfetto_trace_pb2"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            print("skipping the official-decoder cross-check: no `perfetto` Python package")
        }
        return process.terminationStatus == 0
    }

    static func officialDecode(_ path: String) throws -> [String: Any] {
        var script = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { script.deleteLastPathComponent() }
        script.appendPathComponent("Tests/python/perfetto_decode.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func readsBackEveryEvent() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.recordVariedTrace(path)
        let trace = try TraceReader.read(contentsOf: path)
        #expect(trace.isComplete)
        #expect(trace.issues.isEmpty)
        #expect(trace.process?.pid == getpid())
        let main = try #require(trace.threads.first { $0.name == "reader main" })
        let worker = try #require(trace.threads.first { $0.name == "reader worker" })
        #expect(main.tid != worker.tid)

        let outer = try #require(trace.intervals(named: "outer").first)
        let inner = try #require(trace.intervals(named: "inner").first)
        #expect(outer.depth == 0 && inner.depth == 1)
        #expect(outer.tid == main.tid && inner.tid == main.tid)
        #expect(inner.start >= outer.start && inner.end! <= outer.end!)
        #expect(inner.arguments["n"] == .int(7))
        #expect(inner.arguments["ratio"] == .double(0.5))
        #expect(inner.arguments["ok"] == .bool(true))
        #expect(inner.arguments["label"] == .string("hello, world"))
        #expect(inner.flowIDs.count == 1)
        let receive = try #require(trace.intervals(named: "receive").first)
        #expect(receive.tid == worker.tid)
        #expect(receive.terminatingFlowIDs == inner.flowIDs)

        let cpu = try #require(trace.intervals(named: "cpu").first)
        #expect(cpu.cpuTime != nil)
        #expect(cpu.resourceUsage != nil)
        #expect(cpu.arguments["rusage.user_ns"] == nil)

        let download = try #require(trace.intervals(named: "download").first)
        #expect(download.isAsync && download.tid == nil && download.duration != nil)
        #expect(trace.tracks[download.track]?.kind == .async)

        #expect(trace.intervals(named: "left open").first?.duration == nil)
        #expect(trace.counter(named: "queue")?.samples.map(\.value) == [3])
        #expect(trace.counter(named: "load")?.samples.map(\.value) == [0.75])
        #expect(trace.counter(named: "queue")?.unit == "count")
        let tick = try #require(trace.instants.first { $0.name == "tick" })
        #expect(tick.arguments["frame"] == .int(12) && tick.tid == main.tid)
        #expect(trace.loss.threads.count >= 2)
        #expect(trace.loss.discardedEvents == 0)
    }

    @Test func agreesWithTheOfficialDecoder() throws {
        guard Self.pythonUsable else { return }
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.recordVariedTrace(path)
        let ours = try TraceReader.read(contentsOf: path)
        let official = try Self.officialDecode(path)
        let slices = try #require(official["slices"] as? [[String: Any]])
        #expect(slices.count == ours.intervals.count)
        struct Key: Hashable {
            var name: String
            var start: UInt64
            var duration: UInt64?
            var depth: Int
            var track: UInt64
        }
        let theirs = Set(
            slices.map {
                Key(
                    name: $0["name"] as! String, start: ($0["ts"] as! NSNumber).uint64Value,
                    duration: ($0["dur"] as? NSNumber)?.uint64Value, depth: ($0["depth"] as! NSNumber).intValue,
                    track: ($0["track"] as! NSNumber).uint64Value)
            })
        let mine = Set(
            ours.intervals.map {
                Key(name: $0.name, start: $0.start, duration: $0.duration, depth: $0.depth, track: $0.track)
            })
        #expect(mine == theirs)
        let counters = try #require(official["counters"] as? [[String: Any]])
        #expect(counters.count == ours.counters.reduce(0) { $0 + $1.samples.count })
        let instants = try #require(official["instants"] as? [[String: Any]])
        #expect(instants.count == ours.instants.count)
        let threadDurations = slices.compactMap { ($0["thread_dur"] as? NSNumber)?.uint64Value }
        #expect(threadDurations == ours.intervals.compactMap(\.cpuTime))
    }

    /// A Perfetto trace written by the official Python classes, with features
    /// Strobe's writer does not use (two-hop clocks, inline names, incremental
    /// and scaled counters, default extra counter tracks, lost state).
    @Test func readsForeignPerfettoTracesLikeTheOfficialDecoder() throws {
        guard Self.pythonUsable else { return }
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var directory = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { directory.deleteLastPathComponent() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import sys; sys.path.insert(0, '\(directory.path)/Tests/python')
            import test_perfetto_decode as t
            open(sys.argv[1], 'wb').write(t.build_trace().SerializeToString())
            """, path,
        ]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        let ours = try TraceReader.read(contentsOf: path)
        let official = try Self.officialDecode(path)
        let slices = try #require(official["slices"] as? [[String: Any]])
        struct Key: Hashable {
            var name: String
            var start: UInt64
            var duration: UInt64?
            var depth: Int
            var cpu: UInt64?
        }
        let theirs = Set(
            slices.map {
                Key(
                    name: $0["name"] as! String, start: ($0["ts"] as! NSNumber).uint64Value,
                    duration: ($0["dur"] as? NSNumber)?.uint64Value, depth: ($0["depth"] as! NSNumber).intValue,
                    cpu: ($0["thread_dur"] as? NSNumber)?.uint64Value)
            })
        let mine = Set(
            ours.intervals.map {
                Key(name: $0.name, start: $0.start, duration: $0.duration, depth: $0.depth, cpu: $0.cpuTime)
            })
        #expect(mine == theirs)
        let counters = try #require(official["counters"] as? [[String: Any]])
        let theirCounters = counters.map { ($0["name"] as? String ?? "", ($0["value"] as! NSNumber).doubleValue) }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        let ourCounters = ours.counters.flatMap { series in series.samples.map { (series.name, $0.value) } }.sorted {
            ($0.0, $0.1) < ($1.0, $1.1)
        }
        #expect(theirCounters.map(\.0) == ourCounters.map(\.0))
        #expect(theirCounters.map(\.1) == ourCounters.map(\.1))
        let instants = try #require(official["instants"] as? [[String: Any]])
        #expect(Set(instants.map { $0["name"] as! String }) == Set(ours.instants.map(\.name)))
        let stats = try #require(official["stats"] as? [String: Any])
        #expect(ours.loss.skippedPackets == (stats["tokenizer_skipped_packets"] as? Int))
        #expect(ours.loss.droppedPacketMarks == (stats["packets_dropped_marks"] as? Int))
    }

    @Test func categoriesAreReadAndSelectIntervalsAndInstants() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.recordVariedTrace(path)
        let parsed = try TraceReader.read(contentsOf: path)
        #expect(parsed.issues.isEmpty)
        let categorized = try #require(parsed.intervals.first { $0.name == "categorized" })
        #expect(categorized.categories == ["reader.media"])
        #expect(parsed.intervals.first { $0.name == "outer" }?.categories == [])
        #expect(parsed.instants.first { $0.name == "categorized instant" }?.categories == ["reader.net"])
        let media = parsed.keepingCategories(["reader.m*"])
        #expect(media.intervals.map(\.name) == ["categorized"])
        #expect(media.instants.isEmpty)
        let all = parsed.keepingCategories(["reader.*", "-reader.media"])
        #expect(all.intervals.isEmpty)
        #expect(all.instants.map(\.name) == ["categorized instant"])
        #expect(all.counters == parsed.counters)
    }

    @Test func handDecodingAgreesWithProtobufC() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.recordVariedTrace(path)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let fast = TraceReader.read(bytes: bytes, source: path, usesFastPaths: true)
        let generic = TraceReader.read(bytes: bytes, source: path, usesFastPaths: false)
        #expect(fast.intervals == generic.intervals)
        #expect(fast.instants == generic.instants)
        #expect(fast.counters == generic.counters)
        #expect(fast.threads == generic.threads)
        #expect(fast.loss == generic.loss)
        #expect(fast.packetCount == generic.packetCount)
    }

    @Test func durationsAreExactAfterClockConversion() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let session = try TraceSession.start(configuration)
        let clock = ContinuousClock()
        let loopStart = clock.now
        for _ in 0..<500 {
            Trace.begin("timed")
            Trace.end()
        }
        let loop = clock.now - loopStart
        try session.stop()
        let trace = try TraceReader.read(contentsOf: path)
        let timed = trace.intervals(named: "timed")
        #expect(timed.count == 500)
        // Every begin and end lands in the file exactly as the encoder
        // converted it: consecutive intervals neither overlap nor go back,
        // and all of them fit in the time the loop took, however the
        // machine's load stretched it.
        for (previous, next) in zip(timed, timed.dropFirst()) {
            #expect(previous.end! <= next.start)
        }
        let loopNanoseconds =
            UInt64(loop.components.seconds) * 1_000_000_000
            + UInt64(loop.components.attoseconds / 1_000_000_000)
        #expect(timed.last!.end! - timed.first!.start <= loopNanoseconds + 1_000)
    }

    @Test func summaryFlagsHitchesAndFrequentChildren() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let session = try TraceSession.start(configuration)
        for frame in 0..<12 {
            Trace.interval("frame") {
                let updates = frame == 5 ? 60 : 2
                for _ in 0..<updates { Trace.interval("update") {} }
                // Budgets far above scheduling noise: 1.3 and 2.5 frames.
                if frame == 3 { usleep(130_000) }
                if frame == 8 { usleep(250_000) }
            }
        }
        try session.stop()
        let trace = try TraceReader.read(contentsOf: path)
        let summary = TraceSummary(trace: trace, frameBudget: 100_000_000)
        let frame = try #require(summary.intervals.first { $0.name == "frame" })
        #expect(frame.count == 12)
        #expect(frame.max >= 250_000_000)
        #expect(frame.p50 <= Double(frame.p90) && frame.p90 <= frame.p99 && frame.p99 <= Double(frame.max))
        #expect(summary.hitchCounts["frame"]?["hitch"] == 1)
        #expect(summary.hitchCounts["frame"]?["may hitch"] == 1)
        let frequent = try #require(summary.frequentChildren.first)
        #expect(frequent.parent == "frame" && frequent.child == "update" && frequent.count == 60)
        #expect(summary.frequentChildren.count == 1)
        let text = summary.renderText()
        #expect(text.contains("hitch"))
        #expect(text.contains("Unusually many children"))
    }

    @Test func exportsRowsAndChromeJSON() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.recordVariedTrace(path)
        let trace = try TraceReader.read(contentsOf: path)
        let csv = TraceExport.render(trace, as: .csv)
        let lines = csv.split(separator: "\n")
        #expect(lines.first == "kind,name,tid,thread,track,ts_ns,dur_ns,depth,cpu_ns,value,args")
        #expect(
            lines.count == 1 + trace.intervals.count + trace.instants.count
                + trace.counters.reduce(0) { $0 + $1.samples.count })
        #expect(csv.contains("\"{\"\"label\"\":\"\"hello, world\"\""))
        let ndjson = TraceExport.render(trace, as: .ndjson)
        for line in ndjson.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil)
        }
        let chrome = TraceExport.render(trace, as: .chromeJSON)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(chrome.utf8)) as? [String: Any])
        let events = try #require(document["traceEvents"] as? [[String: Any]])
        #expect(events.contains { $0["ph"] as? String == "X" && $0["name"] as? String == "outer" })
        #expect(events.contains { $0["ph"] as? String == "b" && $0["name"] as? String == "download" })
        #expect(events.contains { $0["ph"] as? String == "C" })
    }
}
