/// How argument values are laid out in the buffer: a key word, a tag word
/// (type in the low byte, string length above it), then the payload.
@usableFromInline
package enum ArgumentEncoding {
    @usableFromInline package static let intTag: UInt64 = 1
    @usableFromInline package static let doubleTag: UInt64 = 2
    @usableFromInline package static let boolTag: UInt64 = 3
    @usableFromInline package static let stringTag: UInt64 = 4
    /// An identifier written as hex text by the writer: the payload is
    /// `count` words (the tag's bits from 8 on), each 16 hex digits.
    @usableFromInline package static let hexTag: UInt64 = 5

    /// A key word whose text follows the argument's payload: the low 16
    /// bits hold its length in bytes.
    @usableFromInline package static let inlineKeyTag: UInt64 = 0xFFFD << 48
    /// The key word of the argument that holds an event's own name, as text.
    @usableFromInline package static let nameKey: UInt64 = 0xFFFC << 48
    /// The name word of an event whose name is the text of its `nameKey`
    /// argument.
    @usableFromInline package static let inlineNameWord: UInt64 = 0xFFFC << 48

    /// Whether `key` is an inline key; then its text is `key & 0xFFFF` bytes.
    @inlinable @inline(__always)
    package static func isInlineKey(_ key: UInt64) -> Bool { key & (0xFFFF << 48) == inlineKeyTag }

    /// Payload words of an argument with `tag`, key text not included.
    @inlinable @inline(__always)
    package static func payloadWords(tag: UInt64) -> Int {
        switch tag & 0xFF {
        case stringTag: return (Int(tag >> 8) + 7) / 8
        case hexTag: return Int(tag >> 8)
        default: return 1
        }
    }

    /// Words of a text argument of `length` bytes: key, tag and text.
    @inlinable
    package static func textWords(_ length: Int) -> Int { 2 + (length + 7) / 8 }

    /// Writes the argument that holds an event's name; returns its words.
    @inlinable @inline(__always)
    package static func writeName(_ text: UnsafeRawBufferPointer, to destination: UnsafeMutablePointer<UInt64>) -> Int {
        writeText(key: nameKey, text, to: destination)
    }

    /// Writes a text argument under `key`; returns its words.
    @inlinable @inline(__always)
    package static func writeText(
        key: UInt64, _ text: UnsafeRawBufferPointer, to destination: UnsafeMutablePointer<UInt64>
    ) -> Int {
        destination[0] = key
        destination[1] = stringTag | (UInt64(text.count) << 8)
        return 2 + copyText(text, to: destination + 2)
    }

    /// Writes an integer argument under `key`; returns its words.
    @inlinable @inline(__always)
    package static func writeInt(key: UInt64, _ value: Int64, to destination: UnsafeMutablePointer<UInt64>) -> Int {
        writeWord(key: key, tag: intTag, UInt64(bitPattern: value), to: destination)
    }

    /// Writes a floating-point argument under `key`; returns its words.
    @inlinable @inline(__always)
    package static func writeDouble(key: UInt64, _ value: Double, to destination: UnsafeMutablePointer<UInt64>) -> Int {
        writeWord(key: key, tag: doubleTag, value.bitPattern, to: destination)
    }

    /// Writes a Boolean argument under `key`; returns its words.
    @inlinable @inline(__always)
    package static func writeBool(key: UInt64, _ value: Bool, to destination: UnsafeMutablePointer<UInt64>) -> Int {
        writeWord(key: key, tag: boolTag, value ? 1 : 0, to: destination)
    }

    /// Writes an argument of one payload word; returns its words.
    @inlinable @inline(__always)
    static func writeWord(key: UInt64, tag: UInt64, _ payload: UInt64, to destination: UnsafeMutablePointer<UInt64>)
        -> Int
    {
        destination[0] = key
        destination[1] = tag
        destination[2] = payload
        return 3
    }

    /// Writes an identifier of one or two words as hex text; returns its words.
    @inlinable @inline(__always)
    package static func writeHex(
        key: UInt64, _ first: UInt64, _ second: UInt64? = nil, to destination: UnsafeMutablePointer<UInt64>
    ) -> Int {
        destination[0] = key
        destination[2] = first
        if let second {
            destination[1] = hexTag | (2 << 8)
            destination[3] = second
            return 4
        }
        destination[1] = hexTag | (1 << 8)
        return 3
    }

    /// Copies `text` into whole words, the last padded with zeros; returns
    /// the words.
    @inlinable @inline(__always)
    package static func copyText(_ text: UnsafeRawBufferPointer, to destination: UnsafeMutablePointer<UInt64>) -> Int {
        let words = (text.count + 7) / 8
        if words > 0 {
            (destination + words - 1).pointee = 0
            UnsafeMutableRawPointer(destination).copyMemory(from: text.baseAddress!, byteCount: text.count)
        }
        return words
    }
}
