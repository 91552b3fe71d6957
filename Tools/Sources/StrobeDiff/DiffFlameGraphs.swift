import StrobeFlameGraph
import StrobeJudgement

/// The differential flame graphs of a report's changed tests.
extension DiffReport {
    /// One graph per test that came out slower or faster and whose
    /// processes both sides profiled (`--profile`), in the order of the
    /// tests: each side's stacks as CPU time per iteration, averaged over
    /// its processes. A change counts in a frame when it is at least a
    /// quarter of the minimum effect of the test's baseline CPU time (the
    /// floor a function's change is judged by); a function the report
    /// judged carries its verdict as a note.
    public func flameGraphs(baseline: SampleSet, candidate: SampleSet) -> [DifferentialFlameGraph] {
        let judged = Dictionary(functionChanges.map { ($0.test, $0) }, uniquingKeysWith: { first, _ in first })
        return tests.filter { $0.outcome == .slower || $0.outcome == .faster }.compactMap { verdict in
            func matches(_ process: ProcessProfile) -> Bool {
                process.test == verdict.test && (groupBy.map { process.dimensions[$0] ?? "" } ?? "") == verdict.group
            }
            let base = FlameStack.perIteration(baseline.profiles.filter(matches).map(\.profile))
            let cand = FlameStack.perIteration(candidate.profiles.filter(matches).map(\.profile))
            guard !base.isEmpty, !cand.isEmpty else { return nil }
            let total = base.reduce(0) { $0 + $1.amount }
            var graph = DifferentialFlameGraph(
                title: "\(verdict.displayName) — \(verdict.outcome.rawValue): \(verdict.decidingChange)",
                unit: .nanoseconds, baseline: base, candidate: cand, floor: options.minimumEffect / 4 * total)
            for function in judged[verdict.displayName]?.functions ?? [] where function.unit == .nanoseconds {
                graph.notes[function.function] =
                    "judged over the processes: \(function.label), \(function.signedChange) \(function.interval)"
            }
            return graph
        }
    }
}
