import CStrobeProbes
import StrobeEncoding
import Synchronization

/// A destination for signposts: USDT probes, the ftrace marker or
/// `os_signpost`. Each receives the events of every thread, on the thread
/// that records them.
protocol SignpostSink: Sendable {
    func begin(_ name: UnsafeBufferPointer<UInt8>, thread: UInt64, depth: Int64)
    func end(_ name: UnsafeBufferPointer<UInt8>, thread: UInt64, depth: Int64)
    func instant(_ name: UnsafeBufferPointer<UInt8>)
    func counter(_ name: UnsafeBufferPointer<UInt8>, value: SignpostCounterValue)
    func asyncBegin(_ name: UnsafeBufferPointer<UInt8>, id: UInt64)
    func asyncEnd(_ name: UnsafeBufferPointer<UInt8>, id: UInt64)
}

/// A counter value as recorded.
enum SignpostCounterValue {
    case integer(Int64)
    case floatingPoint(Double)

    /// The value from a counter record's kind and payload word.
    init(kind: UInt64, bits: UInt64) {
        if RecordLayout.event(of: kind) == RecordLayout.counterDouble {
            self = .floatingPoint(Double(bitPattern: bits))
        } else {
            self = .integer(Int64(bitPattern: bits))
        }
    }
}

/// Announces a session's events to the signpost sinks its configuration
/// asks for.
///
/// Sessions with signposts set `CSTROBE_FLAG_SIGNPOSTS` in every thread's
/// cursor, which sends each event down the out-of-line path that calls this.
/// Sessions without signposts never reach it.
final class SignpostEmitter: Sendable {
    // The sinks are held concretely, not as an array of existentials, so
    // that each event costs direct calls only.
    private let probes: ProbeSink?
    private let marker: FtraceMarker?
    private let platform: (any SignpostSink & AnyObject)?
    /// Names of open async intervals by id: their ends carry only the id.
    private let asyncNames = SanitizedMutex<[UInt64: UInt64]>([:])

    /// Whether this build carries the USDT probe notes.
    static var probesAvailable: Bool { cstrobe_probes_available() != 0 }

    /// The emitter for `configuration`, or nil when it asks for no signposts
    /// this platform delivers.
    ///
    /// - Throws: ``TraceSessionError/signpostsUnavailable(_:path:errno:)`` when the
    ///   probes are missing from the build or the ftrace marker cannot be
    ///   opened.
    static func make(for configuration: TraceConfiguration) throws(TraceSessionError) -> SignpostEmitter? {
        let signposts = configuration.signposts
        var probes: ProbeSink? = nil
        if signposts.contains(.probes) {
            guard probesAvailable else {
                throw .signpostsUnavailable(
                    "this build of Strobe carries no USDT probes (sys/sdt.h was missing when it was built)")
            }
            probes = ProbeSink()
        }
        let marker = signposts.contains(.ftraceMarker) ? try FtraceMarker(path: configuration.ftraceMarkerPath) : nil
        var platform: (any SignpostSink & AnyObject)? = nil
        #if canImport(os)
        if signposts.contains(.osSignposts) {
            platform = OSSignpostSink()
        }
        #endif
        guard probes != nil || marker != nil || platform != nil else { return nil }
        return SignpostEmitter(probes: probes, marker: marker, platform: platform)
    }

    private init(probes: ProbeSink?, marker: FtraceMarker?, platform: (any SignpostSink & AnyObject)?) {
        self.probes = probes
        self.marker = marker
        self.platform = platform
    }

    func begin(_ name: UInt64, thread: UInt64, depth: Int64) {
        let bytes = NameTable.shared.utf8(of: name)
        probes?.begin(bytes, thread: thread, depth: depth)
        marker?.begin(bytes, thread: thread, depth: depth)
        platform?.begin(bytes, thread: thread, depth: depth)
    }

    func end(_ name: UInt64, thread: UInt64, depth: Int64) {
        let bytes = NameTable.shared.utf8(of: name)
        probes?.end(bytes, thread: thread, depth: depth)
        marker?.end(bytes, thread: thread, depth: depth)
        platform?.end(bytes, thread: thread, depth: depth)
    }

    func instant(_ name: UInt64) {
        let bytes = NameTable.shared.utf8(of: name)
        probes?.instant(bytes)
        marker?.instant(bytes)
        platform?.instant(bytes)
    }

    func counter(_ name: UInt64, kind: UInt64, bits: UInt64) {
        let bytes = NameTable.shared.utf8(of: name)
        let value = SignpostCounterValue(kind: kind, bits: bits)
        probes?.counter(bytes, value: value)
        marker?.counter(bytes, value: value)
        platform?.counter(bytes, value: value)
    }

    func asyncBegin(_ name: UInt64, id: UInt64) {
        asyncNames.withLock { $0[id] = name }
        let bytes = NameTable.shared.utf8(of: name)
        probes?.asyncBegin(bytes, id: id)
        marker?.asyncBegin(bytes, id: id)
        platform?.asyncBegin(bytes, id: id)
    }

    func asyncEnd(id: UInt64) {
        guard let name = asyncNames.withLock({ $0.removeValue(forKey: id) }) else { return }
        let bytes = NameTable.shared.utf8(of: name)
        probes?.asyncEnd(bytes, id: id)
        marker?.asyncEnd(bytes, id: id)
        platform?.asyncEnd(bytes, id: id)
    }
}

/// The USDT probes of `CStrobeProbes`.
struct ProbeSink: SignpostSink {
    func begin(_ name: UnsafeBufferPointer<UInt8>, thread: UInt64, depth: Int64) {
        name.withMemoryRebound(to: CChar.self) { cstrobe_probe_begin($0.baseAddress, UInt64($0.count), depth) }
    }

    func end(_ name: UnsafeBufferPointer<UInt8>, thread: UInt64, depth: Int64) {
        name.withMemoryRebound(to: CChar.self) { cstrobe_probe_end($0.baseAddress, UInt64($0.count), depth) }
    }

    func instant(_ name: UnsafeBufferPointer<UInt8>) {
        name.withMemoryRebound(to: CChar.self) { cstrobe_probe_instant($0.baseAddress, UInt64($0.count)) }
    }

    func counter(_ name: UnsafeBufferPointer<UInt8>, value: SignpostCounterValue) {
        name.withMemoryRebound(to: CChar.self) { text in
            switch value {
            case .integer(let integer):
                cstrobe_probe_counter(text.baseAddress, UInt64(text.count), integer)
            case .floatingPoint(let double):
                cstrobe_probe_counter_f64(text.baseAddress, UInt64(text.count), double.bitPattern)
            }
        }
    }

    func asyncBegin(_ name: UnsafeBufferPointer<UInt8>, id: UInt64) {
        name.withMemoryRebound(to: CChar.self) { cstrobe_probe_async_begin($0.baseAddress, UInt64($0.count), id) }
    }

    func asyncEnd(_ name: UnsafeBufferPointer<UInt8>, id: UInt64) {
        name.withMemoryRebound(to: CChar.self) { cstrobe_probe_async_end($0.baseAddress, UInt64($0.count), id) }
    }
}
