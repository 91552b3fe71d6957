import CStrobe
import StrobeEncoding
import Synchronization

extension Trace {
    /// The name of an interval, instant or counter.
    ///
    /// Every call that takes a `Name` takes a string literal too. Names
    /// written as string literals go straight into the buffer as a
    /// pointer to the literal: no hashing, no copy, no allocation. Names built
    /// at run time are interned once, when you create the `Trace.Name`; keep the
    /// value and reuse it to stay on the fast path.
    ///
    /// ```swift
    /// let upload = Trace.Name("upload \(endpoint)")
    /// Trace.interval(upload) { send() }
    /// ```
    public struct Name: Sendable, Hashable, ExpressibleByStringLiteral {
        /// A static literal as `length << 48 | address`, or an interned name as
        /// `0xFFFF << 48 | id`.
        @usableFromInline
        package let word: UInt64

        @inlinable
        init(word: UInt64) { self.word = word }

        /// A name from a string literal, as in `Trace.begin("parse")` or
        /// `Trace.Name("parse")`; free at run time.
        @inlinable @inline(__always)
        public init(stringLiteral literal: StaticString) {
            self.init(literal)
        }

        /// A name from a static string; free at run time.
        @inlinable @inline(__always)
        package init(_ literal: StaticString) {
            if literal.hasPointerRepresentation, literal.utf8CodeUnitCount < Int(Self.maximumStaticLength) {
                let address = UInt64(UInt(bitPattern: literal.utf8Start))
                word = (UInt64(literal.utf8CodeUnitCount) << 48) | address
            } else {
                word = Self.intern(literal)
            }
        }

        @usableFromInline
        static func intern(_ literal: StaticString) -> UInt64 {
            NameTable.shared.intern(literal.description)
        }

        /// A name built at run time, interned once here.
        ///
        /// Names longer than 4,096 bytes (UTF-8) are cut at a character
        /// boundary.
        public init(_ string: String) {
            word = NameTable.shared.intern(string)
        }

        /// The longest name kept, in UTF-8 bytes.
        package static let maximumLength = 4096

        @usableFromInline static let maximumStaticLength: UInt64 = 0xFFF0
        /// ``NameWord/internedTag``, as a constant of this module.
        static let internedTag: UInt64 = 0xFFFF << 48

        /// The name's text.
        public var text: String { NameTable.shared.text(of: word) }

        /// Whether the two names have the same text, however each was made:
        /// a literal and a name built at run time with the same text are
        /// equal. Recording never compares names, so this costs nothing on the
        /// recording path.
        public static func == (lhs: Name, rhs: Name) -> Bool {
            if lhs.word == rhs.word { return true }
            // Two interned names with different ids have different texts.
            if lhs.word & internedTag == internedTag, rhs.word & internedTag == internedTag { return false }
            return NameTable.shared.utf8Equal(lhs.word, rhs.word)
        }

        /// Hashes the name's text, consistently with ``==(_:_:)``.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(text)
        }
    }
}

/// The process-wide table of names built at run time.
package final class NameTable: Sendable {
    package static let shared = NameTable()

    private struct State {
        var ids: [String: UInt64] = [:]
        var texts: [String] = []
        /// Permanent UTF-8 copies of interned names, made on first request.
        var utf8Copies: [UInt64: UnsafeBufferPointer<UInt8>] = [:]
    }

    private let state = SanitizedMutex(State())

    package func intern(_ string: String) -> UInt64 {
        let text = Self.truncated(string)
        return state.withLock { state in
            if let id = state.ids[text] { return Trace.Name.internedTag | id }
            let id = UInt64(state.texts.count)
            state.texts.append(text)
            state.ids[text] = id
            // A permanent copy, whose text a crash handler can write.
            let copy = Self.permanentCopy(of: text)
            state.utf8Copies[id] = copy
            cstrobe_crash_note_name(Trace.Name.internedTag | id, copy.baseAddress, UInt64(copy.count))
            return Trace.Name.internedTag | id
        }
    }

    /// How many names have been interned.
    var count: Int { state.withLock { $0.texts.count } }

    /// The text of a name word, static or interned.
    func text(of word: UInt64) -> String {
        if let literal = Self.literalBytes(of: word) {
            return String(decoding: literal, as: UTF8.self)
        }
        let id = Int(word & 0xFFFF_FFFF_FFFF)
        return state.withLock { id < $0.texts.count ? $0.texts[id] : "" }
    }

    /// Whether two name words have the same text, without copying either.
    func utf8Equal(_ lhs: UInt64, _ rhs: UInt64) -> Bool {
        switch (Self.literalBytes(of: lhs), Self.literalBytes(of: rhs)) {
        case (let left?, let right?):
            return left.elementsEqual(right)
        case (let literal?, nil):
            return text(of: rhs).utf8.elementsEqual(literal)
        case (nil, let literal?):
            return text(of: lhs).utf8.elementsEqual(literal)
        case (nil, nil):
            return lhs == rhs
        }
    }

    /// The bytes of a literal's name word, or nil for an interned name.
    private static func literalBytes(of word: UInt64) -> UnsafeBufferPointer<UInt8>? {
        NameWord.literalBytes(of: word)
    }

    /// The UTF-8 bytes of a name word, at an address that stays valid for the
    /// life of the process: a literal's own storage, or a copy of an interned
    /// name made once.
    func utf8(of word: UInt64) -> UnsafeBufferPointer<UInt8> {
        if let literal = Self.literalBytes(of: word) { return literal }
        let id = word & 0xFFFF_FFFF_FFFF
        return state.withLock { state in
            if let copy = state.utf8Copies[id] { return copy }
            let permanent = Self.permanentCopy(of: id < state.texts.count ? state.texts[Int(id)] : "")
            state.utf8Copies[id] = permanent
            return permanent
        }
    }

    /// The UTF-8 bytes of `text` in memory that is never freed.
    private static func permanentCopy(of text: String) -> UnsafeBufferPointer<UInt8> {
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(text.utf8.count, 1))
        _ = copy.initialize(from: text.utf8)
        return UnsafeBufferPointer(start: copy.baseAddress, count: text.utf8.count)
    }

    static func truncated(_ string: String) -> String {
        guard string.utf8.count > Trace.Name.maximumLength else { return string }
        var end = string.utf8.index(string.utf8.startIndex, offsetBy: Trace.Name.maximumLength)
        while end > string.startIndex, !string.unicodeScalars.indices.contains(end) {
            end = string.utf8.index(before: end)
        }
        return String(string[..<end])
    }
}
