import Foundation
import StrobeHistory
import StrobeResults
import StrobeStoreTestSupport
import StrobeTrend
import Testing

/// The HTML dashboard of `strobe trend`, rendered by a real browser
/// (headless Chromium): the plots, the points and the change labels are in
/// the DOM it builds, and it draws a screenshot.
@Suite(.serialized) struct TrendDashboardTests {
    /// Chromium, or the instruction to install it.
    static func chromium() throws -> String {
        for path in ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw NoBrowser()
    }

    struct NoBrowser: Error, CustomStringConvertible {
        var description: String {
            "the dashboard test needs headless Chromium: `apt-get install -y chromium` (scripts/setup.sh, run by make "
                + "test, installs it)"
        }
    }

    /// Runs `program` with `arguments`; its standard output.
    static func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func theBrowserShowsAPlotPerSeriesEveryRunAndTheChanges() async throws {
        let browser = try Self.chromium()
        let directory = try TrendTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = try NightlyHistory.make(nights: 30, in: directory)
        var noise = TrendNoise(state: 21)
        var runs: [PerfRun] = []
        for night in 0..<30 {
            for host in ["ci-1", "ci-2"] {
                runs.append(
                    history.run(night: night, host: host, build: "candidate", noise: &noise) { test, night in
                        test == "b" && night >= 15 ? 1.15 : 1
                    })
                runs.append(history.run(night: night, host: host, build: "reference", noise: &noise))
            }
        }
        let store = try await TrendTests.store(runs, in: directory)
        let (page, html) = try TrendTests.dashboard(store, repository: history.repository, in: directory)
        #expect(!html.contains("<script") && !html.contains("http://") && !html.contains("https://"))

        let dom = try Self.run(
            browser, ["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + page])
        #expect(dom.status == 0)
        // 4 tests, one plot each; 30 nights × 2 hosts analysed runs and as
        // many reference runs per plot.
        #expect(Self.count("<svg class=\"trend-plot\"", in: dom.output) == 4, "\(dom.output.prefix(400))")
        #expect(Self.count("<circle class=\"point\"", in: dom.output) == 4 * 60)
        #expect(Self.count("<circle class=\"point reference\"", in: dom.output) == 4 * 60)
        // Test b stepped on both hosts at night 16: the code's, labelled
        // with its range (the other tests' 1% share of the suite's median
        // is within the floor: no whole-suite step drags it to the machine).
        let label = "\(history.commits[14].prefix(7))..\(history.commits[15].prefix(7)) · code · +"
        #expect(Self.count("class=\"change-label\"", in: dom.output) == 2, "\(dom.output.count)")
        #expect(Self.count(label, in: dom.output) == 2, "\(label)")
        #expect(dom.output.contains("ci-1") && dom.output.contains("ci-2") && dom.output.contains("reference runs"))
        #expect(dom.output.contains("data-cause=\"code\""))
        // Durations carry their unit on the ticks, not in the axis label.
        #expect(dom.output.contains(">wall<") && !dom.output.contains("wall (ns)"))

        let screenshot = directory + "/trend.png"
        let shot = try Self.run(
            browser,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1100,1500",
                "--screenshot=" + screenshot, "file://" + page,
            ])
        #expect(shot.status == 0)
        let size = (try? FileManager.default.attributesOfItem(atPath: screenshot)[.size] as? Int) ?? 0
        #expect(size > 20_000, "the screenshot holds \(size) bytes")
        if let keep = ProcessInfo.processInfo.environment["STROBE_TREND_SCREENSHOT"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: screenshot, toPath: keep)
            try? FileManager.default.removeItem(atPath: keep + ".html")
            try FileManager.default.copyItem(atPath: page, toPath: keep + ".html")
        }
    }
}
