import Foundation
import StrobeCompare
import StrobeSimulations
import StrobeTestSupport

/// `make bench compare`: `strobe compare`'s whole experiment
/// (`InterleavedComparison`, its looks and its stop) on synthetic suites, on
/// a clock of the processes' own seconds: the false alarms of A/A
/// comparisons and the time to a verdict of a 5% change, with the
/// iterations per process chosen from the noise against the same
/// comparisons at a fixed 5 iterations, per split of the noise.
enum CompareBenchmarks {
    /// Comparisons per figure (`STROBE_BENCH_COMPARISONS`, default 300).
    static let comparisons = ProcessInfo.processInfo.environment["STROBE_BENCH_COMPARISONS"].flatMap(Int.init) ?? 300

    struct Noise {
        var label: String
        var between: Double
        var within: Double
    }

    static let settings = [
        Noise(label: "processes ±2%, iterations ±0.5%", between: 0.02, within: 0.005),
        Noise(label: "processes ±0.5%, iterations ±5%", between: 0.005, within: 0.05),
        Noise(label: "processes ±5%, iterations ±5%", between: 0.05, within: 0.05),
    ]

    /// One comparison: its exit status, the seconds it took, and whether
    /// every gated metric was decided (rather than set aside or left open).
    static func compare(ratio: Double, noise: Noise, adapts: Bool, seed: UInt64) -> (
        status: Int32, seconds: Double, decided: Bool
    ) {
        let root = NSTemporaryDirectory() + "strobe-bench-compare-\(getpid())-\(seed)-\(adapts)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        guard let runner = try? SyntheticRounds(root: root, ratios: ["decode": ratio], seed: seed) else {
            return (2, 0, false)
        }
        runner.between = noise.between
        runner.within = noise.within
        var settings = InterleavedComparison<SyntheticRounds>.Settings(budget: 180, seed: seed)
        settings.adaptsIterations = adapts
        var comparison = InterleavedComparison(settings: settings, runner: runner, clock: { runner.seconds })
        guard let outcome = try? comparison.run() else { return (2, runner.seconds, false) }
        return (outcome.report.exitStatus, outcome.elapsed, outcome.report.undecided.isEmpty)
    }

    static func run() {
        for noise in settings {
            var alarms = (adaptive: 0, fixed: 0)
            var sameSeconds = (adaptive: [Double](), fixed: [Double]())
            var unchanged = (adaptive: 0, fixed: 0)
            for index in 0..<comparisons {
                let seed = UInt64(index) &* 7919 &+ 1
                let adaptive = compare(ratio: 1, noise: noise, adapts: true, seed: seed)
                let fixed = compare(ratio: 1, noise: noise, adapts: false, seed: seed)
                if adaptive.status == 1 { alarms.adaptive += 1 }
                if fixed.status == 1 { alarms.fixed += 1 }
                sameSeconds.adaptive.append(adaptive.seconds)
                sameSeconds.fixed.append(fixed.seconds)
                if adaptive.decided { unchanged.adaptive += 1 }
                if fixed.decided { unchanged.fixed += 1 }
            }
            Figure(
                name: "A/A false alarms of compare, iterations from the noise, \(noise.label)",
                value: Double(alarms.adaptive) / Double(comparisons) * 100, unit: "% of comparisons",
                baselineName: "the same comparisons at 5 iterations per process",
                baselineValue: Double(alarms.fixed) / Double(comparisons) * 100, target: "value <= 1",
                extra: ["comparisons": Double(comparisons)]
            ).printLine()
            Figure(
                name: "seconds to the verdict of an A/A comparison, iterations from the noise, \(noise.label)",
                value: median(sameSeconds.adaptive), unit: "s (median, processes' own clock)",
                baselineName: "the same comparisons at 5 iterations per process",
                baselineValue: median(sameSeconds.fixed), target: "ratio <= 1",
                extra: [
                    "p90_seconds": quantile(sameSeconds.adaptive, 0.9),
                    "unchanged_percent": Double(unchanged.adaptive) / Double(comparisons) * 100,
                    "unchanged_percent_fixed": Double(unchanged.fixed) / Double(comparisons) * 100,
                ]
            ).printLine()

            var seconds = (adaptive: [Double](), fixed: [Double]())
            var caught = (adaptive: 0, fixed: 0)
            for index in 0..<(comparisons / 3) {
                let seed = UInt64(index) &* 104_729 &+ 3
                let adaptive = compare(ratio: 1.05, noise: noise, adapts: true, seed: seed)
                let fixed = compare(ratio: 1.05, noise: noise, adapts: false, seed: seed)
                seconds.adaptive.append(adaptive.seconds)
                seconds.fixed.append(fixed.seconds)
                if adaptive.status == 1 { caught.adaptive += 1 }
                if fixed.status == 1 { caught.fixed += 1 }
            }
            Figure(
                name: "seconds to the verdict on a 5% change, iterations from the noise, \(noise.label)",
                value: median(seconds.adaptive), unit: "s (median, processes' own clock)",
                baselineName: "the same comparisons at 5 iterations per process", baselineValue: median(seconds.fixed),
                target: "ratio <= 1",
                extra: [
                    "caught_percent": Double(caught.adaptive) / Double(comparisons / 3) * 100,
                    "caught_percent_fixed": Double(caught.fixed) / Double(comparisons / 3) * 100,
                ]
            ).printLine()
        }
    }
}
