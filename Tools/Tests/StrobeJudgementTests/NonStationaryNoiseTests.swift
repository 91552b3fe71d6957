import Foundation
import StrobeStatistics
import Testing

@testable import StrobeJudgement

/// A time metric whose processes of one side differ by a factor of two or
/// more is said to have noise that is not stationary.
@Suite struct NonStationaryNoiseTests {
    static func side(_ centers: [Double]) -> [Replicate] {
        centers.enumerated().map { index, center in
            Replicate(
                id: "p\(index)", round: index + 1, samples: [center * 0.99, center, center * 1.01])
        }
    }

    static func input(_ base: [Double], _ cand: [Double], unit: String = "ns") -> ComparisonEngine.Input {
        ComparisonEngine.Input(
            name: "decode/wall", unit: unit, better: .lower, baseline: side(base), candidate: side(cand))
    }

    @Test func aProcessTwiceAsSlowAsAnotherIsSaid() throws {
        let rows = ComparisonEngine.compare([Self.input([167e6, 344e6, 170e6, 172e6], [171e6, 169e6, 175e6, 168e6])])
        let row = try #require(rows.first)
        let note = row.warnings.first { $0.hasPrefix("the noise is not stationary") }
        #expect(note?.contains("one baseline process took 2.1× as long as another") == true, "\(row.warnings)")
    }

    /// One line for the comparison, naming the metrics and the largest
    /// factor; a report-only metric below its floor is not among them.
    @Test func theNoteIsOneLineNamingItsMetrics() {
        var wall = Self.input([167e6, 344e6, 170e6, 172e6], [171e6, 169e6, 175e6, 168e6])
        wall.name = "decode/wall"
        var cpu = Self.input([160e6, 170e6, 165e6, 162e6], [161e6, 480e6, 163e6, 166e6])
        cpu.name = "decode/process.cpu"
        var system = Self.input([3e5, 2.9e7, 3.1e5, 3e5], [3e5, 3.2e5, 2.8e5, 3e5])
        system.name = "decode/process.cpu.system"
        system.gates = false
        system.absoluteFloor = MetricDefaults.cpuTimeFloor
        let rows = ComparisonEngine.compare([wall, cpu, system])
        #expect(rows.filter { $0.warnings.contains { $0.hasPrefix("the noise is not stationary") } }.count == 3)
        let lines = WarningGroups.render(WarningGroups.caveats(of: rows)).filter {
            $0.hasPrefix("the noise is not stationary")
        }
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.hasPrefix("the noise is not stationary (up to 3.0× between two processes") == true)
        #expect(lines.first?.hasSuffix(": wall, process.cpu of decode") == true, "\(lines)")
    }

    /// A gated count that is mostly zero on both sides (a late frame now
    /// and then) is unchanged and needs no word on percentages; one that
    /// grew keeps it.
    @Test func anUnchangedZeroNeedsNoWordOnPercentages() throws {
        var zero = ComparisonEngine.Input(
            name: "apply lens/frames over budget", unit: "count", better: .lower,
            baseline: (0..<6).map { Replicate(id: "b\($0)", round: $0 + 1, samples: [0, 0, Double($0 % 2)]) },
            candidate: (0..<6).map {
                Replicate(id: "c\($0)", round: $0 + 1, samples: [0, Double($0 % 3 == 0 ? 1 : 0), 0])
            })
        zero.absoluteFloor = 1
        var grown = zero
        grown.name = "capture frame/frames over budget"
        grown.candidate = (0..<6).map { Replicate(id: "c\($0)", round: $0 + 1, samples: [3, 4, 3]) }
        let rows = ComparisonEngine.compare([zero, grown])
        #expect(
            rows.allSatisfy { $0.warnings.contains(MetricComparison.zeroBaselineWarning) }, "\(rows.map(\.warnings))")
        #expect(rows[0].verdict == .unchanged && rows[1].verdict != .unchanged, "\(rows.map(\.verdict))")
        let lines = WarningGroups.render(WarningGroups.caveats(of: rows)).filter {
            $0.hasPrefix(MetricComparison.zeroBaselineWarning)
        }
        #expect(lines.count == 1 && lines[0].hasSuffix(": capture frame/frames over budget"), "\(lines)")
    }

    @Test func steadyProcessesAndCountsSayNothing() throws {
        let steady = ComparisonEngine.compare([Self.input([167e6, 180e6, 170e6], [171e6, 175e6, 168e6])])
        #expect(steady.first?.warnings.contains { $0.hasPrefix("the noise is not stationary") } == false)
        let counts = ComparisonEngine.compare([Self.input([1, 5, 2], [3, 1, 6], unit: "count")])
        #expect(counts.first?.warnings.contains { $0.hasPrefix("the noise is not stationary") } == false)
    }
}
