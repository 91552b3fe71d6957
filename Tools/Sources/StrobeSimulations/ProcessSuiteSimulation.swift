import Foundation
import StrobeDiff
import StrobeJudgement
import StrobeStatistics

/// Measures `strobe diff` on suites of process-tagged samples, as a user
/// who runs each build in several processes sees them, fed through the
/// diff's CSV input (a `run` column, and `round` when paired) into
/// ``Judgement``.
///
/// Each process draws one standard normal z that stands for its heap layout,
/// core and neighbours, and multiplies every iteration of metric m by
/// exp(σₘ·z): the processes' noise is shared by the metrics they measure,
/// each metric feeling it with its own σₘ, drawn per suite from
/// ``processSigmas`` (the slowed metric 0 has ``slowedMetricProcessSigma``).
/// Iterations carry ``iterationNoise`` on top.
///
/// The oracle judges the very same suites: Welch's t on each process's mean
/// log value with the same Benjamini–Hochberg control at the same alpha, the
/// optimal test for log-normal process noise. When the processes run in
/// rounds, the paired oracle (a one-sample t-test on the per-round
/// differences of mean logs) is counted too: the processes of a round share
/// nothing here, so pairing only costs degrees of freedom.
package struct ProcessSuiteSimulation: Sendable {
    /// A process slowed for its whole life by something outside the code,
    /// such as a neighbour on its core.
    package struct SlowedProcess: Sendable, Hashable {
        /// Whether it runs the candidate (else the baseline).
        package var candidate: Bool
        /// What every sample of it, of every metric, is multiplied by (1.3
        /// is 30% slower).
        package var factor: Double

        /// A slowed process on one side.
        package init(candidate: Bool, factor: Double) {
            self.candidate = candidate
            self.factor = factor
        }
    }

    /// Metrics per suite.
    package var metricsPerSuite = 20
    /// Processes per side.
    package var processesPerSide = 10
    /// Iterations per process.
    package var iterationsPerProcess = 6
    /// The range each unchanged metric's process σ (of the log) is drawn
    /// from, uniformly, per suite.
    package var processSigmas: ClosedRange<Double> = 0.03...0.10
    /// The process σ of metric 0, the one a slowdown applies to.
    package var slowedMetricProcessSigma = 0.05
    /// The noise of each iteration.
    package var iterationNoise = DetectorSimulation.Noise.logNormal(sigma: 0.05)
    /// Whether the processes run in rounds (baseline and candidate process
    /// k in round k), as `strobe compare` runs them.
    package var paired = false
    /// A process of one side slowed for its whole life (the first one of
    /// that side), if any.
    package var slowedProcess: SlowedProcess?
    /// The comparison settings.
    package var options = ComparisonOptions()

    /// Suites of 20 metrics, 10 processes of 6 iterations per side, process
    /// σ drawn between 3% and 10% (5% for the slowed metric), iteration σ 5%,
    /// no rounds.
    package init() {}

    /// Runs `suites` suites in which metric 0 of the candidate is slowed by
    /// `slowdown` (0.10 = 10%) and the others are unchanged. Deterministic
    /// for a `seed`.
    package func run(suites: Int, slowdown: Double, seed: UInt64) -> DetectorSimulation.Outcome {
        var generator = SeededGenerator(seed: seed)
        var outcome = DetectorSimulation.Outcome(
            suites: suites, suitesWithFalseAlarm: 0, detections: 0, oracleDetections: 0)
        let metrics = max(metricsPerSuite, 1)
        for _ in 0..<suites {
            let sigmas = (0..<metrics).map { metric in
                metric == 0
                    ? slowedMetricProcessSigma
                    : processSigmas.lowerBound + (processSigmas.upperBound - processSigmas.lowerBound)
                        * generator.uniform()
            }
            // Per side, per metric, each process's mean log: what the oracle tests.
            var meanLogs = [[[Double]]](repeating: [[Double]](repeating: [], count: metrics), count: 2)
            var texts = ["", ""]
            for side in 0..<2 {
                var text = paired ? "metric,value,unit,run,round\n" : "metric,value,unit,run\n"
                for process in 0..<processesPerSide {
                    let z = generator.normal()
                    var processFactor = 1.0
                    if let slowedProcess, slowedProcess.candidate == (side == 1), process == 0 {
                        processFactor = slowedProcess.factor
                    }
                    let tag = paired ? "p\(process),\(process)" : "p\(process)"
                    for metric in 0..<metrics {
                        var factor = processFactor * exp(sigmas[metric] * z)
                        if side == 1, metric == 0 { factor *= 1 + slowdown }
                        var logSum = 0.0
                        for _ in 0..<iterationsPerProcess {
                            let value = DetectorSimulation.sample(iterationNoise, &generator) * factor
                            logSum += log(value)
                            text += "metric \(metric),\(value),ns,\(tag)\n"
                        }
                        meanLogs[side][metric].append(logSum / Double(max(iterationsPerProcess, 1)))
                    }
                }
                texts[side] = text
            }
            guard let report = try? diff(baseline: texts[0], candidate: texts[1]) else { continue }
            let regressions = Set(report.rows.filter { $0.verdict == .regression }.map(\.name))
            if regressions.contains(where: { $0 != "metric 0" }) || (slowdown == 0 && !regressions.isEmpty) {
                outcome.suitesWithFalseAlarm += 1
            }
            if slowdown != 0, regressions.contains("metric 0") { outcome.detections += 1 }
            // Welch's t on the processes' mean logs (exp of which are the
            // processes' geometric means), Benjamini–Hochberg at the same alpha.
            let oracle = (0..<metrics).map { metric in
                DetectorSimulation.welchOnLogs(meanLogs[0][metric].map { exp($0) }, meanLogs[1][metric].map { exp($0) })
            }
            let adjusted = MultipleComparisons.benjaminiHochberg(oracle.map(\.pValue))
            if slowdown != 0, adjusted[0] <= options.alpha, oracle[0].candidateLarger { outcome.oracleDetections += 1 }
            if paired {
                let pairedOracle = (0..<metrics).map { metric in
                    DetectorSimulation.pairedT(meanLogs[0][metric], meanLogs[1][metric])
                }
                let pairedAdjusted = MultipleComparisons.benjaminiHochberg(pairedOracle.map(\.pValue))
                if slowdown != 0, pairedAdjusted[0] <= options.alpha, pairedOracle[0].candidateLarger {
                    outcome.pairedOracleDetections += 1
                }
            }
        }
        return outcome
    }

    /// The report `strobe diff baseline.csv candidate.csv` makes of the two
    /// CSV texts, with the default policy.
    func diff(baseline: String, candidate: String) throws(DiffError) -> DiffReport {
        func set(_ text: String, file: String) throws(DiffError) -> SampleSet {
            var set = SampleSet()
            set.sources = [file]
            set.series = try CSVSamples.parse(text: text, file: file)
            return set
        }
        return try Judgement.compare(
            baseline: set(baseline, file: "baseline.csv"), candidate: set(candidate, file: "candidate.csv"),
            options: options,
            policy: ComparisonPolicy())
    }
}
