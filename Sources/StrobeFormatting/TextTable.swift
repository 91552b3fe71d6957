/// An aligned plain-text table.
public struct TextTable: Sendable {
    /// Column titles.
    public var header: [String]
    /// Rows of cells.
    public var rows: [[String]] = []
    /// Columns aligned right (numbers).
    public var rightAligned: Set<Int>

    /// A table with these column titles; `rightAligned` columns hold numbers.
    public init(header: [String], rightAligned: Set<Int> = []) {
        self.header = header
        self.rightAligned = rightAligned
    }

    /// The table as lines of text, its columns aligned by the width each
    /// cell takes on a terminal (``displayWidth(of:)``).
    public func render() -> String {
        var widths = header.map(Self.displayWidth(of:))
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], Self.displayWidth(of: cell))
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: max(widths[index] - Self.displayWidth(of: cell), 0))
                return rightAligned.contains(index) ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        var lines = [line(header), line(widths.map { String(repeating: "-", count: $0) })]
        lines += rows.map(line)
        return lines.joined(separator: "\n")
    }
}

extension TextTable {
    /// `text`, cut to `width` characters with an ellipsis in the middle, so
    /// a long name keeps its start and its end; unchanged when it fits or
    /// when `width` leaves no room for both.
    public static func clipped(_ text: String, to width: Int) -> String {
        guard text.count > width, width > 5 else { return text }
        let keep = width - 1
        return String(text.prefix(keep / 2)) + "…" + String(text.suffix(keep - keep / 2))
    }

    /// The columns `text` takes on a terminal: two for East Asian wide and
    /// full-width characters and emoji, none for combining marks, format
    /// characters and ANSI colour sequences, one for anything else.
    public static func displayWidth(of text: String) -> Int {
        var width = 0
        var inEscape = false
        for scalar in text.unicodeScalars {
            if inEscape {
                if (0x40...0x7E).contains(scalar.value) && scalar != "[" { inEscape = false }
                continue
            }
            if scalar == "\u{1B}" {
                inEscape = true
                continue
            }
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format, .control: continue
            default: break
            }
            width += isWide(scalar) ? 2 : 1
        }
        return width
    }

    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        let ranges: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
            0x1F900...0x1F9FF, 0x20000...0x3FFFD,
        ]
        return ranges.contains { $0.contains(value) } || scalar.properties.isEmojiPresentation
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}
