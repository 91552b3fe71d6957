/// An event's arguments in the order they came (a later one of a key
/// wins): kept as pairs, since most events carry one or none, and made a
/// dictionary only where one is wanted.
struct ArgumentList {
    private(set) var pairs: [(String, TraceArgument)] = []

    var isEmpty: Bool { pairs.isEmpty }

    mutating func append(_ key: String, _ value: TraceArgument) {
        pairs.append((key, value))
    }

    /// The arguments by key, the last value of each.
    var dictionary: [String: TraceArgument] {
        if pairs.isEmpty { return [:] }
        return Dictionary(pairs, uniquingKeysWith: { _, new in new })
    }

    /// Each key once, with its last value, in the order of the keys.
    var sorted: [(String, TraceArgument)] {
        if pairs.count < 2 { return pairs }
        return dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
