import Foundation

/// A page as headless Chromium builds it: the DOM once its scripts ran, and
/// the errors they raised (every uncaught error and `console.error` is
/// written into the page's `data-errors` before the DOM is printed, and
/// Chromium's own log of the console is read too).
public struct BrowserPage {
    /// Chromium's path.
    public static let chromium = "/usr/bin/chromium"
    /// Whether Chromium is installed.
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: chromium) }

    /// The DOM after the scripts ran.
    public var dom: String
    /// The errors the page's scripts raised.
    public var errors: [String]
    /// Seconds from Chromium's start to its printed DOM.
    public var seconds: Double

    /// Renders `html` in a window `width` pixels wide.
    public init(rendering html: String, width: Int = 1280) throws {
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

    /// Draws `html` in a window `width` × `height` pixels and returns the
    /// PNG Chromium wrote, and the seconds from its start to the file.
    public static func screenshot(of html: String, width: Int = 1280, height: Int = 1600) throws -> (
        png: Data, seconds: Double
    ) {
        let base = NSTemporaryDirectory() + "strobe-shot-\(getpid())-\(UUID().uuidString)"
        try html.write(toFile: base + ".html", atomically: true, encoding: .utf8)
        defer {
            try? FileManager.default.removeItem(atPath: base + ".html")
            try? FileManager.default.removeItem(atPath: base + ".png")
        }
        let start = Date()
        let outcome = try runProgram(
            chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=\(width),\(height)",
                "--screenshot=" + base + ".png", "file://" + base + ".html",
            ], timeLimit: 120)
        let seconds = Date().timeIntervalSince(start)
        guard let png = FileManager.default.contents(atPath: base + ".png") else {
            throw ScreenshotMissing(status: outcome.status, errors: String(outcome.errors.suffix(2000)))
        }
        return (png, seconds)
    }

    /// Chromium wrote no screenshot.
    public struct ScreenshotMissing: Error, CustomStringConvertible {
        /// Chromium's exit status.
        public var status: Int32
        /// The end of what it printed on standard error.
        public var errors: String
        public var description: String { "Chromium (exit status \(status)) wrote no screenshot: \(errors)" }
    }

    /// Whether `png` is a PNG image of `width` × `height` pixels (its IHDR
    /// chunk, big-endian after the 8-byte signature and the chunk's length
    /// and type).
    public static func isPNG(_ png: Data, width: Int, height: Int) -> Bool {
        let bytes = [UInt8](png.prefix(24))
        guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else { return false }
        func word(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return word(16) == width && word(20) == height
    }
}
