import StrobeEncoding
import StrobeFormatting

/// The names of a recovered trace: every name and category the crash file
/// holds, under words of this recovery's own.
///
/// The records of a crash file name things by words of the crashed process
/// (addresses of its literals, ids of its interned names), which mean
/// nothing here. ``NameTranslator`` gives each distinct text an interned
/// word of this table, so that the encoder never reads through a word from
/// the file; the only literal words it meets are its own.
final class RecoveredNames: RecordNames {
    private var texts = UniqueTexts()
    /// UTF-8 copies of texts, made on first request, freed with the table.
    private var utf8Copies: [UInt64: UnsafeBufferPointer<UInt8>] = [:]
    /// Category names by index; index 0 stands for no category.
    private var categories = UniqueTexts(startingWith: [""])

    deinit {
        for copy in utf8Copies.values { copy.deallocate() }
    }

    /// The interned word of `text`.
    func intern(_ text: String) -> UInt64 {
        NameWord.interned(UInt64(texts.index(of: text)))
    }

    /// The index of the category named `name`, from 1.
    func categoryIndex(_ name: String) -> UInt32 {
        UInt32(categories.index(of: name))
    }

    func text(of word: UInt64) -> String {
        if let literal = NameWord.literalBytes(of: word) { return String(decoding: literal, as: UTF8.self) }
        let id = Int(word & 0xFFFF_FFFF_FFFF)
        return texts.text(at: id) ?? ""
    }

    func utf8(of word: UInt64) -> UnsafeBufferPointer<UInt8> {
        if let literal = NameWord.literalBytes(of: word) { return literal }
        let id = word & 0xFFFF_FFFF_FFFF
        if let copy = utf8Copies[id] { return copy }
        let text = texts.text(at: Int(id)) ?? ""
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(text.utf8.count, 1))
        _ = storage.initialize(from: text.utf8)
        let copy = UnsafeBufferPointer(start: storage.baseAddress, count: text.utf8.count)
        utf8Copies[id] = copy
        return copy
    }

    func categoryName(_ index: UInt32) -> String {
        categories.text(at: Int(index)) ?? ""
    }
}
