import CStrobe
import StrobeEncoding
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The machinery behind a ``TraceSession``: the threads that record for it,
/// their chunk pool, the clock calibration and the background writer.
///
/// `@unchecked Sendable`: its state is immutable, atomic or behind a
/// `SanitizedMutex`, except `writerThread`, which `start` sets before any other
/// thread sees the session and only `stop` and the statistics read.
final class SessionWriter: @unchecked Sendable {
    /// The value `cstrobe_load_generation()` returns while the session runs.
    let generation: UInt64
    /// What the session was started with.
    let configuration: TraceConfiguration
    /// Where the threads' buffer chunks come from and go back to.
    let pool: BufferChunkPool
    /// The clock readings that turn raw timestamps into boot time.
    let calibration: ClockCalibration
    /// What each thread's recorder copies when it attaches.
    let recorderSettings: RecorderSettings
    /// The flight recorder's triggers and dumps, when it has them.
    let dumps: TriggeredDumps?
    /// The CPU profile's samplers, when the configuration asks for one.
    let profiler: CPUProfiler?
    /// The CPU samples of a session that keeps its events in rings, for its
    /// dumps and its file at stop; it holds none for a streaming session,
    /// whose samples go to the file as they are drained.
    let sampleHistory: SanitizedMutex<SampleHistory?>
    /// Samples the samplers' rings lost before the writer moved them into
    /// ``sampleHistory``.
    let keptSamplesLost = Atomic<UInt64>(0)

    var timestampBase: UInt64 { calibration.base }

    private struct Registry {
        var recorders: [ThreadBuffer] = []
        var accepting = true
        /// Counts of threads that exited and were written out.
        var retired = TraceSession.Statistics()
        /// The counts at stop, kept once the threads are detached.
        var final: TraceSession.Statistics?
    }

    private let registry = SanitizedMutex(Registry())
    /// Serializes drains, dumps and the final flush; owns the encoder.
    private let writerLock: SanitizedMutex<WriterState>
    private let wakeup = Semaphore()
    private let stopRequested = Atomic<Bool>(false)
    /// The background writer's thread, once `start` has created it.
    private(set) var writerThread: pthread_t?
    /// The writer's CPU time when it finished, in nanoseconds; set by the
    /// writer itself as its last act, before it can be joined.
    private let writerFinalCPUTime = Atomic<UInt64>(0)
    private let writerFinished = Atomic<Bool>(false)
    /// The writer thread's kernel thread id, which it stores as it starts; 0 before.
    private let writerThreadIDStorage = Atomic<Int32>(0)
    /// How many times the writer has gone to wait for its next turn; its
    /// first wait ends its start-up.
    private let writerWaits = Atomic<UInt64>(0)

    struct WriterState {
        var encoder: TraceEncoder?
        var file: TraceFile?
        var error: TraceSessionError?
        var bytesWritten: UInt64 = 0
        var lostSamples: UInt64 = 0
    }

    private static let running = SanitizedMutex<SessionWriter?>(nil)
    private static let generations = Atomic<UInt64>(0)

    /// The session recording under `generation`, if it still is.
    static func running(generation: UInt64) -> SessionWriter? {
        running.withLock { core in
            guard let core, core.generation == generation else { return nil }
            return core
        }
    }

    init(configuration: TraceConfiguration) throws(TraceSessionError) {
        self.configuration = configuration
        generation = Self.generations.wrappingAdd(1, ordering: .relaxed).newValue
        let (chunkBytes, chunks) = Self.ring(for: configuration.bufferSizePerThread)
        pool = BufferChunkPool.shared(chunkWords: chunkBytes / 8)
        var settings = RecorderSettings()
        settings.policy = configuration.whenBufferFull == .discardNewest ? .discardNewest : .overwriteOldest
        settings.maximumChunks = chunks
        switch configuration.resourceUsage {
        case .requested:
            settings.resourceUsage = .never
        case .allIntervals:
            settings.resourceUsage = .all
            settings.flags |= UInt64(CSTROBE_FLAG_RUSAGE_ALL)
        case .intervals(let names):
            settings.resourceUsage = .named(Set(names.map { Trace.Name($0).word }), names)
            settings.flags |= UInt64(CSTROBE_FLAG_RUSAGE_NAMED)
        }
        settings.signposts = try SignpostEmitter.make(for: configuration)
        if settings.signposts != nil { settings.flags |= UInt64(CSTROBE_FLAG_SIGNPOSTS) }
        if cstrobe_select_timestamp_source(configuration.allowsTimestampCounter ? 1 : 0) == 0 {
            settings.flags |= UInt64(CSTROBE_FLAG_CLOCK_TIMESTAMPS)
        }
        recorderSettings = settings
        dumps = configuration.flightRecorder.map { TriggeredDumps(settings: $0, triggers: configuration.triggers) }
        calibration = ClockCalibration()

        var state = WriterState()
        state.encoder = TraceEncoder(
            processID: Int32(truncatingIfNeeded: cstrobe_process_id()), processName: Self.processName(),
            firstIdentifier: Trace.identifiers.load(ordering: .relaxed))
        state.encoder?.metadata = SessionMetadata(configuration)
        if let capture = configuration.crashCapture { try CrashHandler.validate(capture) }
        if let path = configuration.outputPath, configuration.whenBufferFull == .discardNewest {
            do throws(TraceFileError) {
                state.file = try TraceFile(creating: path)
            } catch {
                throw TraceSessionError(error)
            }
        }
        if let profile = configuration.cpuProfile {
            profiler = try CPUProfiler(profile)
            ProcessSymbols.shared.withLock { $0.refresh() }
        } else {
            profiler = nil
        }
        if configuration.cpuProfile != nil, configuration.whenBufferFull == .overwriteOldest {
            // A dump's window, or the last half minute for a ring written at stop.
            let span = configuration.flightRecorder.map { Trace.nanoseconds($0.before) &+ Trace.nanoseconds($0.after) }
            sampleHistory = SanitizedMutex(SampleHistory(keptNanoseconds: (span ?? 30_000_000_000) &+ 1_000_000_000))
        } else {
            sampleHistory = SanitizedMutex(nil)
        }
        writerLock = SanitizedMutex(state)
        if let capture = configuration.crashCapture { try CrashHandler.install(capture, for: self) }
    }

    var bufferSize: UInt64 { UInt64(recorderSettings.maximumChunks * pool.chunkWords * 8) }

    /// The smallest chunk, in bytes.
    static let minimumChunkBytes = 4 << 10
    /// The largest chunk, in bytes.
    static let maximumChunkBytes = 64 << 10

    /// The chunk size and chunk count that hold `bufferSize` bytes per thread.
    ///
    /// A chunk is the largest power of two from 4 KiB to 64 KiB that is at
    /// most an eighth of the size, so that sizes share a few pools; the size
    /// is rounded up to whole chunks, and a thread holds at least two (its
    /// current chunk and one sealed one), so never less than 8 KiB.
    static func ring(for bufferSize: Int) -> (chunkBytes: Int, chunks: Int) {
        var chunkBytes = minimumChunkBytes
        while chunkBytes < maximumChunkBytes, chunkBytes * 2 <= bufferSize / 8 { chunkBytes *= 2 }
        let chunks = max(2, bufferSize / chunkBytes + (bufferSize % chunkBytes == 0 ? 0 : 1))
        return (chunkBytes, chunks)
    }

    // MARK: - Lifecycle

    func activate() {
        pool.prefill(2)
        Self.running.withLock { $0 = self }
        cstrobe_store_generation(generation)
        startWriterThread()
    }

    /// Stops recording, writes everything recorded and closes the file.
    func deactivate() throws(TraceSessionError) {
        if configuration.processSamplingInterval > .zero { ProcessSampler.sample() }
        cstrobe_store_generation(0)
        Self.running.withLock { if $0 === self { $0 = nil } }
        registry.withLock { $0.accepting = false }
        waitForWritesInFlight()
        stopRequested.store(true, ordering: .releasing)
        wakeup.signal()
        if let thread = writerThread { pthread_join(thread, nil) }
        profiler?.stop()
        keepSamples()
        let recorders = registry.withLock { $0.recorders }
        // A dump under way first: it gives the rings back what it took, so
        // the stop's snapshot holds them.
        dumps?.finish(core: self, recorders: recorders)
        let outcome: TraceSessionError? = writerLock.withLock { state in
            if configuration.whenBufferFull == .discardNewest {
                drain(state: &state, recorders: recorders)
                finishProfile(state: &state)
                finishFile(state: &state)
            } else if let path = configuration.outputPath {
                do throws(TraceSessionError) {
                    try writeSnapshot(to: path, recorders: recorders)
                } catch {
                    state.error = state.error ?? error
                }
            }
            return state.error
        }
        let final = statistics()
        registry.withLock { $0.final = final }
        for recorder in recorders { recorder.detach(from: self) }
        if configuration.crashCapture != nil { CrashHandler.uninstall() }
        pool.trim()
        if let outcome { throw outcome }
    }

    /// Waits until every call that saw the session running has published
    /// its record.
    ///
    /// Each call marks its thread as writing before it checks the session's
    /// generation (`cstrobe_enter_write`). The generation is 0 by now; the
    /// process-wide barrier makes every mark set before a thread read a
    /// nonzero generation visible here, so the wait covers exactly the
    /// calls in flight, however long they are preempted, and costs nothing
    /// when none is.
    private func waitForWritesInFlight() {
        cstrobe_process_barrier()
        let recorders = registry.withLock { $0.recorders }
        for recorder in recorders {
            var spins = 0
            while recorder.isWriting {
                spins += 1
                if spins < 1000 { sched_yield() } else { usleep(50) }
            }
        }
    }

    /// Adds a thread to the session; called under the recorder's lock.
    func register(_ recorder: ThreadBuffer, state: inout ThreadBuffer.Shared) -> Bool {
        registry.withLock { registry in
            guard registry.accepting else { return false }
            registry.recorders.append(recorder)
            state.session = self
            profiler?.threadRegistered()
            return true
        }
    }

    /// Wakes the background writer before its next flush.
    func wakeWriter() {
        wakeup.signal()
    }

    /// A thread sealed a chunk; wake the writer when memory runs short.
    func chunkSealed(by recorder: ThreadBuffer) {
        guard recorderSettings.policy == .discardNewest else { return }
        let held = recorder.shared.withLock { $0.heldChunks }
        if held * 4 >= recorderSettings.maximumChunks { wakeup.signal() }
    }

    // MARK: - The background writer

    private func startWriterThread() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                // All of the writer's work is Strobe's own, uncounted by a
                // perf test's exact counts.
                cstrobe_own_work_begin()
                let core = Unmanaged<SessionWriter>.fromOpaque(context!).takeRetainedValue()
                core.writerThreadIDStorage.store(Int32(truncatingIfNeeded: cstrobe_thread_id()), ordering: .releasing)
                core.runWriter()
                core.writerFinalCPUTime.store(cstrobe_thread_cpu_ns(pthread_self()), ordering: .relaxed)
                core.writerFinished.store(true, ordering: .releasing)
                return nil
            }, context)
        if result == 0 {
            writerThread = thread
        } else {
            Unmanaged<SessionWriter>.fromOpaque(context).release()
        }
    }

    /// Whether the writer has finished starting up and gone to wait for its
    /// first turn (it may not have blocked yet).
    var writerHasWaited: Bool { writerWaits.load(ordering: .acquiring) > 0 }

    /// The writer thread's kernel thread id, once it has started.
    var writerThreadID: Int32? {
        let id = writerThreadIDStorage.load(ordering: .acquiring)
        return id == 0 ? nil : id
    }

    /// CPU time the background writer (which also samples the process) has
    /// used so far, in nanoseconds. Callers hold the session lifecycle lock,
    /// so the writer is either alive or has recorded its final figure.
    var writerCPUTime: UInt64 {
        if writerFinished.load(ordering: .acquiring) { return writerFinalCPUTime.load(ordering: .relaxed) }
        guard let writerThread else { return 0 }
        return cstrobe_thread_cpu_ns(writerThread)
    }

    private func runWriter() {
        Trace.setThreadName("strobe.writer")
        // The writer yields to the threads it serves.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(cstrobe_thread_id()), 10)
        let flushInterval = max(configuration.flushInterval.secondsValue, 0.001)
        let sampleInterval = max(configuration.processSamplingInterval.secondsValue, 0)
        var nextSample = 0.0
        var elapsed = 0.0
        let tick = sampleInterval > 0 ? min(flushInterval, sampleInterval) : flushInterval
        while !stopRequested.load(ordering: .acquiring) {
            if sampleInterval > 0, elapsed >= nextSample {
                ProcessSampler.sample()
                nextSample = elapsed + sampleInterval
            }
            writerWaits.wrappingAdd(1, ordering: .releasing)
            wakeup.wait(seconds: tick)
            elapsed += tick
            if stopRequested.load(ordering: .acquiring) { break }
            calibration.mark()
            if configuration.whenBufferFull == .discardNewest {
                let recorders = registry.withLock { $0.recorders }
                writerLock.withLock { state in drain(state: &state, recorders: recorders) }
            } else {
                keepSamples()
                if let dumps { dumps.writerTurn(core: self, recorders: registry.withLock { $0.recorders }) }
            }
        }
    }

    /// Encodes everything the threads recorded since the last drain and
    /// appends it to the file.
    private func drain(state: inout WriterState, recorders: [ThreadBuffer]) {
        guard let encoder = state.encoder else { return }
        var harvests: [(ThreadBuffer, ThreadBuffer.Harvest)] = []
        harvests.reserveCapacity(recorders.count)
        for recorder in recorders { harvests.append((recorder, recorder.harvest(keep: false))) }
        // Read the clocks after taking the records, so every record taken is
        // covered by the calibration.
        calibration.mark()
        encoder.updateCalibration(calibration.snapshot())
        let now = TimestampConverter(points: calibration.snapshot()).lastBoottime
        var retired: [ThreadBuffer] = []
        for (recorder, harvest) in harvests {
            encoder.encode(harvest, of: recorder, now: now)
            pool.give(harvest.chunks)
            if harvest.exited, harvest.current == nil {
                retired.append(recorder)
                encoder.retire(recorder)
            }
        }
        drainSamples(state: &state)
        flush(state: &state)
        if !retired.isEmpty {
            registry.withLock { registry in
                registry.recorders.removeAll { recorder in retired.contains { $0 === recorder } }
                for recorder in retired { Self.add(recorder, to: &registry.retired) }
            }
            for recorder in retired { recorder.detach(from: self) }
        }
    }

    /// Writes the CPU samples the rings hold.
    private func drainSamples(state: inout WriterState) {
        writeSamples(state: &state) { profiler, body in profiler.drain(body) }
    }

    /// Writes the samples `take` hands over (draining the rings, or closing
    /// them) and counts the ones it reports lost.
    private func writeSamples(
        state: inout WriterState,
        _ take: (CPUProfiler, (UnsafeBufferPointer<UInt64>) -> Void) -> UInt64
    ) {
        guard let profiler, let encoder = state.encoder else { return }
        let lost = ProcessSymbols.shared.withLock { symbols in
            take(profiler) {
                encoder.appendSamples(
                    $0, frequency: profiler.profile.frequency, resolve: symbols.resolve,
                    rule: symbols.unwindRule)
            }
        }
        encoder.appendSampleLoss(lost, frequency: profiler.profile.frequency, boottime: cstrobe_boottime_ns())
        state.lostSamples += lost
    }

    /// Writes the last CPU samples and the profile's closing mark.
    private func finishProfile(state: inout WriterState) {
        writeSamples(state: &state) { profiler, body in profiler.finish(body) }
        guard let profiler, let encoder = state.encoder else { return }
        let unsampled = profiler.unsampled
        encoder.appendProfileSummary(
            method: profiler.method.rawValue, frequency: profiler.profile.frequency, lost: state.lostSamples,
            fallbackReason: profiler.fallbackReason, unsampledThreads: unsampled.threads,
            samplerFailure: unsampled.firstFailure, boottime: cstrobe_boottime_ns())
    }

    private func flush(state: inout WriterState) {
        guard let encoder = state.encoder else { return }
        defer { encoder.buffer.removeAll() }
        guard let file = state.file, state.error == nil else { return }
        do throws(TraceFileError) {
            try encoder.buffer.withBytes { bytes throws(TraceFileError) in try file.append(bytes) }
            state.bytesWritten += UInt64(encoder.buffer.count)
        } catch {
            state.error = TraceSessionError(error)
        }
    }

    private func finishFile(state: inout WriterState) {
        guard let encoder = state.encoder else { return }
        encoder.finish(bufferSize: bufferSize)
        flush(state: &state)
        if let file = state.file {
            do throws(TraceFileError) {
                try file.close()
            } catch {
                state.error = state.error ?? TraceSessionError(error)
            }
        }
        state.file = nil
    }

    // MARK: - Flight-recorder snapshots

    /// Writes what the threads' rings hold now to a new file at `path`.
    func writeSnapshot(to path: String, recorders: [ThreadBuffer]? = nil) throws(TraceSessionError) {
        let recorders = recorders ?? registry.withLock { $0.recorders }
        let file: TraceFile
        do throws(TraceFileError) {
            file = try TraceFile(creating: path)
        } catch {
            throw TraceSessionError(error)
        }
        let harvests = recorders.map { ($0, $0.harvest(keep: true)) }
        calibration.mark()
        let points = calibration.snapshot()
        let encoder = TraceEncoder(
            processID: Int32(truncatingIfNeeded: cstrobe_process_id()), processName: Self.processName())
        encoder.metadata = SessionMetadata(configuration)
        encoder.updateCalibration(points)
        encoder.noteAsyncBegins(in: harvests.map(\.1))
        let now = TimestampConverter(points: points).lastBoottime
        for (recorder, harvest) in harvests {
            encoder.encode(harvest, of: recorder, now: now)
        }
        appendKeptSamples(to: encoder, from: 0, to: .max)
        encoder.finish(bufferSize: bufferSize)
        do throws(TraceFileError) {
            try encoder.buffer.withBytes { bytes throws(TraceFileError) in try file.append(bytes) }
            try file.close()
        } catch {
            throw TraceSessionError(error)
        }
    }

    /// How many threads the session holds: those recording and those that
    /// exited and wait for a drain to write them out and drop them.
    var threadsHeld: Int { registry.withLock { $0.recorders.count } }

    /// Statistics of the session so far.
    func statistics() -> TraceSession.Statistics {
        let (recorders, retired, final) = registry.withLock { ($0.recorders, $0.retired, $0.final) }
        if let final { return final }
        var statistics = retired
        for recorder in recorders { Self.add(recorder, to: &statistics) }
        writerLock.withLock { state in
            statistics.bytesWritten = state.bytesWritten
            statistics.cpuSamples = state.encoder?.profileSamples ?? 0
            statistics.lostCPUSamples = state.lostSamples
        }
        dumps?.add(to: &statistics)
        return statistics
    }

    private static func add(_ recorder: ThreadBuffer, to statistics: inout TraceSession.Statistics) {
        let (overwritten, unmatched) = recorder.shared.withLock { ($0.overwritten, $0.unmatchedEnds) }
        statistics.discardedEvents += cstrobe_events(recorder.cursor, CSTROBE_EVENT_DISCARDED)
        statistics.overwrittenEvents += overwritten
        statistics.unmatchedEnds += unmatched
        statistics.recordedEvents += cstrobe_events(recorder.cursor, CSTROBE_EVENT_RECORDED)
        statistics.threads += 1
    }

    static func processName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard cstrobe_process_name(&buffer, buffer.count) == 0 else { return "process" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
