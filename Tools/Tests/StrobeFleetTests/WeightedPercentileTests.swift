import Foundation
import StrobeHistory
import StrobeStatistics
import Testing

@testable import StrobeFleet
@testable import StrobeHistoryStore
@testable import StrobeSimulations

/// Sessions sampled at different rates: the percentiles weight each by the
/// inverse of its sampling probability and land on the population's, where
/// the plain pooled ones do not; the report says so in every format.
@Suite struct WeightedPercentileTests {
    /// A population of `population` sessions of the default simulation
    /// (session σ 0.3, events σ 0.5, 20–60 events); sessions faster than the
    /// median are kept with probability 0.1, slower ones always.
    static func sample(population: Int, seed: UInt64) -> (sketches: [QuantileSketch], probabilities: [Double]) {
        let simulation = FleetSimulation()
        var generator = SeededGenerator(seed: seed)
        var sketches: [QuantileSketch] = []
        var probabilities: [Double] = []
        for _ in 0..<population {
            let z = generator.normal()
            let probability = z < 0 ? 0.1 : 1
            let speed = simulation.median * exp(simulation.sessionSpread * z)
            var sketch = QuantileSketch()
            for _ in 0..<(20 + Int(generator.next() % 41)) {
                sketch.add(speed * exp(simulation.eventSpread * generator.normal()))
            }
            if generator.uniform() < probability {
                sketches.append(sketch)
                probabilities.append(probability)
            }
        }
        return (sketches, probabilities)
    }

    @Test func fastSessionsSampledAtATenthAreWeightedBackToThePopulation() {
        let truth = FleetSimulation().trueQuantile(0.9)
        let (sketches, probabilities) = Self.sample(population: 6_000, seed: 21)
        #expect(probabilities.filter { $0 == 0.1 }.count < probabilities.count / 6)
        let weighted = SessionQuantiles.estimate(
            sessions: sketches, samplingProbabilities: probabilities, probabilities: [0.9])[0]
        let plain = SessionQuantiles.estimate(sessions: sketches, probabilities: [0.9])[0]
        #expect(abs(log(weighted.estimate / truth)) < 0.03, "weighted \(weighted.estimate) against \(truth)")
        #expect(weighted.lower <= truth && truth <= weighted.upper, "\(weighted) against \(truth)")
        #expect(log(plain.estimate / truth) > 0.08, "unweighted \(plain.estimate) against \(truth)")
        #expect(plain.lower > truth)
        // The weighted interval is wider: the few fast sessions stand for
        // many.
        #expect(weighted.logStandardError > plain.logStandardError)
    }

    /// Over seeded samples, the weighted interval holds the population's P90
    /// about as often as it claims.
    @Test func weightedIntervalsCoverThePopulationsPercentile() {
        let truth = FleetSimulation().trueQuantile(0.9)
        var covered = 0
        let trials = 60
        for trial in 0..<trials {
            let (sketches, probabilities) = Self.sample(population: 2_000, seed: 100 + UInt64(trial))
            let estimate = SessionQuantiles.estimate(
                sessions: sketches, samplingProbabilities: probabilities, probabilities: [0.9])[0]
            if estimate.lower <= truth, truth <= estimate.upper { covered += 1 }
        }
        #expect(covered >= 51, "\(covered) of \(trials)")
    }

    static func sessions(
        _ sketches: [QuantileSketch], probabilities: [Double], metadata: [String: String], prefix: String
    ) -> [FleetSession] {
        zip(sketches, probabilities).enumerated().map { index, pair in
            FleetSession(
                trace: "\(prefix)-\(index)", metadata: metadata, samplingProbability: pair.1,
                count: Int64(pair.0.count), total: pair.0.sum, sketch: pair.0.serialized())
        }
    }

    @Test func theReportSaysWhichGroupsAreWeighted() throws {
        let (sketches, probabilities) = Self.sample(population: 600, seed: 31)
        let mixed = Self.sessions(
            sketches, probabilities: probabilities, metadata: ["device.class": "low"], prefix: "low")
        let even = Self.sessions(
            sketches, probabilities: probabilities.map { _ in 0.01 }, metadata: ["device.class": "high"],
            prefix: "high")
        var options = FleetReport.Options(metrics: ["frame"])
        options.by = ["device.class"]
        let report = try FleetReport.build([("frame", .interval, mixed + even)], options: options)
        let groups = report.metrics[0].groups
        #expect(groups.map(\.values) == [["high"], ["low"]])
        #expect(groups.map(\.weighted) == [false, true])
        #expect(groups[1].samplingProbabilities == [0.1, 1])
        #expect(
            groups[0].percentiles == SessionQuantiles.estimate(sessions: sketches, probabilities: [0.5, 0.9, 0.99]))
        #expect(groups[1].percentiles[1].estimate < groups[0].percentiles[1].estimate)

        let note = "Weighted percentiles: each session counts 1/π"
        let text = report.render()
        #expect(text.contains(note) && text.contains("low (π 0.1 to 1)") && !text.contains("high (π"), "\(text)")
        #expect(report.render(markdown: true).contains("\n\n" + note))
        let json = try report.renderJSON()
        #expect(json.contains("\"weighted\" : true") && json.contains("\"weighted\" : false"), "\(json)")
        let html = report.renderHTML()
        #expect(html.contains("<p class=\"note weighted\">\(note)"))
        #expect(html.contains("weighted by 1/sampling probability"))

        var unweighted = options
        unweighted.filters = ["device.class": "high"]
        let plain = try FleetReport.build([("frame", .interval, even)], options: unweighted)
        #expect(!plain.render().contains(note) && !plain.renderHTML().contains("note weighted"))
    }

    @Test func aSamplingProbabilityOutsideTheUnitIntervalIsNamed() {
        let (sketches, _) = Self.sample(population: 20, seed: 41)
        let sessions = Self.sessions(
            sketches, probabilities: sketches.indices.map { $0 == 1 ? 0 : 1 }, metadata: [:], prefix: "t")
        #expect {
            try FleetReport.build([("frame", .interval, sessions)], options: FleetReport.Options(metrics: ["frame"]))
        } throws: { error in
            "\(error)" == "trace t-1, frame: sampling probability 0.0 is not in (0, 1]"
        }
    }

    @Test func exactQuantilesBySelectionEqualThoseOfTheSortedValues() {
        var generator = SeededGenerator(seed: 51)
        for count in [1, 2, 7, 100, 5_001] {
            var values = (0..<count).map { _ in (generator.normal() * 10).rounded() }
            let sorted = values.sorted()
            let ps = [0.99, 0.5, 0, 0.9, 1, 0.25]
            let selected = FleetSimulation.exactQuantiles(&values, ps)
            #expect(selected == ps.map { Quantiles.quantile(sorted: sorted, $0) }, "\(count) values")
        }
    }
}
