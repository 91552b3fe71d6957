import Foundation
import StrobeStatistics

/// The count rule (``MetricComparison/isCount``): a count the same in every
/// iteration of every process on each side is compared as it is
/// (``ComparisonMethod/exact``); one that varies is compared by the mean of
/// each process's iterations, with an absolute floor of at least one count
/// (``MetricDefaults/countFloor``): a change of one count is not told from
/// its own variation.
extension ComparisonEngine {
    /// The process-level test of a count that varies, on the mean of each
    /// replicate's iterations; nil for any other input (the caller tests it
    /// as usual).
    static func countTest(_ input: Input) -> ReplicateTestResult? {
        guard input.isCount, !(isConstant(input.baseline) && isConstant(input.candidate)),
            let base = meanPerReplicate(input.baseline), let cand = meanPerReplicate(input.candidate)
        else { return nil }
        return ReplicateTest.compare(baseline: base, candidate: cand, summary: .median)
    }

    /// The replicates of a count that varies, each as the mean of its
    /// iterations (the count per iteration it averages: a median of a count
    /// that takes one of two values flips between them from process to
    /// process); nil with fewer than two replicates, where the iterations
    /// themselves are compared.
    static func meanPerReplicate(_ replicates: [Replicate]) -> [Replicate]? {
        let filled = replicates.filter { !$0.samples.isEmpty }
        guard filled.count >= 2 else { return nil }
        return filled.map { replicate in
            Replicate(
                id: replicate.id, round: replicate.round,
                samples: [replicate.samples.reduce(0, +) / Double(replicate.samples.count)])
        }
    }

    /// The replicates (processes) that hold any sample.
    static func processCount(_ replicates: [Replicate]) -> Int {
        replicates.filter { !$0.samples.isEmpty }.count
    }

    /// Whether every sample of every replicate is the same value, seen at
    /// least twice: a single iteration (a counting process's, under
    /// callgrind or QEMU) cannot show that its count repeats, and a count
    /// that a runtime's caches move by one now and then (a
    /// `concurrentPerform`'s continuations) would be decided from it.
    static func isConstant(_ replicates: [Replicate]) -> Bool {
        let samples = replicates.flatMap(\.samples)
        return samples.count != 1 && Set(samples).count <= 1
    }
}
