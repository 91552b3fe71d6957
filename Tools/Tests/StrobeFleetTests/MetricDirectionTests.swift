import Foundation
import StrobeDiff
import StrobeHistory
import StrobeResults
import StrobeStatistics
import Testing

@testable import StrobeFleet
@testable import StrobeHistoryStore
@testable import StrobeJudgement

/// Which way a metric gets better in `strobe fleet`: `strobe diff`'s policy
/// rules set it, matched as diff matches them; without one a metric is
/// lower-is-better, and the report says which it used in every format.
@Suite struct MetricDirectionTests {
    /// `sessions` sessions of 30 samples of a frame rate around `median`
    /// (each session its own level, σ 0.1; each sample σ 0.2 around it),
    /// under `version`.
    static func frameRates(
        _ generator: inout SeededGenerator, sessions: Int, median: Double, version: String
    ) -> [FleetSession] {
        (0..<sessions).map { index in
            let level = median * exp(0.1 * generator.normal())
            var sketch = QuantileSketch()
            for _ in 0..<30 { sketch.add(level * exp(0.2 * generator.normal())) }
            return FleetSession(
                trace: "\(version)-\(index)", metadata: ["app.version": version], samplingProbability: 1,
                count: Int64(sketch.count), total: sketch.sum, sketch: sketch.serialized())
        }
    }

    /// A fleet whose frame rate drops 20% from 5.1 to 5.2.
    static func droppingFrameRate(seed: UInt64) -> [FleetSession] {
        var generator = SeededGenerator(seed: seed)
        return frameRates(&generator, sessions: 150, median: 60, version: "5.1")
            + frameRates(&generator, sessions: 150, median: 48, version: "5.2")
    }

    static func report(_ sessions: [FleetSession], policy: String?) throws -> FleetReport {
        var options = FleetReport.Options(metrics: ["counter:frames per second"])
        options.compare = ("5.1", "5.2")
        if let policy { options.policy = try ComparisonPolicy.parse(policy, file: "policy.yml") }
        return try FleetReport.build([("frames per second", .counter, sessions)], options: options)
    }

    static let higher = """
        metrics:
          - match: "frames per second"
            better: higher
        """

    @Test func aHigherIsBetterCounterThatDropsIsARegressionWithTheRuleAndAnImprovementWithout() throws {
        let sessions = Self.droppingFrameRate(seed: 61)
        let ruled = try Self.report(sessions, policy: Self.higher)
        let plain = try Self.report(sessions, policy: nil)
        let ruledChanges = try #require(ruled.metrics[0].changes?.first?.changes)
        let plainChanges = try #require(plain.metrics[0].changes?.first?.changes)
        #expect(ruledChanges.count == 3 && plainChanges.count == 3)
        for (withRule, without) in zip(ruledChanges, plainChanges) {
            #expect(abs(withRule.shift.change + 0.2) < 0.05, "\(withRule.shift)")
            // The same change and test; only the direction differs.
            #expect(withRule.shift == without.shift && withRule.pValue == without.pValue)
            #expect(withRule.verdict == .regression, "P\(withRule.baseline.probability * 100)")
            #expect(without.verdict == .improvement, "P\(without.baseline.probability * 100)")
        }
        #expect(ruled.hasRegression && !plain.hasRegression)
        #expect(ruled.metrics[0].better == .higher && ruled.metrics[0].betterRule == "frames per second")
        #expect(plain.metrics[0].better == .lower && plain.metrics[0].betterRule == nil)
    }

    @Test func theReportSaysTheDirectionInEveryFormat() throws {
        let sessions = Self.droppingFrameRate(seed: 62)
        let ruled = try Self.report(sessions, policy: Self.higher)
        let plain = try Self.report(sessions, policy: nil)
        let said = "higher is better by policy rule \"frames per second\""
        let text = ruled.render()
        // The headline leads; the metric's table follows it.
        #expect(text.contains("\n\ncounter frames per second (\(said))\n"), "\(text)")
        #expect(plain.render().contains("\n\ncounter frames per second (lower is better by default)\n"))
        #expect(ruled.render(markdown: true).contains("\n\n### counter frames per second (\(said))\n"))
        #expect(
            ruled.renderHTML().contains(
                "<p class=\"note direction\">Higher is better by policy rule &quot;frames per second&quot;.</p>"))
        #expect(plain.renderHTML().contains("<p class=\"note direction\">Lower is better by default.</p>"))
        let json = try ruled.renderJSON()
        #expect(json.contains("\"better\" : \"higher\"") && json.contains("\"betterRule\" : \"frames per second\""))
        #expect(try plain.renderJSON().contains("\"better\" : \"lower\""))

        let decoded = try JSONDecoder().decode(FleetReport.self, from: Data(json.utf8))
        #expect(decoded.metrics == ruled.metrics)
    }

    /// The fleet takes the direction `ComparisonPolicy.settings(for:unit:)`
    /// gives, which is how `strobe diff` matches rules: regular
    /// expressions on the name, every matching rule in file order, the last
    /// to set the direction winning; the name carries no `counter:`.
    @Test(arguments: [
        ("frames", MetricDirection.higher, String?("frames")),
        ("^frames per second$", .higher, "^frames per second$"),
        ("second$", .higher, "second$"),
        ("FRAMES", .lower, nil),
        ("^counter:", .lower, nil),
        ("fram(e|es) per", .higher, "fram(e|es) per"),
    ])
    func rulesMatchAsDiffMatchesThem(pattern: String, expected: MetricDirection, rule: String?) throws {
        let policy = "metrics:\n  - match: \"\(pattern)\"\n    better: higher\n"
        let report = try Self.report(Self.droppingFrameRate(seed: 64), policy: policy)
        let parsed = try ComparisonPolicy.parse(policy, file: "policy.yml")
        #expect(report.metrics[0].better == expected)
        #expect(report.metrics[0].better == parsed.settings(for: "frames per second").better ?? .lower)
        #expect(report.metrics[0].betterRule == rule)
        let verdict = report.metrics[0].changes?.first?.changes[1].verdict
        #expect(verdict == (expected == .higher ? .regression : .improvement))
    }

    @Test func aLaterNarrowerRuleOverridesAnEarlierOneAndFloorsApply() throws {
        let sessions = Self.droppingFrameRate(seed: 65)
        let overridden = try Self.report(
            sessions,
            policy: """
                metrics:
                  - match: "per second"
                    better: higher
                  - match: "^frames"
                    better: lower
                """)
        #expect(overridden.metrics[0].better == .lower && overridden.metrics[0].betterRule == "^frames")
        // A relative floor above the drop: nothing counts.
        let floored = try Self.report(
            sessions,
            policy: """
                metrics:
                  - match: "frames"
                    better: higher
                    relative-floor: 30%
                """)
        let verdicts = floored.metrics[0].changes?.first?.changes.map(\.verdict) ?? []
        #expect(verdicts.count == 3 && !verdicts.contains(.regression), "\(verdicts)")
        #expect(!floored.hasRegression)
    }

    /// Intervals without a rule stay lower-is-better beside a counter with
    /// one.
    @Test func intervalsStayLowerIsBetterByDefault() throws {
        var generator = SeededGenerator(seed: 66)
        func slower(_ version: String, _ median: Double) -> [FleetSession] {
            Self.frameRates(&generator, sessions: 100, median: median, version: version)
        }
        let intervals = slower("5.1", 40e6) + slower("5.2", 48e6)
        var options = FleetReport.Options(metrics: ["frame", "counter:frames per second"])
        options.compare = ("5.1", "5.2")
        options.policy = try ComparisonPolicy.parse(Self.higher, file: "policy.yml")
        let report = try FleetReport.build(
            [("frame", .interval, intervals), ("frames per second", .counter, Self.droppingFrameRate(seed: 67))],
            options: options)
        #expect(report.metrics.map(\.better) == [.lower, .higher])
        #expect(report.metrics[0].changes?.first?.changes.allSatisfy { $0.verdict == .regression } == true)
        #expect(report.render().contains("frame (lower is better by default)\n"))
    }
}
