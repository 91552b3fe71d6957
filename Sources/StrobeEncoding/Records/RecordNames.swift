/// Where the encoder finds the text behind the words of records.
///
/// A name word is a literal, `length << 48 | address` of the literal's own
/// UTF-8 storage, or an interned name, `0xFFFF << 48 | id` in a table the
/// encoder does not know (``NameWord``); a category is an index into a table
/// of its own. A recording session answers from its process's tables; crash
/// recovery from the names the crash file holds.
package protocol RecordNames: AnyObject {
    /// The text of the name word `word`.
    func text(of word: UInt64) -> String
    /// The UTF-8 bytes of the name word `word`, valid while this object is.
    func utf8(of word: UInt64) -> UnsafeBufferPointer<UInt8>
    /// The name of the category at `index`.
    func categoryName(_ index: UInt32) -> String
}

/// The two forms of a name word.
package enum NameWord {
    /// The top 16 bits of an interned name's word.
    package static let internedTag: UInt64 = 0xFFFF << 48

    /// Whether `word` names an interned name.
    package static func isInterned(_ word: UInt64) -> Bool { word & internedTag == internedTag }

    /// The word of the interned name `id`.
    package static func interned(_ id: UInt64) -> UInt64 { internedTag | (id & 0xFFFF_FFFF_FFFF) }

    /// The word of the literal `text`, which must have a pointer
    /// representation and be shorter than 0xFFF0 bytes (what the encoder
    /// writes itself).
    package static func literal(_ text: StaticString) -> UInt64 {
        precondition(text.hasPointerRepresentation && text.utf8CodeUnitCount < 0xFFF0)
        return (UInt64(text.utf8CodeUnitCount) << 48) | UInt64(UInt(bitPattern: text.utf8Start))
    }

    /// The bytes of a literal's word, read from the address it holds, or nil
    /// for an interned name. Only for words made in this process.
    package static func literalBytes(of word: UInt64) -> UnsafeBufferPointer<UInt8>? {
        guard !isInterned(word) else { return nil }
        let length = Int(word >> 48)
        guard length > 0, let start = UnsafePointer<UInt8>(bitPattern: UInt(word & 0xFFFF_FFFF_FFFF)) else {
            return UnsafeBufferPointer(start: nil, count: 0)
        }
        return UnsafeBufferPointer(start: start, count: length)
    }
}
