import Foundation

/// Fields of comma-separated text.
public enum CSVField {
    /// `text` as one CSV field: quoted, with quotes doubled, when it holds a
    /// comma, a quote or a line break; as it is otherwise.
    public static func escape(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
