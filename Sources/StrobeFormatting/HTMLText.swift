import Foundation

/// Text placed in an HTML page.
public enum HTMLText {
    /// `text` with `&`, `<`, `>` and `"` written as entities, safe inside an
    /// element or a double-quoted attribute.
    public static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
