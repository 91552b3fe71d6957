import Foundation
import StrobeDiff
import StrobeJudgement
import StrobeStatistics

/// Measures how well `strobe diff` tells real changes from noise, by
/// feeding it synthetic suites through the same code path (sample sets into
/// ``Judgement``).
package struct DetectorSimulation: Sendable {
    /// The noise the samples carry.
    package enum Noise: Sendable, Hashable, CustomStringConvertible {
        /// Log-normal with this σ of the log.
        case logNormal(sigma: Double)
        /// Two modes (a fast path and a slow one, 30% of the time, 1.4× slower),
        /// each log-normal.
        case bimodal(sigma: Double)
        /// Log-normal with rare large outliers (2% of samples, 3–10× slower).
        case outliers(sigma: Double)
        /// Log-normal rounded to a timer's resolution of 1% of the median.
        case rounded(sigma: Double)

        /// A short name.
        package var description: String {
            switch self {
            case .logNormal(let sigma): return "log-normal σ=\(sigma)"
            case .bimodal(let sigma): return "bimodal σ=\(sigma)"
            case .outliers(let sigma): return "outliers σ=\(sigma)"
            case .rounded(let sigma): return "rounded σ=\(sigma)"
            }
        }
    }

    /// How the samples of a side are spread over processes.
    package enum Replication: Sendable, Hashable {
        /// Every sample is independent; each side is one run of
        /// ``DetectorSimulation/baselineCount`` (or candidate) samples.
        case independentSamples
        /// Each side runs `processes` processes of `iterations` iterations.
        /// Each process multiplies all its iterations, of every metric, by
        /// its own log-normal factor with σ `processSigma`; `paired` gives
        /// the processes rounds (baseline and candidate process k share
        /// round k), as `strobe compare` does.
        case processes(count: Int, iterations: Int, processSigma: Double, paired: Bool)
    }

    /// Metrics per suite.
    package var metricsPerSuite = 20
    /// Baseline samples per metric (independent samples).
    package var baselineCount = 30
    /// Candidate samples per metric (independent samples).
    package var candidateCount = 30
    /// How samples are spread over processes.
    package var replication = Replication.independentSamples
    /// The comparison settings.
    package var options = ComparisonOptions()
    /// Judge process-level data as if every iteration were independent (one
    /// run per side), as `strobe diff` did before runs were replicates: for
    /// measuring what that costs.
    package var poolIterations = false

    /// A simulation with the defaults: 20 metrics of 30 independent samples
    /// per side.
    package init() {}

    /// What a batch of suites showed.
    package struct Outcome: Sendable, Hashable {
        /// Suites simulated.
        package var suites: Int
        /// Suites with at least one false "regression".
        package var suitesWithFalseAlarm: Int
        /// Suites where the slowed metric was called a regression.
        package var detections: Int
        /// Same, for the oracle (t-test on logs, same error control).
        package var oracleDetections: Int
        /// For processes run in rounds, the same for the paired oracle: a
        /// one-sample t-test on the per-round differences of the processes'
        /// mean logs, same error control; 0 otherwise.
        package var pairedOracleDetections = 0

        /// Share of suites with a false alarm.
        package var falseAlarmRate: Double { Double(suitesWithFalseAlarm) / Double(max(suites, 1)) }
        /// Share of suites where the slowed metric was caught.
        package var power: Double { Double(detections) / Double(max(suites, 1)) }
        /// The oracle's power.
        package var oraclePower: Double { Double(oracleDetections) / Double(max(suites, 1)) }
        /// The paired oracle's power.
        package var pairedOraclePower: Double { Double(pairedOracleDetections) / Double(max(suites, 1)) }
    }

    /// Runs `suites` suites; metric 0 is slowed by `slowdown` (0.10 = 10%),
    /// the others are unchanged. Deterministic for a `seed`.
    package func run(suites: Int, noise: Noise, slowdown: Double, seed: UInt64) -> Outcome {
        var generator = SeededGenerator(seed: seed)
        var outcome = Outcome(suites: suites, suitesWithFalseAlarm: 0, detections: 0, oracleDetections: 0)
        for _ in 0..<suites {
            var baseline = SampleSet()
            var candidate = SampleSet()
            var oraclePValues: [Double] = []
            var oracleDirections: [Bool] = []
            switch replication {
            case .independentSamples:
                for metric in 0..<metricsPerSuite {
                    let factor = metric == 0 ? 1 + slowdown : 1
                    let base = (0..<baselineCount).map { _ in Self.sample(noise, &generator) }
                    let cand = (0..<candidateCount).map { _ in Self.sample(noise, &generator) * factor }
                    let name = "metric \(metric)"
                    baseline.series.append(
                        .init(
                            metric: name, unit: "ns", better: .lower, samples: base, dimensions: [:],
                            source: "baseline"))
                    candidate.series.append(
                        .init(
                            metric: name, unit: "ns", better: .lower, samples: cand, dimensions: [:],
                            source: "candidate"))
                    let test = Self.welchOnLogs(base, cand)
                    oraclePValues.append(test.pValue)
                    oracleDirections.append(test.candidateLarger)
                }
            case .processes(let count, let iterations, let processSigma, let paired):
                // Each process's factor applies to every metric it measures.
                var baseMeans = [[Double]](repeating: [], count: metricsPerSuite)
                var candMeans = [[Double]](repeating: [], count: metricsPerSuite)
                for side in 0..<2 {
                    for process in 0..<count {
                        let processFactor = exp(processSigma * generator.normal())
                        for metric in 0..<metricsPerSuite {
                            let factor = side == 1 && metric == 0 ? 1 + slowdown : 1
                            let samples = (0..<iterations).map { _ in
                                Self.sample(noise, &generator) * processFactor * factor
                            }
                            let series = SampleSet.Series(
                                metric: "metric \(metric)", unit: "ns", better: .lower, samples: samples,
                                dimensions: [:],
                                source: side == 0 ? "baseline" : "candidate",
                                run: poolIterations ? "\(side)" : "\(side)-\(process)",
                                round: paired && !poolIterations ? process : nil)
                            let meanLog = samples.map { log($0) }.reduce(0, +) / Double(samples.count)
                            if side == 0 {
                                baseline.series.append(series)
                                baseMeans[metric].append(exp(meanLog))
                            } else {
                                candidate.series.append(series)
                                candMeans[metric].append(exp(meanLog))
                            }
                        }
                    }
                }
                // The oracle knows the process is the unit: Welch's t on the
                // processes' mean logs.
                for metric in 0..<metricsPerSuite {
                    let test = Self.welchOnLogs(baseMeans[metric], candMeans[metric])
                    oraclePValues.append(test.pValue)
                    oracleDirections.append(test.candidateLarger)
                }
            }
            guard let report = try? Judgement.compare(baseline: baseline, candidate: candidate, options: options) else {
                continue
            }
            let regressions = Set(report.rows.filter { $0.verdict == .regression }.map(\.name))
            if regressions.contains(where: { $0 != "metric 0" }) || (slowdown == 0 && !regressions.isEmpty) {
                outcome.suitesWithFalseAlarm += 1
            }
            if slowdown != 0, regressions.contains("metric 0") { outcome.detections += 1 }
            let adjusted = MultipleComparisons.benjaminiHochberg(oraclePValues)
            if slowdown != 0, adjusted[0] <= options.alpha, oracleDirections[0] { outcome.oracleDetections += 1 }
        }
        return outcome
    }

    /// What a batch of sequential comparisons showed.
    package struct SequentialOutcome: Sendable, Hashable {
        /// Comparisons simulated.
        package var suites: Int
        /// Comparisons in which any look called an unchanged metric a
        /// regression (counted even when a later look no longer did).
        package var suitesWithFalseAlarm: Int
        /// Comparisons whose report called the slowed metric a regression.
        package var detections: Int
        /// Per comparison, the rounds after which it stopped.
        package var stoppingRounds: [Int]
        /// Per comparison, the rounds of the first look that called the
        /// slowed metric a regression; nil where none did.
        package var detectionRounds: [Int?]
        /// Comparisons that ran out of planned rounds with a gated metric
        /// still inconclusive.
        package var undecided: Int

        /// Share of comparisons with a false alarm.
        package var falseAlarmRate: Double { Double(suitesWithFalseAlarm) / Double(max(suites, 1)) }
        /// Share of comparisons that caught the slowed metric.
        package var power: Double { Double(detections) / Double(max(suites, 1)) }
        /// The median of the rounds after which comparisons stopped.
        package var medianStoppingRounds: Double { Self.median(stoppingRounds.map(Double.init)) }
        /// The median of the rounds of the first detection, over the
        /// comparisons that detected; NaN when none did.
        package var medianDetectionRounds: Double { Self.median(detectionRounds.compactMap { $0 }.map(Double.init)) }

        static func median(_ values: [Double]) -> Double {
            values.isEmpty ? .nan : Quantiles.median(sorted: values.sorted())
        }
    }

    /// Runs `suites` sequential comparisons as `strobe compare` runs them:
    /// rounds of one baseline and one candidate process, each process
    /// multiplying every metric's iterations by its own log-normal factor of
    /// σ `processSigma` (iterations carry log-normal σ `iterationSigma`), a
    /// look whenever `design` plans one, and a stop at the first look where
    /// every metric is decided or at the planned rounds. Metric 0 is slowed
    /// by `slowdown`. Uses ``metricsPerSuite`` and ``options``; `iterations`
    /// per process. Deterministic for a `seed`.
    package func runSequential(
        suites: Int, processSigma: Double, iterationSigma: Double = 0.01, iterations: Int = 5, slowdown: Double,
        design: SequentialDesign, seed: UInt64
    ) -> SequentialOutcome {
        var generator = SeededGenerator(seed: seed)
        var outcome = SequentialOutcome(
            suites: suites, suitesWithFalseAlarm: 0, detections: 0, stoppingRounds: [], detectionRounds: [],
            undecided: 0)
        for _ in 0..<suites {
            var current = design
            var baseline = SampleSet()
            var candidate = SampleSet()
            var falseAlarm = false
            var detectedAt: Int?
            var lookNumber = 0
            var round = 0
            var last: DiffReport?
            while true {
                round += 1
                for side in 0..<2 {
                    let processFactor = exp(processSigma * generator.normal())
                    for metric in 0..<metricsPerSuite {
                        let factor = side == 1 && metric == 0 ? 1 + slowdown : 1
                        let samples = (0..<iterations).map { _ in
                            1_000_000 * processFactor * factor * exp(iterationSigma * generator.normal())
                        }
                        let series = SampleSet.Series(
                            metric: "metric \(metric)", unit: "ns", better: .lower, samples: samples,
                            dimensions: [:],
                            source: side == 0 ? "baseline" : "candidate", run: "\(side)-\(round)", round: round)
                        if side == 0 { baseline.series.append(series) } else { candidate.series.append(series) }
                    }
                }
                guard current.looks(afterRound: round) else { continue }
                lookNumber += 1
                let look = current.look(number: lookNumber, rounds: round, final: round >= current.plannedRounds)
                guard
                    let report = try? Judgement.compare(
                        baseline: baseline, candidate: candidate, options: options, look: look)
                else { break }
                last = report
                let regressions = Set(report.rows.filter { $0.verdict == .regression }.map(\.name))
                if regressions.contains(where: { $0 != "metric 0" }) || (slowdown == 0 && !regressions.isEmpty) {
                    falseAlarm = true
                }
                if slowdown != 0, detectedAt == nil, regressions.contains("metric 0") { detectedAt = round }
                if report.undecided.isEmpty || look.isFinal { break }
            }
            if falseAlarm { outcome.suitesWithFalseAlarm += 1 }
            if slowdown != 0, last?.rows.contains(where: { $0.name == "metric 0" && $0.verdict == .regression }) == true
            {
                outcome.detections += 1
            }
            if last?.undecided.isEmpty == false { outcome.undecided += 1 }
            outcome.stoppingRounds.append(round)
            outcome.detectionRounds.append(detectedAt)
        }
        return outcome
    }

    /// The smallest slowdown caught with `power` (searched on a 0.5% grid).
    package func minimumDetectableSlowdown(noise: Noise, power: Double = 0.8, suites: Int = 200, seed: UInt64) -> Double
    {
        var low = 0.0
        var high = 0.5
        while high - low > 0.005 {
            let middle = (low + high) / 2
            if run(suites: suites, noise: noise, slowdown: middle, seed: seed).power >= power {
                high = middle
            } else {
                low = middle
            }
        }
        return high
    }

    static func sample(_ noise: Noise, _ generator: inout SeededGenerator) -> Double {
        let base = 1_000_000.0
        switch noise {
        case .logNormal(let sigma):
            return base * exp(sigma * generator.normal())
        case .bimodal(let sigma):
            let mode = generator.uniform() < 0.3 ? 1.4 : 1.0
            return base * mode * exp(sigma * generator.normal())
        case .outliers(let sigma):
            let spike = generator.uniform() < 0.02 ? 3 + 7 * generator.uniform() : 1
            return base * spike * exp(sigma * generator.normal())
        case .rounded(let sigma):
            let value = base * exp(sigma * generator.normal())
            let resolution = base * 0.01
            return (value / resolution).rounded() * resolution
        }
    }

    /// The one-sample t-test of the per-pair differences `second` − `first`
    /// (already on the log scale), two-sided.
    static func pairedT(_ first: [Double], _ second: [Double]) -> (pValue: Double, candidateLarger: Bool) {
        let differences = zip(first, second).map { $1 - $0 }
        let n = Double(differences.count)
        guard differences.count >= 2 else { return (1, false) }
        let mean = differences.reduce(0, +) / n
        let variance = differences.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)
        let error = (variance / n).squareRoot()
        guard error > 0 else { return (mean == 0 ? 1 : 0, mean > 0) }
        let t = mean / error
        return (2 * StudentDistribution.survival(abs(t), degreesOfFreedom: n - 1), t > 0)
    }

    /// Welch's t-test on log values, with Student's distribution and the
    /// Welch–Satterthwaite degrees of freedom: the oracle for log-normal noise.
    static func welchOnLogs(_ first: [Double], _ second: [Double]) -> (pValue: Double, candidateLarger: Bool) {
        let a = first.map { log($0) }
        let b = second.map { log($0) }
        func meanAndVariance(_ values: [Double]) -> (Double, Double) {
            let mean = values.reduce(0, +) / Double(values.count)
            let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1)
            return (mean, variance)
        }
        let (meanA, varianceA) = meanAndVariance(a)
        let (meanB, varianceB) = meanAndVariance(b)
        let error = (varianceA / Double(a.count) + varianceB / Double(b.count)).squareRoot()
        guard error > 0 else { return (1, meanB > meanA) }
        let t = (meanB - meanA) / error
        let termA = varianceA / Double(a.count)
        let termB = varianceB / Double(b.count)
        let degrees =
            (termA + termB) * (termA + termB)
            / (termA * termA / Double(a.count - 1) + termB * termB / Double(b.count - 1))
        return (2 * StudentDistribution.survival(abs(t), degreesOfFreedom: degrees), t > 0)
    }
}
