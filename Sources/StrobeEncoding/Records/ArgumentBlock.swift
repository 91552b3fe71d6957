/// A record's argument block: a word that counts the block's words, then
/// each argument as ``ArgumentEncoding`` lays it out. The one place that
/// knows where the block starts and how to step through it, for the encoder
/// (which reads it) and crash recovery (which checks it and rewrites its
/// keys).
package enum ArgumentBlock {
    /// One argument of a block.
    package struct Argument {
        /// The index of its key word in the record.
        package var position: Int
        /// Its key word: an interned or literal name, or an inline key.
        package var key: UInt64
        /// Its tag word: the type in the low byte, a length above it.
        package var tag: UInt64
        /// The words of its payload, right after the tag.
        package var payloadWords: Int
        /// The bytes of its inline key's text, after the payload; 0 for a
        /// key that is a name word.
        package var keyLength: Int
    }

    /// Where the argument block of a record of `kind` starts: past the
    /// fixed words, the rusage attachment and the flows.
    package static func offset(kind: UInt64) -> Int {
        var offset = RecordLayout.fixedWords(kind: kind)
        if kind & RecordLayout.withResourceUsage != 0 { offset += RecordLayout.resourceUsageWords }
        if kind & RecordLayout.withFlow != 0 { offset += 1 }
        if kind & RecordLayout.withTerminatingFlow != 0 { offset += 1 }
        return offset
    }

    /// Calls `body` with each argument of the block at `offset` in
    /// `record`, which has `length` words, in order, and stops at the first
    /// argument that does not fit the block or has an unknown type.
    ///
    /// Returns the offset past the block as its count word gives it, and
    /// whether every argument was whole and known and they filled the block
    /// exactly.
    @discardableResult
    package static func forEach(
        in record: UnsafePointer<UInt64>, at offset: Int, length: Int = .max, _ body: (Argument) -> Void
    ) -> (end: Int, isWhole: Bool) {
        let declaredEnd = offset + 1 + Int(truncatingIfNeeded: record[offset])
        let end = min(declaredEnd, length)
        var position = offset + 1
        while position + 2 <= end {
            let key = record[position]
            let tag = record[position + 1]
            guard (ArgumentEncoding.intTag...ArgumentEncoding.hexTag).contains(tag & 0xFF),
                length == .max || tag >> 8 <= UInt64(length) * 16
            else { return (declaredEnd, false) }
            let payloadWords = ArgumentEncoding.payloadWords(tag: tag)
            let keyLength = ArgumentEncoding.isInlineKey(key) ? Int(key & 0xFFFF) : 0
            let step = 2 + payloadWords + (keyLength + 7) / 8
            guard position + step <= end else { return (declaredEnd, false) }
            body(Argument(position: position, key: key, tag: tag, payloadWords: payloadWords, keyLength: keyLength))
            position += step
        }
        return (declaredEnd, position == end && end == declaredEnd)
    }
}
