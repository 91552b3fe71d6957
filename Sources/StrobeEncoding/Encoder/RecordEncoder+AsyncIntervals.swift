import PerfettoWire

/// Async intervals: their tracks, held renamable begins, and ends.
extension RecordEncoder {
    mutating func encodeAsyncBegin(
        _ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64, category: UInt64
    ) {
        let id = record[2]
        guard RecordLayout.event(of: kind) == RecordLayout.asyncBeginRenamable else {
            return writeAsyncBegin(
                record, kind: kind, name: EventName(word: record[1], record: record, kind: kind), timestamp: timestamp,
                absolute: false, category: category)
        }
        // It may have begun before it was recorded, so it carries its own time.
        let began = timestamp - min(state.converter.lead(of: record[4], at: timestamp), timestamp)
        if shared.endedEarly.contains(id) {
            // Its end, and any new name, came first.
            let name = shared.renames.removeValue(forKey: id) ?? EventName(word: record[1], record: record, kind: kind)
            return writeAsyncBegin(record, kind: kind, name: name, timestamp: began, absolute: true)
        }
        // Hold it until its end says the name.
        let length = RecordLayout.length(of: record, available: .max) ?? RecordLayout.fixedWords(kind: kind)
        shared.heldBegins[id] = HeldAsyncBegin(
            words: Array(UnsafeBufferPointer(start: record, count: length)), boottime: began,
            sequenceID: state.sequenceID)
        if shared.heldBegins.count > SharedTracks.heldBeginLimit {
            // Identifiers grow with time: the smallest are the oldest.
            for oldest in shared.heldBegins.keys.sorted().prefix(SharedTracks.heldBeginLimit / 4) {
                if let held = shared.heldBegins.removeValue(forKey: oldest) { writeHeldBegin(held, name: nil) }
            }
        }
    }

    /// Writes a held renamable begin now, on this sequence, at its own time,
    /// under `name` (its first name when nil).
    mutating func writeHeldBegin(_ begin: HeldAsyncBegin, name: EventName?) {
        begin.words.withUnsafeBufferPointer { words in
            guard let record = words.baseAddress else { return }
            let kind = RecordLayout.kind(of: record[0])
            writeAsyncBegin(
                record, kind: kind, name: name ?? EventName(word: record[1], record: record, kind: kind),
                timestamp: begin.boottime, absolute: true)
        }
    }

    mutating func writeAsyncBegin(
        _ record: UnsafePointer<UInt64>, kind: UInt64, name: EventName, timestamp: UInt64, absolute: Bool,
        category: UInt64 = 0
    ) {
        let id = record[2]
        let track = SharedTracks.asyncTrackUUID(id)
        var interning = Interning()
        let categoryIID = categoryIID(category, &interning)
        // Names written inline are spelled out, never interned: each may be
        // new (a URL per request).
        var iid: UInt64 = 0
        if case .word(let word) = name { iid = eventNameIID(word, &interning) }
        var offset = RecordLayout.fixedWords(kind: kind)
        let parentID = RecordLayout.asyncParent(of: record, kind: kind)
        let annotations = collectAnnotations(record, kind: kind, offset: &offset, &interning)
        // An interval whose end came first is already closed.
        let endedEarly = shared.endedEarly.remove(id) != nil
        if endedEarly || shared.asyncTracks.updateValue(timestamp, forKey: id) == nil {
            // Nest under the parent's track only when the parent is described
            // in this trace; a track under an unknown parent would be lost.
            var parent = shared.processUUID
            if parentID != 0, shared.beginIsInTrace(parentID) { parent = SharedTracks.asyncTrackUUID(parentID) }
            name.withUTF8(names) { text in
                PacketBuilder.appendAsyncTrack(
                    uuid: track, parent: parent, name: text, sequenceID: state.sequenceID, to: &out)
            }
        }
        let packet = absolute ? beginAbsolutePacket(boottime: timestamp) : beginPacket(timestamp: timestamp)
        let message = out.beginMessage(PerfettoWire.TracePacket.trackEvent)
        if categoryIID != 0 { out.appendVarintField(PerfettoWire.TrackEvent.categoryIIDs, categoryIID) }
        writeArguments(annotations)
        out.appendVarintField(PerfettoWire.TrackEvent.type, PerfettoWire.EventType.sliceBegin)
        if case .text(let text) = name {
            out.appendVarintField(PerfettoWire.TrackEvent.trackUUID, track)
            text.withUnsafeBytes { out.appendBytesField(PerfettoWire.TrackEvent.name, $0) }
        } else {
            out.appendVarintField(PerfettoWire.TrackEvent.nameIID, iid)
            out.appendVarintField(PerfettoWire.TrackEvent.trackUUID, track)
        }
        writeFlows(annotations)
        out.endMessage(message)
        endPacket(packet, interning, absolute: absolute)
    }

    mutating func encodeAsyncEnd(_ record: UnsafePointer<UInt64>, kind: UInt64, timestamp: UInt64) {
        let id = record[1]
        let explicit = RecordLayout.event(of: kind) == RecordLayout.asyncEndExplicit
        let newName = explicit && record[2] != 0 ? EventName(word: record[2], record: record, kind: kind) : nil
        let endedAgo = explicit ? state.converter.lead(of: record[3], at: timestamp) : 0
        // A new name that comes too late for the begin, written already
        // (held too long), is kept as the argument `name`.
        var lateName: EventName?
        if let held = shared.heldBegins.removeValue(forKey: id) {
            writeHeldBegin(held, name: newName)
        } else {
            lateName = newName
        }
        var ended = timestamp - min(endedAgo, timestamp)
        if let began = shared.asyncTracks.removeValue(forKey: id) {
            ended = max(ended, began)
        } else {
            lateName = nil
            // Its begin is on a thread not encoded yet: write the end now, in
            // this sequence's time order, and the begin when it comes.
            guard shared.beginIsInTrace(id) else {
                state.orphanEnds += 1
                return
            }
            shared.endedEarly.insert(id)
            if let newName { shared.renames[id] = newName }
        }
        var interning = Interning()
        var annotations = Annotations()
        if RecordLayout.hasAttachments(kind) {
            var offset = RecordLayout.fixedWords(kind: kind)
            annotations = collectAnnotations(record, kind: kind, offset: &offset, &interning)
        }
        let lateNameKey = lateName.map { _ in annotationNameIID(Self.nameKey, &interning) }
        // An end in the past takes an absolute time, as a held begin does.
        let absolute = endedAgo > 0
        let packet = absolute ? beginAbsolutePacket(boottime: ended) : beginPacket(timestamp: timestamp)
        let event = out.beginMessage(PerfettoWire.TracePacket.trackEvent)
        writeArguments(annotations)
        if let lateName, let lateNameKey {
            let annotation = out.beginMessage(PerfettoWire.TrackEvent.debugAnnotations)
            out.appendVarintField(PerfettoWire.DebugAnnotation.nameIID, lateNameKey)
            out.appendStringField(PerfettoWire.DebugAnnotation.stringValue, lateName.text(names))
            out.endMessage(annotation)
        }
        out.appendVarintField(PerfettoWire.TrackEvent.type, PerfettoWire.EventType.sliceEnd)
        out.appendVarintField(PerfettoWire.TrackEvent.trackUUID, SharedTracks.asyncTrackUUID(id))
        writeFlows(annotations)
        out.endMessage(event)
        endPacket(packet, interning, absolute: absolute)
    }

    /// The argument key of a name that came too late for its begin.
    static let nameKey = NameWord.literal("name")
}
