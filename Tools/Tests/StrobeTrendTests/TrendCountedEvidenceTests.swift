import Foundation
import StrobeHistory
import StrobeResults
import StrobeTrend
import Testing

/// The counted work of a test places and explains its time steps, also
/// when `--metric` leaves the counts out of the report.
@Suite struct TrendCountedEvidenceTests {
    /// The medians of a demo history's `apply lens` (AMD EPYC, family 25
    /// model 17): the code changed at night 11 (index 10); night 9 was slow
    /// for both builds and night 10 for the reference alone.
    static let nightly = [
        13.5, 13.8, 13.6, 15.7, 16.0, 13.6, 13.7, 14.4, 22.7, 14.1,
        31.3, 20.0, 22.7, 26.4, 18.3, 18.6, 28.7, 22.4, 18.7, 23.8,
    ]
    static let reference = [
        13.6, 16.1, 17.7, 13.8, 16.1, 14.1, 16.0, 15.1, 16.4, 22.9,
        21.6, 14.1, 14.2, 18.5, 15.3, 14.4, 19.9, 16.2, 13.8, 16.3,
    ]

    /// Per night a native and a simulated process of the nightly build and
    /// of the pinned reference: the native ones carry the times above, the
    /// simulated ones the instructions (the nightly's 14.4% more from
    /// index 10).
    static func runs(_ history: NightlyHistory, nightly: [Double] = nightly) -> [HistoryRun] {
        var noise = TrendNoise(state: 51)
        return history.runs(test: "apply lens", cpuModel: "AMD EPYC") { night, build, simulated in
            let time = (build == "nightly" ? nightly : reference)[night] * 1e6
            let stepped = build == "nightly" && night >= 10
            return simulated
                ? [
                    PerfMetric(
                        name: "instructions", unit: "count",
                        samples: Array(
                            repeating: 2.715e8 * (stepped ? 1.144 : 1) * (1 + 0.0001 * noise.normal()), count: 3))
                ]
                : [PerfMetric(name: "wall", unit: "ns", samples: [time * 0.99, time, time * 1.02])]
        }
    }

    static func report(_ history: NightlyHistory, metric: String?, nightly: [Double] = nightly) throws -> TrendReport {
        var options = TrendOptions()
        options.reference = HistoryFilter(.tag("build"), "reference")
        options.commitOrder = history.commits
        options.metricPattern = metric
        return try TrendAnalysis.analyze(runs(history, nightly: nightly), source: "files", options: options)
    }

    @Test func aTimeStepIsToldOnceAtTheNightItsInstructionsStepped() throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 20, in: directory)
        for metric in ["wall", nil] {
            let report = try Self.report(history, metric: metric)
            let wall = report.changes.filter { $0.metric == "wall" }
            #expect(wall.count == 1, "\(metric ?? "every metric"): \(wall.map { ($0.firstAfter.slot, $0.reason) })")
            let change = try #require(wall.first)
            #expect(change.firstAfter.slot == 10, "\(change.reason)")
            #expect(change.cause == .code, "\(change.reason)")
            #expect(change.reason.contains("where the test's counted work stepped"), "\(change.reason)")
            // --metric wall reports the times alone; the counts are evidence.
            let instructions = report.changes.filter { $0.metric == "instructions" }
            #expect(instructions.count == (metric == nil ? 1 : 0), "\(report.changes.map(\.series))")
            #expect(report.series.contains { $0.metric == "instructions" } == (metric == nil))
            #expect(!report.notes.contains { $0.contains("its counted work stepped") }, "\(report.notes)")
        }
    }

    /// The nightly's times as they were before the change, on both sides
    /// of it: the code's work grew, its time did not.
    static let flat = Array(nightly[..<10]) + [14.0, 13.9, 15.8, 13.5, 14.6, 13.7, 16.1, 14.2, 13.6, 22.5]

    /// Where the counted work stepped and the time did not, the report
    /// says so, with the time's change there and its interval.
    @Test func aTimeThatDidNotStepWithItsCountsIsToldWithItsChange() throws {
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 20, in: directory)
        let report = try Self.report(history, metric: "wall", nightly: Self.flat)
        #expect(report.changes.isEmpty, "\(report.changes.map(\.reason))")
        let notes = report.notes.filter { $0.contains("its counted work stepped") }
        #expect(notes.count == 1, "\(report.notes)")
        let note = try #require(notes.first)
        #expect(note.hasPrefix("LensPipeline/apply lens: its counted work stepped at position 11"), "\(note)")
        #expect(note.contains("(commit \(history.commits[10].prefix(8)))"), "\(note)")
        // The change across the step, with an interval that holds zero,
        // and its change over the pinned reference beside it.
        let change = try #require(
            note.firstMatch(
                of:
                    /wall ([+-][0-9.]+)% \[([+-][0-9.]+), ([+-][0-9.]+)\] \(over its reference ([+-][0-9.]+)% \[[^\]]+\], p ([0-9.e-]+)\)/
            ))
        let (lower, upper) = (try #require(Double(change.2)), try #require(Double(change.3)))
        #expect(lower < 0 && upper > 0, "\(note)")
        #expect(try #require(Double(change.5)) > 0.01, "\(note)")
        // With the counts reported too, the note stays, and the counted
        // step is told.
        let whole = try Self.report(history, metric: nil, nightly: Self.flat)
        #expect(whole.changes.map(\.metric) == ["instructions"], "\(whole.changes.map(\.reason))")
        #expect(whole.notes.contains(note), "\(whole.notes)")
    }
}
