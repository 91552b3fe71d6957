import Foundation
import StrobeDiff
import Testing

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

    @Test func chiSquaredQuantilesAreCloseToTheExactOnes() {
        // χ²(2) is exponential: its p quantile is −2·ln(1 − p).
        for p in [0.2, 0.5, 0.8] {
            let exact = -2 * log(1 - p)
            #expect(abs(ChiSquaredDistribution.quantile(p, degreesOfFreedom: 2) / exact - 1) < 0.03)
        }
        // Tabulated: χ²₀.₈(3) = 4.642, χ²₀.₈(10) = 13.442.
        #expect(abs(ChiSquaredDistribution.quantile(0.8, degreesOfFreedom: 3) - 4.642) < 0.05)
        #expect(abs(ChiSquaredDistribution.quantile(0.8, degreesOfFreedom: 10) - 13.442) < 0.05)
    }

    @Test func kolmogorovSmirnovStatisticIsExact() {
        let result = RankTests.kolmogorovSmirnov(
            [1.1, 2.3, 0.7, 4.5, 3.3, 2.2, 1.9, 5.1], [3.4, 4.4, 5.9, 2.8, 6.1, 4.9, 7.2, 3.9, 5.5])
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

    @Test func yuensTestMatchesSciPy() {
        // scipy.stats.ttest_ind(b, a, equal_var=False, trim=0.15)
        let a = [1.1, 2.3, 0.7, 4.5, 3.3, 2.2, 1.9, 5.1, 2.0, 9.0]
        let b = [3.4, 4.4, 5.9, 2.8, 6.1, 4.9, 7.2, 3.9, 5.5, 0.1, 4.0]
        let result = ReplicateTest.yuen(a, b, logScale: false)
        #expect(result.method == .processes)
        #expect(abs(result.statistic - 2.243888331410178) < 1e-4)
        #expect(abs(result.pValue - 0.04224924811535943) < 1e-4)
        #expect(abs(result.degreesOfFreedom - 13.451232200312631) < 1e-3)
    }

    @Test func cleanSidesGetWelchsTestAndAProcessApartGetsYuens() {
        // scipy.stats.ttest_ind(b, a, equal_var=False): nothing stands apart.
        let a = [1.1, 2.3, 0.7, 4.5, 3.3, 2.2, 1.9, 5.1, 2.0, 3.0]
        let b = [3.4, 4.4, 5.9, 2.8, 6.1, 4.9, 7.2, 3.9, 5.5, 2.1, 4.0]
        #expect(!ReplicateTest.standsApart(a) && !ReplicateTest.standsApart(b))
        let welch = ReplicateTest.processes(a, b, logScale: false)
        #expect(!welch.trimmed)
        #expect(abs(welch.statistic - 3.062754840906398) < 1e-6)
        #expect(abs(welch.pValue - 0.006405017254406643) < 1e-6)
        #expect(abs(welch.degreesOfFreedom - 18.99913744233503) < 1e-3)
        // 9.0 lies 4.1 scaled MADs from the median of its side: Yuen's test,
        // as scipy's trim=0.15 computes it.
        var slowed = a
        slowed[9] = 9.0
        #expect(ReplicateTest.standsApart(slowed))
        let yuen = ReplicateTest.processes(slowed, b, logScale: false)
        #expect(yuen.trimmed)
        #expect(abs(yuen.statistic - 2.243888331410178) < 1e-4)
        // Fewer than 7 values are never trimmed; a MAD of 0 with one value
        // off the median stands apart.
        #expect(!ReplicateTest.standsApart([1, 1, 1, 1, 1, 50]))
        #expect(ReplicateTest.standsApart([1, 1, 1, 1, 1, 1, 1.5]))
        #expect(!ReplicateTest.standsApart([2, 2, 2, 2, 2, 2, 2]))
    }

    @Test func pairedRoundsTrimOnlyWhenARoundStandsApart() {
        // scipy.stats.ttest_1samp(d, 0): eight rounds, none apart.
        let differences = [0.1, 0.3, -0.2, 0.25, 0.15, 0.05, 0.4, 0.2]
        func replicates(_ values: [Double]) -> [Replicate] {
            values.enumerated().map { Replicate(id: "r\($0.offset)", round: $0.offset, samples: [$0.element]) }
        }
        let clean = ReplicateTest.compare(
            baseline: replicates(differences.map { _ in 0 }), candidate: replicates(differences))
        #expect(clean.method == .pairedRounds && !clean.trimmed)
        #expect(abs(clean.statistic - 2.426580044697549) < 1e-6)
        #expect(abs(clean.pValue - 0.04564910096608395) < 1e-6)
        var apart = differences
        apart[6] = 3
        let trimmed = ReplicateTest.compare(baseline: replicates(apart.map { _ in 0 }), candidate: replicates(apart))
        #expect(trimmed.trimmed && trimmed.degreesOfFreedom == 5)
    }

    @Test func studentQuantileInvertsTheSurvival() {
        #expect(abs(StudentDistribution.quantile(0.975, degreesOfFreedom: 4) - 2.7764451051977987) < 1e-7)
        #expect(abs(StudentDistribution.quantile(0.995, degreesOfFreedom: 30) - 2.749995653567) < 1e-7)
        #expect(abs(StudentDistribution.quantile(0.025, degreesOfFreedom: 4) + 2.7764451051977987) < 1e-7)
    }
}
