import PerfettoWire

/// Interned ids and the interned data a packet introduces.
extension RecordEncoder {
    struct Interning {
        var newCategory: (iid: UInt64, category: UInt64)?
        var newEventName: (iid: UInt64, word: UInt64)?
        var newAnnotationNames: [(iid: UInt64, word: UInt64)] = []
        var isEmpty: Bool { newEventName == nil && newAnnotationNames.isEmpty && newCategory == nil }
    }

    /// The interned id of `category` (index plus one), or 0 for none.
    @inline(__always)
    mutating func categoryIID(_ category: UInt64, _ interning: inout Interning) -> UInt64 {
        guard category != 0 else { return 0 }
        let (iid, isNew) = state.categoryNames.id(for: category)
        if isNew { interning.newCategory = (iid, category) }
        return iid
    }

    @inline(__always)
    mutating func eventNameIID(_ word: UInt64, _ interning: inout Interning) -> UInt64 {
        let (iid, isNew) = state.eventNames.id(for: word)
        if isNew { interning.newEventName = (iid, word) }
        return iid
    }

    mutating func annotationNameIID(_ word: UInt64, _ interning: inout Interning) -> UInt64 {
        let (iid, isNew) = state.annotationNames.id(for: word)
        if isNew { interning.newAnnotationNames.append((iid, word)) }
        return iid
    }

    mutating func writeInterning(_ interning: Interning) {
        guard !interning.isEmpty else { return }
        let data = out.beginMessage(PerfettoWire.TracePacket.internedData)
        if let category = interning.newCategory {
            let entry = out.beginMessage(PerfettoWire.InternedData.eventCategories)
            out.appendVarintField(PerfettoWire.InternedData.iid, category.iid)
            out.appendStringField(
                PerfettoWire.InternedData.name, names.categoryName(UInt32(category.category - 1)))
            out.endMessage(entry)
        }
        if let name = interning.newEventName {
            let entry = out.beginMessage(PerfettoWire.InternedData.eventNames)
            out.appendVarintField(PerfettoWire.InternedData.iid, name.iid)
            out.appendStringField(PerfettoWire.InternedData.name, names.text(of: name.word))
            out.endMessage(entry)
        }
        for name in interning.newAnnotationNames {
            let entry = out.beginMessage(PerfettoWire.InternedData.debugAnnotationNames)
            out.appendVarintField(PerfettoWire.InternedData.iid, name.iid)
            out.appendStringField(PerfettoWire.InternedData.name, ResourceUsageKeys.annotationText(name.word, names))
            out.endMessage(entry)
        }
        out.endMessage(data)
    }
}
