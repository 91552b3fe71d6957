import Foundation
import StrobeHistory
import StrobeResults
import StrobeTrend
import Testing

/// A time step of a test whose instructions held their level is not the
/// code's when the test computes, and stays the code's when it waits.
@Suite struct TrendUnchangedWorkTests {
    /// The medians of a demo history's `capture frame` in milliseconds
    /// (Intel Xeon, family 6 model 207, load 0.8–2.4): its code never
    /// changed, the nightly process ran slow on nights 7–10 and the
    /// reference on other nights, so the nightly's series steps down at
    /// night 11 and its reference does not.
    static let nightly = [
        17.13, 13.72, 18.59, 13.83, 13.39, 18.78, 19.59, 22.65, 21.79, 24.18,
        14.19, 12.92, 12.87, 13.37, 13.56, 13.49, 13.21, 13.27, 12.87, 13.14,
    ]
    static let reference = [
        13.36, 13.59, 13.43, 27.82, 14.14, 18.88, 14.21, 19.96, 13.75, 21.99,
        19.14, 14.80, 16.20, 13.25, 14.85, 13.13, 13.23, 12.91, 13.97, 18.21,
    ]

    /// Per night a native process of each build, its wall time above and
    /// its process's CPU time `cpuShare` of it, and a simulated one that
    /// counts the same instructions every night.
    static func runs(_ history: NightlyHistory, cpuShare: Double) -> [HistoryRun] {
        history.runs(test: "capture frame", cpuModel: "Intel Xeon") { night, build, simulated in
            let time = (build == "nightly" ? nightly : reference)[night] * 1e6
            guard !simulated else {
                return [PerfMetric(name: MetricKind.instructionsName, unit: "count", samples: [4.1e7, 4.1e7])]
            }
            return [
                PerfMetric(name: MetricKind.wallName, unit: "ns", samples: [time, time * 1.01]),
                PerfMetric(
                    name: MetricKind.cpuUserName, unit: "ns",
                    samples: [time * cpuShare * 0.99, time * 1.01 * cpuShare * 0.99]),
                PerfMetric(
                    name: MetricKind.cpuSystemName, unit: "ns",
                    samples: [time * cpuShare * 0.01, time * 1.01 * cpuShare * 0.01]),
            ]
        }
    }

    /// The one change of the wall time, at night 11, with the process's
    /// CPU time `cpuShare` of it.
    static func wallChange(cpuShare: Double, test: String = #function) throws -> TrendChange {
        let directory = try TrendTests.scratch(test)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 20, in: directory)
        var options = TrendOptions()
        options.reference = HistoryFilter(.tag("build"), "reference")
        options.commitOrder = history.commits
        options.metricPattern = "wall"
        let report = try TrendAnalysis.analyze(
            runs(history, cpuShare: cpuShare), source: "files", options: options)
        let changes = report.changes.filter { $0.metric == MetricKind.wallName }
        #expect(changes.count == 1, "\(changes.map(\.reason))")
        let change = try #require(changes.first)
        #expect(change.firstAfter.slot == 10, "\(change.reason)")
        return change
    }

    /// On the CPU for its whole wall time, with the same instructions every
    /// night: the step is told, and not as the code's.
    @Test func aComputingTestsTimeStepWithItsWorkUnchangedIsNotTheCodes() throws {
        let change = try Self.wallChange(cpuShare: 0.99)
        #expect(change.cause == .undetermined, "\(change.reason)")
        #expect(change.reason.hasPrefix("unexplained: "), "\(change.reason)")
        #expect(
            change.reason.contains("with the test's work unchanged (capture frame/instructions held its level"),
            "\(change.reason)")
    }

    /// A test that waits for 40% of its wall time spends it without
    /// instructions: its step stays the code's.
    @Test func aWaitingTestsTimeStepStaysTheCodes() throws {
        let change = try Self.wallChange(cpuShare: 0.6)
        #expect(change.cause == .code, "\(change.reason)")
        #expect(!change.reason.contains("unchanged"), "\(change.reason)")
    }
}
