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

    @Test func studentQuantileInvertsTheSurvival() {
        #expect(abs(StudentDistribution.quantile(0.975, degreesOfFreedom: 4) - 2.7764451051977987) < 1e-7)
        #expect(abs(StudentDistribution.quantile(0.995, degreesOfFreedom: 30) - 2.749995653567) < 1e-7)
        #expect(abs(StudentDistribution.quantile(0.025, degreesOfFreedom: 4) + 2.7764451051977987) < 1e-7)
    }
}
