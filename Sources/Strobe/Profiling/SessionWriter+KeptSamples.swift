import CStrobe
import StrobeEncoding

/// The CPU samples of a session that keeps its events in rings: the writer
/// moves them into ``SessionWriter/sampleHistory`` as it goes, and a dump or
/// the file written at stop takes those of its window.
extension SessionWriter {
    /// Moves what the samplers' rings hold into the sample history.
    func keepSamples() {
        guard let profiler, sampleHistory.withLock({ $0 != nil }) else { return }
        let lost = profiler.drain { words in sampleHistory.withLock { $0?.append(words) } }
        if lost > 0 { keptSamplesLost.add(lost, ordering: .relaxed) }
    }

    /// Appends to `encoder` the kept samples taken from `from` to `to`
    /// (CLOCK_BOOTTIME), then the profile's closing mark, whose lost count
    /// is the session's so far (rings full, and the history's own drops).
    func appendKeptSamples(to encoder: TraceEncoder, from: UInt64, to: UInt64) {
        guard let profiler,
            let (words, dropped) = sampleHistory.withLock({ history in
                history.map { ($0.records(from: from, to: to), $0.lost) }
            })
        else { return }
        ProcessSymbols.shared.withLock { symbols in
            words.withUnsafeBufferPointer { buffer in
                encoder.appendSamples(
                    buffer, frequency: profiler.profile.frequency, resolve: symbols.resolve,
                    rule: symbols.unwindRule)
            }
        }
        let lost = keptSamplesLost.load(ordering: .relaxed) &+ dropped
        encoder.appendSampleLoss(lost, frequency: profiler.profile.frequency, boottime: cstrobe_boottime_ns())
        let unsampled = profiler.unsampled
        encoder.appendProfileSummary(
            method: profiler.method.rawValue, frequency: profiler.profile.frequency, lost: lost,
            fallbackReason: profiler.fallbackReason, unsampledThreads: unsampled.threads,
            samplerFailure: unsampled.firstFailure, boottime: cstrobe_boottime_ns())
    }
}
