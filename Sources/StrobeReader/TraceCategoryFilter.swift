import StrobeCategoryPattern

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
    private let patterns: CategoryPatterns

    init(patterns: [String]) {
        self.patterns = CategoryPatterns(patterns: patterns)
    }

    /// Whether an event in `categories` is kept: one of them is chosen.
    func keeps(_ categories: [String]) -> Bool {
        categories.contains { patterns.enables($0) }
    }
}
