import Foundation
import Testing

@testable import Strobe
@testable import StrobeReader

/// Records traces with the SDK and reads them back. Sessions are process-wide,
/// so the suite runs one test at a time.
@Suite(.serialized)
struct ReaderTests {
    static func temporaryPath(_ name: String = #function) -> String {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        return NSTemporaryDirectory() + "strobe-reader-\(getpid())-\(safe)-\(UInt32.random(in: 0...UInt32.max)).pftrace"
    }

    /// Records a varied trace into `path`.
    static func recordVariedTrace(_ path: String) throws {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = 0
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
        if process.terminationStatus != 0 { print("skipping the official-decoder cross-check: no `perfetto` Python package") }
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
        let theirs = Set(slices.map {
            Key(name: $0["name"] as! String, start: ($0["ts"] as! NSNumber).uint64Value,
                duration: ($0["dur"] as? NSNumber)?.uint64Value, depth: ($0["depth"] as! NSNumber).intValue,
                track: ($0["track"] as! NSNumber).uint64Value)
        })
        let mine = Set(ours.intervals.map { Key(name: $0.name, start: $0.start, duration: $0.duration, depth: $0.depth, track: $0.track) })
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
        process.arguments = ["python3", "-c", """
            import sys; sys.path.insert(0, '\(directory.path)/Tests/python')
            import test_perfetto_decode as t
            open(sys.argv[1], 'wb').write(t.build_trace().SerializeToString())
            """, path]
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
        let theirs = Set(slices.map {
            Key(name: $0["name"] as! String, start: ($0["ts"] as! NSNumber).uint64Value,
                duration: ($0["dur"] as? NSNumber)?.uint64Value, depth: ($0["depth"] as! NSNumber).intValue,
                cpu: ($0["thread_dur"] as? NSNumber)?.uint64Value)
        })
        let mine = Set(ours.intervals.map { Key(name: $0.name, start: $0.start, duration: $0.duration, depth: $0.depth, cpu: $0.cpuTime) })
        #expect(mine == theirs)
        let counters = try #require(official["counters"] as? [[String: Any]])
        let theirCounters = counters.map { ($0["name"] as? String ?? "", ($0["value"] as! NSNumber).doubleValue) }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        let ourCounters = ours.counters.flatMap { series in series.samples.map { (series.name, $0.value) } }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        #expect(theirCounters.map(\.0) == ourCounters.map(\.0))
        #expect(theirCounters.map(\.1) == ourCounters.map(\.1))
        let instants = try #require(official["instants"] as? [[String: Any]])
        #expect(Set(instants.map { $0["name"] as! String }) == Set(ours.instants.map(\.name)))
        let stats = try #require(official["stats"] as? [String: Any])
        #expect(ours.loss.skippedPackets == (stats["tokenizer_skipped_packets"] as? Int))
        #expect(ours.loss.droppedPacketMarks == (stats["packets_dropped_marks"] as? Int))
    }

    @Test func intervalListBuildsCompleteIntervals() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.recordVariedTrace(path)
        let trace = try TraceReader.read(contentsOf: path)
        let array = Array(trace.intervals)
        #expect(array.count == trace.intervals.count)
        let rebuilt = IntervalList(array)
        #expect(rebuilt == trace.intervals)
        #expect(rebuilt.hashValue == trace.intervals.hashValue)
        #expect(Array(rebuilt) == array)
        for name in Set(array.map(\.name)) {
            #expect(trace.intervals(named: name) == array.filter { $0.name == name })
        }
        #expect(trace.intervals(named: "no such interval").isEmpty)
        let empty: IntervalList = []
        #expect(empty.isEmpty && empty == IntervalList())
        #expect(empty != trace.intervals)
    }

    @Test func openIntervalsStayOpenAtEveryDepth() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = 0
        let session = try TraceSession.start(configuration)
        Trace.begin("a")
        Trace.begin("b")
        Trace.end()
        Trace.begin("c")
        Trace.begin("d")
        Trace.begin("e")
        Trace.end()
        try session.stop()
        let trace = try TraceReader.read(contentsOf: path)
        let byName = Dictionary(trace.intervals.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byName.count == 5)
        #expect(["a", "b", "c", "d", "e"].map { byName[$0]?.depth } == [0, 1, 1, 2, 3])
        #expect(byName["a"]?.duration == nil && byName["c"]?.duration == nil && byName["d"]?.duration == nil)
        #expect(byName["b"]?.duration != nil && byName["e"]?.duration != nil)
        #expect(byName["e"]!.start >= byName["d"]!.start)
    }

    /// Protobuf fields, for traces written by hand.
    struct Proto {
        var bytes: [UInt8] = []

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func field(_ number: UInt64, _ value: UInt64) {
            varint(number << 3)
            varint(value)
        }

        mutating func field(_ number: UInt64, _ message: Proto) {
            varint(number << 3 | 2)
            varint(UInt64(message.bytes.count))
            bytes += message.bytes
        }

        mutating func field(_ number: UInt64, _ text: String) {
            varint(number << 3 | 2)
            varint(UInt64(text.utf8.count))
            bytes += Array(text.utf8)
        }
    }

    @Test func longAndOpenIntervalsWithDetailsKeepEveryField() throws {
        var trace = Proto()
        func packet(_ time: UInt64?, _ build: (inout Proto) -> Void) {
            var packet = Proto()
            if let time { packet.field(8, time) }
            packet.field(10, 1)
            build(&packet)
            trace.field(1, packet)
        }
        func event(_ type: UInt64, _ name: String?, argument: Int64? = nil) -> Proto {
            var event = Proto()
            event.field(9, type)
            event.field(11, 5)
            if let name { event.field(23, name) }
            if let argument {
                var annotation = Proto()
                annotation.field(10, "n")
                annotation.field(4, UInt64(bitPattern: argument))
                event.field(4, annotation)
            }
            return event
        }
        packet(nil) { packet in
            packet.field(41, 1)
            var thread = Proto()
            thread.field(1, 1)
            thread.field(2, 2)
            var track = Proto()
            track.field(1, 5)
            track.field(4, thread)
            packet.field(60, track)
        }
        packet(1_000) { $0.field(11, event(1, "long")) }
        packet(2_000) { $0.field(11, event(1, "inner", argument: 7)) }
        packet(3_000) { $0.field(11, event(2, nil)) }
        packet(10_000_001_000) { $0.field(11, event(2, nil, argument: 9)) }
        packet(20_000_000_000) { $0.field(11, event(1, "open outer")) }
        packet(20_000_000_001) { $0.field(11, event(1, "open inner", argument: 3)) }
        packet(20_000_000_002) { $0.field(11, event(1, "open top")) }
        let parsed = TraceReader.read(bytes: trace.bytes, source: "hand")
        #expect(parsed.isComplete && parsed.issues.isEmpty)
        let byName = Dictionary(parsed.intervals.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let long = try #require(byName["long"])
        #expect(long.duration == 10_000_000_000 && long.depth == 0 && long.tid == 2)
        #expect(long.arguments["n"] == .int(9))
        let inner = try #require(byName["inner"])
        #expect(inner.duration == 1_000 && inner.depth == 1 && inner.arguments["n"] == .int(7))
        #expect(byName["open outer"]?.duration == nil && byName["open outer"]?.depth == 0)
        #expect(byName["open inner"]?.duration == nil && byName["open inner"]?.depth == 1)
        #expect(byName["open inner"]?.arguments["n"] == .int(3))
        #expect(byName["open top"]?.duration == nil && byName["open top"]?.depth == 2)
        #expect(IntervalList(Array(parsed.intervals)) == parsed.intervals)
        let odd = Interval(name: "odd", track: 1, start: 5, duration: 1 << 40, depth: -3, cpuTime: 4)
        #expect(Array(IntervalList([odd, odd])) == [odd, odd])
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
        configuration.processSamplingInterval = 0
        let session = try TraceSession.start(configuration)
        for _ in 0..<500 {
            Trace.begin("timed")
            Trace.end()
        }
        try session.stop()
        let trace = try TraceReader.read(contentsOf: path)
        let timed = trace.intervals(named: "timed")
        #expect(timed.count == 500)
        // Every begin and end lands in the file exactly as the encoder
        // converted it: consecutive intervals neither overlap nor go back.
        for (previous, next) in zip(timed, timed.dropFirst()) {
            #expect(previous.end! <= next.start)
        }
        #expect(timed.allSatisfy { $0.duration! < 1_000_000 })
    }

    @Test func everyPrefixReadsWithoutCrashingAndKeepsAPrefix() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.recordVariedTrace(path)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let full = TraceReader.read(bytes: bytes, source: "full")
        var previousIntervals = 0
        for length in 0...bytes.count {
            let trace = TraceReader.read(bytes: Array(bytes[0..<length]), source: "prefix")
            if let truncation = trace.truncation {
                #expect(truncation.offset >= 0 && truncation.offset <= length)
                #expect(truncation.file == "prefix")
            }
            #expect(trace.packetCount <= full.packetCount)
            // Intervals only ever appear as the prefix grows.
            #expect(trace.intervals.count >= previousIntervals - 1)
            previousIntervals = trace.intervals.count
        }
        #expect(previousIntervals == full.intervals.count)
    }

    @Test func randomByteFlipsNeverCrash() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.recordVariedTrace(path)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var generator = SplitMix(seed: 0x5EED)
        for _ in 0..<2000 {
            var damaged = bytes
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                let index = Int(generator.next() % UInt64(damaged.count))
                damaged[index] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            }
            let trace = TraceReader.read(bytes: damaged, source: "flipped")
            for issue in trace.issues + (trace.truncation.map { [$0] } ?? []) {
                #expect(issue.offset >= 0 && issue.offset <= damaged.count)
            }
            _ = TraceSummary(trace: trace, frameBudget: 16_670_000)
        }
    }

    @Test func missingFileNamesTheFile() {
        #expect(throws: TraceReadError.self) { try TraceReader.read(contentsOf: "/nonexistent/trace.pftrace") }
        do {
            _ = try TraceReader.read(contentsOf: "/nonexistent/trace.pftrace")
        } catch {
            #expect(error.description.hasPrefix("/nonexistent/trace.pftrace: byte 0: cannot open"))
        }
    }

    @Test func garbageStopsWithAnOffset() {
        let trace = TraceReader.read(bytes: [0x0A, 0x02, 0x40, 0x01, 0xFF, 0xFF], source: "garbage")
        #expect(trace.packetCount == 1)
        #expect(trace.truncation?.offset == 4)
        #expect(trace.truncation?.description.hasPrefix("garbage: byte 4:") == true)
    }

    @Test func summaryFlagsHitchesAndFrequentChildren() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = 0
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
        #expect(lines.count == 1 + trace.intervals.count + trace.instants.count + trace.counters.reduce(0) { $0 + $1.samples.count })
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

/// A small seeded generator for repeatable damage.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
