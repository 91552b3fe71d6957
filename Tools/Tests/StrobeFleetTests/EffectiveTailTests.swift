import Foundation
import StrobeHistory
import StrobeStatistics
import StrobeStatisticsTestSupport
import Testing

@testable import StrobeFleet
@testable import StrobeHistoryStore
@testable import StrobeJudgement

/// In a weighted group, a percentile is judged by the effective number of
/// events beyond it (Kish's), not their count: a tail that a few heavy
/// sessions make is as good as a handful of events. The report takes the
/// verdict from `SessionQuantiles.compare` and names the thin tails.
@Suite struct EffectiveTailTests {
    /// Two versions of 40 sessions each, two of them sampled at 1% and the
    /// rest always; the candidate takes twice as long.
    static func fleet(seed: UInt64, probabilities: (heavy: Double, light: Double)) -> [FleetSession] {
        var generator = SeededGenerator(seed: seed)
        var sessions: [FleetSession] = []
        for (version, median) in [("5.1", 40e6), ("5.2", 80e6)] {
            for (index, sketch) in SeededSessions.logNormal(&generator, count: 40, median: median).enumerated() {
                sessions.append(
                    FleetSession(
                        trace: "\(version)-\(index)", metadata: ["app.version": version],
                        samplingProbability: index < 2 ? probabilities.heavy : probabilities.light,
                        count: Int64(sketch.count), total: sketch.sum, sketch: sketch.serialized()))
            }
        }
        return sessions
    }

    static func report(_ sessions: [FleetSession]) throws -> FleetReport {
        var options = FleetReport.Options(metrics: ["frame"])
        options.compare = ("5.1", "5.2")
        options.probabilities = [0.9]
        return try FleetReport.build([("frame", .interval, sessions)], options: options)
    }

    @Test func aWeightedTailOfManyEventsButFewEffectiveOnesIsInconclusive() throws {
        let weighted = try Self.report(Self.fleet(seed: 72, probabilities: (0.01, 1)))
        let metric = weighted.metrics[0]
        #expect(metric.groups.map(\.weighted) == [true, true])
        let change = try #require(metric.changes?.first?.changes.first)

        // Each side has well over 10 events beyond its P90 (counted as
        // SessionQuantiles.compare counts them, and in fact), but fewer than
        // 10 effective ones: the two heavy sessions carry most of the
        // weight.
        for (group, estimate) in zip(metric.groups, [change.baseline, change.candidate]) {
            #expect(0.1 * Double(estimate.events) >= SessionQuantiles.minimumTailEvents)
            let members = Self.fleet(seed: 72, probabilities: (0.01, 1))
                .filter { $0.metadata["app.version"] == group.values.last }
            let sketches = try members.map { try QuantileSketch(serialized: $0.sketch) }
            #expect(SeededSessions.tails(sketches, beyond: estimate.estimate).above >= 10, "\(group.values)")
            let effective = try #require(group.percentiles.first?.tailEvents)
            #expect(effective < SessionQuantiles.minimumTailEvents, "\(group.values): \(effective)")
        }
        #expect(change.verdict == .inconclusive && change.adjustedPValue == 1)
        #expect(!weighted.hasRegression)
        // The report's verdict is compare's, from the estimates' tails.
        let alone = SessionQuantiles.compare([.init(baseline: change.baseline, candidate: change.candidate)])[0]
        #expect(alone == change)
        // The count alone would have judged it a regression.
        var baseline = change.baseline
        var candidate = change.candidate
        baseline.tailEvents = nil
        candidate.tailEvents = nil
        let byCount = SessionQuantiles.compare([.init(baseline: baseline, candidate: candidate)])[0]
        #expect(byCount.verdict == .regression, "\(byCount)")
        #expect(change.shift == byCount.shift && change.pValue == byCount.pValue)

        let note = "Not judged, fewer than 10 effective events beyond the percentile"
        let text = weighted.render()
        #expect(text.contains(note) && text.contains("5.1 P90 ("), "\(text)")
        #expect(weighted.renderHTML().contains("<p class=\"note thin-tail\">\(note)"))
        #expect(try weighted.renderJSON().contains("\"tailEvents\""))

        // The same sessions with equal sampling probabilities are judged.
        let even = try Self.report(Self.fleet(seed: 72, probabilities: (0.5, 0.5)))
        #expect(even.metrics[0].groups.map(\.weighted) == [false, false])
        // Unweighted, each tail is the plain count of events beyond it.
        for group in even.metrics[0].groups {
            let members = Self.fleet(seed: 72, probabilities: (0.5, 0.5))
                .filter { $0.metadata["app.version"] == group.values.last }
            let sketches = try members.map { try QuantileSketch(serialized: $0.sketch) }
            let percentile = group.percentiles[0]
            let tails = SeededSessions.tails(sketches, beyond: percentile.estimate)
            #expect(percentile.tailEvents == Double(min(tails.below, tails.above)), "\(group.values)")
        }
        #expect(even.metrics[0].changes?.first?.changes.first?.verdict == .regression)
        #expect(!even.render().contains(note))
    }

    /// A thin weighted tail leaves the other comparisons' family: they are
    /// adjusted as if it were not there.
    @Test func aThinTailStaysOutOfTheBenjaminiHochbergFamily() throws {
        let thin = Self.fleet(seed: 73, probabilities: (0.01, 1)).map { session in
            var session = session
            session.metadata["device.class"] = "low"
            return session
        }
        let judged = Self.fleet(seed: 74, probabilities: (1, 1)).map { session in
            var session = session
            session.metadata["device.class"] = "high"
            return session
        }
        var options = FleetReport.Options(metrics: ["frame"])
        options.compare = ("5.1", "5.2")
        options.probabilities = [0.9]
        options.by = ["device.class"]
        let both = try FleetReport.build([("frame", .interval, thin + judged)], options: options)
        options.filters = ["device.class": "high"]
        let alone = try FleetReport.build([("frame", .interval, judged)], options: options)
        let changes = try #require(both.metrics[0].changes)
        #expect(changes.map(\.values) == [["high"], ["low"]])
        #expect(changes[1].changes[0].verdict == .inconclusive)
        #expect(changes[0].changes[0] == alone.metrics[0].changes?.first?.changes[0])
    }
}
