import Foundation
import Testing

@testable import StrobeDiff
@testable import StrobeSimulations
@testable import StrobeStatistics

/// The bar on suites of process-tagged CSV samples (10 processes × 6
/// iterations per side, process σ drawn between 3% and 10%): false alarms
/// within alpha and power near the oracle's on the same suites, through the
/// same code path as `strobe diff`.
@Suite struct ProcessSuiteTests {
    @Test func theCSVPathKeepsProcessesApart() throws {
        var simulation = ProcessSuiteSimulation()
        simulation.metricsPerSuite = 1
        let text = "metric,value,unit,run\nm,10,ns,p0\nm,11,ns,p0\nm,20,ns,p1\n"
        let report = try simulation.diff(baseline: text, candidate: text)
        #expect(report.rows.count == 1)
        #expect(report.rows[0].test.baselineReplicates == 2 && report.rows[0].test.method == .processes)
    }

    @Test func falseAlarmsStayWithinAlpha() {
        let simulation = ProcessSuiteSimulation()
        let plain = simulation.run(suites: 300, slowdown: 0, seed: 401)
        #expect(plain.suitesWithFalseAlarm <= 3, "\(plain.suitesWithFalseAlarm) of 300 A/A suites")
        // A neighbour slowed one candidate process of ten by 30%: not a regression.
        var slowed = simulation
        slowed.slowedProcess = .init(candidate: true, factor: 1.3)
        let neighbour = slowed.run(suites: 300, slowdown: 0, seed: 402)
        #expect(
            neighbour.suitesWithFalseAlarm <= 3, "\(neighbour.suitesWithFalseAlarm) of 300 suites with a slowed process"
        )
        for noise: DetectorSimulation.Noise in [.bimodal(sigma: 0.05), .outliers(sigma: 0.05)] {
            var noisy = simulation
            noisy.iterationNoise = noise
            let outcome = noisy.run(suites: 200, slowdown: 0, seed: 403)
            #expect(outcome.suitesWithFalseAlarm <= 2, "\(noise): \(outcome.suitesWithFalseAlarm) of 200 suites")
        }
    }

    @Test func powerIsNearTheOracles() {
        let outcome = ProcessSuiteSimulation().run(suites: 300, slowdown: 0.10, seed: 404)
        print(
            "10% slowdown, 10 x 6 per side: caught in \(outcome.detections) of 300 suites, oracle "
                + "\(outcome.oracleDetections)"
        )
        #expect(outcome.oracleDetections >= 60, "the oracle itself caught \(outcome.oracleDetections)")
        #expect(Double(outcome.detections) >= 0.85 * Double(outcome.oracleDetections))
        #expect(outcome.suitesWithFalseAlarm <= 3)
    }

    @Test func aProcessSlowedByANeighbourIsTrimmedAway() {
        // One baseline process of ten 30% slow swamps Welch's t on the
        // processes (the oracle); trimming it keeps part of the power.
        var simulation = ProcessSuiteSimulation()
        simulation.slowedProcess = .init(candidate: false, factor: 1.3)
        let outcome = simulation.run(suites: 200, slowdown: 0.10, seed: 405)
        print(
            "10% slowdown, a baseline process 30% slow: caught in \(outcome.detections) of 200, oracle "
                + "\(outcome.oracleDetections)"
        )
        #expect(outcome.detections >= 12)
        #expect(outcome.detections >= 4 * outcome.oracleDetections)
    }
}
