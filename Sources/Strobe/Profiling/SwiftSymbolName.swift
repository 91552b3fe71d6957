/// Shortens a demangled Swift name to what a profile reader scans for: the
/// parameter types and the result type go, the argument labels stay, as in
/// `LensKit.ToneCurve.build(for:)` for
/// `LensKit.ToneCurve.build(for: Swift.Int) -> [Swift.Float]`.
///
/// A declaration's generic parameters go (`max<A where A: P>(_:_:)` is
/// `max(_:_:)`); a `static ` in front goes, a private name's discriminator
/// (`(spin in _C508D9F5…)`) leaves the name alone, and a closure's
/// signature goes (`closure #1 in …`). Generic arguments are left as
/// written. Text it cannot follow is returned unchanged.
enum SwiftSymbolName {
    static func shortened(_ name: String) -> String {
        var name = name
        // The optimizer's wrappers say nothing about the source: `merged `
        // and `function signature specialization <…> of ` go.
        if name.hasPrefix("merged ") { name.removeFirst("merged ".count) }
        let wrapper = "function signature specialization <"
        while name.hasPrefix(wrapper), let close = matchingClose(Array(name), from: wrapper.count - 1) {
            let rest = Array(name)[(close + 1)...]
            guard rest.starts(with: " of ") else { break }
            name = String(rest.dropFirst(4))
        }
        if name.hasPrefix("static ") { name.removeFirst("static ".count) }
        // Where an extension's module is not the type's: `(extension in
        // Swift):Swift.Collection.map` is `Swift.Collection.map`.
        while let start = name.range(of: "(extension in "), let end = name[start.upperBound...].range(of: "):") {
            name.removeSubrange(start.lowerBound..<end.upperBound)
        }
        let characters = withoutDiscriminators(replacing(Array(" in static "), with: Array(" in "), in: Array(name)))
        var output = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let previous = output.last
            // A declaration's generic parameters: `max<A where A: P>(_:)`
            // becomes `max(_:)`; a type's arguments (`Array<Int>.f`) stay.
            if character == "<", let previous, previous.isLetter || previous.isNumber || previous == "_",
                let close = matchingClose(characters, from: index), close + 1 < characters.count,
                characters[close + 1] == "("
            {
                index = close + 1
                continue
            }
            // A closure's signature: `closure #1 (A) -> B in` becomes
            // `closure #1 in`.
            if character == "(", output.hasSuffix(" "), output.contains("closure #"),
                let close = matchingParenthesis(characters, from: index)
            {
                var next = close + 1
                if characters[next...].starts(with: " -> ") { next = endOfResultType(characters, from: next + 4) }
                if characters[next...].starts(with: " in ") {
                    output.removeLast()
                    index = next
                    continue
                }
            }
            if character == "(", let previous,
                previous.isLetter || previous.isNumber || previous == "_" || previous == ">" && !output.hasSuffix("->"),
                let close = matchingParenthesis(characters, from: index)
            {
                output += "(" + labels(String(characters[(index + 1)..<close])) + ")"
                index = close + 1
                // Effects and the result type: ` async throws -> Type`, up
                // to where the enclosing text goes on (a ` in ` or the end).
                for effect in [" async", " throws"] where characters[index...].starts(with: Array(effect)) {
                    index += effect.count
                    // Typed throws: ` throws(E)`.
                    if effect == " throws", index < characters.count, characters[index] == "(",
                        let close = matchingParenthesis(characters, from: index)
                    {
                        index = close + 1
                    }
                }
                if characters[index...].starts(with: " -> ") {
                    index = endOfResultType(characters, from: index + 4)
                }
                continue
            }
            output.append(character)
            index += 1
        }
        return output
    }

    /// `(name in _0123ABCD)` becomes `name`.
    private static func withoutDiscriminators(_ characters: [Character]) -> [Character] {
        var output: [Character] = []
        var index = 0
        while index < characters.count {
            if characters[index] == "(", let close = characters[index...].firstIndex(of: ")") {
                let inside = Array(characters[(index + 1)..<close])
                let marker = Array(" in _")
                if let split = firstIndex(of: marker, in: inside), split > 0,
                    inside[..<split].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
                    inside[(split + marker.count)...].allSatisfy({ $0.isHexDigit })
                {
                    output += inside[..<split]
                    index = close + 1
                    continue
                }
            }
            output.append(characters[index])
            index += 1
        }
        return output
    }

    private static func firstIndex(of pattern: [Character], in text: [Character]) -> Int? {
        guard text.count >= pattern.count else { return nil }
        for start in 0...(text.count - pattern.count) where text[start..<(start + pattern.count)].elementsEqual(pattern)
        {
            return start
        }
        return nil
    }

    private static func replacing(_ pattern: [Character], with replacement: [Character], in text: [Character])
        -> [Character]
    {
        var output: [Character] = []
        var index = 0
        while index < text.count {
            if text[index...].starts(with: pattern) {
                output += replacement
                index += pattern.count
            } else {
                output.append(text[index])
                index += 1
            }
        }
        return output
    }

    /// The index of the `)` closing the `(` at `open`.
    private static func matchingParenthesis(_ characters: [Character], from open: Int) -> Int? {
        guard let close = matchingClose(characters, from: open), characters[close] == ")" else { return nil }
        return close
    }

    /// The index of the bracket that closes the one at `open`, whatever
    /// its kind (`(`, `<` or `[`); `->` is no bracket.
    static func matchingClose(_ characters: [Character], from open: Int) -> Int? {
        var depth = 0
        for index in open..<characters.count {
            switch characters[index] {
            case ">" where index > 0 && characters[index - 1] == "-": break
            case "(", "<", "[": depth += 1
            case ")", ">", "]":
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
        }
        return nil
    }

    /// Where a result type starting at `start` ends: the end of the text or
    /// the ` in ` of an enclosing closure's name, outside brackets.
    private static func endOfResultType(_ characters: [Character], from start: Int) -> Int {
        var depth = 0
        var index = start
        while index < characters.count {
            switch characters[index] {
            case ">" where characters[index - 1] == "-": break
            case "(", "<", "[": depth += 1
            case ")", ">", "]": depth -= 1
            case " " where depth == 0:
                if characters[index...].starts(with: " in ") { return index }
            default: break
            }
            index += 1
        }
        return index
    }

    /// `for: Swift.Int, _: Swift.String` → `for:_:`; an unlabelled
    /// parameter gives `_:`.
    private static func labels(_ parameters: String) -> String {
        guard !parameters.isEmpty else { return "" }
        var result = ""
        var depth = 0
        var current = ""
        func finish() {
            let parameter = current.drop(while: { $0 == " " })
            if let colon = parameter.firstIndex(of: ":"),
                parameter[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
                !parameter[..<colon].isEmpty
            {
                result += parameter[..<colon] + ":"
            } else {
                result += "_:"
            }
            current = ""
        }
        var last: Character = " "
        for character in parameters {
            defer { last = character }
            switch character {
            case ">" where last == "-": break
            case "(", "<", "[": depth += 1
            case ")", ">", "]": depth -= 1
            case "," where depth == 0:
                finish()
                continue
            default: break
            }
            current.append(character)
        }
        finish()
        return result
    }
}
