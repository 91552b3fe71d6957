/// CPU samples, on a sequence of their own (see ``ProfileEncoder``).
extension TraceEncoder {
    /// CPU samples written so far.
    package var profileSamples: UInt64 { profileEncoder?.samples ?? 0 }

    /// CPU samples written so far whose stack ends where a frame could not
    /// be unwound.
    package var truncatedProfileStacks: UInt64 { profileEncoder?.truncatedStacks ?? 0 }

    /// Appends the samples in `words` (as `cstrobe_sampler_drain` writes
    /// them; `frequency`, the profile's rate, goes into the sequence's
    /// defaults when this starts it), resolving each new program counter with `resolve` and
    /// unwinding each stack by the call-frame information `rule` gives (see
    /// ``ProfileEncoder/append(samples:to:resolve:rule:)``).
    package func appendSamples(
        _ words: UnsafeBufferPointer<UInt64>, frequency: Int = 0, resolve: (UInt64) -> ResolvedFrame,
        rule: (UInt64) -> UnwindRule? = { _ in nil }
    ) {
        startIfNeeded(&buffer)
        if profileEncoder == nil {
            profileEncoder = ProfileEncoder(sequenceID: nextSequenceID, processID: processID, frequency: frequency)
            nextSequenceID += 1
        }
        profileEncoder!.append(samples: words, to: &buffer, resolve: resolve, rule: rule)
    }

    /// Appends a packet counting `count` samples lost by `boottime` (see
    /// ``ProfileEncoder/appendLoss(_:time:to:)``); nothing when 0.
    package func appendSampleLoss(_ count: UInt64, frequency: Int = 0, boottime: UInt64) {
        guard count > 0 else { return }
        startIfNeeded(&buffer)
        if profileEncoder == nil {
            profileEncoder = ProfileEncoder(sequenceID: nextSequenceID, processID: processID, frequency: frequency)
            nextSequenceID += 1
        }
        profileEncoder!.appendLoss(count, time: boottime, to: &buffer)
    }

    /// The mark that closes a profile: `strobe.cpu_profile` on the process's
    /// track, naming the method that sampled, the rate, the samples written,
    /// those whose stack could not be unwound to its end, the samples lost
    /// (a ring full before the writer drained it), and why the kernel's
    /// method was not used when it was not.
    package func appendProfileSummary(
        method: String, frequency: Int, lost: UInt64, fallbackReason: String?,
        unsampledThreads: Int = 0, samplerFailure: String? = nil, boottime: UInt64
    ) {
        var annotations: [(key: String, value: TraceMark.Value)] = [
            ("method", .string(method)), ("frequency_hz", .int(Int64(frequency))),
            ("samples", .int(Int64(clamping: profileSamples))), ("lost_samples", .int(Int64(clamping: lost))),
            ("truncated_stacks", .int(Int64(clamping: truncatedProfileStacks))),
        ]
        if let fallbackReason { annotations.append(("fallback_reason", .string(fallbackReason))) }
        if unsampledThreads > 0 {
            annotations.append(("unsampled_threads", .int(Int64(unsampledThreads))))
            if let samplerFailure { annotations.append(("sampler_failure", .string(samplerFailure))) }
        }
        append(TraceMark(name: Self.profileMarkName, boottime: boottime, track: processUUID, annotations: annotations))
    }

    /// The name of the mark that closes a profile.
    package static let profileMarkName = "strobe.cpu_profile"
}
