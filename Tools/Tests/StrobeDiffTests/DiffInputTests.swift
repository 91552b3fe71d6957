import Foundation
import StrobeDiff
import StrobeJudgement
import StrobeSimulations
import StrobeStatistics
import Testing

@Suite struct DiffInputTests {
    @Test func csvWithQuotesDimensionsAndErrors() throws {
        let text = "metric,value,unit,better,device\r\n\"lens, apply\",10,ns,lower,a\n\nlens, apply\",11,ns,lower,a\n"
        #expect(throws: DiffError.self) { try CSVSamples.parse(text: text, file: "bad.csv") }
        let good =
            "metric,value,unit,better,device\r\n\"lens, apply\",10,ns,lower,a\n\n\"lens, apply\",11,ns,lower,a\nfps,60,"
            + "count,higher,b\n"
        let series = try CSVSamples.parse(text: good, file: "good.csv")
        #expect(series.count == 2)
        #expect(
            series[0].metric == "lens, apply" && series[0].samples == [10, 11]
                && series[0].dimensions == ["device": "a"])
        #expect(series[1].better == .higher)
        do {
            _ = try CSVSamples.parse(text: "metric,value\nx,abc\n", file: "numbers.csv")
            Issue.record("parsed a non-number")
        } catch {
            #expect(error.description == "numbers.csv: line 2, column value: \"abc\" is not a number")
        }
        #expect(throws: DiffError.self) { try CSVSamples.parse(text: "name,value\nx,1\n", file: "header.csv") }
    }

    static func set(_ metric: String, unit: String, samples: [Double], dimensions: [String: String] = [:]) -> SampleSet
    {
        var set = SampleSet()
        set.series = [
            .init(
                metric: metric, unit: unit, better: .lower, samples: samples, dimensions: dimensions,
                source: "\(metric).csv")
        ]
        return set
    }

    @Test func mismatchedUnitsAndNoCommonMetricsAreErrors() {
        #expect(throws: DiffError.self) {
            try Judgement.compare(
                baseline: Self.set("a", unit: "ns", samples: [1, 2]),
                candidate: Self.set("a", unit: "bytes", samples: [1, 2]))
        }
        #expect(throws: DiffError.self) {
            try Judgement.compare(
                baseline: Self.set("a", unit: "ns", samples: [1, 2]),
                candidate: Self.set("b", unit: "ns", samples: [1, 2]))
        }
    }

    @Test func reportsWarnAndRenderEveryFormat() throws {
        var generator = SeededGenerator(seed: 11)
        let base = (0..<30).map { _ in 100 * exp(0.03 * generator.normal()) }
        let cand = (0..<30).map { _ in 115 * exp(0.03 * generator.normal()) }
        let report = try Judgement.compare(
            baseline: Self.set("lens apply", unit: "ns", samples: base, dimensions: ["host": "a", "device": "x"]),
            candidate: Self.set("lens apply", unit: "ns", samples: cand, dimensions: ["host": "b", "device": "x"]),
            groupBy: "device")
        #expect(report.rows.count == 1 && report.rows[0].verdict == .regression && report.rows[0].group == "x")
        #expect(report.exitStatus == 1)
        #expect(report.warnings.contains { $0.contains("differ in host") })
        let markdown = report.renderMarkdown()
        #expect(markdown.hasPrefix("### :red_circle: Strobe: 1 test slower: lens apply [x] +"))
        #expect(markdown.contains("|  | `lens apply` | x |"))
        let json = try JSONSerialization.jsonObject(with: Data(report.renderJSON().utf8)) as? [String: Any]
        #expect((json?["rows"] as? [Any])?.count == 1)
        let html = report.renderHTML()
        #expect(html.contains("<svg") && html.contains("regression") && !html.contains("http://cdn"))
        #expect(report.renderText().contains("regression"))
    }
}

/// The bar: measured false-alarm and power figures, through the same code
/// path as `strobe diff`.
@Suite struct DetectorQualityTests {
    @Test func falseAlarmsStayUnderOnePercentOfSuites() {
        let simulation = DetectorSimulation()
        let aa = simulation.run(suites: 1000, noise: .logNormal(sigma: 0.05), slowdown: 0, seed: 101)
        print(
            "A/A, 1000 suites x 20 metrics, n=30, log-normal 0.05: \(aa.falseAlarmRate * 100)% of suites with a false "
                + "regression"
        )
        #expect(aa.falseAlarmRate <= 0.01)
        for noise: DetectorSimulation.Noise in [
            .logNormal(sigma: 0.10), .bimodal(sigma: 0.05), .outliers(sigma: 0.05), .rounded(sigma: 0.05),
        ] {
            let outcome = simulation.run(suites: 250, noise: noise, slowdown: 0, seed: 102)
            #expect(outcome.suitesWithFalseAlarm <= 3, "\(noise): \(outcome.suitesWithFalseAlarm) of 250 suites")
        }
        var unequal = simulation
        unequal.baselineCount = 20
        unequal.candidateCount = 45
        #expect(
            unequal.run(suites: 250, noise: .logNormal(sigma: 0.05), slowdown: 0, seed: 103).suitesWithFalseAlarm <= 3)
    }

    @Test func catchesTenPercentSlowdowns() {
        let simulation = DetectorSimulation()
        let easy = simulation.run(suites: 300, noise: .logNormal(sigma: 0.05), slowdown: 0.10, seed: 201)
        #expect(easy.power >= 0.95)
        let hard = simulation.run(suites: 1000, noise: .logNormal(sigma: 0.10), slowdown: 0.10, seed: 202)
        print(
            "power at sigma 0.10: ours \(hard.power), oracle \(hard.oraclePower), ratio "
                + "\(hard.power / hard.oraclePower)"
        )
        #expect(hard.power >= 0.85 * hard.oraclePower)
        #expect(hard.falseAlarmRate <= 0.02)
    }
}
