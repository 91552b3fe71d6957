import Foundation
import Strobe
import StrobeReader
import StrobeTestTraits
import Testing

/// The interval list: rebuilding, equality, and intervals left open.
@Suite(.serialized, .processWide)
struct IntervalListTests {
    @Test func intervalListBuildsCompleteIntervals() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try ReaderTests.recordVariedTrace(path)
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

    @Test func intervalsAndInstantsOfSeveralThreadsAreInTimeOrder() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        // One write at the stop: each thread's records go out as a block.
        configuration.flushInterval = .seconds(60)
        try TraceSession.record(configuration) {
            let threads = (0..<2).map { _ in
                Thread {
                    for _ in 0..<200 {
                        Trace.interval("outer") { Trace.interval("inner") { Trace.instant("tick") } }
                        usleep(50)
                    }
                }
            }
            threads.forEach { $0.start() }
            while threads.contains(where: { !$0.isFinished }) { usleep(1000) }
        }
        let trace = try TraceReader.read(contentsOf: path)
        #expect(trace.intervals.count == 800)
        #expect(Set(trace.intervals.compactMap(\.tid)).count == 2)
        // The threads overlapped in time, so file order would not be time order.
        let spans = Dictionary(grouping: trace.intervals, by: \.tid).values.map {
            ($0.map(\.start).min()!, $0.map(\.start).max()!)
        }
        #expect(spans.count == 2 && spans[0].0 < spans[1].1 && spans[1].0 < spans[0].1)
        let intervals = Array(trace.intervals)
        #expect(zip(intervals, intervals.dropFirst()).allSatisfy { $0.start <= $1.start })
        // At the same start, the outer interval comes first.
        for (first, second) in zip(intervals, intervals.dropFirst())
        where first.start == second.start && first.tid == second.tid {
            #expect(first.depth < second.depth)
        }
        #expect(zip(trace.instants, trace.instants.dropFirst()).allSatisfy { $0.time <= $1.time })
    }

    @Test func openIntervalsStayOpenAtEveryDepth() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
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
}
