import StrobeEncoding

extension Trace {
    /// The value of an argument attached to an event: an integer, a floating
    /// point number, a Boolean or a string.
    ///
    /// Literals convert on their own, so arguments read as a dictionary:
    ///
    /// ```swift
    /// Trace.begin("decode", arguments: ["width": 640, "codec": "png", "hdr": false])
    /// ```
    public enum ArgumentValue: Sendable, Hashable {
        /// A signed integer.
        case int(Int64)
        /// A floating point number.
        case double(Double)
        /// A Boolean.
        case bool(Bool)
        /// A string; values longer than 1,024 bytes (UTF-8) are cut.
        case string(String)

        /// The longest string value kept, in UTF-8 bytes.
        package static let maximumStringLength = 1024
    }
}

extension Trace {
    /// An argument whose key is known only at run time, such as an attribute
    /// of a span.
    ///
    /// ```swift
    /// let key = Trace.Name("http.status_code")
    /// interval.end(arguments: [Trace.Argument(key, .int(200))])
    /// ```
    ///
    /// The key is a ``Name``: built from a `String`, it is interned once;
    /// keep it to avoid interning again.
    public struct Argument: Sendable, Hashable {
        /// The argument's key.
        public var name: Name
        /// The argument's value.
        public var value: ArgumentValue

        /// An argument named `name`.
        public init(_ name: Name, _ value: ArgumentValue) {
            self.name = name
            self.value = value
        }
    }
}

extension Trace.ArgumentValue: ExpressibleByIntegerLiteral {
    /// An integer argument from a literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension Trace.ArgumentValue: ExpressibleByFloatLiteral {
    /// A floating point argument from a literal.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension Trace.ArgumentValue: ExpressibleByBooleanLiteral {
    /// A Boolean argument from a literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension Trace.ArgumentValue: ExpressibleByStringLiteral {
    /// A string argument from a literal.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension Trace.ArgumentValue: ExpressibleByStringInterpolation {}

extension Trace.ArgumentValue: CustomStringConvertible {
    /// The value as text.
    public var description: String {
        switch self {
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .bool(let value): return String(value)
        case .string(let value): return value
        }
    }
}

// Arguments of Strobe's own types: laid out as ``ArgumentEncoding`` says.
extension ArgumentEncoding {
    /// The words of an argument with a run-time key.
    package static func words(forTextKey argument: Trace.TextArgument) -> Int {
        words(for: argument.value) + (min(argument.key.utf8.count, Trace.Name.maximumLength) + 7) / 8
    }

    /// Writes an argument with a run-time key: the inline key word, the
    /// value as any argument's, then the key's text; returns its words.
    package static func write(textKey argument: Trace.TextArgument, to destination: UnsafeMutablePointer<UInt64>) -> Int
    {
        var key = argument.key
        return key.withUTF8 { bytes in
            let bytes = UnsafeRawBufferPointer(
                start: bytes.baseAddress, count: min(bytes.count, Trace.Name.maximumLength))
            let valueWords = write(key: inlineKeyTag | UInt64(bytes.count), value: argument.value, to: destination)
            return valueWords + copyText(bytes, to: destination + valueWords)
        }
    }

    /// Words needed to store `arguments`.
    package static func words(for arguments: KeyValuePairs<StaticString, Trace.ArgumentValue>) -> Int {
        var total = 0
        for (_, value) in arguments { total += words(for: value) }
        return total
    }

    /// Words needed to store `arguments`.
    package static func words(for arguments: [Trace.Argument]) -> Int {
        var total = 0
        for argument in arguments { total += words(for: argument.value) }
        return total
    }

    /// Words of one argument: key, tag and payload.
    @inline(__always)
    package static func words(for value: Trace.ArgumentValue) -> Int {
        switch value {
        case .string(let text):
            return 2 + (min(text.utf8.count, Trace.ArgumentValue.maximumStringLength) + 7) / 8
        default:
            return 3
        }
    }

    /// Writes `arguments` at `destination`; returns the words written.
    package static func write(
        _ arguments: KeyValuePairs<StaticString, Trace.ArgumentValue>,
        to destination: UnsafeMutablePointer<UInt64>
    ) -> Int {
        var offset = 0
        for (key, value) in arguments {
            offset += write(key: Trace.Name(key).word, value: value, to: destination + offset)
        }
        return offset
    }

    /// Writes `arguments` at `destination`; returns the words written.
    package static func write(_ arguments: [Trace.Argument], to destination: UnsafeMutablePointer<UInt64>) -> Int {
        var offset = 0
        for argument in arguments {
            offset += write(key: argument.name.word, value: argument.value, to: destination + offset)
        }
        return offset
    }

    /// Writes one argument at `destination`; returns the words written.
    @inline(__always)
    private static func write(key: UInt64, value: Trace.ArgumentValue, to destination: UnsafeMutablePointer<UInt64>)
        -> Int
    {
        switch value {
        case .int(let number): return writeInt(key: key, number, to: destination)
        case .double(let number): return writeDouble(key: key, number, to: destination)
        case .bool(let flag): return writeBool(key: key, flag, to: destination)
        case .string(let text):
            var text = text
            return text.withUTF8 { bytes in
                let length = min(bytes.count, Trace.ArgumentValue.maximumStringLength)
                return writeText(
                    key: key, UnsafeRawBufferPointer(start: bytes.baseAddress, count: length), to: destination)
            }
        }
    }
}
