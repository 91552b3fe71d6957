import ArgumentParser
import Foundation
import StrobeReader

/// How a command ends when it does not succeed. ``StrobeCommand/main()``
/// turns it, and every other error, into the exit status, in one place.
struct CommandFailure: Error, CustomStringConvertible {
    /// The line printed to standard error after `strobe: `; nil prints
    /// nothing (the report already said it).
    var message: String?
    /// The exit status: 1 or 2.
    var status: Int32

    var description: String { message ?? "exit status \(status)" }

    /// Bad input: a file that cannot be read or holds the wrong thing, a
    /// flag that makes no sense. Exit status 2.
    static func badInput(_ message: String) -> CommandFailure {
        CommandFailure(message: message, status: 2)
    }

    /// A measurement that failed (a child that crashed or exited non-zero):
    /// what was measured is kept. Exit status 1.
    static func measurementFailed(_ message: String) -> CommandFailure {
        CommandFailure(message: message, status: 1)
    }

    /// A gated metric regressed; the report says which. Exit status 1.
    static let regression = CommandFailure(message: nil, status: 1)
}

/// Writes `text` to `path`, or to standard output when there is none.
func emit(_ text: String, to path: String?) throws(CommandFailure) {
    guard let path else {
        FileHandle.standardOutput.write(Data(text.utf8))
        return
    }
    if let problem = unwritable(path) { throw .badInput("cannot write \(path): \(problem)") }
    do {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    } catch {
        throw .badInput("cannot write \(path): \(unwritable(path) ?? error.localizedDescription)")
    }
}

/// Why a file cannot be written at `path`, in words (a directory there, no
/// such directory, no permission), or nil when nothing is known to stop it.
func unwritable(_ path: String) -> String? {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
        if isDirectory.boolValue { return "it is a directory; give a file path" }
        return FileManager.default.isWritableFile(atPath: path) ? nil : "permission denied"
    }
    let parent = (path as NSString).deletingLastPathComponent
    let directory = parent.isEmpty ? "." : parent
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
        return "the directory \(directory) does not exist"
    }
    return FileManager.default.isWritableFile(atPath: directory) ? nil : "permission denied in \(directory)"
}

/// Reads the trace at `path`; throws bad input when it cannot be read or
/// holds no readable packet, and warns when it was cut short (what came
/// before is still used).
func readTrace(_ path: String) throws -> ParsedTrace {
    let parsed = try TraceReader.read(contentsOf: path)
    if let failure = noReadablePacket(parsed, path: path) { throw failure }
    if let truncation = parsed.truncation {
        FileHandle.standardError.write(Data("strobe: warning: \(truncation); using what came before\n".utf8))
    }
    return parsed
}

/// The failure to report when `parsed` holds no packet that decoded: the
/// file is not a trace. Names the first bad byte.
func noReadablePacket(_ parsed: ParsedTrace, path: String) -> CommandFailure? {
    guard parsed.decodedPacketCount == 0 else { return nil }
    return .badInput(
        parsed.notATrace?.description ?? "\(path): byte 0: not a trace: no packet is readable")
}

/// Throws bad input when a trace read packet by packet held no readable
/// packet, and warns when it was cut short, as ``readTrace(_:)`` does.
func checkStreamed(_ path: String, notATrace: TraceReadError?, truncation: TraceReadError?) throws(CommandFailure) {
    if let notATrace { throw .badInput(notATrace.description) }
    if let truncation {
        FileHandle.standardError.write(Data("strobe: warning: \(truncation); using what came before\n".utf8))
    }
}
