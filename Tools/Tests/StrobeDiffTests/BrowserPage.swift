import Foundation
import StrobeTestSupport

/// A page as headless Chromium builds it: the DOM once its scripts ran, and
/// the errors they raised (every uncaught error and `console.error` is
/// written into the page's `data-errors` before the DOM is printed, and
/// Chromium's own log of the console is read too).
struct BrowserPage {
    /// Chromium's path.
    static let chromium = "/usr/bin/chromium"
    /// Whether Chromium is installed.
    static var available: Bool { FileManager.default.isExecutableFile(atPath: chromium) }

    /// The DOM after the scripts ran.
    var dom: String
    /// The errors the page's scripts raised.
    var errors: [String]
    /// Seconds from Chromium's start to its printed DOM.
    var seconds: Double

    /// Renders `html` in a window `width` pixels wide.
    init(rendering html: String, width: Int = 1280) throws {
        let catcher = """
            <script>window.__errors=[];window.addEventListener("error",function(e){__errors.push(String(e.message))});
            (function(){var c=console.error;console.error=function(){__errors.push([].join.call(arguments," "));
            c.apply(console,arguments)}})();</script>
            """
        let report = "<script>document.body.setAttribute('data-errors',JSON.stringify(window.__errors))</script>"
        var page = html.replacingOccurrences(of: "<head>", with: "<head>" + catcher)
        if let end = page.range(of: "</body>", options: .backwards) {
            page.replaceSubrange(end, with: report + "</body>")
        }
        let path = NSTemporaryDirectory() + "strobe-page-\(getpid())-\(UUID().uuidString).html"
        try page.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let start = Date()
        let outcome = try runProgram(
            Self.chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                "--window-size=\(width),900", "--dump-dom", "file://" + path,
            ], timeLimit: 120)
        seconds = Date().timeIntervalSince(start)
        dom = outcome.output
        var found: [String] = []
        if let match = dom.firstMatch(of: #/data-errors="([^"]*)"/#) {
            let text = String(match.1).replacingOccurrences(of: "&quot;", with: "\"")
            if let data = text.data(using: .utf8), let list = try? JSONDecoder().decode([String].self, from: data) {
                found += list
            }
        } else {
            found.append("the page printed no data-errors: its scripts did not run to the end")
        }
        for line in outcome.errors.split(separator: "\n") where line.contains(":CONSOLE") && line.contains("Uncaught") {
            found.append(String(line))
        }
        errors = found
    }
}
