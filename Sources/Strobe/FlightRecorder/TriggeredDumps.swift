import CStrobe
import StrobeEncoding
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A flight recorder's dumps: which triggers are dumped, the window around
/// each, and the files.
///
/// A trigger is dumped when no dump is under way and the last dumped trigger
/// is at least ``TraceConfiguration/FlightRecorder/minimumSpacing`` older;
/// any other is counted. A dump then runs on the background writer, never on
/// a recording thread:
///
/// 1. At once, it takes each thread's ring: the sealed chunks change hands
///    (no copy), the part of the current chunk written so far is copied, and
///    the thread goes on recording into fresh chunks. The ring therefore
///    cannot overwrite the time before the trigger while the session records
///    the time after it.
/// 2. Once ``TraceConfiguration/FlightRecorder/after`` has passed since the
///    trigger's own time, it takes the rings again, from where it stopped.
/// 3. It leaves out chunks that end more than
///    ``TraceConfiguration/FlightRecorder/before`` before the trigger, encodes
///    the rest with the trigger's mark into a new file (written under a
///    temporary name, then renamed, so the directory only ever holds whole
///    dumps), and deletes the oldest dumps beyond the directory's caps.
/// 4. It gives the chunks it took back to each thread's ring, in front of
///    what the thread recorded since, as many as the ring has room for; the
///    rest go to the pool and their events count as overwritten, as the
///    ring would have overwritten them. A later dump, a snapshot or the
///    stop finds what the ring would have held without the dump.
///
/// Recording threads wait for this only when they switch chunks while the
/// writer holds their lock, which it does for one chunk's copy at most.
///
/// `@unchecked Sendable`: the decisions, which any thread may ask for, are
/// behind a `SanitizedMutex`; the capture, the watch and the converter are touched
/// by the background writer alone, and at stop by the stopping thread once
/// the writer has been joined.
final class TriggeredDumps: @unchecked Sendable {
    let settings: TraceConfiguration.FlightRecorder
    /// Touched by the background writer only (and by the stopping thread
    /// once the writer has been joined).
    let watch: TriggerWatch
    private var capture: Capture?
    private var converter = TimestampConverter(points: [])

    private struct Decisions {
        /// A trigger accepted and a dump not yet written.
        var busy = false
        var pending: FiredTrigger?
        var lastDumped: UInt64?
        var suppressed: UInt64 = 0
        /// Triggers suppressed since the last accepted one.
        var suppressedSinceAccepted: UInt64 = 0
        var written: UInt64 = 0
        var failed: UInt64 = 0
        var lastError: TraceSessionError?
    }

    private let decisions = SanitizedMutex(Decisions())

    private struct Capture {
        var trigger: FiredTrigger
        var windowEnd: UInt64
        /// When the rings were last taken: everything recorded before it is
        /// in the dump.
        var recordedUntil: UInt64 = 0
        /// Triggers that fired while the dump recorded, counted, not dumped.
        var suppressed: UInt64 = 0
        var threads: [UInt64: ThreadTake] = [:]
        /// Chunks that go back to the pool once the dump is written.
        var poolChunks: [BufferChunk] = []
    }

    private struct ThreadTake {
        var recorder: ThreadBuffer
        var before: [TakenPiece] = []
        var after: [TakenPiece] = []
        /// The sealed chunks taken from the ring, oldest first: once the
        /// dump is written they go back to it, as many as it has room for.
        var ringChunks: [BufferChunk] = []
        var boundary: TakenPiece.Origin?
        /// Events before `boundary` in its chunk, all taken already; if the
        /// ring overwrites that chunk, it counts them as overwritten.
        var boundaryEvents: UInt64 = 0
        var counts = Counts()
    }

    struct Counts {
        var name = ""
        var recorded: UInt64 = 0
        var discarded: UInt64 = 0
        var overwritten: UInt64 = 0
        var unmatchedEnds: UInt64 = 0
        var exited = false
    }

    init(settings: TraceConfiguration.FlightRecorder, triggers: [TraceConfiguration.Trigger]) {
        self.settings = settings
        watch = TriggerWatch(triggers: triggers)
    }

    // MARK: Deciding

    /// Accepts `trigger` for a dump, or counts it; callable from any thread.
    func offer(_ trigger: FiredTrigger) -> Bool {
        let spacing = Trace.nanoseconds(settings.minimumSpacing)
        return decisions.withLock { state in
            let tooSoon = state.lastDumped.map { last in
                (trigger.boottime >= last ? trigger.boottime - last : last - trigger.boottime) < spacing
            }
            if state.busy || tooSoon == true {
                state.suppressed += 1
                state.suppressedSinceAccepted += 1
                return false
            }
            state.suppressedSinceAccepted = 0
            state.busy = true
            state.pending = trigger
            state.lastDumped = trigger.boottime
            return true
        }
    }

    /// Adds the dump counts to `statistics`.
    func add(to statistics: inout TraceSession.Statistics) {
        decisions.withLock { state in
            statistics.suppressedTriggers = state.suppressed
            statistics.triggeredDumps = state.written
            statistics.failedDumps = state.failed
            statistics.dumpsInProgress = state.busy ? 1 : 0
        }
    }

    /// Why the last dump failed, if it did.
    var lastError: TraceSessionError? { decisions.withLock { $0.lastError } }

    // MARK: The writer's work

    /// One turn of the background writer: looks for triggers, starts a
    /// capture for an accepted one, and writes the dump whose window has
    /// passed.
    func writerTurn(core: SessionWriter, recorders: [ThreadBuffer]) {
        converter.update(points: core.calibration.snapshot())
        scan(core: core, recorders: recorders)
        if capture == nil, let trigger = takePending() {
            var capture = Capture(
                trigger: trigger, windowEnd: trigger.boottime &+ Trace.nanoseconds(settings.after))
            take(recorders, into: &capture, before: true)
            self.capture = capture
        }
        if let capture, cstrobe_boottime_ns() >= capture.windowEnd {
            finishCapture(core: core, recorders: recorders)
        }
    }

    /// At stop, after the writer has been joined: writes a dump whose window
    /// is still open with what it has, and one accepted but not started.
    func finish(core: SessionWriter, recorders: [ThreadBuffer]) {
        core.calibration.mark()
        converter.update(points: core.calibration.snapshot())
        // What was recorded since the writer's last turn is looked at too:
        // a trigger in the last moments before the stop is dumped, with
        // the window the stop leaves.
        scan(core: core, recorders: recorders)
        if capture == nil, let trigger = takePending() {
            var capture = Capture(trigger: trigger, windowEnd: trigger.boottime)
            take(recorders, into: &capture, before: true)
            self.capture = capture
        }
        if capture != nil { finishCapture(core: core, recorders: recorders) }
    }

    /// Looks through the rings for triggers, and offers those that fired.
    private func scan(core: SessionWriter, recorders: [ThreadBuffer]) {
        guard watch.isNeeded else { return }
        watch.beginTurn()
        for recorder in recorders {
            for fired in watch.scan(
                recorder, ringChunks: core.recorderSettings.maximumChunks, converter: &converter)
            { _ = offer(fired) }
        }
    }

    /// The accepted trigger whose capture has not started, taken.
    private func takePending() -> FiredTrigger? {
        decisions.withLock { state in
            defer { state.pending = nil }
            return state.pending
        }
    }

    private func finishCapture(core: SessionWriter, recorders: [ThreadBuffer]) {
        guard var capture else { return }
        self.capture = nil
        capture.recordedUntil = cstrobe_boottime_ns()
        take(recorders, into: &capture, before: false)
        capture.suppressed = decisions.withLock { $0.suppressedSinceAccepted }
        let outcome: Result<Void, TraceSessionError>
        do throws(TraceSessionError) {
            try write(capture, core: core)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        // The ring gets back what the dump took, so a later dump, a snapshot
        // or the stop finds what it would have held without the dump.
        var unused = capture.poolChunks
        for thread in capture.threads.values {
            unused += thread.recorder.restoreRing(thread.ringChunks, maximumChunks: core.recorderSettings.maximumChunks)
        }
        core.pool.give(unused)
        decisions.withLock { state in
            state.busy = false
            switch outcome {
            case .success: state.written += 1
            case .failure(let error):
                state.failed += 1
                state.lastError = error
            }
        }
    }

    // MARK: Taking the rings

    private func take(_ recorders: [ThreadBuffer], into capture: inout Capture, before: Bool) {
        for recorder in recorders {
            var thread = capture.threads[recorder.serial] ?? ThreadTake(recorder: recorder)
            let (pieces, boundary, returned, counts, boundarySeen) = Self.take(recorder, after: thread.boundary)
            if before { thread.before += pieces } else { thread.after += pieces }
            thread.counts = counts
            if !boundarySeen {
                // The ring overwrote the chunk holding the boundary and
                // counted all its events, though those before the boundary
                // are in the dump.
                thread.counts.overwritten -= min(thread.counts.overwritten, thread.boundaryEvents)
            }
            let previous = thread.boundaryEvents
            thread.boundaryEvents = 0
            if let boundary {
                if let last = pieces.last, last.origin.chunk === boundary.chunk,
                    last.origin.firstEvent == boundary.firstEvent
                {
                    thread.boundaryEvents = Self.events(in: last) &+ (last.origin.offset > 0 ? previous : 0)
                } else if let old = thread.boundary, old.chunk === boundary.chunk, old.firstEvent == boundary.firstEvent
                {
                    thread.boundaryEvents = previous
                }
            }
            thread.boundary = boundary
            thread.ringChunks += returned
            capture.threads[recorder.serial] = thread
            if watch.isNeeded {
                for fired in watch.catchUp(recorder, pieces: pieces, boundary: boundary, converter: &converter) {
                    _ = offer(fired)
                }
            }
        }
    }

    /// Takes what `recorder`'s ring holds after `boundary` (all of it when
    /// nil): its sealed chunks change hands, the written part of its current
    /// chunk is copied. Returns the pieces in ring order, where the ring now
    /// begins, the chunks to give back to the pool, and the thread's counts.
    static func take(
        _ recorder: ThreadBuffer, after boundary: TakenPiece.Origin?
    ) -> ([TakenPiece], TakenPiece.Origin?, [BufferChunk], Counts, boundarySeen: Bool) {
        recorder.shared.withLock { state in
            var boundarySeen = boundary == nil
            var pieces: [TakenPiece] = []
            var returned: [BufferChunk] = []
            let sealed = state.sealed
            state.sealed = []
            state.heldChunks -= sealed.count
            if !sealed.isEmpty { recorder.takes.wrappingAdd(1, ordering: .releasing) }
            // A crash while the dump records loses the chunks taken here,
            // not the rest: the crash handler's view follows the ring.
            recorder.mirrorForCrash(&state)
            for chunk in sealed {
                returned.append(chunk)
                var start = 0
                if let boundary, boundary.chunk === chunk, boundary.firstEvent == chunk.firstEvent {
                    start = boundary.offset
                    boundarySeen = true
                }
                let words = chunk.usedWords - start
                guard words > 0 else { continue }
                let origin = TakenPiece.Origin(chunk: chunk, firstEvent: chunk.firstEvent, offset: start)
                if start == 0 {
                    pieces.append(TakenPiece(chunk: chunk, words: words, origin: origin, fromPool: true))
                } else {
                    pieces.append(
                        TakenPiece(
                            chunk: chunk.copy(from: start, words: words), words: words, origin: origin, fromPool: false)
                    )
                }
            }
            var next: TakenPiece.Origin?
            if let current = state.current, let published = cstrobe_read_published(recorder.cursor),
                published >= current.base, published <= current.limit
            {
                let end = published - current.base
                var start = 0
                if let boundary, boundary.chunk === current, boundary.firstEvent == current.firstEvent {
                    start = min(boundary.offset, end)
                    boundarySeen = true
                }
                if end > start {
                    let origin = TakenPiece.Origin(chunk: current, firstEvent: current.firstEvent, offset: start)
                    pieces.append(
                        TakenPiece(
                            chunk: current.copy(from: start, words: end - start), words: end - start, origin: origin,
                            fromPool: false))
                }
                next = TakenPiece.Origin(chunk: current, firstEvent: current.firstEvent, offset: end)
            } else if let last = sealed.last {
                // An exited thread: the ring now begins after its last
                // sealed chunk, which comes back to the ring after the dump,
                // so that the trigger watch does not read it again.
                next = TakenPiece.Origin(chunk: last, firstEvent: last.firstEvent, offset: last.usedWords)
            } else if state.current == nil, boundary != nil {
                // An exited thread whose chunks this capture already holds:
                // where the ring begins has not moved.
                next = boundary
                boundarySeen = true
            }
            let counts = Counts(
                name: state.name, recorded: cstrobe_events(recorder.cursor, CSTROBE_EVENT_RECORDED),
                discarded: cstrobe_events(recorder.cursor, CSTROBE_EVENT_DISCARDED),
                overwritten: state.overwritten, unmatchedEnds: state.unmatchedEnds, exited: state.exited)
            return (pieces, next, returned, counts, boundarySeen)
        }
    }

    // MARK: Writing

    private func write(_ capture: Capture, core: SessionWriter) throws(TraceSessionError) {
        core.calibration.mark()
        let points = core.calibration.snapshot()
        var converter = TimestampConverter(points: points)
        let encoder = TraceEncoder(
            processID: Int32(truncatingIfNeeded: cstrobe_process_id()), processName: SessionWriter.processName())
        encoder.metadata = SessionMetadata(core.configuration)
        encoder.updateCalibration(points)
        let earliest = capture.trigger.boottime &- min(capture.trigger.boottime, Trace.nanoseconds(settings.before))
        var harvests: [(ThreadBuffer, ThreadBuffer.Harvest)] = []
        for thread in capture.threads.values.sorted(by: { $0.recorder.serial < $1.recorder.serial }) {
            // Leave out whole chunks that end before the window.
            var before = thread.before[...]
            while let first = before.first, let last = Self.lastTime(first), converter.boottime(raw: last) < earliest {
                before = before.dropFirst()
            }
            let chunks = (before + thread.after).map(\.chunk)
            guard !chunks.isEmpty else { continue }
            let counts = thread.counts
            harvests.append(
                (
                    thread.recorder,
                    ThreadBuffer.Harvest(
                        chunks: chunks, current: nil, currentEnd: 0, name: counts.name, recorded: counts.recorded,
                        discarded: counts.discarded, overwritten: counts.overwritten,
                        unmatchedEnds: counts.unmatchedEnds,
                        exited: counts.exited)
                ))
        }
        encoder.noteAsyncBegins(in: harvests.map(\.1))
        let now = converter.lastBoottime
        for (recorder, harvest) in harvests { encoder.encode(harvest, of: recorder, now: now) }
        core.appendKeptSamples(to: encoder, from: earliest, to: capture.windowEnd)
        encoder.append(
            TriggerMark.mark(
                capture.trigger, track: encoder.markTrack(thread: capture.trigger.threadID),
                extra: [
                    ("before_ns", .int(Int64(clamping: Trace.nanoseconds(settings.before)))),
                    ("after_ns", .int(Int64(clamping: Trace.nanoseconds(settings.after)))),
                    ("recorded_until_ns", .int(Int64(clamping: capture.recordedUntil))),
                    ("suppressed_triggers", .int(Int64(clamping: capture.suppressed))),
                ]))
        encoder.finish(bufferSize: core.bufferSize)

        let realtime = Self.realtime(ofBoottime: capture.trigger.boottime)
        let path = TriggerDirectory.freshPath(
            directory: settings.directory, realtime: realtime, reason: capture.trigger.reason)
        let partial = path + ".partial"
        do throws(TraceFileError) {
            let file = try TraceFile(creating: partial)
            do throws(TraceFileError) {
                try encoder.buffer.withBytes { bytes throws(TraceFileError) in try file.append(bytes) }
                try file.close()
            } catch {
                unlink(partial)
                throw error
            }
        } catch {
            throw TraceSessionError(error)
        }
        guard rename(partial, path) == 0 else {
            let failure = errno
            unlink(partial)
            throw .writeFailed(path: path, errno: failure)
        }
        TriggerDirectory.enforceCaps(
            directory: settings.directory, maximumFiles: settings.maximumFiles, maximumBytes: settings.maximumBytes,
            keeping: path)
    }

    /// The events in `piece`: its records less category prefixes and
    /// discard markers, which are parts of events or no events.
    private static func events(in piece: TakenPiece) -> UInt64 {
        var index = 0
        var count: UInt64 = 0
        while index < piece.words {
            let record = UnsafePointer(piece.chunk.base + index)
            guard let length = RecordLayout.length(of: record, available: piece.words - index) else { break }
            let event = RecordLayout.event(of: RecordLayout.kind(of: record[0]))
            if event != RecordLayout.categoryPrefix, event != RecordLayout.dropMarker { count += 1 }
            index += length
        }
        return count
    }

    /// The raw time of the last timed record in `piece`, or nil.
    private static func lastTime(_ piece: TakenPiece) -> UInt64? {
        var index = 0
        var last: UInt64?
        while index < piece.words {
            let record = UnsafePointer(piece.chunk.base + index)
            guard let length = RecordLayout.length(of: record, available: piece.words - index) else { break }
            if RecordLayout.event(of: RecordLayout.kind(of: record[0])) != RecordLayout.categoryPrefix {
                last = RecordLayout.timestamp(of: record[0])
            }
            index += length
        }
        return last
    }

    /// CLOCK_REALTIME nanoseconds at the CLOCK_BOOTTIME time `boottime`.
    static func realtime(ofBoottime boottime: UInt64) -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let realtime = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
        let bootNow = cstrobe_boottime_ns()
        return realtime &- (bootNow &- min(boottime, bootNow))
    }
}

extension BufferChunk {
    /// A sealed copy of `words` words from word `start` on.
    func copy(from start: Int, words: Int) -> BufferChunk {
        let copy = BufferChunk(capacity: max(words, 1))
        copy.base.update(from: base + start, count: words)
        copy.usedWords = words
        copy.firstEvent = firstEvent
        copy.endEvent = endEvent
        return copy
    }
}
