/// Texts kept once each, in the order they first came, each with its index:
/// the string tables of the formats Strobe reads and writes (a trace's
/// names, pprof's string table, a recovered crash file's names).
///
/// ```swift
/// var strings = UniqueTexts(startingWith: [""])  // pprof: index 0 is ""
/// strings.index(of: "main")  // 1
/// strings.index(of: "main")  // 1 again
/// ```
public struct UniqueTexts: Sendable {
    /// The texts, in the order they were first added.
    public private(set) var texts: [String]
    private var indexes: [String: Int] = [:]

    /// A table holding `first`, in order (a repeated text keeps its first
    /// index).
    public init(startingWith first: [String] = []) {
        texts = []
        for text in first { _ = index(of: text) }
    }

    /// The index of `text`, added at the end when it is new.
    public mutating func index(of text: String) -> Int {
        if let known = indexes[text] { return known }
        let index = texts.count
        texts.append(text)
        indexes[text] = index
        return index
    }

    /// The text at `index`, or nil past the end.
    public func text(at index: Int) -> String? {
        index >= 0 && index < texts.count ? texts[index] : nil
    }
}
