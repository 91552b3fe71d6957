import StrobeEncoding
import StrobeFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a crash file (written by a session with crash capture, see
/// `TraceConfiguration.CrashCapture` in Strobe) into a trace, with the
/// session's own encoder: each thread's events as its own
/// packet sequence, and an instant named `crash` on the thread that received
/// the signal, with the signal's name, its code and the fault address as
/// arguments.
///
/// `strobe recover` is the command-line front end.
public enum CrashRecovery {
    /// What a recovery found.
    public struct Outcome: Sendable, Hashable {
        /// The signal that ended the process.
        public var signal: Int32
        /// The signal's name, such as `SIGSEGV`.
        public var signalName: String
        /// The address of the fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE), or
        /// 0.
        public var faultAddress: UInt64
        /// The thread that received the signal.
        public var threadID: UInt64
        /// The process that crashed.
        public var processID: UInt64
        /// Threads whose events are in the trace.
        public var threads: Int
        /// Events in the crash file.
        public var events: UInt64
        /// Events the handler could not reach (more sealed chunks than it
        /// could follow); counted as discarded in the trace's statistics.
        public var lostEvents: UInt64
        /// Records that could not be parsed (torn by a thread still writing
        /// during the crash); counted as invalid packets in the statistics.
        public var invalidRecords: UInt64
        /// Distinct names whose text the file does not hold; their events
        /// are named `<unknown name>`.
        public var unknownNames: Int
    }

    /// Reads the crash file at `path` and writes the trace to `output`.
    ///
    /// - Throws: ``CrashRecoveryError`` naming the file and the byte offset
    ///   of the problem when the file is not a complete crash file of this
    ///   version, or naming `output` when it cannot be written.
    @discardableResult
    public static func recover(crashFile path: String, writingTo output: String) throws(CrashRecoveryError) -> Outcome {
        let bytes = try readAll(path)
        let (trace, outcome) = try trace(fromCrashFile: bytes, path: path)
        do throws(TraceFileError) {
            let file = try TraceFile(creating: output)
            let failure = trace.withUnsafeBytes { bytes -> TraceFileError? in
                do throws(TraceFileError) {
                    try file.append(bytes)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { throw failure }
            try file.close()
        } catch {
            throw CrashRecoveryError(
                path: output, offset: nil, errno: error.errno,
                problem: "cannot write the trace: " + ErrnoText.message(error.errno))
        }
        return outcome
    }

    /// The trace recovered from the crash file `bytes`, read from `path`
    /// (named in errors).
    ///
    /// - Throws: ``CrashRecoveryError`` naming `path` and the byte offset of
    ///   the problem.
    public static func trace(fromCrashFile bytes: [UInt8], path: String) throws(CrashRecoveryError) -> (
        trace: [UInt8], outcome: Outcome
    ) {
        let file = try CrashFile(bytes: bytes, path: path)
        let names = RecoveredNames()
        var translator = NameTranslator(file: file, names: names)
        var harvests: [(serial: UInt64, threadID: UInt64, harvest: RecordHarvest)] = []
        var events: UInt64 = 0
        var lost: UInt64 = 0
        for thread in file.threads {
            var chunks: [BufferChunk] = []
            for recovered in thread.chunks {
                var words = recovered.words
                translator.translate(&words)
                let chunk = BufferChunk(capacity: max(words.count, 1))
                chunk.base.update(from: words, count: words.count)
                chunk.usedWords = words.count
                chunk.firstEvent = recovered.firstEvent
                chunk.endEvent = max(recovered.endEvent, recovered.firstEvent)
                events &+= chunk.eventCount
                chunks.append(chunk)
            }
            lost &+= thread.lost
            harvests.append(
                (
                    thread.serial, thread.threadID,
                    RecordHarvest(
                        chunks: chunks, current: nil, currentEnd: 0, name: thread.name, recorded: thread.recorded,
                        discarded: thread.discarded &+ thread.lost, overwritten: thread.overwritten, unmatchedEnds: 0,
                        exited: false)
                ))
        }

        // The thread that received the signal has a track even when it
        // recorded nothing, for the crash mark to go on.
        if !harvests.contains(where: { $0.threadID == file.threadID }) {
            harvests.append(
                (
                    UInt64.max, file.threadID,
                    RecordHarvest(
                        chunks: [], current: nil, currentEnd: 0, name: file.threadName, recorded: 0, discarded: 0,
                        overwritten: 0, unmatchedEnds: 0, exited: false)
                ))
        }

        let crashTime = file.crashRaw > file.baseRaw ? file.crashRaw - file.baseRaw : 0
        var points = [ClockPoint(raw: 0, boottime: file.baseBoottime)]
        if crashTime > 0, file.crashBoottime > file.baseBoottime {
            points.append(ClockPoint(raw: crashTime, boottime: file.crashBoottime))
        }
        let encoder = TraceEncoder(
            processID: Int32(truncatingIfNeeded: file.processID),
            processName: file.processName.isEmpty ? "process \(file.processID)" : file.processName, names: names)
        encoder.metadata = file.metadata
        encoder.updateCalibration(points)
        encoder.noteAsyncBegins(in: harvests.map(\.harvest))
        for (serial, threadID, harvest) in harvests {
            encoder.encode(harvest, serial: serial, threadID: threadID, now: file.crashBoottime)
        }
        encoder.append(
            crashMark(file, at: encoder.boottime(raw: crashTime), track: encoder.markTrack(thread: file.threadID)))
        encoder.finish(bufferSize: file.bufferBytes)
        let trace = encoder.buffer.withBytes { Array($0) }
        encoder.buffer.removeAll()
        let outcome = Outcome(
            signal: file.signal, signalName: signalName(file.signal), faultAddress: file.faultAddress,
            threadID: file.threadID, processID: file.processID, threads: harvests.count, events: events,
            lostEvents: lost, invalidRecords: encoder.invalidRecords, unknownNames: translator.unknownNames)
        return (trace, outcome)
    }

    /// The name of a fatal signal, or `signal N`.
    public static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: return "SIGSEGV"
        case SIGBUS: return "SIGBUS"
        case SIGILL: return "SIGILL"
        case SIGABRT: return "SIGABRT"
        case SIGFPE: return "SIGFPE"
        case SIGTRAP: return "SIGTRAP"
        default: return "signal \(signal)"
        }
    }

    /// The instant that marks the crash, at `boottime` on `track`: the
    /// signal's name, its code and the fault address.
    private static func crashMark(_ file: CrashFile, at boottime: UInt64, track: UInt64) -> TraceMark {
        TraceMark(
            name: "crash", boottime: boottime, track: track,
            annotations: [
                ("signal", .string(signalName(file.signal))), ("signal code", .int(file.signalCode)),
                ("fault address", .string("0x" + String(file.faultAddress, radix: 16))),
            ])
    }

    private static func readAll(_ path: String) throws(CrashRecoveryError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CrashRecoveryError(path: path, offset: nil, errno: errno, problem: ErrnoText.message(errno))
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = block.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CrashRecoveryError(
                    path: path, offset: bytes.count, errno: errno, problem: ErrnoText.message(errno))
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: block[0..<count])
        }
    }
}

/// Why a crash file could not be recovered.
public struct CrashRecoveryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file with the problem.
    public var path: String
    /// The byte offset of the problem in the file, when it is about its
    /// contents.
    public var offset: Int?
    /// The `errno` of the system call that failed, when one did.
    public var errno: Int32?
    /// What is wrong.
    public var problem: String

    /// An error about `path` at `offset`.
    public init(path: String, offset: Int?, errno: Int32? = nil, problem: String) {
        self.path = path
        self.offset = offset
        self.errno = errno
        self.problem = problem
    }

    /// `PATH: byte OFFSET: PROBLEM (errno N)`.
    public var description: String {
        let place = offset.map { "\(path): byte \($0)" } ?? path
        return "\(place): \(problem)" + ErrnoText.suffix(errno)
    }
}

/// Rewrites the name words of recovered records, which point into the
/// crashed process, as names of this process with the same text.
struct NameTranslator {
    let file: CrashFile
    /// The names the translated words stand for.
    let table: RecoveredNames
    private var names: [UInt64: UInt64] = [:]
    private var categories: [UInt64: UInt64] = [:]
    private(set) var unknownNames = 0

    init(file: CrashFile, names: RecoveredNames) {
        self.file = file
        self.table = names
    }

    /// This process's word for the crashed process's name word `word`, of
    /// an event; the word that names an event by its name argument stays.
    /// Any other word becomes a name, so that no word read from the file is
    /// taken for an address.
    mutating func name(_ word: UInt64) -> UInt64 {
        word == ArgumentEncoding.inlineNameWord ? word : translated(word)
    }

    /// This process's word for an argument key; inline keys and the key of
    /// an event's name argument stay.
    mutating func key(_ word: UInt64) -> UInt64 {
        ArgumentEncoding.isInlineKey(word) || word == ArgumentEncoding.nameKey ? word : translated(word)
    }

    private mutating func translated(_ word: UInt64) -> UInt64 {
        let top = word >> 48
        if let known = names[word] { return known }
        let text: String
        if let bytes = file.names[word] {
            text = String(decoding: bytes, as: UTF8.self)
        } else if top == 0 {
            text = ""
        } else {
            unknownNames += 1
            text = "<unknown name>"
        }
        let translated = table.intern(text)
        names[word] = translated
        return translated
    }

    /// The category prefix word for this process's category with the name
    /// of the crashed process's category `payload` (index plus one).
    mutating func category(_ payload: UInt64) -> UInt64 {
        guard payload > 1 else { return RecordLayout.header(kind: RecordLayout.categoryPrefix, timestamp: payload) }
        if let known = categories[payload] { return known }
        var word = RecordLayout.header(kind: RecordLayout.categoryPrefix, timestamp: 1)
        if let text = file.categories[payload - 1] {
            word = RecordLayout.categoryWord(table.categoryIndex(text))
        } else {
            unknownNames += 1
        }
        categories[payload] = word
        return word
    }

    /// Rewrites the names in the records of `words`, up to the first word
    /// that does not start a valid record. A record whose arguments do not
    /// parse gets an invalid header, so that the encoder stops there too
    /// and counts it.
    mutating func translate(_ words: inout [UInt64]) {
        words.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var index = 0
            while index < buffer.count {
                let record = base + index
                guard let length = RecordLayout.length(of: record, available: buffer.count - index) else { return }
                let kind = RecordLayout.kind(of: record[0])
                let event = kind & 0x0F
                switch event {
                case RecordLayout.counterInt, RecordLayout.counterDouble:
                    record[1] = name(record[1])
                case RecordLayout.categoryPrefix:
                    record[0] = category(RecordLayout.timestamp(of: record[0]))
                case RecordLayout.dropMarker:
                    break
                default:
                    // Only the attachments the recorder writes for each
                    // kind: the encoder reads the others at other offsets.
                    let allowed: UInt64 =
                        switch event {
                        case RecordLayout.begin: 0xF0
                        case RecordLayout.end: RecordLayout.withResourceUsage
                        default: 0xE0
                        }
                    guard kind & 0xF0 & ~allowed == 0 else {
                        record[0] = 0
                        return
                    }
                    if event == RecordLayout.asyncEndExplicit {
                        // 0 keeps the interval's name.
                        if record[2] != 0 { record[2] = name(record[2]) }
                    } else if event != RecordLayout.end, event != RecordLayout.asyncEnd {
                        record[1] = name(record[1])
                    }
                    if kind & RecordLayout.withArguments != 0,
                        !translateArguments(record, length: length, kind: kind)
                    {
                        record[0] = 0
                        return
                    }
                }
                index += length
            }
        }
    }

    /// Rewrites the argument keys; false when the block does not parse.
    private mutating func translateArguments(_ record: UnsafeMutablePointer<UInt64>, length: Int, kind: UInt64) -> Bool
    {
        ArgumentBlock.forEach(in: record, at: ArgumentBlock.offset(kind: kind), length: length) { argument in
            if !ArgumentEncoding.isInlineKey(argument.key) { record[argument.position] = key(argument.key) }
        }.isWhole
    }
}
