import Foundation
import StrobeToolFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file (or standard output) written part by part, as a streaming export
/// makes its parts. A thread of its own writes them, so that the export
/// encodes the next part while the last is copied out; at most
/// ``queueLimit`` parts wait, so memory stays bounded.
final class PartWriter: @unchecked Sendable {
    /// Where the parts go, as the user named it; nil for standard output.
    let path: String?
    /// The most parts waiting to be written.
    static let queueLimit = 4

    private let descriptor: Int32
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [[UInt8]] = []
    private var isClosing = false
    private var isDone = false
    private var failure: Int32?

    /// Creates (or empties) the file at `path`, or writes to standard
    /// output when there is none.
    init(path: String?) throws(CommandFailure) {
        self.path = path
        if let path {
            if let problem = unwritable(path) { throw .badInput("cannot write \(path): \(problem)") }
            let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard opened >= 0 else {
                throw .badInput("cannot write \(path): \(unwritable(path) ?? String(cString: strerror(errno)))")
            }
            descriptor = opened
        } else {
            descriptor = STDOUT_FILENO
        }
        let thread = Thread { [self] in drain() }
        thread.name = "strobe export writer"
        thread.start()
    }

    deinit {
        if path != nil { close(descriptor) }
    }

    /// Queues `bytes` to be written after the parts before them; waits
    /// while the queue is full. Throws when an earlier part failed.
    func write(_ bytes: [UInt8]) throws(CommandFailure) {
        condition.lock()
        while queue.count >= Self.queueLimit, failure == nil { condition.wait() }
        let failed = failure
        if failed == nil {
            queue.append(bytes)
            condition.broadcast()
        }
        condition.unlock()
        if let failed { throw problem(failed) }
    }

    /// Waits until every part is written; throws when one failed.
    func finish() throws(CommandFailure) {
        condition.lock()
        isClosing = true
        condition.broadcast()
        while !isDone { condition.wait() }
        let failed = failure
        condition.unlock()
        if let failed { throw problem(failed) }
    }

    private func problem(_ failure: Int32) -> CommandFailure {
        .badInput("cannot write \(path ?? "standard output"): \(String(cString: strerror(failure)))")
    }

    /// The writing thread: each part in turn, until closed.
    private func drain() {
        while true {
            condition.lock()
            while queue.isEmpty, !isClosing { condition.wait() }
            if queue.isEmpty {
                isDone = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let part = queue.removeFirst()
            condition.unlock()
            let failed = DescriptorWriting.writeAll(part, to: descriptor).failure
            condition.lock()
            if let failed, failure == nil {
                failure = failed
                queue.removeAll()
            }
            condition.broadcast()
            condition.unlock()
        }
    }
}
