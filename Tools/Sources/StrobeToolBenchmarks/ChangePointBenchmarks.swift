import Foundation
import StrobeDiff
import StrobeStatistics
import StrobeTestSupport

/// The quality and speed of `StepDetector` and `StepAttribution` on
/// synthetic performance histories: 60 runs, each run a process with its own
/// noise, 20 metrics per suite, one metric in four bimodal across processes.
///
/// With `STROBE_CHANGEPOINTS_CSV=DIR` in the environment it also writes the
/// flat and step histories to `DIR/flat.csv`, `DIR/step.csv` and
/// `DIR/step-truth.csv` for `scripts/otava-compare.py`.
enum ChangePointBenchmarks {
    static let runs = 60
    static let metrics = 20
    static let flatSuites = 1000
    static let stepSuites = 1000
    static let machineSuites = 400

    static func run() {
        ToolBenchmarkSection.printOpeningLine("changepoints")
        let csv = ProcessInfo.processInfo.environment["STROBE_CHANGEPOINTS_CSV"]
        flat(csv: csv)
        step(csv: csv, bimodal: false)
        step(csv: nil, bimodal: true)
        machine(referenceSeries: metrics)
        machine(referenceSeries: 1)
        code()
        speed()
    }

    // MARK: The histories

    /// One synthetic suite: `values[metric][run]`.
    struct Suite {
        var values: [[Double]]
        var bimodal: [Bool]
    }

    /// A suite of `metrics` histories of `runs` runs. Each metric has its own
    /// process σ (uniform in 3–10%, or `sigma(metric)` when given); every run
    /// is a process whose 9 iterations share its log-normal factor and carry
    /// 3% log-normal noise of their own, summarized by their median. Every
    /// fourth metric is bimodal: a share of its processes (20–50%, per
    /// metric) is 1.5–2× slower. `level(metric, run)` multiplies the run.
    static func suite(
        seed: UInt64, metrics: Int = metrics, runs: Int = runs, sigma: (Int) -> Double? = { _ in nil },
        level: (Int, Int) -> Double = { _, _ in 1 }
    ) -> Suite {
        var generator = SeededGenerator(seed: seed)
        var values: [[Double]] = []
        var bimodal: [Bool] = []
        for metric in 0..<metrics {
            let processSigma = sigma(metric) ?? (0.03 + 0.07 * generator.uniform())
            let isBimodal = metric % 4 == 3
            let slowShare = isBimodal ? 0.2 + 0.3 * generator.uniform() : 0
            let slowFactor = 1.5 + 0.5 * generator.uniform()
            let base = pow(10, 3 * generator.uniform())
            var series: [Double] = []
            series.reserveCapacity(runs)
            for run in 0..<runs {
                let process =
                    exp(processSigma * generator.normal()) * (generator.uniform() < slowShare ? slowFactor : 1)
                var iterations = (0..<9).map { _ in exp(0.03 * generator.normal()) }
                iterations.sort()
                series.append(base * level(metric, run) * process * iterations[4])
            }
            values.append(series)
            bimodal.append(isBimodal)
        }
        return Suite(values: values, bimodal: bimodal)
    }

    static func histories(_ suite: Suite, prefix: String = "m") -> [MetricHistory] {
        suite.values.enumerated().map {
            MetricHistory(name: String(format: "%@%02d", prefix, $0.offset), values: $0.element)
        }
    }

    // MARK: Flat histories

    static func flat(csv: String?) {
        var alarmed = 0
        var alarmedBimodal = 0
        var rows: [String] = []
        for index in 0..<flatSuites {
            let suite = suite(seed: 1_000_000 + UInt64(index))
            if csv != nil { rows += csvRows(suite, history: index) }
            let report = try! StepDetector.detect(histories(suite))
            if !report.steps.isEmpty { alarmed += 1 }
            if zip(report.series, suite.bimodal).contains(where: { $1 && !$0.steps.isEmpty }) { alarmedBimodal += 1 }
        }
        if let csv { write(rows, to: csv, name: "flat.csv") }
        Figure(
            name: "flat histories with any step, 20 metrics × 60 runs, process σ 3–10%, 1 metric in 4 bimodal",
            value: Double(alarmed) / Double(flatSuites) * 100, unit: "% of suites", baselineName: "allowed (1%)",
            baselineValue: 1, target: "value <= 1",
            extra: ["suites": Double(flatSuites), "suites_with_a_bimodal_metric_flagged": Double(alarmedBimodal)]
        ).printLine()
    }

    // MARK: One 10% step

    static func step(csv: String?, bimodal: Bool) {
        var found = 0
        var placed = 0
        var exact = 0
        var oraclePlaced = 0
        var otherSteps = 0
        var possible = 0
        var extraSteps = 0
        var rows: [String] = []
        var truth: [String] = ["history,metric,first_after"]
        for index in 0..<stepSuites {
            var generator = SeededGenerator(seed: (bimodal ? 3_000_000 : 2_000_000) + UInt64(index))
            let candidates = (0..<metrics).filter { ($0 % 4 == 3) == bimodal }
            let stepped = candidates[Int(generator.next() % UInt64(candidates.count))]
            let at = 10 + Int(generator.next() % 41)
            let suite = suite(
                seed: generator.next(), sigma: { $0 == stepped ? 0.05 : nil },
                level: { metric, run in metric == stepped && run >= at ? 1.10 : 1 })
            if csv != nil {
                rows += csvRows(suite, history: index)
                truth.append("\(index),\(String(format: "m%02d", stepped)),\(at)")
            }
            let report = try! StepDetector.detect(histories(suite))
            otherSteps += report.series.enumerated().filter { $0.offset != stepped && !$0.element.steps.isEmpty }.count
            if abs(oraclePlacement(suite.values[stepped]) - at) <= 1 { oraclePlaced += 1 }
            let steps = report.series[stepped].steps
            guard let nearest = steps.min(by: { abs($0.firstAfter - at) < abs($1.firstAfter - at) }) else { continue }
            found += 1
            extraSteps += steps.count - 1
            if abs(nearest.firstAfter - at) <= 1 { placed += 1 }
            if nearest.firstAfter == at { exact += 1 }
            if nearest.status != .confirmed { possible += 1 }
        }
        if let csv {
            write(rows, to: csv, name: "step.csv")
            write(truth, to: csv, name: "step-truth.csv")
        }
        let kind = bimodal ? "a bimodal metric" : "a metric"
        Figure(
            name: "10% step in \(kind), process σ 5%, found", value: Double(found) / Double(stepSuites) * 100,
            unit: "% of suites", baselineName: "target", baselineValue: 90, target: bimodal ? nil : "value >= 90",
            extra: [
                "suites": Double(stepSuites), "other_metrics_with_a_step": Double(otherSteps),
                "found_as_possible": Double(possible), "extra_steps_in_the_stepped_metric": Double(extraSteps),
            ]
        ).printLine()
        Figure(
            name: "10% step in \(kind), process σ 5%, placed within one run of the truth",
            value: Double(placed) / Double(max(found, 1)) * 100, unit: "% of those found",
            baselineName: "oracle: least squares on logs, one step known to exist",
            baselineValue: Double(oraclePlaced) / Double(stepSuites) * 100, target: bimodal ? nil : "value >= 90",
            extra: ["placed_exactly_percent": Double(exact) / Double(max(found, 1)) * 100]
        ).printLine()
    }

    /// Where least squares on log values puts the one step it is told exists
    /// (at least 5 runs from either end): the placement that is optimal for
    /// normal noise, knowing what the detector does not.
    static func oraclePlacement(_ values: [Double]) -> Int {
        let logs = values.map { log($0) }
        let total = logs.reduce(0, +)
        let n = Double(logs.count)
        var sum = 0.0
        var best = 5
        var bestScore = -Double.infinity
        for k in 1..<(logs.count - 5) {
            sum += logs[k - 1]
            guard k >= 5 else { continue }
            let size = Double(k)
            let deviation = sum - size * total / n
            let score = deviation * deviation / (size * (n - size) / n)
            if score > bestScore {
                bestScore = score
                best = k
            }
        }
        return best
    }

    // MARK: Code or machine

    /// Every metric of a host 5% slower from one night on, and the reference
    /// (a pinned build of the same suite, or one calibration series) with it.
    /// A suite counts when the shift was reported (as a suite step or as
    /// steps of metrics, within one night) and every report of it says
    /// machine.
    static func machine(referenceSeries: Int) {
        var machineSuites = 0
        var missed = 0
        var steps = 0
        var machineSteps = 0
        var suiteMachine = 0
        for index in 0..<Self.machineSuites {
            var generator = SeededGenerator(seed: 4_000_000 + UInt64(index) * 7 + UInt64(referenceSeries))
            let at = 10 + Int(generator.next() % 41)
            let shift: (Int, Int) -> Double = { _, run in run >= at ? 1.05 : 1 }
            let host = suite(seed: generator.next(), level: shift)
            let reference = suite(
                seed: generator.next(), metrics: referenceSeries, sigma: { _ in referenceSeries == 1 ? 0.05 : nil },
                level: shift)
            let report = try! StepAttribution.attribute([
                HostHistory(
                    host: "ci", metrics: histories(host),
                    reference: histories(reference, prefix: referenceSeries == 1 ? "calibration" : "m"))
            ])
            let atShift = report.steps.filter { abs($0.step.firstAfter - at) <= 1 }
            let suiteAtShift = report.suiteSteps.filter { abs($0.firstAfter - at) <= 1 }
            steps += atShift.count
            machineSteps += atShift.filter { $0.cause == .machine }.count
            if suiteAtShift.contains(where: { $0.cause == .machine }) { suiteMachine += 1 }
            if atShift.isEmpty && suiteAtShift.isEmpty { missed += 1 }
            let causes = atShift.map(\.cause) + suiteAtShift.map(\.cause)
            if !causes.isEmpty && causes.allSatisfy({ $0 == .machine }) { machineSuites += 1 }
        }
        let what = referenceSeries == 1 ? "one calibration series (σ 5%)" : "a pinned build of the suite"
        Figure(
            name: "5% shift of every metric with the reference (\(what)) moving too, reported as the machine's",
            value: Double(machineSuites) / Double(Self.machineSuites) * 100, unit: "% of suites",
            baselineName: "target", baselineValue: 95, target: referenceSeries == 1 ? nil : "value >= 95",
            extra: [
                "suites": Double(Self.machineSuites), "suites_with_no_step_found": Double(missed),
                "suite_steps_of_the_machine": Double(suiteMachine),
                "metric_steps_at_the_shift": Double(steps), "of_which_machine": Double(machineSteps),
            ]
        ).printLine()
    }

    /// One metric 10% slower on all three hosts from one night on; the
    /// references (pinned builds) stay put.
    static func code() {
        let suites = 200
        var codeSuites = 0
        var steps = 0
        var codeSteps = 0
        for index in 0..<suites {
            var generator = SeededGenerator(seed: 5_000_000 + UInt64(index))
            let at = 10 + Int(generator.next() % 41)
            let stepped = 4 * Int(generator.next() % 5)
            let hosts = (0..<3).map { host in
                HostHistory(
                    host: "host\(host)",
                    metrics: histories(
                        suite(
                            seed: generator.next(), sigma: { $0 == stepped ? 0.05 : nil },
                            level: { metric, run in metric == stepped && run >= at ? 1.10 : 1 })),
                    reference: histories(suite(seed: generator.next())))
            }
            let attributed = try! StepAttribution.attribute(hosts).steps.filter { abs($0.step.firstAfter - at) <= 1 }
            steps += attributed.count
            codeSteps += attributed.filter { $0.cause == .code }.count
            if !attributed.isEmpty && attributed.allSatisfy({ $0.cause == .code }) { codeSuites += 1 }
        }
        Figure(
            name: "10% step of one metric on all 3 hosts, references still, reported as the code's",
            value: Double(codeSuites) / Double(suites) * 100, unit: "% of suites",
            baselineName: "steps reported as the code's",
            baselineValue: Double(codeSteps) / Double(max(steps, 1)) * 100, extra: ["suites": Double(suites)]
        ).printLine()
    }

    // MARK: Speed

    /// 50 metrics × 10,000 runs, each with ten 10% steps at random runs:
    /// the median of 3 calls, and the first call on its own.
    static func speed() {
        var generator = SeededGenerator(seed: 6_000_000)
        let long = (0..<50).map { metric -> MetricHistory in
            let steps = (0..<10).map { _ in Int(generator.next() % 10_000) }.sorted()
            let suite = suite(
                seed: generator.next(), metrics: 1, runs: 10_000,
                level: { _, run in pow(1.10, Double(steps.filter { $0 <= run }.count % 2)) })
            return MetricHistory(name: "m\(metric)", values: suite.values[0])
        }
        let clock = ContinuousClock()
        var found = 0
        // The first call also draws the permutation tables of segments of
        // 65–200 runs, which the 60-run histories above never needed.
        let first = clock.measure { found = try! StepDetector.detect(long).steps.count }
        let firstMilliseconds = Double(first.components.seconds) * 1e3 + Double(first.components.attoseconds) / 1e15
        let detect = median(runs: 3) {
            let elapsed = clock.measure { found = try! StepDetector.detect(long).steps.count }
            return Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
        }
        let sort = median(runs: 3) {
            let elapsed = clock.measure {
                var total = 0.0
                for history in long { total += history.values.sorted()[5000] }
                precondition(total > 0)
            }
            return Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
        }
        Figure(
            name: "detect steps in 50 metrics × 10,000 runs (ten steps each)", value: detect, unit: "ms",
            baselineName: "sorting every series once", baselineValue: sort, target: "value < 10000",
            extra: ["steps_found": Double(found), "first_call_ms": firstMilliseconds]
        ).printLine()
    }

    // MARK: CSV for the comparison with Otava

    static func csvRows(_ suite: Suite, history: Int) -> [String] {
        (0..<suite.values[0].count).map { run in
            "\(history),\(run)," + suite.values.map { String($0[run]) }.joined(separator: ",")
        }
    }

    static func write(_ rows: [String], to directory: String, name: String) {
        let header =
            name == "step-truth.csv"
            ? [] : ["history,run," + (0..<metrics).map { String(format: "m%02d", $0) }.joined(separator: ",")]
        let url = URL(fileURLWithPath: directory).appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try (header + rows).joined(separator: "\n").appending("\n").write(
                to: url, atomically: true, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("ChangePointBenchmarks: cannot write \(url.path): \(error)\n".utf8))
            exit(2)
        }
    }
}
