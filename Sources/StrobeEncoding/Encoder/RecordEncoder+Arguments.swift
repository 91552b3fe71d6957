import PerfettoWire

/// Arguments and flows of a record.
extension RecordEncoder {
    struct Annotations {
        var flow: UInt64?
        var terminatingFlow: UInt64?
        /// Each argument: its interned key, or 0 and the key's text when
        /// the key is written inline.
        var arguments: [(iid: UInt64, tag: UInt64, payload: UnsafePointer<UInt64>, key: UnsafeRawBufferPointer?)] = []
    }

    /// The text of the argument that holds the name of the record, when it
    /// has one (its name word is `ArgumentEncoding.inlineNameWord`).
    static func inlineName(_ record: UnsafePointer<UInt64>, kind: UInt64) -> UnsafeRawBufferPointer? {
        var offset = RecordLayout.fixedWords(kind: kind)
        if kind & RecordLayout.withResourceUsage != 0, RecordLayout.event(of: kind) == RecordLayout.begin {
            offset += RecordLayout.resourceUsageWords
        }
        if kind & RecordLayout.withFlow != 0 { offset += 1 }
        if kind & RecordLayout.withTerminatingFlow != 0 { offset += 1 }
        guard kind & RecordLayout.withArguments != 0 else { return nil }
        var found: UnsafeRawBufferPointer?
        forEachArgument(record, at: offset) { key, tag, payload, _ in
            if key == ArgumentEncoding.nameKey, tag & 0xFF == ArgumentEncoding.stringTag {
                found = UnsafeRawBufferPointer(start: payload, count: Int(tag >> 8))
            }
        }
        return found
    }

    /// Calls `body` with each argument of the argument block at `offset`:
    /// key word, tag, payload and, for an inline key, the key's text.
    /// Returns the offset past the block.
    @discardableResult
    static func forEachArgument(
        _ record: UnsafePointer<UInt64>, at offset: Int,
        _ body: (UInt64, UInt64, UnsafePointer<UInt64>, UnsafeRawBufferPointer?) -> Void
    ) -> Int {
        let words = Int(record[offset])
        var position = offset + 1
        let end = position + words
        while position + 2 <= end {
            let key = record[position]
            let tag = record[position + 1]
            let payloadWords = ArgumentEncoding.payloadWords(tag: tag)
            let inline = ArgumentEncoding.isInlineKey(key)
            let keyLength = inline ? Int(key & 0xFFFF) : 0
            guard position + 2 + payloadWords + (keyLength + 7) / 8 <= end else { break }
            let payload = record + position + 2
            let keyText = inline ? UnsafeRawBufferPointer(start: payload + payloadWords, count: keyLength) : nil
            body(key, tag, payload, keyText)
            position += 2 + payloadWords + (keyLength + 7) / 8
        }
        return end
    }

    mutating func collectAnnotations(
        _ record: UnsafePointer<UInt64>, kind: UInt64, offset: inout Int, _ interning: inout Interning
    ) -> Annotations {
        var result = Annotations()
        if kind & RecordLayout.withFlow != 0 {
            result.flow = record[offset]
            offset += 1
        }
        if kind & RecordLayout.withTerminatingFlow != 0 {
            result.terminatingFlow = record[offset]
            offset += 1
        }
        if kind & RecordLayout.withArguments != 0 {
            // At most one argument per two words of the block.
            result.arguments.reserveCapacity(min(Int(record[offset]) / 2, 16))
            offset = Self.forEachArgument(record, at: offset) { key, tag, payload, keyText in
                if key == ArgumentEncoding.nameKey { return } // the event's own name
                if keyText != nil {
                    result.arguments.append((0, tag, payload, keyText))
                } else {
                    result.arguments.append((annotationNameIID(key, &interning), tag, payload, nil))
                }
            }
        }
        return result
    }

    mutating func writeArguments(_ annotations: Annotations) {
        for argument in annotations.arguments {
            let annotation = out.beginMessage(PerfettoWire.TrackEvent.debugAnnotations)
            if argument.key == nil { out.appendVarintField(PerfettoWire.DebugAnnotation.nameIID, argument.iid) }
            switch argument.tag & 0xFF {
            case ArgumentEncoding.intTag:
                out.appendVarintField(PerfettoWire.DebugAnnotation.intValue, argument.payload[0])
            case ArgumentEncoding.doubleTag:
                out.appendFixed64Field(PerfettoWire.DebugAnnotation.doubleValue, argument.payload[0])
            case ArgumentEncoding.boolTag:
                out.appendVarintField(PerfettoWire.DebugAnnotation.boolValue, argument.payload[0] != 0 ? 1 : 0)
            case ArgumentEncoding.hexTag:
                writeHex(argument.payload, words: Int(argument.tag >> 8))
            default:
                let length = Int(argument.tag >> 8)
                out.appendBytesField(
                    PerfettoWire.DebugAnnotation.stringValue,
                    UnsafeRawBufferPointer(start: UnsafeRawPointer(argument.payload), count: length))
            }
            if let key = argument.key { out.appendBytesField(PerfettoWire.DebugAnnotation.name, key) }
            out.endMessage(annotation)
        }
    }

    /// Writes `words` identifier words as one string of lowercase hex, 16
    /// digits a word.
    mutating func writeHex(_ payload: UnsafePointer<UInt64>, words: Int) {
        let digits: StaticString = "0123456789abcdef"
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(16 * words, 1)) { text in
            for word in 0..<words {
                let value = payload[word]
                for index in 0..<16 {
                    text[word * 16 + index] = digits.utf8Start[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
                }
            }
            out.appendBytesField(
                PerfettoWire.DebugAnnotation.stringValue,
                UnsafeRawBufferPointer(start: text.baseAddress, count: 16 * words))
        }
    }

    mutating func writeFlows(_ annotations: Annotations) {
        if let flow = annotations.flow { out.appendFixed64Field(PerfettoWire.TrackEvent.flowIDs, flow) }
        if let flow = annotations.terminatingFlow {
            out.appendFixed64Field(PerfettoWire.TrackEvent.terminatingFlowIDs, flow)
        }
    }
}
