import Foundation

/// Text placed in an HTML page.
public enum HTMLText {
    /// `text` with `&`, `<`, `>` and `"` written as entities, safe inside an
    /// element or a double-quoted attribute.
    public static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// `text` escaped, each span between two backticks in a `<code>`
    /// element (as Markdown writes code); a lone backtick stays as it is.
    public static func withCode(_ text: String) -> String {
        let parts = text.split(separator: "`", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return escape(text) }
        var html = ""
        for (index, part) in parts.enumerated() {
            let isCode = index % 2 == 1
            if isCode, index == parts.count - 1 {
                html += "`" + escape(String(part))
            } else {
                html += isCode ? "<code>\(escape(String(part)))</code>" : escape(String(part))
            }
        }
        return html
    }
}
