import PerfettoWire

/// Arguments and flows of a record.
extension RecordEncoder {
    struct Annotations {
        var flow: UInt64?
        var terminatingFlow: UInt64?
        /// Each argument: its interned key, or 0 and the key's text when
        /// the key is written inline.
        var arguments: [(iid: UInt64, tag: UInt64, payload: UnsafePointer<UInt64>, key: UnsafeRawBufferPointer?)] = []
        /// The text of the argument that holds the record's own name, when
        /// it has one (its name word is `ArgumentEncoding.inlineNameWord`).
        var inlineName: UnsafeRawBufferPointer?
    }

    /// The text of the argument that holds the name of the record, when it
    /// has one (its name word is `ArgumentEncoding.inlineNameWord`).
    static func inlineName(_ record: UnsafePointer<UInt64>, kind: UInt64) -> UnsafeRawBufferPointer? {
        guard kind & RecordLayout.withArguments != 0 else { return nil }
        var found: UnsafeRawBufferPointer?
        ArgumentBlock.forEach(in: record, at: ArgumentBlock.offset(kind: kind)) { argument in
            if let name = nameText(argument, in: record) { found = name }
        }
        return found
    }

    /// The text of `argument` when it is the record's own name.
    private static func nameText(
        _ argument: ArgumentBlock.Argument, in record: UnsafePointer<UInt64>
    ) -> UnsafeRawBufferPointer? {
        guard argument.key == ArgumentEncoding.nameKey, argument.tag & 0xFF == ArgumentEncoding.stringTag else {
            return nil
        }
        return UnsafeRawBufferPointer(start: record + argument.position + 2, count: Int(argument.tag >> 8))
    }

    /// Reads the flows and the argument block from `offset` on, in one walk
    /// of the block, and moves `offset` past them.
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
            offset =
                ArgumentBlock.forEach(in: record, at: offset) { argument in
                    let payload = record + argument.position + 2
                    if argument.key == ArgumentEncoding.nameKey {
                        // The event's own name, not an annotation.
                        result.inlineName = Self.nameText(argument, in: record) ?? result.inlineName
                    } else if ArgumentEncoding.isInlineKey(argument.key) {
                        let keyText = UnsafeRawBufferPointer(
                            start: payload + argument.payloadWords, count: argument.keyLength)
                        result.arguments.append((0, argument.tag, payload, keyText))
                    } else {
                        result.arguments.append(
                            (annotationNameIID(argument.key, &interning), argument.tag, payload, nil))
                    }
                }.end
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
