import CStrobeLayout

/// Turns the records in thread buffers into Perfetto trace packets.
///
/// Each thread becomes one packet sequence. Its first packet clears the
/// sequence's incremental state, sets the thread's track as the default and
/// anchors a sequence-scoped incremental clock to CLOCK_BOOTTIME, so every
/// event packet carries only a timestamp delta, the sequence id, the
/// incremental-state flag and a small TrackEvent with interned names.
/// After lost events the sequence restarts the same way, flagged with
/// `previous_packet_dropped`, so no reader ever drops what follows.
///
/// The per-thread loop works on value types held in locals (the output
/// buffer, the sequence state) and writes them back when done, which keeps
/// the hot path free of reference-counting and exclusivity checks.
package final class TraceEncoder {
    /// Encoded packets not yet written out.
    package var buffer = ProtoBuffer()

    let processID: Int32
    package let processUUID: UInt64
    /// The text of the records' names and categories.
    private let names: any RecordNames
    private let processName: String
    /// Per-thread state, by recorder serial.
    private var sequences: [UInt64: SequenceState] = [:]
    /// The loss counts of threads that exited and were written out, whose
    /// sequence state is released.
    private var retiredLosses: [PacketBuilder.ThreadLoss] = []
    private var tracks = SharedTracks()
    var nextSequenceID: UInt32 = 2
    /// The CPU samples' sequence, once the first sample is written.
    var profileEncoder: ProfileEncoder?
    private var points: [ClockPoint] = []
    private var started = false
    /// The app's metadata and the sampling probability, written once at the
    /// start on the metadata sequence; nil writes none.
    package var metadata: SessionMetadata?

    /// Records that could not be parsed (a corrupt buffer); counted in stats.
    package var invalidRecords: UInt64 { tracks.invalidRecords }

    /// The metadata sequence: process descriptor, counters, statistics.
    package static let metadataSequenceID: UInt32 = 1

    /// An encoder for a session whose async intervals have identifiers from
    /// `firstIdentifier` on; their begins all reach this encoder. `names`
    /// gives the text of the records' names and categories.
    package init(processID: Int32, processName: String, firstIdentifier: UInt64 = 0, names: any RecordNames) {
        self.names = names
        self.processID = processID
        self.processName = processName
        processUUID = (1 << 62) | UInt64(UInt32(bitPattern: processID))
        tracks.processUUID = processUUID
        tracks.firstIdentifier = firstIdentifier
    }

    /// For a snapshot of rings, where begins may have been overwritten: notes
    /// which async intervals begin in `harvests`, before encoding them.
    package func noteAsyncBegins(in harvests: [RecordHarvest]) {
        var begins = Set<UInt64>()
        func scan(_ base: UnsafeMutablePointer<UInt64>, to end: Int) {
            var index = 0
            while index < end {
                let record = UnsafePointer(base + index)
                guard let length = RecordLayout.length(of: record, available: end - index) else { return }
                let event = RecordLayout.event(of: RecordLayout.kind(of: record[0]))
                if event == RecordLayout.asyncBegin || event == RecordLayout.asyncBeginChild
                    || event == RecordLayout.asyncBeginRenamable
                {
                    begins.insert(record[2])
                }
                index += length
            }
        }
        for harvest in harvests {
            for chunk in harvest.chunks { scan(chunk.base, to: chunk.usedWords) }
            if let current = harvest.current { scan(current.base, to: harvest.currentEnd) }
        }
        tracks.snapshotBegins = begins
    }

    /// Sets the clock readings that map raw timestamps to CLOCK_BOOTTIME.
    package func updateCalibration(_ points: [ClockPoint]) {
        self.points = points
    }

    /// CLOCK_BOOTTIME nanoseconds for the raw timestamp `raw`, under the
    /// calibration the records are encoded with.
    package func boottime(raw: UInt64) -> UInt64 {
        var converter = TimestampConverter(points: points)
        return converter.boottime(raw: raw)
    }

    /// The track for a mark about thread `threadID`: the thread's track when
    /// this encoder has written it (and not retired it), else the
    /// process's.
    package func markTrack(thread threadID: UInt64?) -> UInt64 {
        guard let threadID, sequences.values.contains(where: { $0.threadID == threadID }) else { return processUUID }
        return SequenceState.threadTrackUUID(threadID)
    }

    /// Appends `mark` on the metadata sequence: its packet carries its own
    /// clock and spells its names out, so it needs no sequence's state.
    package func append(_ mark: TraceMark) {
        startIfNeeded(&buffer)
        mark.append(sequenceID: Self.metadataSequenceID, to: &buffer)
    }

    func startIfNeeded(_ out: inout ProtoBuffer) {
        guard !started else { return }
        started = true
        PacketBuilder.appendTrack(
            uuid: processUUID, parent: nil, kind: .process(pid: processID, name: processName),
            sequenceID: Self.metadataSequenceID, to: &out)
        metadata?.appendPacket(
            track: processUUID, boottime: points.first?.boottime ?? 0, sequenceID: Self.metadataSequenceID, to: &out)
    }

    /// Writes renamable async intervals still open, each on the sequence of
    /// the thread that began it, under its first name and without an end.
    private func writeUnendedRenamableBegins() {
        let held = tracks.heldBegins
        guard !held.isEmpty else { return }
        tracks.heldBegins = [:]
        for (_, begin) in held.sorted(by: { $0.key < $1.key }) {
            guard let key = sequences.first(where: { $0.value.sequenceID == begin.sequenceID })?.key,
                let state = sequences.removeValue(forKey: key)
            else { continue }
            withRecordEncoder(state, key: key) { $0.writeHeldBegin(begin, name: nil) }
        }
    }

    /// Runs `body` with an encoder for one sequence. The sequence's state, the
    /// shared tracks and the output buffer move into the encoder and back
    /// out after, so nothing is copied on write.
    private func withRecordEncoder(
        _ state: consuming SequenceState, key: UInt64, _ body: (inout RecordEncoder) -> Void
    ) {
        var encoder = RecordEncoder(names: names, state: state, shared: tracks, out: buffer)
        buffer = ProtoBuffer(capacity: 0)
        tracks = SharedTracks()
        body(&encoder)
        buffer = encoder.out
        tracks = encoder.shared
        sequences[key] = encoder.state
    }

    /// Per-thread loss accounting for the statistics packet.
    func losses(bufferSize: UInt64) -> [PacketBuilder.ThreadLoss] {
        (sequences.values.map(\.loss) + retiredLosses).sorted { $0.sequenceID < $1.sequenceID }.map {
            var loss = $0
            loss.bufferSize = bufferSize
            return loss
        }
    }

    /// Releases what the encoder keeps for a thread that exited and was
    /// written out, keeping only its loss counts, so that threads coming and
    /// going do not grow the writer's memory. A thread whose renamable
    /// begins are still held keeps its state: they are written on its
    /// sequence.
    package func retire(serial key: UInt64) {
        guard let state = sequences[key], state.partialChunk == nil,
            !tracks.heldBegins.values.contains(where: { $0.sequenceID == state.sequenceID })
        else { return }
        sequences[key] = nil
        retiredLosses.append(state.loss)
    }

    // MARK: - Encoding a harvest

    /// Encodes records of thread `threadID`, whose recorder has `serial`
    /// (unique in the process; records recovered from a crash file keep the
    /// crashed process's).
    package func encode(_ harvest: RecordHarvest, serial key: UInt64, threadID: UInt64, now: UInt64) {
        var state =
            sequences.removeValue(forKey: key)
            ?? SequenceState(sequenceID: nextSequenceID, threadID: threadID)
        if state.sequenceID == nextSequenceID { nextSequenceID += 1 }
        startIfNeeded(&buffer)
        state.converter.update(points: points)
        if state.threadName != harvest.name || !state.started {
            state.threadName = harvest.name
            let name = harvest.name.isEmpty ? "thread \(state.threadID)" : harvest.name
            PacketBuilder.appendTrack(
                uuid: state.threadUUID, parent: processUUID,
                kind: .thread(pid: processID, tid: Int64(state.threadID), name: name),
                sequenceID: state.sequenceID, to: &buffer)
        }
        withRecordEncoder(state, key: key) { encoder in
            encode(harvest, with: &encoder, now: now)
        }
    }

    private func encode(_ harvest: RecordHarvest, with encoder: inout RecordEncoder, now: UInt64) {
        for chunk in harvest.chunks {
            var from = 0
            if let partial = encoder.state.partialChunk, partial === chunk {
                from = encoder.state.partialWords
                encoder.state.partialChunk = nil
            }
            encoder.encodeRecords(chunk.base, from: from, to: chunk.usedWords)
        }
        if let current = harvest.current {
            var from = 0
            if let partial = encoder.state.partialChunk, partial === current { from = encoder.state.partialWords }
            encoder.encodeRecords(current.base, from: from, to: harvest.currentEnd)
            encoder.state.partialChunk = current
            encoder.state.partialWords = harvest.currentEnd
        } else {
            encoder.state.partialChunk = nil
        }
        encoder.state.recorded = max(encoder.state.recorded, harvest.recorded)
        encoder.state.discarded = harvest.discarded
        encoder.state.overwritten = harvest.overwritten
        let loss = harvest.discarded &+ harvest.overwritten
        if loss != encoder.state.reportedLoss {
            encoder.state.reportedLoss = loss
            encoder.writeLossCounter(value: loss, now: now)
        }
    }

    // MARK: - Finishing

    /// Appends the statistics packet that closes a trace, after the begins
    /// of renamable async intervals that never ended.
    package func finish(bufferSize: UInt64) {
        writeUnendedRenamableBegins()
        startIfNeeded(&buffer)
        PacketBuilder.appendStatistics(
            losses(bufferSize: bufferSize), sequenceID: Self.metadataSequenceID,
            invalidRecords: tracks.invalidRecords, to: &buffer)
    }
}
