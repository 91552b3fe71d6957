/// The name of an event: a name word (a literal or an interned name), or
/// text written inline in its record.
enum EventName {
    case word(UInt64)
    case text([UInt8])

    /// The name a record's name word gives; for an inline name, the text of
    /// its name argument.
    init(word: UInt64, record: UnsafePointer<UInt64>, kind: UInt64) {
        if word == ArgumentEncoding.inlineNameWord {
            let text = RecordEncoder.inlineName(record, kind: kind)
            self = .text(text.map { Array($0) } ?? [])
        } else {
            self = .word(word)
        }
    }

    /// The name's text, a name word's from `names`.
    func text(_ names: any RecordNames) -> String {
        switch self {
        case .word(let word): return names.text(of: word)
        case .text(let bytes): return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Calls `body` with the name's UTF-8 bytes.
    func withUTF8<Result>(_ names: any RecordNames, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        switch self {
        case .word(let word): return body(UnsafeRawBufferPointer(names.utf8(of: word)))
        case .text(let bytes): return bytes.withUnsafeBytes(body)
        }
    }
}
