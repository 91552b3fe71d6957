import Foundation

/// What the kernel says a thread of this process is doing, from
/// `/proc/self/task/TID/stat`.
enum ThreadState {
    /// Whether the thread `id` is blocked in the kernel (state `S`, an
    /// interruptible sleep, or `D`), so that it runs no instruction until it
    /// is woken. False when its state cannot be read.
    static func isBlocked(_ id: Int32) -> Bool {
        guard let state = state(of: id) else { return false }
        return state == "S" || state == "D"
    }

    /// The one-letter state of thread `id`: the field after the command
    /// name, which is in parentheses and may itself hold spaces and
    /// parentheses, so the last `)` ends it.
    static func state(of id: Int32) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].first { $0 != " " }
    }
}
