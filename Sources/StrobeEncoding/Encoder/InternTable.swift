/// Interned ids of name words on one sequence: a direct-mapped cache in
/// front of a dictionary, so repeated names cost a load and a compare.
///
/// A value type over storage it owns: the cache lives in a class instance
/// that frees it when the last table using it goes away, and a table
/// copies it before changing it while another table shares it. The
/// pointers into it are kept in the table itself, so a lookup loads
/// nothing through the class.
struct InternTable {
    private static let slots = 64

    /// The cache's memory: a word and its id per slot.
    private final class Slots {
        let words: UnsafeMutablePointer<UInt64>
        let ids: UnsafeMutablePointer<UInt64>

        init() {
            words = .allocate(capacity: InternTable.slots)
            words.initialize(repeating: .max, count: InternTable.slots)
            ids = .allocate(capacity: InternTable.slots)
            ids.initialize(repeating: 0, count: InternTable.slots)
        }

        init(copying other: Slots) {
            words = .allocate(capacity: InternTable.slots)
            words.initialize(from: other.words, count: InternTable.slots)
            ids = .allocate(capacity: InternTable.slots)
            ids.initialize(from: other.ids, count: InternTable.slots)
        }

        deinit {
            words.deallocate()
            ids.deallocate()
        }
    }

    private var storage = Slots()
    private var words: UnsafeMutablePointer<UInt64>
    private var ids: UnsafeMutablePointer<UInt64>
    private var table: [UInt64: UInt64] = [:]

    init() {
        words = storage.words
        ids = storage.ids
    }

    @inline(__always)
    private static func slot(_ word: UInt64) -> Int {
        Int(truncatingIfNeeded: (word ^ (word >> 17) ^ (word >> 48)) & UInt64(slots - 1))
    }

    /// Makes the cache this table's own before it changes it.
    @inline(__always)
    private mutating func makeCacheUnique() {
        guard !isKnownUniquelyReferenced(&storage) else { return }
        storage = Slots(copying: storage)
        words = storage.words
        ids = storage.ids
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
        makeCacheUnique()
        words[slot] = word
        ids[slot] = id
        return (id, isNew)
    }

    mutating func removeAll() {
        table.removeAll(keepingCapacity: true)
        makeCacheUnique()
        words.update(repeating: .max, count: Self.slots)
    }
}
