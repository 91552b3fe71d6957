/// A set of nesting levels, kept in a bit mask for the first 64 levels and a
/// set beyond, so the common case costs a shift and a mask.
struct NestingLevels {
    private var mask: UInt64 = 0
    private var deep: Set<Int64> = []

    var isEmpty: Bool { mask == 0 && deep.isEmpty }

    mutating func insert(_ level: Int64) {
        if level >= 0, level < 64 {
            mask |= 1 << UInt64(level)
        } else {
            deep.insert(level)
        }
    }

    /// Removes `level`; returns whether it was there.
    mutating func remove(_ level: Int64) -> Bool {
        if level >= 0, level < 64 {
            let bit: UInt64 = 1 << UInt64(level)
            defer { mask &= ~bit }
            return mask & bit != 0
        }
        return deep.remove(level) != nil
    }

    mutating func removeAll() {
        mask = 0
        deep = []
    }
}
