/// How a ``TraceSession`` records.
///
/// ```swift
/// var configuration = TraceConfiguration(outputPath: "/tmp/app.pftrace")
/// configuration.resourceUsage = .intervals(named: ["lens apply"])
/// configuration.samplingProbability = 0.01   // one session in a hundred
/// let session = try TraceSession.start(configuration)
/// ```
public struct TraceConfiguration: Sendable {
    /// What a thread does when its buffer is full.
    public enum FullBufferPolicy: Sendable, Hashable {
        /// Keep what is recorded and discard new events until the background
        /// writer frees space; every discarded event is counted in the trace.
        case discardNewest
        /// Overwrite the oldest events, keeping the most recent ones: a flight
        /// recorder. Nothing is written until ``TraceSession/dump(to:)`` or
        /// ``TraceSession/stop()``; overwritten events are counted in the trace.
        case overwriteOldest
    }

    /// Which intervals capture the thread's `getrusage` counters at both ends.
    public enum ResourceUsagePolicy: Sendable, Hashable {
        /// Only intervals that ask with ``Trace/Capture/resourceUsage``.
        case requested
        /// Every interval on every thread (about 700 ns per interval).
        case allIntervals
        /// Intervals with these names, plus those that ask.
        case intervals(named: Set<String>)
    }

    /// The trace file to write; `nil` records to memory only, which suits a
    /// flight recorder dumped on demand.
    public var outputPath: String?

    /// The most memory one thread may hold in recorded events that are not yet
    /// written out, in bytes. Memory is taken in chunks as needed and reused
    /// once written. With ``FullBufferPolicy/overwriteOldest`` this is the size
    /// of each thread's ring, which never grows past it. Default: 32 MiB.
    ///
    /// A chunk is the largest power of two from 4 KiB to 64 KiB that is at
    /// most an eighth of this size. The size is rounded up to whole chunks,
    /// and a thread holds at least two chunks, so the minimum is 8 KiB. With
    /// ``FullBufferPolicy/discardNewest``, the end of an interval whose begin
    /// was kept is always kept, even when that takes memory beyond this size
    /// until the background writer catches up.
    public var bufferSizePerThread: Int = 32 << 20

    /// What a thread does when its buffer is full. Default: discard newest.
    public var whenBufferFull: FullBufferPolicy = .discardNewest

    /// Which intervals capture rusage. Default: those that ask.
    public var resourceUsage: ResourceUsagePolicy = .requested

    /// The chance, from 0 to 1, that ``TraceSession/start(_:)`` records at all.
    /// Decided once per session, for sampling a fleet in production.
    /// Default: 1.
    public var samplingProbability: Double = 1

    /// Where the trace comes from (app, version, build, device, OS and any
    /// other dimension), written into every trace, flight-recorder dump and
    /// crash file with ``samplingProbability``. Default: empty.
    public var metadata = TraceMetadata()

    /// How often the background writer appends recorded events to the file.
    /// It also wakes early when a thread fills a quarter of its buffer.
    /// Intervals under 1 ms count as 1 ms. Default: 100 ms.
    public var flushInterval: Duration = .milliseconds(100)

    /// How often process-wide counters (CPU time, peak resident memory, page
    /// faults) are sampled; `.zero` turns the sampler off. Default: 100 ms.
    public var processSamplingInterval: Duration = .milliseconds(100)

    /// Whether timestamps may come from the CPU's time-stamp counter where it
    /// is invariant. Default: true.
    package var allowsTimestampCounter = true

    /// Where events are also announced for system profilers: USDT probes,
    /// the ftrace marker, `os_signpost`. Default: none, at no cost.
    public var signposts: Signposts = []

    /// The ftrace marker file that ``Signposts/ftraceMarker`` writes to; nil
    /// picks tracefs's `trace_marker` (under `/sys/kernel/tracing` or
    /// `/sys/kernel/debug/tracing`). Any writable file works, which suits
    /// tests.
    public var ftraceMarkerPath: String?

    /// The categories recorded (see ``Trace/Category``): names or patterns
    /// where `*` matches any run of characters; a leading `-` turns what it
    /// matches off. A category is recorded when a plain pattern matches it
    /// and no `-` pattern does; events without a category are always
    /// recorded. Change them while the session runs with
    /// ``TraceSession/setCategories(_:)``. Default: `["*"]`, every category.
    ///
    /// ```swift
    /// configuration.categories = ["media", "net.*", "-net.dns"]
    /// ```
    public var categories: [String] = ["*"]

    /// Where the session writes its buffers if the process dies of a fatal
    /// signal (see ``CrashCapture``). Default: nil, no handler installed.
    public var crashCapture: CrashCapture?

    /// Where a flight recorder dumps itself when one of ``triggers`` fires
    /// or the app calls ``TraceSession/trigger(_:)``; nil for no dumps.
    /// Needs ``whenBufferFull`` set to ``FullBufferPolicy/overwriteOldest``.
    /// Default: nil.
    public var flightRecorder: FlightRecorder?

    /// The conditions that make the ``flightRecorder`` dump itself, such as
    /// `.interval("frame", longerThan: .milliseconds(33))`. Default: none.
    public var triggers: [Trigger] = []

    /// Samples the call stacks of the process's threads into the trace (see
    /// ``CPUProfile``); nil samples none. Needs ``outputPath`` and
    /// ``FullBufferPolicy/discardNewest``. Default: nil.
    public var cpuProfile: CPUProfile?

    /// A configuration that writes to `outputPath`.
    public init(outputPath: String? = nil) {
        self.outputPath = outputPath
    }

    /// The configuration the environment asks for, or nil when it asks for
    /// none: `STROBE_TRACE_OUTPUT`, `STROBE_CRASH_CAPTURE` and every
    /// `STROBE_FLIGHT_RECORDER_` variable are unset or empty. The variables
    /// are those ``TraceSession/startFromEnvironment()`` reads.
    package static func fromEnvironment(
        _ environment: [String: String]
    ) throws(TraceSessionError) -> TraceConfiguration? {
        let path = environment[TraceSession.outputEnvironmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        let asked =
            !(environment[crashCaptureEnvironmentVariable] ?? "").isEmpty
            || environment.contains { $0.key.hasPrefix("STROBE_FLIGHT_RECORDER_") && !$0.value.isEmpty }
        guard path != nil || asked else { return nil }
        var configuration = TraceConfiguration(outputPath: path)
        try configuration.applyFlightRecorderAndCrashCapture(environment)
        if let names = environment["STROBE_TRACE_RUSAGE"], !names.isEmpty {
            configuration.resourceUsage =
                names == "*"
                ? .allIntervals
                : .intervals(named: Set(names.split(separator: ",").map(String.init)))
        }
        if let list = environment[Self.signpostsEnvironmentVariable], !list.isEmpty {
            guard let signposts = Signposts(list: list) else {
                throw .invalidConfiguration(
                    "\(Self.signpostsEnvironmentVariable)=\(list): expected a comma-separated list of probes, "
                        + "ftrace-marker, os-signposts or all"
                )
            }
            configuration.signposts = signposts
        }
        if let list = environment[Self.categoriesEnvironmentVariable] {
            let patterns = list.split(separator: ",", omittingEmptySubsequences: false).map {
                String($0.filter { !$0.isWhitespace })
            }
            if let problem = CategorySelection.problem(with: patterns) {
                throw .invalidConfiguration("\(Self.categoriesEnvironmentVariable)=\(list): \(problem)")
            }
            configuration.categories = patterns
        }
        if let list = environment[TraceMetadata.environmentVariable], !list.isEmpty {
            configuration.metadata = try TraceMetadata(environmentValue: list)
        }
        if let profile = environment[CPUProfile.environmentVariable], !profile.isEmpty {
            configuration.cpuProfile = try CPUProfile.fromEnvironment(profile)
        }
        return configuration
    }

    /// The environment variable that lists the signposts a session started by
    /// ``TraceSession/startFromEnvironment()`` turns on.
    package static let signpostsEnvironmentVariable = "STROBE_TRACE_SIGNPOSTS"

    /// The environment variable that lists the category patterns a session
    /// started by ``TraceSession/startFromEnvironment()`` records.
    package static let categoriesEnvironmentVariable = "STROBE_TRACE_CATEGORIES"
}

extension Duration {
    /// The duration in seconds, as the writer's timed waits take it.
    var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
