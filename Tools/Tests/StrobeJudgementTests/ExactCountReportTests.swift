import Foundation
import StrobeResults
import Testing

@testable import StrobeDiff
@testable import StrobeJudgement
@testable import StrobeStatistics

/// How the runner's exact counts gate and read in every report.
@Suite struct ExactCountReportTests {
    /// `rounds` processes per side of one test "apply lens": a noisy wall
    /// time alike on both sides, and the exact counts, the candidate's with
    /// `extraAllocations` more allocations per iteration.
    static func sides(rounds: Int = 4, extraAllocations: Double, seed: UInt64 = 3) -> (SampleSet, SampleSet) {
        var generator = SeededGenerator(seed: seed)
        var sets = [SampleSet(), SampleSet()]
        for (index, side) in ["baseline", "candidate"].enumerated() {
            for round in 1...rounds {
                let run = "\(side)-\(round)"
                func series(_ metric: String, _ unit: String, _ samples: [Double]) -> SampleSet.Series {
                    .init(
                        metric: "apply lens/\(metric)", unit: unit, better: .lower, samples: samples, dimensions: [:],
                        source: "\(run).strobe-results", run: run, round: round)
                }
                let extra = index == 1 ? extraAllocations : 0
                sets[index].series += [
                    series("wall", "ns", (0..<5).map { _ in 2e6 * exp(0.05 * generator.normal()) }),
                    series("allocations", "count", Array(repeating: 12 + extra, count: 5)),
                    series("allocations.bytes", "bytes", Array(repeating: 4096 + 16 * extra, count: 5)),
                    series("allocations.remaining", "count", Array(repeating: 0, count: 5)),
                    series("retains", "count", Array(repeating: 40, count: 5)),
                    series("releases", "count", Array(repeating: 40, count: 5)),
                ]
            }
        }
        return (sets[0], sets[1])
    }

    static func firstLook() -> SequentialDesign.Look {
        var design = SequentialDesign(alpha: 0.01, confidence: 0.95, plannedRounds: 40, firstLook: 4)
        return design.look(number: 1, rounds: 4, final: false)
    }

    @Test func allocationsGateRetainsReleasesAndBytesAreReported() {
        #expect(MetricDefaults.gates("apply lens/allocations"))
        for metric in ["allocations.bytes", "allocations.remaining", "retains", "releases"] {
            #expect(!MetricDefaults.gates("apply lens/\(metric)"), "\(metric)")
            #expect(MetricDefaults.isExactCount("apply lens/\(metric)"))
        }
        #expect(MetricDefaults.gates("apply lens/wall"))
        #expect(!MetricDefaults.isExactCount("apply lens/wall"))
        #expect(!MetricDefaults.isExactCount("apply lens/process.context_switches.voluntary"))
    }

    @Test func oneMoreAllocationIsARegressionAtTheFirstLookInEveryFormat() throws {
        let (baseline, candidate) = Self.sides(extraAllocations: 1)
        let report = try Judgement.compare(baseline: baseline, candidate: candidate, look: Self.firstLook())
        let allocations = try #require(report.rows.first { $0.name == "apply lens/allocations" })
        #expect(allocations.verdict == .regression)
        #expect(allocations.gates)
        #expect(DiffReport.change(allocations) == "+1 allocation per iteration (12 → 13)")
        let bytes = try #require(report.rows.first { $0.name == "apply lens/allocations.bytes" })
        #expect(DiffReport.change(bytes) == "+16 B per iteration (4.00 KiB → 4.02 KiB)")
        #expect(bytes.verdict == .regression && !bytes.gates)
        // The test is slower by its allocations while its time is undecided.
        let verdict = try #require(report.testVerdicts.first)
        #expect(verdict.outcome == .slower)
        #expect(verdict.summary == "apply lens allocations +1 per iteration (12 → 13)")
        #expect(report.headline.contains("apply lens allocations +1 per iteration (12 → 13)"), "\(report.headline)")
        let text = report.renderText()
        #expect(text.contains("+1 allocation per iteration (12 → 13)"))
        #expect(!text.contains("+8.3%"), "a count is never a percentage")
        #expect(report.renderMarkdown().contains("+1 allocation per iteration (12 → 13)"))
        #expect(report.renderHTML().contains("+1 allocation per iteration (12 → 13)"))
        let json = report.renderJSON()
        #expect(json.contains("\"isCount\" : true"))
        #expect(json.contains("\"countChange\" : \"+1 per iteration (12 → 13)\""))
    }

    @Test func anAAComparisonReportsEveryCountUnchanged() throws {
        let (baseline, candidate) = Self.sides(extraAllocations: 0)
        let report = try Judgement.compare(baseline: baseline, candidate: candidate, look: Self.firstLook())
        let counts = report.rows.filter { MetricDefaults.isExactCount($0.name) }
        #expect(counts.count == 5)
        for row in counts {
            #expect(row.verdict == .unchanged, "\(row.name)")
            #expect(row.test.method == .exact, "\(row.name)")
        }
        let allocations = try #require(counts.first { $0.name == "apply lens/allocations" })
        #expect(DiffReport.change(allocations) == "±0 allocations per iteration (12 → 12)")
    }

    @Test func aVaryingCountReadsAsAnyMetric() throws {
        // The candidate's processes count 12, 13, 12, 14, 12 and 12, 13,
        // 12, 13, 12 in turn: a mean of 12.5 against 12, judged with the
        // floor of one count.
        var (baseline, candidate) = Self.sides(extraAllocations: 0)
        var turn = 0
        for index in candidate.series.indices where candidate.series[index].metric == "apply lens/allocations" {
            candidate.series[index].samples = turn % 2 == 0 ? [12, 13, 12, 14, 12] : [12, 13, 12, 13, 12]
            turn += 1
        }
        let report = try Judgement.compare(baseline: baseline, candidate: candidate)
        let row = try #require(report.rows.first { $0.name == "apply lens/allocations" })
        #expect(!row.isConstantCount)
        #expect(row.absoluteFloor == MetricDefaults.countFloor)
        #expect(abs(row.difference - 0.5) < 0.11, "\(row.difference)")
        #expect(row.verdict == .unchanged)
        // Told in its unit with its interval, never as a percentage.
        let change = DiffReport.change(row)
        let told = #/\+0\.[4-6] allocations per iteration \[\+0\.[0-9], \+0\.[0-9]\] \(12 → 12\.[4-6]\)/#
        #expect(change.wholeMatch(of: told) != nil, "\(change)")
        #expect(!change.contains("%"), "\(change)")
    }

    @Test func aVaryingCountWhoseProcessesAllAgreeHasNoIntervalOfNoWidth() throws {
        // Every process of a side counts the same iterations (14, 15, 14,
        // 15, 14 against 110, 111, 110, 111, 110): not one constant, but
        // every process's mean is the same, so the interval is the estimate.
        var (baseline, candidate) = Self.sides(extraAllocations: 0)
        for index in baseline.series.indices where baseline.series[index].metric == "apply lens/allocations" {
            baseline.series[index].samples = [14, 15, 14, 15, 14]
        }
        for index in candidate.series.indices where candidate.series[index].metric == "apply lens/allocations" {
            candidate.series[index].samples = [110, 111, 110, 111, 110]
        }
        let report = try Judgement.compare(baseline: baseline, candidate: candidate)
        let row = try #require(report.rows.first { $0.name == "apply lens/allocations" })
        #expect(!row.isConstantCount)
        #expect(row.verdict == .regression)
        #expect(DiffReport.change(row) == "+96 allocations per iteration (14.4 → 110.4)", "\(DiffReport.change(row))")
    }
}
