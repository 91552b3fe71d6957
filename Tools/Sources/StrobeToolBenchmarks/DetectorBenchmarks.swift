import Foundation
import StrobeDiff
import StrobeSimulations
import StrobeStatistics
import StrobeTestSupport

/// The quality of `strobe diff`, measured on synthetic suites of 20 metrics.
/// The baseline of the power figures is the oracle: a t-test on log values
/// (optimal for log-normal noise) under the same false-discovery control.
enum DetectorBenchmarks {
    static func run() {
        let simulation = DetectorSimulation()
        for noise: DetectorSimulation.Noise in [
            .logNormal(sigma: 0.05), .logNormal(sigma: 0.10), .bimodal(sigma: 0.05),
            .outliers(sigma: 0.05), .rounded(sigma: 0.05),
        ] {
            let outcome = simulation.run(suites: 1000, noise: noise, slowdown: 0, seed: 1)
            Figure(
                name: "A/A false alarms, \(noise)", value: outcome.falseAlarmRate * 100, unit: "% of suites",
                baselineName: "allowed (1%)", baselineValue: 1, target: "value <= 1",
                extra: ["suites": 1000, "metrics_per_suite": 20, "n_per_side": 30]
            ).printLine()
        }
        for sigma in [0.05, 0.10] {
            let outcome = simulation.run(suites: 1000, noise: .logNormal(sigma: sigma), slowdown: 0.10, seed: 2)
            Figure(
                name: "power, 10% slowdown, log-normal σ=\(sigma)", value: outcome.power * 100, unit: "% of suites",
                baselineName: "oracle: t-test on logs, same FDR control", baselineValue: outcome.oraclePower * 100,
                target: sigma == 0.05 ? "value >= 95" : "ratio >= 0.85"
            ).printLine()
        }
        var unequal = simulation
        unequal.baselineCount = 20
        unequal.candidateCount = 45
        let lopsided = unequal.run(suites: 1000, noise: .logNormal(sigma: 0.05), slowdown: 0, seed: 3)
        Figure(
            name: "A/A false alarms, unequal n (20 vs 45), log-normal σ=0.05", value: lopsided.falseAlarmRate * 100,
            unit: "% of suites", baselineName: "allowed (1%)", baselineValue: 1, target: "value <= 1"
        ).printLine()
        processLevel(simulation)
        sequential()
        for n in [30, 100] {
            for sigma in [0.05, 0.10] {
                var sized = simulation
                sized.baselineCount = n
                sized.candidateCount = n
                let slowdown = sized.minimumDetectableSlowdown(
                    noise: .logNormal(sigma: sigma), suites: n == 100 ? 100 : 200, seed: 4)
                Figure(
                    name: "minimum slowdown caught with 80% power, n=\(n), log-normal σ=\(sigma)",
                    value: slowdown * 100,
                    unit: "%", baselineName: "noise floor", baselineValue: simulation.options.minimumEffect * 100
                ).printLine()
            }
        }
    }

    /// Suites whose processes differ: each process multiplies all its
    /// iterations by its own log-normal factor, as processes of one build do
    /// on shared machines.
    static func processLevel(_ simulation: DetectorSimulation) {
        for paired in [false, true] {
            for processSigma in [0.03, 0.05, 0.10] {
                var aa = simulation
                aa.replication = .processes(count: 5, iterations: 6, processSigma: processSigma, paired: paired)
                let outcome = aa.run(suites: 1000, noise: .logNormal(sigma: 0.05), slowdown: 0, seed: 11)
                Figure(
                    name:
                        "A/A false alarms, 5 processes × 6 iterations per side, process "
                        + "σ=\(processSigma)\(paired ? ", paired" : "")",
                    value: outcome.falseAlarmRate * 100, unit: "% of suites", baselineName: "allowed (1%)",
                    baselineValue: 1,
                    target: "value <= 1", extra: ["suites": 1000, "metrics_per_suite": 20]
                ).printLine()
            }
            var power = simulation
            power.replication = .processes(count: 10, iterations: 6, processSigma: 0.05, paired: paired)
            let outcome = power.run(suites: 1000, noise: .logNormal(sigma: 0.05), slowdown: 0.10, seed: 12)
            Figure(
                name:
                    "power, 10% slowdown, 10 processes × 6 iterations per side, process σ=0.05, iteration "
                    + "σ=0.05\(paired ? ", paired" : "")",
                value: outcome.power * 100, unit: "% of suites",
                baselineName: "oracle: Welch t on process mean logs, same FDR control",
                baselineValue: outcome.oraclePower * 100,
                target: "value >= 95", extra: ["false_alarm_suites_percent": outcome.falseAlarmRate * 100]
            ).printLine()
        }
        // How many processes per side the 95% target takes at that noise.
        var low = 10
        var high = 80
        while high - low > 2 {
            let middle = (low + high) / 2
            var sized = simulation
            sized.replication = .processes(count: middle, iterations: 6, processSigma: 0.05, paired: false)
            if sized.run(suites: 200, noise: .logNormal(sigma: 0.05), slowdown: 0.10, seed: 14).power >= 0.95 {
                high = middle
            } else {
                low = middle
            }
        }
        Figure(
            name: "processes per side for 95% power, 10% slowdown, process σ=0.05, iteration σ=0.05",
            value: Double(high), unit: "processes", baselineName: "the target's 10 processes", baselineValue: 10
        ).printLine()
        // What pooling iterations did before: the same A/A suites judged as
        // if every iteration were independent.
        var pooled = simulation
        pooled.replication = .processes(count: 5, iterations: 6, processSigma: 0.05, paired: false)
        let poolingRate = pooledFalseAlarms(pooled)
        Figure(
            name: "A/A false alarms when iterations are pooled as independent, 5 × 6 per side, process σ=0.05",
            value: poolingRate * 100, unit: "% of suites", baselineName: "allowed (1%)", baselineValue: 1
        ).printLine()
    }

    /// `strobe compare`'s sequential looks on synthetic comparisons of 6
    /// gated metrics (three tests' wall and CPU time, sharing each process's
    /// noise), 5 iterations per process, 30 planned rounds: the rounds until
    /// a change is caught and until the comparison stops, with the geometric
    /// looks against the previous schedule (a look every fifth of the plan,
    /// O'Brien–Fleming-type spending) in the same run.
    static func sequential() {
        var simulation = DetectorSimulation()
        simulation.metricsPerSuite = 6
        func design(_ schedule: SequentialDesign.Schedule) -> SequentialDesign {
            SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 30, firstLook: 4, schedule: schedule)
        }
        for sigma in [0.01, 0.02, 0.05] {
            let after = simulation.runSequential(
                suites: 1000, processSigma: sigma, slowdown: 0, design: design(.geometric), seed: 21)
            let before = simulation.runSequential(
                suites: 1000, processSigma: sigma, slowdown: 0, design: design(.fractionOfPlan), seed: 21)
            Figure(
                name: "sequential A/A false alarms, 6 metrics, process σ=\(sigma), geometric looks",
                value: after.falseAlarmRate * 100, unit: "% of comparisons", baselineName: "allowed (1%)",
                baselineValue: 1,
                target: "value <= 1",
                extra: [
                    "suites": 1000, "before_percent": before.falseAlarmRate * 100,
                    "median_rounds_to_stop": after.medianStoppingRounds,
                    "median_rounds_to_stop_before": before.medianStoppingRounds,
                    "undecided_percent": Double(after.undecided) / 10,
                    "undecided_percent_before": Double(before.undecided) / 10,
                ]
            ).printLine()
        }
        for sigma in [0.02, 0.05] {
            for slowdown in [0.20, 0.60] {
                let after = simulation.runSequential(
                    suites: 300, processSigma: sigma, slowdown: slowdown, design: design(.geometric), seed: 22)
                let before = simulation.runSequential(
                    suites: 300, processSigma: sigma, slowdown: slowdown, design: design(.fractionOfPlan), seed: 22)
                Figure(
                    name: "sequential rounds to catch a \(Int(slowdown * 100))% slowdown, process σ=\(sigma) (median)",
                    value: after.medianDetectionRounds, unit: "rounds",
                    baselineName: "previous looks (every fifth of the plan, O'Brien–Fleming)",
                    baselineValue: before.medianDetectionRounds, target: "ratio <= 1",
                    extra: [
                        "caught_percent": after.power * 100, "caught_percent_before": before.power * 100,
                        "median_rounds_to_stop": after.medianStoppingRounds,
                        "median_rounds_to_stop_before": before.medianStoppingRounds,
                        "false_alarm_percent": after.falseAlarmRate * 100,
                    ]
                ).printLine()
            }
        }
    }

    /// The false-alarm rate of the iteration-level test on process-level data.
    static func pooledFalseAlarms(_ simulation: DetectorSimulation) -> Double {
        var flattened = simulation
        flattened.poolIterations = true
        return flattened.run(suites: 500, noise: .logNormal(sigma: 0.05), slowdown: 0, seed: 13).falseAlarmRate
    }
}
