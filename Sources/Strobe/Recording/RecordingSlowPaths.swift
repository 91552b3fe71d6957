import CStrobe
import StrobeEncoding

/// The out-of-line paths behind ``Trace``: first use on a thread, full chunks,
/// discarded events, rusage, flows and arguments.
extension Trace {
    @usableFromInline @inline(never)
    static func recordBegin(
        _ name: Name,
        capturing: Capture,
        flow: Flow?,
        terminatingFlow: Flow?,
        arguments: KeyValuePairs<StaticString, ArgumentValue>,
        category: UInt64 = 0
    ) {
        ThreadBuffer.withAttached { recorder in
            if let signposts = recorder.signposts { recorder.announceBegin(name, to: signposts) }
            let usage = capturing.contains(.resourceUsage) || recorder.sessionWantsResourceUsage(for: name)
            var kind = RecordLayout.begin
            let prefix = category != 0 ? 1 : 0
            var words = 2 + prefix
            if usage {
                kind |= RecordLayout.withResourceUsage
                words += RecordLayout.resourceUsageWords
            }
            let attachments = Attachments(
                flow: flow, terminatingFlow: terminatingFlow,
                argumentWords: arguments.isEmpty ? 0 : ArgumentEncoding.words(for: arguments))
            kind |= attachments.kindBits
            words += attachments.words
            recorder.appendBegin(words: words, resourceUsage: usage, category: category) { record, timestamp in
                if prefix != 0 { record[0] = category }
                let record = record + prefix
                record[0] = RecordLayout.header(kind: kind, timestamp: timestamp)
                record[1] = name.word
                var offset = 2
                if usage {
                    var snapshot = cstrobe_rusage()
                    cstrobe_thread_rusage(&snapshot)
                    RecordLayout.store(snapshot, at: record + offset)
                    offset += RecordLayout.resourceUsageWords
                }
                attachments.write(to: record + offset) { ArgumentEncoding.write(arguments, to: $0) }
            }
        }
    }

    @usableFromInline @inline(never)
    static func recordEnd() {
        ThreadBuffer.withAttached { recorder in
            if let signposts = recorder.signposts { recorder.announceEnd(to: signposts) }
            recorder.appendEnd()
        }
    }

    /// An end that names the category of the begin it closes (its prefix
    /// word), so the writer can tell when that begin was never recorded.
    @usableFromInline @inline(never)
    static func recordEnd(category: UInt64) {
        ThreadBuffer.withAttached { recorder in
            if let signposts = recorder.signposts, recorder.closesAnInterval(category: category) {
                recorder.announceEnd(to: signposts)
            }
            recorder.appendEnd(category: category)
        }
    }

    @usableFromInline @inline(never)
    static func recordInstant(
        _ name: Name, arguments: KeyValuePairs<StaticString, ArgumentValue>, category: UInt64 = 0
    ) {
        ThreadBuffer.withAttached { recorder in
            recorder.signposts?.instant(name.word)
            let argumentWords = arguments.isEmpty ? 0 : ArgumentEncoding.words(for: arguments)
            writeEvent(
                recorder, kind: RecordLayout.instant, name: name.word, id: nil, argumentWords: argumentWords,
                category: category
            ) {
                ArgumentEncoding.write(arguments, to: $0)
            }
        }
    }

    @usableFromInline @inline(never)
    static func recordInstant(_ name: Name, arguments: [Argument]) {
        ThreadBuffer.withAttached { recorder in
            recorder.signposts?.instant(name.word)
            let argumentWords = arguments.isEmpty ? 0 : ArgumentEncoding.words(for: arguments)
            writeEvent(recorder, kind: RecordLayout.instant, name: name.word, id: nil, argumentWords: argumentWords) {
                ArgumentEncoding.write(arguments, to: $0)
            }
        }
    }

    @usableFromInline @inline(never)
    static func recordCounter(_ name: Name, kind: UInt64, bits: UInt64, category: UInt64 = 0) {
        ThreadBuffer.withAttached { recorder in
            recorder.signposts?.counter(name.word, kind: kind, bits: bits)
            let prefix = category != 0 ? 1 : 0
            recorder.append(words: 3 + prefix) { record, timestamp in
                if prefix != 0 { record[0] = category }
                let record = record + prefix
                record[0] = RecordLayout.header(kind: kind, timestamp: timestamp)
                record[1] = name.word
                record[2] = bits
            }
        }
    }

    @usableFromInline @inline(never)
    static func recordAsyncBegin(
        _ name: Name, arguments: KeyValuePairs<StaticString, ArgumentValue>, category: UInt64 = 0
    ) -> AsyncInterval {
        return ThreadBuffer.withAttached { recorder -> AsyncInterval in
            let parent = AsyncIntervalContext.innermost()
            let id = nextIdentifier()
            let argumentWords = arguments.isEmpty ? 0 : ArgumentEncoding.words(for: arguments)
            let kind = parent != 0 ? RecordLayout.asyncBeginChild : RecordLayout.asyncBegin
            let recorded = writeEvent(
                recorder, kind: kind, name: name.word, id: id, parent: parent, argumentWords: argumentWords,
                category: category
            ) {
                ArgumentEncoding.write(arguments, to: $0)
            }
            if recorded { recorder.signposts?.asyncBegin(name.word, id: id) }
            return AsyncInterval(id: recorded ? id : 0)
        } ?? AsyncInterval(id: 0)
    }

    @usableFromInline @inline(never)
    static func recordAsyncBegin(
        _ name: Name, parent: UInt64, flow: Flow?, terminatingFlow: Flow?, arguments: [Argument], renamable: Bool,
        startedAgo: UInt64
    ) -> AsyncInterval {
        return ThreadBuffer.withAttached { recorder -> AsyncInterval in
            let id = nextIdentifier()
            // One that began in the past is written when it ends, as a renamable
            // one is: its begin lies before the thread's latest event.
            let held = renamable || startedAgo > 0
            let event: UInt64
            if held {
                event = RecordLayout.asyncBeginRenamable
            } else {
                event = parent != 0 ? RecordLayout.asyncBeginChild : RecordLayout.asyncBegin
            }
            let fixed = RecordLayout.fixedWords(kind: event)
            let attachments = Attachments(
                flow: flow, terminatingFlow: terminatingFlow,
                argumentWords: arguments.isEmpty ? 0 : ArgumentEncoding.words(for: arguments))
            let kind = event | attachments.kindBits
            let recorded = recorder.append(words: fixed + attachments.words) { record, timestamp in
                record[0] = RecordLayout.header(kind: kind, timestamp: timestamp)
                record[1] = name.word
                record[2] = id
                if fixed >= 4 { record[3] = parent }
                if fixed == 5 { record[4] = startedAgo }
                attachments.write(to: record + fixed) { ArgumentEncoding.write(arguments, to: $0) }
            }
            if recorded { recorder.signposts?.asyncBegin(name.word, id: id) }
            return AsyncInterval(id: recorded ? id : 0, renamable: held)
        } ?? AsyncInterval(id: 0)
    }

    @usableFromInline @inline(never)
    static func recordAsyncEnd(id: UInt64) {
        ThreadBuffer.withAttached { recorder in
            recorder.signposts?.asyncEnd(id: id)
            // The begin is in the trace, so the end must be too.
            recorder.append(words: 2, forced: true) { record, timestamp in
                record[0] = RecordLayout.header(kind: RecordLayout.asyncEnd, timestamp: timestamp)
                record[1] = id
            }
        }
    }

    @usableFromInline @inline(never)
    static func recordAsyncEnd(id: UInt64, arguments: KeyValuePairs<StaticString, ArgumentValue>) {
        guard !arguments.isEmpty else { return recordAsyncEnd(id: id) }
        let argumentWords = ArgumentEncoding.words(for: arguments)
        writeAsyncEnd(id: id, argumentWords: argumentWords) { ArgumentEncoding.write(arguments, to: $0) }
    }

    @usableFromInline @inline(never)
    static func recordAsyncEnd(id: UInt64, arguments: [Argument]) {
        guard !arguments.isEmpty else { return recordAsyncEnd(id: id) }
        let argumentWords = ArgumentEncoding.words(for: arguments)
        writeAsyncEnd(id: id, argumentWords: argumentWords) { ArgumentEncoding.write(arguments, to: $0) }
    }

    /// An async end that renames its interval (`newName`, 0 for none) or
    /// ended `endedAgo` nanoseconds before now.
    @usableFromInline @inline(never)
    static func recordAsyncEnd(id: UInt64, newName: UInt64, endedAgo: UInt64, arguments: [Argument]) {
        let argumentWords = arguments.isEmpty ? 0 : ArgumentEncoding.words(for: arguments)
        writeAsyncEnd(id: id, explicit: (newName, endedAgo), argumentWords: argumentWords) {
            ArgumentEncoding.write(arguments, to: $0)
        }
    }

    /// Appends an async end with arguments, or an explicit one with a new
    /// name and a time in the past (then `argumentWords` may be 0).
    private static func writeAsyncEnd(
        id: UInt64, explicit: (newName: UInt64, endedAgo: UInt64)? = nil, argumentWords: Int,
        writeArguments: (UnsafeMutablePointer<UInt64>) -> Int
    ) {
        ThreadBuffer.withAttached { recorder in
            recorder.signposts?.asyncEnd(id: id)
            var kind = explicit == nil ? RecordLayout.asyncEnd : RecordLayout.asyncEndExplicit
            let fixed = RecordLayout.fixedWords(kind: kind)
            if argumentWords > 0 { kind |= RecordLayout.withArguments }
            let words = fixed + (argumentWords > 0 ? 1 + argumentWords : 0)
            // The begin is in the trace, so the end must be too.
            recorder.append(words: words, forced: true) { record, timestamp in
                record[0] = RecordLayout.header(kind: kind, timestamp: timestamp)
                record[1] = id
                if let explicit {
                    record[2] = explicit.newName
                    record[3] = explicit.endedAgo
                }
                if argumentWords > 0 {
                    record[fixed] = UInt64(argumentWords)
                    _ = writeArguments(record + fixed + 1)
                }
            }
        }
    }

    /// Appends an instant or async begin: the category's prefix word when
    /// `category` (a prefix word) is not 0, the header, name, the id when
    /// there is one and the parent's when it is not 0, then `argumentWords`
    /// words of arguments written by `writeArguments`.
    @discardableResult
    private static func writeEvent(
        _ recorder: ThreadBuffer,
        kind: UInt64,
        name: UInt64,
        id: UInt64?,
        parent: UInt64 = 0,
        argumentWords: Int,
        category: UInt64 = 0,
        writeArguments: (UnsafeMutablePointer<UInt64>) -> Int
    ) -> Bool {
        let kind = argumentWords > 0 ? kind | RecordLayout.withArguments : kind
        let fixed = id == nil ? 2 : parent == 0 ? 3 : 4
        let prefix = category != 0 ? 1 : 0
        let words = prefix + fixed + (argumentWords > 0 ? 1 + argumentWords : 0)
        return recorder.append(words: words) { record, timestamp in
            if prefix != 0 { record[0] = category }
            let record = record + prefix
            record[0] = RecordLayout.header(kind: kind, timestamp: timestamp)
            record[1] = name
            if let id { record[2] = id }
            if fixed == 4 { record[3] = parent }
            if argumentWords > 0 {
                record[fixed] = UInt64(argumentWords)
                _ = writeArguments(record + fixed + 1)
            }
        }
    }
}

/// The optional attachments of a begin record, after its fixed part and any
/// rusage: an outgoing flow, a terminating flow and arguments (a length word,
/// then the arguments), in that order.
private struct Attachments {
    let flow: Trace.Flow?
    let terminatingFlow: Trace.Flow?
    let argumentWords: Int

    /// The kind bits that announce them.
    var kindBits: UInt64 {
        (flow != nil ? RecordLayout.withFlow : 0)
            | (terminatingFlow != nil ? RecordLayout.withTerminatingFlow : 0)
            | (argumentWords > 0 ? RecordLayout.withArguments : 0)
    }

    /// The words they take.
    var words: Int {
        (flow != nil ? 1 : 0) + (terminatingFlow != nil ? 1 : 0) + (argumentWords > 0 ? 1 + argumentWords : 0)
    }

    /// Writes them from `destination` on; `writeArguments` writes the
    /// arguments themselves.
    func write(
        to destination: UnsafeMutablePointer<UInt64>, writeArguments: (UnsafeMutablePointer<UInt64>) -> Int
    ) {
        var offset = 0
        if let flow {
            destination[offset] = flow.id
            offset += 1
        }
        if let terminatingFlow {
            destination[offset] = terminatingFlow.id
            offset += 1
        }
        if argumentWords > 0 {
            destination[offset] = UInt64(argumentWords)
            _ = writeArguments(destination + offset + 1)
        }
    }
}
