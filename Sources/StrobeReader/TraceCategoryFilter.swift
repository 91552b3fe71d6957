extension ParsedTrace {
    /// The trace with only the intervals and instants in the categories
    /// `patterns` choose: names or globs where `*` matches any run of
    /// characters, a leading `-` turning off what it matches, as a
    /// session's categories are chosen. Events without a category are left
    /// out; counters are kept.
    public func keepingCategories(_ patterns: [String]) -> ParsedTrace {
        let filter = CategoryFilter(patterns: patterns)
        var result = self
        result.intervals = IntervalList(intervals.filter { filter.keeps($0.categories) })
        result.instants = instants.filter { filter.keeps($0.categories) }
        return result
    }
}

/// Category patterns, read as `TraceConfiguration.categories` reads them.
struct CategoryFilter {
    private var included: [String] = []
    private var excluded: [String] = []

    init(patterns: [String]) {
        for pattern in patterns {
            if pattern.hasPrefix("-") {
                excluded.append(String(pattern.dropFirst()))
            } else {
                included.append(pattern)
            }
        }
    }

    /// Whether an event in `categories` is kept: one of them is chosen.
    func keeps(_ categories: [String]) -> Bool {
        categories.contains { name in
            included.contains { Self.matches(name, $0) } && !excluded.contains { Self.matches(name, $0) }
        }
    }

    /// Whether `name` matches the glob `pattern`, where `*` matches any run
    /// of characters (none included).
    static func matches(_ name: String, _ pattern: String) -> Bool {
        let name = Array(name.utf8)
        let pattern = Array(pattern.utf8)
        var n = 0
        var p = 0
        var star = -1
        var resume = 0
        while n < name.count {
            if p < pattern.count, pattern[p] != UInt8(ascii: "*"), pattern[p] == name[n] {
                n += 1
                p += 1
            } else if p < pattern.count, pattern[p] == UInt8(ascii: "*") {
                star = p
                resume = n
                p += 1
            } else if star >= 0 {
                p = star + 1
                resume += 1
                n = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}
