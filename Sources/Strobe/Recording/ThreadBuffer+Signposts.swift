import CStrobe

// Announcing events to the session's signposts (USDT probes, the ftrace
// marker, os_signpost), when it has them.
extension ThreadBuffer {
    /// The session's signpost emitter, when it has one.
    var signposts: SignpostEmitter? {
        @inline(__always) get { settings.signposts }
    }

    /// Announces a begin at the thread's current depth.
    func announceBegin(_ name: Trace.Name, to signposts: SignpostEmitter) {
        signposts.begin(name.word, thread: threadID, depth: cursor.pointee.depth)
        signpostNames.append(name.word)
    }

    /// Announces the end of the innermost open interval, if there is one.
    func announceEnd(to signposts: SignpostEmitter) {
        let depth = cursor.pointee.depth
        guard depth > 0, let name = signpostNames.popLast() else { return }
        signposts.end(name, thread: threadID, depth: depth - 1)
    }
}
