#if canImport(os)
import os
import Synchronization

/// Signposts for Instruments' Points of Interest, through `OSSignposter`.
///
/// Interval names are dynamic, so every interval is the signpost named
/// `interval` with the Strobe name as its message; instants and counters are
/// `event` and `counter` signposts. The signposter is used from any thread,
/// as `os` allows; the open intervals are under a lock. That is why it is
/// `@unchecked Sendable`: `OSSignposter` is not marked `Sendable`, yet is
/// documented as safe to use from any thread.
final class OSSignpostSink: SignpostSink, @unchecked Sendable {
    private let signposter = OSSignposter(subsystem: "dev.strobe", category: .pointsOfInterest)
    /// Open intervals by signpost id: a thread's level, or an async id.
    private let open = SanitizedMutex<[UInt64: OSSignpostIntervalState]>([:])

    private static func id(thread: UInt64, depth: Int64) -> UInt64 {
        (thread << 16) | UInt64(truncatingIfNeeded: depth & 0xFFFF) | (1 << 63)
    }

    private func beginInterval(_ name: UnsafeBufferPointer<UInt8>, id: UInt64) {
        let text = String(decoding: name, as: UTF8.self)
        let state = signposter.beginInterval("interval", id: OSSignpostID(id), "\(text, privacy: .public)")
        open.withLock { $0[id] = state }
    }

    private func endInterval(id: UInt64) {
        guard let state = open.withLock({ $0.removeValue(forKey: id) }) else { return }
        signposter.endInterval("interval", state)
    }

    func begin(_ name: UnsafeBufferPointer<UInt8>, thread: UInt64, depth: Int64) {
        beginInterval(name, id: Self.id(thread: thread, depth: depth))
    }

    func end(_ name: UnsafeBufferPointer<UInt8>, thread: UInt64, depth: Int64) {
        endInterval(id: Self.id(thread: thread, depth: depth))
    }

    func instant(_ name: UnsafeBufferPointer<UInt8>) {
        let text = String(decoding: name, as: UTF8.self)
        signposter.emitEvent("event", "\(text, privacy: .public)")
    }

    func counter(_ name: UnsafeBufferPointer<UInt8>, value: SignpostCounterValue) {
        let text = String(decoding: name, as: UTF8.self)
        switch value {
        case .integer(let integer):
            signposter.emitEvent("counter", "\(text, privacy: .public)=\(integer, privacy: .public)")
        case .floatingPoint(let double):
            signposter.emitEvent("counter", "\(text, privacy: .public)=\(double, privacy: .public)")
        }
    }

    func asyncBegin(_ name: UnsafeBufferPointer<UInt8>, id: UInt64) {
        beginInterval(name, id: id & ~(1 << 63))
    }

    func asyncEnd(_ name: UnsafeBufferPointer<UInt8>, id: UInt64) {
        endInterval(id: id & ~(1 << 63))
    }
}
#endif
