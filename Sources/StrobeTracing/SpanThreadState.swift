#if StrobeTracing
import Instrumentation
import Strobe

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What one thread keeps for the spans it starts and ends: its id
/// generator, and the records and contexts of ended spans, which the next
/// spans take over.
///
/// A span's context is its parent's with the span added, a dictionary of
/// swift-distributed-tracing's. When the parent holds nothing but a Strobe
/// span (or nothing), the new context holds only the new span, whatever
/// the parent was, so the dictionary of an ended span's context can serve
/// it: the value is replaced in place when nothing else holds that
/// context, and copied (as it would be anyway) when something does. An
/// ended span's record is reused once nothing else refers to it.
///
/// Only its own thread touches it (it is reached through a thread-specific
/// key), so it needs no lock.
final class SpanThreadState {
    // Touched by the owning thread alone, so accesses never overlap and go
    // without dynamic exclusivity checks.
    @exclusivity(unchecked) var identifiers = SpanIdentifiers()
    /// Contexts of ended spans that held only their span.
    @exclusivity(unchecked) private var contexts: [InstrumentationContext] = []
    /// Records of ended spans, reused once nothing else refers to them.
    @exclusivity(unchecked) private var records: [SpanRecord] = []
    /// Contexts kept per thread: enough for spans nested this deep to reuse
    /// them all.
    static let keptContexts = 16

    private init() {
        contexts.reserveCapacity(Self.keptContexts)
        records.reserveCapacity(Self.keptContexts)
    }

    /// The calling thread's state, made on first use and freed when the
    /// thread exits.
    static var current: SpanThreadState {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<SpanThreadState>.fromOpaque(pointer).takeUnretainedValue()
        }
        let state = SpanThreadState()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        #if canImport(Darwin)
        pthread_key_create(&key) { pointer in Unmanaged<SpanThreadState>.fromOpaque(pointer).release() }
        #else
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<SpanThreadState>.fromOpaque(pointer).release() }
        }
        #endif
        return key
    }()

    /// A context holding only the new span's record, on the storage of an
    /// ended span's context where one is kept.
    func context(
        identity: StrobeSpanContext, interval: Trace.AsyncInterval, operationName: String
    ) -> (InstrumentationContext, SpanRecord) {
        let record = record(identity: identity, interval: interval, operationName: operationName, ownsContext: true)
        // The value changes in place when nothing else holds the context,
        // and the old record, which the context held, is let go.
        var context = contexts.popLast() ?? .topLevel
        context[StrobeSpanKey.self] = record
        return (context, record)
    }

    /// The record of a new span: a kept one that nothing else refers to
    /// any more, reset, or a new one. The latest records kept are looked at
    /// first; the one that a kept context still holds is passed over.
    func record(
        identity: StrobeSpanContext, interval: Trace.AsyncInterval, operationName: String, ownsContext: Bool
    ) -> SpanRecord {
        // Searched and reordered through one pointer to the array's
        // storage, so each step checks neither uniqueness nor bounds twice.
        let found = records.withUnsafeMutableBufferPointer { kept in
            var index = kept.count - 1
            let lowest = max(0, kept.count - 4)
            while index >= lowest {
                if isKnownUniquelyReferenced(&kept[index]) {
                    kept.swapAt(index, kept.count - 1)
                    return true
                }
                index -= 1
            }
            return false
        }
        if found {
            let candidate = records.removeLast()
            candidate.reset(
                identity: identity, interval: interval, operationName: operationName, ownsContext: ownsContext)
            return candidate
        }
        return SpanRecord(
            identity: identity, interval: interval, operationName: operationName, ownsContext: ownsContext)
    }

    /// Keeps what an ended span leaves for later spans of this thread: its
    /// record, and its context when that held the span alone.
    func keep(_ context: InstrumentationContext, of record: SpanRecord) {
        if record.ownsContext, contexts.count < Self.keptContexts { contexts.append(context) }
        if records.count == Self.keptContexts { records.removeFirst() }
        records.append(record)
    }
}

extension InstrumentationContext {
    /// The Strobe span the context holds, if any, and whether it holds
    /// anything else, in one pass over it: a span started in a context that
    /// holds nothing else gets a context of its own span alone.
    var strobeSpanAndOthers: (span: SpanRecord?, others: Bool) {
        var span: SpanRecord?
        var others = false
        forEach { key, value in
            if ObjectIdentifier(key.keyType) == ObjectIdentifier(StrobeSpanKey.self) {
                span = value as? SpanRecord
            } else {
                others = true
            }
        }
        return (span, others)
    }
}
#endif
