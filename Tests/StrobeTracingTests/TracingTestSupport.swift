#if StrobeTracing
import Foundation
import StrobeTestSupport
import Strobe
import StrobeReader
import StrobeTracing
import Synchronization
import Testing
import Tracing

/// The tracing system is process-wide and set once: every test goes through
/// this.
let bootstrapped: Void = InstrumentationSystem.bootstrap(StrobeTracer())

enum LookupError: Error, CustomStringConvertible {
    case missing(String)
    var description: String {
        switch self {
        case .missing(let key): return "no row for \(key)"
        }
    }
}

/// A header dictionary, as an HTTP library would carry it.
struct Headers: Injector, Extractor {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}

enum PhotoError: Error {
    case unavailable(shard: Int)
}

extension Thread {
    /// The id of the calling thread.
    static var currentID: UInt64 { UInt64(pthread_self()) }
}

/// How many tasks have started, shared between them.
final class StartCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func increment() { count.add(1, ordering: .releasing) }
}

/// Hands spans from one thread to another.
final class SpanQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var spans: [any Span] = []
    private var closed = false
    private var ready = false

    var isReady: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ready
    }

    func put(_ span: any Span) {
        condition.lock()
        spans.append(span)
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
    }

    func take() -> (any Span)? {
        condition.lock()
        defer { condition.unlock() }
        ready = true
        while spans.isEmpty && !closed { condition.wait() }
        return spans.isEmpty ? nil : spans.removeFirst()
    }
}
#endif
