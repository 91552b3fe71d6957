import Foundation
import Testing

@testable import StrobeDiff
@testable import StrobeStatistics

/// Reference values computed with SciPy 1.17 / NumPy 2.4.
@Suite struct StatisticsTests {
    @Test func mannWhitneyMatchesSciPy() {
        let a = [1.1, 2.3, 0.7, 4.5, 3.3, 2.2, 1.9, 5.1]
        let b = [3.4, 4.4, 5.9, 2.8, 6.1, 4.9, 7.2, 3.9, 5.5]
        let plain = RankTests.mannWhitney(a, b)
        #expect(plain.statistic == 62)
        #expect(abs(plain.pValue - 0.014137969455911484) < 1e-9)
        let tied = RankTests.mannWhitney([1, 2, 2, 3, 3, 3, 4], [2, 3, 3, 4, 4, 5, 5, 5])
        #expect(tied.statistic == 45)
        #expect(abs(tied.pValue - 0.049238967838553395) < 1e-9)
    }

    @Test func kolmogorovSmirnovStatisticIsExact() {
        let result = RankTests.kolmogorovSmirnov([1.1, 2.3, 0.7, 4.5, 3.3, 2.2, 1.9, 5.1], [3.4, 4.4, 5.9, 2.8, 6.1, 4.9, 7.2, 3.9, 5.5])
        #expect(abs(result.statistic - 0.6388888888888888) < 1e-12)
        #expect(result.pValue > 0.01 && result.pValue < 0.08)
        #expect(RankTests.kolmogorovSmirnov([1, 2, 3], [1, 2, 3]).pValue == 1)
    }

    @Test func quantilesFollowDefinitionSeven() {
        let sorted = [3.0, 1, 4, 1, 5, 9, 2, 6].sorted()
        #expect(abs(Quantiles.quantile(sorted: sorted, 0.9) - 6.9) < 1e-12)
        #expect(Quantiles.median(sorted: sorted) == 3.5)
        #expect(Quantiles.quantile(sorted: [7], 0.9) == 7)
    }

    @Test func studentDistributionMatchesSciPy() {
        #expect(abs(StudentDistribution.survival(2.5, degreesOfFreedom: 10) - 0.01572342211830441) < 1e-10)
        #expect(abs(StudentDistribution.survival(1.0, degreesOfFreedom: 3.5) - 0.19066862678172264) < 1e-10)
        #expect(abs(NormalDistribution.quantile(0.975) - 1.959963984540054) < 1e-9)
    }

    @Test func benjaminiHochbergMatchesTheHandComputation() {
        let adjusted = MultipleComparisons.benjaminiHochberg([0.01, 0.04, 0.03, 0.005, 0.2])
        let expected = [0.025, 0.05, 0.05, 0.025, 0.2]
        for (value, reference) in zip(adjusted, expected) { #expect(abs(value - reference) < 1e-12) }
    }

    @Test func hodgesLehmannRecoversAMultiplicativeShift() throws {
        var generator = SeededGenerator(seed: 7)
        let base = (0..<200).map { _ in exp(0.05 * generator.normal()) }
        let cand = (0..<200).map { _ in 1.14 * exp(0.05 * generator.normal()) }
        let shift = try #require(ShiftEstimate.hodgesLehmann(baseline: base, candidate: cand))
        #expect(abs(shift.ratio - 1.14) < 0.02)
        #expect(shift.lower < 1.14 && shift.upper > 1.14)
        #expect(shift.lower < shift.ratio && shift.ratio < shift.upper)
        let counts = try #require(ShiftEstimate.hodgesLehmann(baseline: [0, 2, 2, 2, 4], candidate: [1, 3, 3, 3, 5]))
        #expect(abs(counts.ratio - 1.5) < 1e-12)
    }

    @Test func verdictsFollowTheRules() {
        var options = ComparisonOptions()
        options.minimumEffect = 0.02
        let significant = ShiftEstimate(ratio: 1.10, lower: 1.07, upper: 1.13, confidence: 0.95)
        #expect(ComparisonEngine.decide(shift: significant, adjustedPValue: 0.001, lowerIsBetter: true, enoughSamples: true, options: options) == .regression)
        #expect(ComparisonEngine.decide(shift: significant, adjustedPValue: 0.001, lowerIsBetter: false, enoughSamples: true, options: options) == .improvement)
        let tiny = ShiftEstimate(ratio: 1.01, lower: 1.005, upper: 1.015, confidence: 0.95)
        #expect(ComparisonEngine.decide(shift: tiny, adjustedPValue: 0.001, lowerIsBetter: true, enoughSamples: true, options: options) == .unchanged)
        #expect(ComparisonEngine.decide(shift: tiny, adjustedPValue: 0.5, lowerIsBetter: true, enoughSamples: true, options: options) == .unchanged)
        let wide = ShiftEstimate(ratio: 1.03, lower: 0.95, upper: 1.12, confidence: 0.95)
        #expect(ComparisonEngine.decide(shift: wide, adjustedPValue: 0.5, lowerIsBetter: true, enoughSamples: true, options: options) == .inconclusive)
    }

    @Test func inconclusiveSaysHowManyIterationsWouldDecide() {
        var generator = SeededGenerator(seed: 3)
        let base = (0..<10).map { _ in exp(0.10 * generator.normal()) }
        let cand = (0..<10).map { _ in 1.03 * exp(0.10 * generator.normal()) }
        let row = ComparisonEngine.compare([.init(name: "m", unit: "ns", lowerIsBetter: true, baseline: base, candidate: cand)])[0]
        #expect(row.verdict == .inconclusive)
        #expect((row.iterationsNeeded ?? 0) > 10)
    }
}

@Suite struct DiffInputTests {
    @Test func csvWithQuotesDimensionsAndErrors() throws {
        let text = "metric,value,unit,better,device\r\n\"lens, apply\",10,ns,lower,a\n\nlens, apply\",11,ns,lower,a\n"
        #expect(throws: DiffError.self) { try CSVSamples.parse(text: text, file: "bad.csv") }
        let good = "metric,value,unit,better,device\r\n\"lens, apply\",10,ns,lower,a\n\n\"lens, apply\",11,ns,lower,a\nfps,60,count,higher,b\n"
        let series = try CSVSamples.parse(text: good, file: "good.csv")
        #expect(series.count == 2)
        #expect(series[0].metric == "lens, apply" && series[0].samples == [10, 11] && series[0].dimensions == ["device": "a"])
        #expect(series[1].lowerIsBetter == false)
        do {
            _ = try CSVSamples.parse(text: "metric,value\nx,abc\n", file: "numbers.csv")
            Issue.record("parsed a non-number")
        } catch {
            #expect(error.description == "numbers.csv: line 2, column value: \"abc\" is not a number")
        }
        #expect(throws: DiffError.self) { try CSVSamples.parse(text: "name,value\nx,1\n", file: "header.csv") }
    }

    static func set(_ metric: String, unit: String, samples: [Double], dimensions: [String: String] = [:]) -> SampleSet {
        var set = SampleSet()
        set.series = [.init(metric: metric, unit: unit, lowerIsBetter: true, samples: samples, dimensions: dimensions, source: "\(metric).csv")]
        return set
    }

    @Test func mismatchedUnitsAndNoCommonMetricsAreErrors() {
        #expect(throws: DiffError.self) {
            try DiffEngine.diff(baseline: Self.set("a", unit: "ns", samples: [1, 2]), candidate: Self.set("a", unit: "bytes", samples: [1, 2]))
        }
        #expect(throws: DiffError.self) {
            try DiffEngine.diff(baseline: Self.set("a", unit: "ns", samples: [1, 2]), candidate: Self.set("b", unit: "ns", samples: [1, 2]))
        }
    }

    @Test func reportsWarnAndRenderEveryFormat() throws {
        var generator = SeededGenerator(seed: 11)
        let base = (0..<30).map { _ in 100 * exp(0.03 * generator.normal()) }
        let cand = (0..<30).map { _ in 115 * exp(0.03 * generator.normal()) }
        let report = try DiffEngine.diff(
            baseline: Self.set("lens apply", unit: "ns", samples: base, dimensions: ["host": "a", "device": "x"]),
            candidate: Self.set("lens apply", unit: "ns", samples: cand, dimensions: ["host": "b", "device": "x"]),
            groupBy: "device")
        #expect(report.rows.count == 1 && report.rows[0].verdict == .regression && report.rows[0].group == "x")
        #expect(report.exitStatus == 1)
        #expect(report.warnings.contains { $0.contains("differ in host") })
        let markdown = report.renderMarkdown()
        #expect(markdown.hasPrefix("### :red_circle: Strobe: 1 regression"))
        #expect(markdown.contains("| `lens apply` | x |"))
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
        print("A/A, 1000 suites x 20 metrics, n=30, log-normal 0.05: \(aa.falseAlarmRate * 100)% of suites with a false regression")
        #expect(aa.falseAlarmRate <= 0.01)
        for noise: DetectorSimulation.Noise in [.logNormal(sigma: 0.10), .bimodal(sigma: 0.05), .outliers(sigma: 0.05), .rounded(sigma: 0.05)] {
            let outcome = simulation.run(suites: 250, noise: noise, slowdown: 0, seed: 102)
            #expect(outcome.suitesWithFalseAlarm <= 3, "\(noise): \(outcome.suitesWithFalseAlarm) of 250 suites")
        }
        var unequal = simulation
        unequal.baselineCount = 20
        unequal.candidateCount = 45
        #expect(unequal.run(suites: 250, noise: .logNormal(sigma: 0.05), slowdown: 0, seed: 103).suitesWithFalseAlarm <= 3)
    }

    @Test func catchesTenPercentSlowdowns() {
        let simulation = DetectorSimulation()
        let easy = simulation.run(suites: 300, noise: .logNormal(sigma: 0.05), slowdown: 0.10, seed: 201)
        #expect(easy.power >= 0.95)
        let hard = simulation.run(suites: 1000, noise: .logNormal(sigma: 0.10), slowdown: 0.10, seed: 202)
        print("power at sigma 0.10: ours \(hard.power), oracle \(hard.oraclePower), ratio \(hard.power / hard.oraclePower)")
        #expect(hard.power >= 0.85 * hard.oraclePower)
        #expect(hard.falseAlarmRate <= 0.02)
    }
}

@Suite struct ChangePointTests {
    @Test func findsTheRunWhereTheLevelStepped() {
        var generator = SeededGenerator(seed: 5)
        let runs: [[Double]] = (0..<12).map { run in
            let level = run < 7 ? 100.0 : 114.0
            return (0..<10).map { _ in level * exp(0.03 * generator.normal()) * (generator.uniform() < 0.05 ? 3 : 1) }
        }
        let points = ChangePointDetector.detect(runs: runs)
        #expect(points.count == 1)
        #expect(points.first?.index == 7)
        #expect(abs((points.first?.change ?? 0) - 0.14) < 0.03)
    }

    @Test func flatHistoryHasNoChangePoint() {
        var generator = SeededGenerator(seed: 6)
        let runs: [[Double]] = (0..<12).map { _ in (0..<10).map { _ in 100 * exp(0.05 * generator.normal()) } }
        #expect(ChangePointDetector.detect(runs: runs).isEmpty)
    }
}
