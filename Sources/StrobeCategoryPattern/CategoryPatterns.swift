/// A list of category patterns, as `TraceConfiguration.categories` and
/// `strobe summarize --category` take them: each a name or a glob with `*`
/// (any run of characters, none included); a leading `-` turns what it
/// matches off. A category is chosen when some plain pattern matches it and
/// no `-` pattern does.
///
/// Shared by the SDK, which applies it when a session starts or changes its
/// categories (never while recording an event), and by the reader's filter.
package struct CategoryPatterns: Sendable, Hashable {
    private var included: [String] = []
    private var excluded: [String] = []

    /// The patterns in `patterns`, plain and `-` ones.
    package init(patterns: [String]) {
        for pattern in patterns {
            if pattern.hasPrefix("-") {
                excluded.append(String(pattern.dropFirst()))
            } else {
                included.append(pattern)
            }
        }
    }

    /// Why `patterns` cannot choose categories (a pattern that is empty or
    /// holds a comma), or nil when they can.
    package static func problem(with patterns: [String]) -> String? {
        for pattern in patterns {
            let body = pattern.hasPrefix("-") ? String(pattern.dropFirst()) : pattern
            if body.isEmpty { return "empty category pattern \"\(pattern)\"" }
            if body.contains(",") { return "category pattern \"\(pattern)\" contains a comma" }
        }
        return nil
    }

    /// Whether the category `name` is chosen.
    package func enables(_ name: String) -> Bool {
        included.contains { Self.matches(name, $0) } && !excluded.contains { Self.matches(name, $0) }
    }

    /// Whether `name` matches the glob `pattern`, where `*` matches any run
    /// of characters (none included).
    package static func matches(_ name: String, _ pattern: String) -> Bool {
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
