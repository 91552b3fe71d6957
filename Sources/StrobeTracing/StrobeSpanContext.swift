#if StrobeTracing
import Instrumentation
import Strobe

/// The identity of a span: the trace it belongs to, its own id and its
/// parent's, as carried in a W3C `traceparent` header.
///
/// Every span a ``StrobeTracer`` records carries these ids as arguments
/// (`trace_id`, `span_id`, `parent_span_id`), in the lowercase hex of the
/// header, so traces of two processes can be joined: a client span's
/// `span_id` is the server span's `parent_span_id`.
public struct StrobeSpanContext: Sendable, Hashable {
    /// A 128-bit trace id.
    public struct TraceID: Sendable, Hashable, CustomStringConvertible {
        /// The high 64 bits.
        public var high: UInt64
        /// The low 64 bits.
        public var low: UInt64

        /// A trace id from its two halves.
        public init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        /// The id as 32 lowercase hex digits.
        public var description: String { StrobeSpanContext.hex(high) + StrobeSpanContext.hex(low) }

        /// Whether the id is valid: W3C forbids all zeros.
        public var isValid: Bool { high != 0 || low != 0 }
    }

    /// The trace this span belongs to.
    public var traceID: TraceID
    /// The span's id.
    public var spanID: UInt64
    /// The parent span's id, when the span has a parent.
    public var parentSpanID: UInt64?
    /// The W3C trace flags (bit 0: sampled).
    public var traceFlags: UInt8
    /// Whether the context came from another process through
    /// ``StrobeTracer/extract(_:into:using:)``.
    public var isRemote: Bool

    /// A span context.
    public init(
        traceID: TraceID, spanID: UInt64, parentSpanID: UInt64? = nil, traceFlags: UInt8 = 1, isRemote: Bool = false
    ) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.traceFlags = traceFlags
        self.isRemote = isRemote
    }

    /// The span's id as 16 lowercase hex digits.
    public var spanIDString: String { Self.hex(spanID) }

    /// The value of a W3C `traceparent` header naming this span as parent:
    /// `00-<trace id>-<span id>-<flags>`.
    public var traceparent: String {
        "00-" + traceID.description + "-" + Self.hex(spanID) + "-" + Self.hex(byte: traceFlags)
    }

    /// The context a `traceparent` header names, marked remote; nil when the
    /// value is malformed or its ids are all zeros.
    ///
    /// Versions other than `00` are read as `00` is, as the W3C
    /// recommendation asks, as long as the first four fields are well formed.
    public init?(traceparent: some StringProtocol) {
        let bytes = Array(traceparent.utf8)
        guard bytes.count >= 55, bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"),
            bytes[52] == UInt8(ascii: "-"),
            let version = Self.parseHex(bytes[0..<2]), version != 0xFF,
            let high = Self.parseHex(bytes[3..<19]), let low = Self.parseHex(bytes[19..<35]),
            let span = Self.parseHex(bytes[36..<52]), let flags = Self.parseHex(bytes[53..<55])
        else { return nil }
        // Version 00 has exactly four fields; later versions may append more.
        if version == 0, bytes.count != 55 { return nil }
        if bytes.count > 55, bytes[55] != UInt8(ascii: "-") { return nil }
        let traceID = TraceID(high: high, low: low)
        guard traceID.isValid, span != 0 else { return nil }
        self.init(traceID: traceID, spanID: span, parentSpanID: nil, traceFlags: UInt8(flags), isRemote: true)
    }

    /// A 64-bit id as 16 lowercase hex digits.
    public static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            for index in 0..<16 {
                buffer[index] = digits[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
            }
            return 16
        }
    }

    static func hex(byte: UInt8) -> String {
        String(unsafeUninitializedCapacity: 2) { buffer in
            buffer[0] = digits[Int(byte >> 4)]
            buffer[1] = digits[Int(byte & 0xF)]
            return 2
        }
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex only, as the header requires.
    private static func parseHex(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }
}

extension InstrumentationContext {
    /// The Strobe span this context belongs to, local or extracted from
    /// another process.
    public var strobeSpanContext: StrobeSpanContext? {
        get { self[StrobeSpanKey.self]?.identity }
        set { self[StrobeSpanKey.self] = newValue.map { SpanRecord(remote: $0) } }
    }
}

/// The context key under which spans keep their record: identity, interval
/// and ids as text. A class, so the context holds it without boxing.
enum StrobeSpanKey: InstrumentationContextKey {
    typealias Value = SpanRecord

    static var nameOverride: String? { "strobe-span" }
}
#endif
