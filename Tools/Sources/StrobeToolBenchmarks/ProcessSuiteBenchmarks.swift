import Foundation
import StrobeDiff
import StrobeSimulations
import StrobeStatistics
import StrobeTestSupport

/// `strobe diff` on suites of process-tagged CSV samples: 20 metrics, each
/// process its own log-normal factor (σ drawn per metric between 3% and
/// 10%), one metric 10% slower (process and iteration σ 5%). The power
/// figures' baseline is the oracle on the very same suites: Welch's t on each
/// process's mean log with the same Benjamini–Hochberg control.
enum ProcessSuiteBenchmarks {
    static let falseAlarmSuites = 1000
    static let powerSuites = 500

    static func run() {
        let plain = ProcessSuiteSimulation()
        report(plain, label: "10 processes × 6 iterations per side", seed: 31)

        var slowedCandidate = plain
        slowedCandidate.slowedProcess = .init(candidate: true, factor: 1.3)
        falseAlarms(slowedCandidate, label: "10 × 6 per side, one candidate process 30% slow", seed: 32)
        var slowedBaseline = plain
        slowedBaseline.slowedProcess = .init(candidate: false, factor: 1.3)
        falseAlarms(slowedBaseline, label: "10 × 6 per side, one baseline process 30% slow", seed: 33)
        power(slowedBaseline, label: "10 × 6 per side, one baseline process 30% slow", seed: 34)

        for noise: DetectorSimulation.Noise in [.bimodal(sigma: 0.05), .outliers(sigma: 0.05)] {
            var noisy = plain
            noisy.iterationNoise = noise
            falseAlarms(noisy, label: "10 × 6 per side, iterations \(noise)", seed: 35)
        }

        var paired = plain
        paired.paired = true
        report(paired, label: "10 × 6 per side, paired in rounds", seed: 36)

        for processes in [3, 4, 5] {
            var small = plain
            small.processesPerSide = processes
            report(small, label: "\(processes) processes × 6 iterations per side", seed: 37 + UInt64(processes))
        }
    }

    static func report(_ simulation: ProcessSuiteSimulation, label: String, seed: UInt64) {
        falseAlarms(simulation, label: label, seed: seed)
        power(simulation, label: label, seed: seed + 100)
    }

    static func falseAlarms(_ simulation: ProcessSuiteSimulation, label: String, seed: UInt64) {
        let outcome = simulation.run(suites: falseAlarmSuites, slowdown: 0, seed: seed)
        Figure(
            name: "A/A false alarms, CSV process suites, \(label), process σ 3–10%",
            value: outcome.falseAlarmRate * 100, unit: "% of suites", baselineName: "allowed (1%)", baselineValue: 1,
            target: "value <= 1",
            extra: [
                "suites": Double(falseAlarmSuites), "suites_with_false_alarm": Double(outcome.suitesWithFalseAlarm),
                "metrics_per_suite": Double(simulation.metricsPerSuite),
            ]
        ).printLine()
    }

    static func power(_ simulation: ProcessSuiteSimulation, label: String, seed: UInt64) {
        let outcome = simulation.run(suites: powerSuites, slowdown: 0.10, seed: seed)
        Figure(
            name: "power, 10% slowdown, CSV process suites, \(label), process and iteration σ 5%",
            value: outcome.power * 100, unit: "% of suites",
            baselineName: "oracle: Welch t on process mean logs, same FDR control, same suites",
            baselineValue: outcome.oraclePower * 100, target: "ratio >= 0.85",
            extra: ["suites": Double(powerSuites), "false_alarm_percent": outcome.falseAlarmRate * 100]
                .merging(simulation.paired ? ["paired_oracle_percent": outcome.pairedOraclePower * 100] : [:]) { $1 }
        ).printLine()
    }
}
