import CStrobeLayout
import StrobeEncoding

/// A crash file written by the fatal-signal handler (`CStrobeCrash.c`),
/// read back and checked.
///
/// The layout, all words little-endian: the magic `STRBCRSH`, the header
/// (`cstrobe_crash_header`, whose `header_bytes` gives its size), then
/// sections of a tag word, a payload length in bytes and the payload,
/// padded to whole words. A THREAD section (`cstrobe_crash_thread_record`)
/// is followed by its CHUNK sections (three words, then the raw records); NAME
/// sections give the text of a name word (the word, the length, the text),
/// CATEGORY sections the name of a category index, a METADATA section (laid
/// out as a NAME section) the session's metadata; an END section (the
/// number of threads) closes a complete file. The header's version is 1 for
/// a file with only those first sections, 2 for one with a METADATA
/// section, so that a reader of version 1 reads every file without it.
struct CrashFile {
    struct BufferChunk {
        var firstEvent: UInt64
        var endEvent: UInt64
        var words: [UInt64]
    }

    struct Thread {
        var threadID: UInt64
        var serial: UInt64
        var recorded: UInt64
        var discarded: UInt64
        var overwritten: UInt64
        var lost: UInt64
        var name: String
        var chunks: [BufferChunk] = []
    }

    /// The layout's version: ``oldestVersion`` for a file with only the
    /// first layout's sections, up to ``newestVersion``.
    var version: UInt64 = 0
    var processID: UInt64 = 0
    var threadID: UInt64 = 0
    var signal: Int32 = 0
    var signalCode: Int64 = 0
    var faultAddress: UInt64 = 0
    var timestampIsTSC = false
    var baseRaw: UInt64 = 0
    var baseBoottime: UInt64 = 0
    var crashRaw: UInt64 = 0
    var crashBoottime: UInt64 = 0
    var bufferBytes: UInt64 = 0
    var processName = ""
    var threadName = ""
    var threads: [Thread] = []
    /// Text of name words (literal and interned) by word.
    var names: [UInt64: [UInt8]] = [:]
    /// Category names by index.
    var categories: [UInt64: String] = [:]
    /// The session's metadata, when the file has a METADATA section.
    var metadata: SessionMetadata?

    /// The largest section accepted: a chunk of 64 KiB and its three words.
    static let maximumSectionBytes: UInt64 = 1 << 20
    static let magic = Array("STRBCRSH".utf8)
    /// The first layout's version; every later reader reads it.
    static let oldestVersion = UInt64(CSTROBE_CRASH_VERSION_FIRST)
    /// The newest version this reader reads: version 2 adds the METADATA
    /// section (files of version 1 written before the version changed may
    /// hold it too, and are read).
    static let newestVersion = UInt64(CSTROBE_CRASH_VERSION)
    static let headerWords = MemoryLayout<cstrobe_crash_header>.size / 8

    /// Parses `bytes`, read from `path`.
    init(bytes: [UInt8], path: String) throws(CrashRecoveryError) {
        var reader = WordReader(bytes: bytes, path: path)
        guard bytes.count >= 8 else {
            throw CrashRecoveryError(
                path: path, offset: 0, problem: "not a Strobe crash file: \(bytes.count) bytes, too short for the magic"
            )
        }
        guard Array(bytes[0..<8]) == Self.magic else {
            throw CrashRecoveryError(path: path, offset: 0, problem: "not a Strobe crash file: wrong magic")
        }
        reader.offset = 8
        version = try reader.word("the version")
        guard version >= Self.oldestVersion else {
            throw CrashRecoveryError(path: path, offset: 8, problem: "not a valid crash file: version \(version)")
        }
        guard version <= Self.newestVersion else {
            throw CrashRecoveryError(
                path: path, offset: 8,
                problem:
                    "crash file version \(version) is newer than this strobe reads (versions \(Self.oldestVersion) "
                    + "to \(Self.newestVersion)): recover it with the strobe of the Strobe release that wrote it, "
                    + "or a newer one")
        }
        let headerBytes = try reader.word("the header size")
        guard headerBytes >= UInt64(Self.headerWords * 8), headerBytes % 8 == 0, headerBytes <= 4096 else {
            throw CrashRecoveryError(path: path, offset: 16, problem: "header size \(headerBytes) is not valid")
        }
        processID = try reader.word("the process id")
        threadID = try reader.word("the thread id")
        guard processID <= UInt64(Int32.max), threadID <= UInt64(Int32.max) else {
            throw reader.invalid(24, "process id \(processID) or thread id \(threadID) out of range")
        }
        signal = Int32(truncatingIfNeeded: try reader.word("the signal"))
        signalCode = Int64(bitPattern: try reader.word("the signal code"))
        faultAddress = try reader.word("the fault address")
        timestampIsTSC = try reader.word("the clock source") != 0
        baseRaw = try reader.word("the clock base")
        baseBoottime = try reader.word("the clock base")
        crashRaw = try reader.word("the crash time")
        crashBoottime = try reader.word("the crash time")
        bufferBytes = try reader.word("the buffer size")
        processName = try reader.text(64, "the process name")
        threadName = try reader.text(16, "the thread name")
        reader.offset = 8 + Int(headerBytes)
        guard reader.offset <= bytes.count else {
            throw CrashRecoveryError(path: path, offset: bytes.count, problem: "truncated in the header")
        }

        var complete = false
        while reader.offset < bytes.count {
            let sectionStart = reader.offset
            let tag = try reader.word("a section tag")
            let length = try reader.word("a section length")
            guard length <= Self.maximumSectionBytes, Int(length) <= bytes.count - reader.offset else {
                throw CrashRecoveryError(
                    path: path, offset: sectionStart,
                    problem: "truncated: a section of \(length) bytes with \(bytes.count - reader.offset) left")
            }
            let payloadStart = reader.offset
            let payloadEnd = payloadStart + Int(length)
            switch tag {
            case UInt64(CSTROBE_CRASH_SECTION_THREAD):
                guard length >= 7 * 8 + 64 else {
                    throw reader.invalid(sectionStart, "a thread section of \(length) bytes")
                }
                var thread = Thread(
                    threadID: try reader.word("a thread id"), serial: try reader.word("a serial"),
                    recorded: try reader.word("a count"), discarded: try reader.word("a count"),
                    overwritten: try reader.word("a count"), lost: try reader.word("a count"), name: "")
                _ = try reader.word("a chunk count")
                thread.name = try reader.text(64, "a thread name")
                guard thread.threadID <= UInt64(Int32.max) else {
                    throw reader.invalid(sectionStart, "thread id \(thread.threadID) out of range")
                }
                threads.append(thread)
            case UInt64(CSTROBE_CRASH_SECTION_CHUNK):
                guard !threads.isEmpty else { throw reader.invalid(sectionStart, "a chunk before any thread") }
                guard length >= 24, length % 8 == 0 else {
                    throw reader.invalid(sectionStart, "a chunk section of \(length) bytes")
                }
                let first = try reader.word("a chunk's first event")
                let end = try reader.word("a chunk's last event")
                let count = try reader.word("a chunk's length")
                guard count == (length - 24) / 8 else {
                    throw reader.invalid(sectionStart, "a chunk of \(count) words in \(length - 24) bytes")
                }
                var words = [UInt64](repeating: 0, count: Int(count))
                for index in words.indices { words[index] = try reader.word("a record") }
                threads[threads.count - 1].chunks.append(BufferChunk(firstEvent: first, endEvent: end, words: words))
            case UInt64(CSTROBE_CRASH_SECTION_NAME), UInt64(CSTROBE_CRASH_SECTION_CATEGORY),
                UInt64(CSTROBE_CRASH_SECTION_METADATA):
                guard length >= 16 else { throw reader.invalid(sectionStart, "a name section of \(length) bytes") }
                let key = try reader.word("a name")
                let textLength = try reader.word("a name's length")
                guard textLength <= length - 16 else {
                    throw reader.invalid(sectionStart, "a name of \(textLength) bytes in \(length - 16)")
                }
                let text = Array(bytes[reader.offset..<reader.offset + Int(textLength)])
                if tag == UInt64(CSTROBE_CRASH_SECTION_NAME) {
                    names[key] = text
                } else if tag == UInt64(CSTROBE_CRASH_SECTION_METADATA) {
                    guard let parsed = SessionMetadata(serialized: text) else {
                        throw reader.invalid(sectionStart, "a metadata section that is not name and value pairs")
                    }
                    metadata = parsed
                } else {
                    categories[key] = String(decoding: text, as: UTF8.self)
                }
            case UInt64(CSTROBE_CRASH_SECTION_END):
                guard length == 8 else { throw reader.invalid(sectionStart, "an end section of \(length) bytes") }
                let count = try reader.word("the thread count")
                guard count == UInt64(threads.count) else {
                    throw reader.invalid(
                        sectionStart, "the end counts \(count) threads, the file holds \(threads.count)")
                }
                complete = true
            default:
                throw reader.invalid(sectionStart, "unknown section tag \(tag)")
            }
            reader.offset = payloadEnd
            if complete { break }
        }
        guard complete else {
            throw CrashRecoveryError(
                path: path, offset: bytes.count,
                problem: "truncated: the file ends without its end section (the handler did not finish)")
        }
        if reader.offset != bytes.count {
            throw reader.invalid(reader.offset, "\(bytes.count - reader.offset) bytes after the end section")
        }
    }
}

/// Reads little-endian words, naming the byte offset of what is missing.
private struct WordReader {
    let bytes: [UInt8]
    let path: String
    var offset = 0

    mutating func word(_ what: String) throws(CrashRecoveryError) -> UInt64 {
        guard offset + 8 <= bytes.count else {
            throw CrashRecoveryError(path: path, offset: offset, problem: "truncated in \(what)")
        }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    mutating func text(_ count: Int, _ what: String) throws(CrashRecoveryError) -> String {
        guard offset + count <= bytes.count else {
            throw CrashRecoveryError(path: path, offset: offset, problem: "truncated in \(what)")
        }
        let field = bytes[offset..<offset + count]
        offset += count
        return String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
    }

    func invalid(_ offset: Int, _ problem: String) -> CrashRecoveryError {
        CrashRecoveryError(path: path, offset: offset, problem: "not a valid crash file: \(problem)")
    }
}
