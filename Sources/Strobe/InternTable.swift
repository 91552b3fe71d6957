/// Interned ids of name words on one sequence: a direct-mapped cache in
/// front of a dictionary, so repeated names cost a load and a compare.
struct InternTable {
    private static let slots = 64
    private let words: UnsafeMutablePointer<UInt64>
    private let ids: UnsafeMutablePointer<UInt64>
    private var table: [UInt64: UInt64] = [:]

    init() {
        words = .allocate(capacity: Self.slots)
        words.initialize(repeating: .max, count: Self.slots)
        ids = .allocate(capacity: Self.slots)
        ids.initialize(repeating: 0, count: Self.slots)
    }

    func release() {
        words.deallocate()
        ids.deallocate()
    }

    @inline(__always)
    private static func slot(_ word: UInt64) -> Int {
        Int(truncatingIfNeeded: (word ^ (word >> 17) ^ (word >> 48)) & UInt64(slots - 1))
    }

    /// The id of `word`, and whether it was just assigned.
    @inline(__always)
    mutating func id(for word: UInt64) -> (id: UInt64, isNew: Bool) {
        let slot = Self.slot(word)
        if words[slot] == word { return (ids[slot], false) }
        let id: UInt64
        var isNew = false
        if let known = table[word] {
            id = known
        } else {
            id = UInt64(table.count + 1)
            table[word] = id
            isNew = true
        }
        words[slot] = word
        ids[slot] = id
        return (id, isNew)
    }

    mutating func removeAll() {
        table.removeAll(keepingCapacity: true)
        words.update(repeating: .max, count: Self.slots)
    }
}
