import StrobeTestTraits
import Testing

@testable import StrobeReader

/// The summary of a flight-recorder dump: the trigger comes first, and a
/// mark with nonsense arguments (a damaged or foreign file) is shown as far
/// as it makes sense, never trapping.
@Suite(.processWide) struct TriggerSummaryTests {
    static func trace(instants: [Instant], intervals: [Interval] = []) -> ParsedTrace {
        ParsedTrace(
            process: nil, threads: [TraceThread(tid: 7, pid: 1, name: "main", trackUUID: 70)], tracks: [:],
            intervals: IntervalList(intervals), instants: instants, counters: [], loss: DataLoss(), issues: [],
            truncation: nil, packetCount: 1, decodedPacketCount: 1)
    }

    @Test func intervalTriggerShowsTheIntervalAndItsChildren() {
        let intervals = [
            Interval(name: "frame", track: 70, tid: 7, start: 1_000, duration: 40_000_000),
            Interval(name: "layout", track: 70, tid: 7, start: 2_000, duration: 30_000_000, depth: 1),
            Interval(name: "decode", track: 70, tid: 7, start: 30_002_000, duration: 5_000_000, depth: 1),
            Interval(name: "frame", track: 70, tid: 7, start: 40_001_000, duration: 10_000_000),
        ]
        let mark = Instant(
            name: "strobe.trigger", track: 70, tid: 7, time: 40_001_000,
            arguments: [
                "reason": .string("frame over 33ms"), "interval": .string("frame"),
                "threshold_ns": .int(33_000_000), "before_ns": .int(10), "after_ns": .int(20),
                "recorded_until_ns": .int(90_000_000),
            ])
        let summary = TraceSummary(trace: Self.trace(instants: [mark], intervals: intervals))
        #expect(summary.triggers.count == 1)
        let trigger = summary.triggers[0]
        #expect(trigger.thread == "main")
        #expect(trigger.interval?.duration == 40_000_000)
        #expect(trigger.interval?.longestChildren.map(\.name) == ["layout", "decode"])
        #expect(trigger.coveredBefore == 40_000_000)
        #expect(trigger.coveredAfter == 90_000_000 - 40_001_000)
        let text = summary.renderText()
        #expect(text.hasPrefix("Trigger: frame over 33ms\n  at        40.0 ms into the trace, on thread main\n"))
    }

    @Test func nonsenseArgumentsNeverTrap() {
        let mark = Instant(
            name: "strobe.trigger", track: 1, tid: nil, time: 5,
            arguments: [
                "before_ns": .int(-4), "after_ns": .double(.nan), "recorded_until_ns": .double(1e300),
                "interval": .string("missing"), "counter": .int(3),
            ])
        let summary = TraceSummary(trace: Self.trace(instants: [mark]))
        #expect(summary.triggers.count == 1)
        #expect(summary.triggers[0].reason == "trigger")
        #expect(summary.triggers[0].askedBefore == nil && summary.triggers[0].askedAfter == nil)
        #expect(summary.triggers[0].interval == nil)
        #expect(summary.triggers[0].coveredAfter == 0)
        #expect(TraceSummary(trace: Self.trace(instants: [])).triggers.isEmpty)
    }
}
