import CStrobe
import StrobeEncoding

/// Recording for tracing bridges (StrobeTracing's spans): async intervals
/// whose name, argument keys and identifiers are written into the record as
/// they are, never interned, so spans named after URLs or carrying
/// attributes with run-time keys keep the process's memory flat, and the
/// identifiers' hex text is made by the background writer, not the caller.
extension Trace {
    /// An argument whose key is known only at run time.
    package struct TextArgument: Sendable {
        /// The key.
        package var key: String
        /// The value.
        package var value: ArgumentValue

        /// An argument.
        package init(_ key: String, _ value: ArgumentValue) {
            self.key = key
            self.value = value
        }
    }

    /// The identity a span's begin carries, written as the arguments
    /// `trace_id`, `span_id`, `parent_span_id` (when not 0) and `span.kind`.
    package struct SpanIdentity: Sendable {
        /// The trace id's high 64 bits.
        package var traceIDHigh: UInt64
        /// The trace id's low 64 bits.
        package var traceIDLow: UInt64
        /// The span's id.
        package var spanID: UInt64
        /// The parent span's id; 0 for none.
        package var parentSpanID: UInt64
        /// The span's kind, such as `server`.
        package var kind: StaticString

        /// An identity.
        package init(
            traceIDHigh: UInt64, traceIDLow: UInt64, spanID: UInt64, parentSpanID: UInt64, kind: StaticString
        ) {
            self.traceIDHigh = traceIDHigh
            self.traceIDLow = traceIDLow
            self.spanID = spanID
            self.parentSpanID = parentSpanID
            self.kind = kind
        }
    }

    /// Opens a renamable async interval named `name` for a span, nested
    /// under `parent` (an interval identifier, 0 for none), with its
    /// identity as arguments, an outgoing and a terminating flow (0 for
    /// none), begun at `startedAt`: wall-clock (CLOCK_REALTIME) nanoseconds
    /// since the Unix epoch, taken as now when within a microsecond of the
    /// call. The writer places the instant, so the call reads no clock but
    /// the raw one of its record.
    package static func beginSpan(
        _ name: String, parent: UInt64, identity: SpanIdentity, flow: UInt64, terminatingFlow: UInt64,
        startedAt: UInt64
    ) -> AsyncInterval {
        let generation = cstrobe_load_generation()
        guard generation != 0 else { return AsyncInterval(id: 0) }
        var name = name
        return name.withUTF8 { nameBytes in
            let nameBytes = UnsafeRawBufferPointer(
                start: nameBytes.baseAddress, count: min(nameBytes.count, Name.maximumLength))
            let id = nextIdentifier()
            var kind = RecordLayout.asyncBeginRenamable | RecordLayout.withArguments
            var words = 5
            if flow != 0 {
                kind |= RecordLayout.withFlow
                words += 1
            }
            if terminatingFlow != 0 {
                kind |= RecordLayout.withTerminatingFlow
                words += 1
            }
            let kindText = identity.kind
            let kindLength = min(kindText.utf8CodeUnitCount, ArgumentValue.maximumStringLength)
            var argumentWords =
                ArgumentEncoding.textWords(nameBytes.count) + 4 + 3
                + 2 + (kindLength + 7) / 8
            if identity.parentSpanID != 0 { argumentWords += 3 }
            words += 1 + argumentWords
            let fill = { (record: UnsafeMutablePointer<UInt64>, timestamp: UInt64) in
                record[0] = RecordLayout.header(kind: kind, timestamp: timestamp)
                record[1] = ArgumentEncoding.inlineNameWord
                record[2] = id
                record[3] = parent
                record[4] = RecordLayout.wallClockInstant | (startedAt & ~RecordLayout.wallClockInstant)
                var offset = 5
                if flow != 0 {
                    record[offset] = flow
                    offset += 1
                }
                if terminatingFlow != 0 {
                    record[offset] = terminatingFlow
                    offset += 1
                }
                record[offset] = UInt64(argumentWords)
                var position = record + offset + 1
                position += ArgumentEncoding.writeName(nameBytes, to: position)
                position += ArgumentEncoding.writeHex(
                    key: SpanKeys.traceID, identity.traceIDHigh, identity.traceIDLow, to: position)
                position += ArgumentEncoding.writeHex(key: SpanKeys.spanID, identity.spanID, to: position)
                position += ArgumentEncoding.writeText(
                    key: SpanKeys.kind, UnsafeRawBufferPointer(start: kindText.utf8Start, count: kindLength),
                    to: position)
                if identity.parentSpanID != 0 {
                    position += ArgumentEncoding.writeHex(
                        key: SpanKeys.parentSpanID, identity.parentSpanID, to: position)
                }
            }
            // Straight into the thread's buffer when it has room and the
            // session announces nothing elsewhere, as a `begin` does.
            let written = FastRecord.write(
                generation: generation, unlessFlags: FastRecord.slowPathFlags, words: { _ in words }
            ) { cursor, position, _ in fill(position, FastRecord.timestamp(cursor)) }
            if written { return AsyncInterval(id: id, renamable: true) }
            return ThreadBuffer.withAttached { recorder -> AsyncInterval in
                let recorded = recorder.append(words: words, fill: fill)
                if recorded { recorder.signposts?.asyncBegin(SpanKeys.signpostName.word, id: id) }
                return AsyncInterval(id: recorded ? id : 0, renamable: true)
            } ?? AsyncInterval(id: 0)
        }
    }
}

extension Trace {
    /// Marks a moment on the calling thread named `name`, with arguments
    /// whose keys are known at run time; nothing is interned.
    package static func instant(named name: String, arguments: [TextArgument]) {
        ThreadBuffer.withAttached { recorder in
            recorder.signposts?.instant(SpanKeys.signpostName.word)
            var name = name
            name.withUTF8 { nameBytes in
                let nameBytes = UnsafeRawBufferPointer(
                    start: nameBytes.baseAddress, count: min(nameBytes.count, Name.maximumLength))
                var argumentWords = ArgumentEncoding.textWords(nameBytes.count)
                for argument in arguments { argumentWords += ArgumentEncoding.words(forTextKey: argument) }
                let kind = RecordLayout.instant | RecordLayout.withArguments
                recorder.append(words: 3 + argumentWords) { record, timestamp in
                    record[0] = RecordLayout.header(kind: kind, timestamp: timestamp)
                    record[1] = ArgumentEncoding.inlineNameWord
                    record[2] = UInt64(argumentWords)
                    var position = record + 3
                    position += ArgumentEncoding.writeName(nameBytes, to: position)
                    for argument in arguments { position += ArgumentEncoding.write(textKey: argument, to: position) }
                }
            }
        }
    }
}

extension Trace.AsyncInterval {
    /// Closes a span's interval: under `name` when it changed (nil keeps
    /// the name), at `endedAt` (wall-clock nanoseconds since the Unix
    /// epoch, taken as now when within a microsecond of the call; an end
    /// before the begin is placed on the begin), with `arguments`, which
    /// the caller may gather on the stack.
    package func endSpan(
        renamedTo name: String?, endedAt: UInt64, arguments: UnsafeBufferPointer<Trace.TextArgument>
    ) {
        guard id != 0 else { return }
        let generation = cstrobe_load_generation()
        guard generation != 0 else { return }
        if name == nil, arguments.isEmpty {
            // The usual end, with nothing to add.
            let written = FastRecord.write(
                generation: generation, unlessFlags: FastRecord.slowPathFlags, words: { _ in 4 }
            ) { cursor, position, _ in
                position[0] = RecordLayout.header(
                    kind: RecordLayout.asyncEndExplicit, timestamp: FastRecord.timestamp(cursor))
                position[1] = id
                position[2] = 0
                position[3] = RecordLayout.wallClockInstant | (endedAt & ~RecordLayout.wallClockInstant)
            }
            if written { return }
        }
        var name = name ?? ""
        let renamed = !name.isEmpty
        name.withUTF8 { nameBytes in
            let nameBytes = UnsafeRawBufferPointer(
                start: nameBytes.baseAddress, count: min(nameBytes.count, Trace.Name.maximumLength))
            var argumentWords = renamed ? ArgumentEncoding.textWords(nameBytes.count) : 0
            for argument in arguments { argumentWords += ArgumentEncoding.words(forTextKey: argument) }
            var kind = RecordLayout.asyncEndExplicit
            let fixed = 4
            if argumentWords > 0 { kind |= RecordLayout.withArguments }
            let words = fixed + (argumentWords > 0 ? 1 + argumentWords : 0)
            let fill = { (record: UnsafeMutablePointer<UInt64>, timestamp: UInt64) in
                record[0] = RecordLayout.header(kind: kind, timestamp: timestamp)
                record[1] = id
                record[2] = renamed ? ArgumentEncoding.inlineNameWord : 0
                record[3] = RecordLayout.wallClockInstant | (endedAt & ~RecordLayout.wallClockInstant)
                guard argumentWords > 0 else { return }
                record[fixed] = UInt64(argumentWords)
                var position = record + fixed + 1
                if renamed { position += ArgumentEncoding.writeName(nameBytes, to: position) }
                for argument in arguments { position += ArgumentEncoding.write(textKey: argument, to: position) }
            }
            // Straight into the thread's buffer when it has room and the
            // session announces nothing elsewhere, as an `end` does.
            let written = FastRecord.write(
                generation: generation, unlessFlags: FastRecord.slowPathFlags, words: { _ in words }
            ) { cursor, position, _ in fill(position, FastRecord.timestamp(cursor)) }
            if written { return }
            ThreadBuffer.withAttached { recorder in
                recorder.signposts?.asyncEnd(id: id)
                // The begin is in the trace, so the end must be too.
                recorder.append(words: words, forced: true, fill: fill)
            }
        }
    }
}

/// The static keys of a span's begin, as name words.
enum SpanKeys {
    static let traceID = Trace.Name("trace_id").word
    static let spanID = Trace.Name("span_id").word
    static let parentSpanID = Trace.Name("parent_span_id").word
    static let kind = Trace.Name("span.kind").word
    /// The name signposts show for spans, whose own names are not interned.
    static let signpostName = Trace.Name("span")
}
