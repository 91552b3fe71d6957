import ArgumentParser
import Foundation
import StrobeReader

/// A failure the command reports in one line before exiting with a status.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var status: Int32

    var description: String { message }

    /// Prints the message to standard error and exits with the status.
    func exit() -> Never {
        FileHandle.standardError.write(Data(("strobe: " + message + "\n").utf8))
        Foundation.exit(status)
    }
}

/// Parses durations such as `16.67ms`, `16ms`, `0.5s`, `500us`, `250ns`.
struct DurationArgument: ExpressibleByArgument {
    var nanoseconds: UInt64

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value.isFinite, value > 0 else { return nil }
            nanoseconds = UInt64((value * scale).rounded())
            return
        }
        return nil
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// Writes `text` to `path`, or to standard output when there is none.
func emit(_ text: String, to path: String?) throws(CommandFailure) {
    guard let path else {
        FileHandle.standardOutput.write(Data(text.utf8))
        return
    }
    do {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    } catch {
        throw CommandFailure(message: "cannot write \(path): \(error.localizedDescription)", status: 2)
    }
}

/// Reads the trace at `path`, exiting with status 2 when it cannot be read
/// or holds no readable packet, and warning when it was cut short (what came
/// before is still used).
func readTraceOrExit(_ path: String) -> ParsedTrace {
    let parsed: ParsedTrace
    do {
        parsed = try TraceReader.read(contentsOf: path)
    } catch {
        CommandFailure(message: error.description, status: 2).exit()
    }
    if let failure = noReadablePacket(parsed, path: path) { failure.exit() }
    if let truncation = parsed.truncation {
        FileHandle.standardError.write(Data("strobe: warning: \(truncation); using what came before\n".utf8))
    }
    return parsed
}

/// The failure to report when `parsed` holds no packet that decoded: the
/// file is not a trace. Names the first bad byte.
func noReadablePacket(_ parsed: ParsedTrace, path: String) -> CommandFailure? {
    guard parsed.decodedPacketCount == 0 else { return nil }
    let problems = parsed.issues + (parsed.truncation.map { [$0] } ?? [])
    guard let first = problems.min(by: { $0.offset < $1.offset }) else {
        return CommandFailure(message: "\(path): byte 0: not a trace: the file is empty", status: 2)
    }
    return CommandFailure(message: "\(path): byte \(first.offset): not a trace, no packet is readable: \(first.problem)", status: 2)
}
