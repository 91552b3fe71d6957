import Foundation
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// A typo in a grouping key or a version must not turn into one "(none)"
/// group or an empty table: `strobe fleet` refuses it, naming what is
/// stored, and its report leads with the verdict and prints each interval
/// at the level it was judged.
@Suite(.serialized, .processWide)
struct FleetTypoTests {
    @Test func typosAreRefusedAndTheReportLeadsWithItsVerdict() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-fleet-typo-\(getpid())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FleetCommandTests.writeFleet(in: directory + "/traces", sessions: 4)
        let store = directory + "/history.sqlite"
        let ingest = try runProgram(FleetCommandTests.strobe, ["ingest", directory + "/traces", "--history", store])
        #expect(ingest.status == 0, "\(ingest.errors)")

        let cases: [([String], String)] = [
            (["--group-by", "device.clas"], "--group-by device.clas: no session has this metadata key; keys stored: "),
            (
                ["--compare", "5.1", "5.3"],
                "--compare: no session of work has app.version 5.3; versions stored: 5.1, 5.2"
            ),
            (["--compare", "5.1", "5.2", "--version-key", "app.vers"], "--version-key app.vers: no session has"),
        ]
        for (arguments, message) in cases {
            let outcome = try runProgram(
                FleetCommandTests.strobe, ["fleet", "--history", store, "--metric", "work"] + arguments)
            #expect(outcome.status == 2, "\(arguments): \(outcome.output)")
            #expect(outcome.errors.contains(message), "\(arguments): \(outcome.errors)")
        }

        let report = try runProgram(
            FleetCommandTests.strobe,
            ["fleet", "--history", store, "--metric", "work", "--group-by", "device.class", "--compare", "5.1", "5.2"])
        #expect(report.status == 1, "\(report.errors)")
        let first = report.output.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("Fleet 5.2 against 5.1: slower — "), "\(report.output)")
        #expect(first.contains(" regressions: work P50 (high) +"), "\(first)")
        #expect(report.output.contains("Intervals at "), "\(report.output)")
        #expect(!report.output.contains("change [95% CI]"), "\(report.output)")
        // The old spelling of --group-by still works, hidden from the help.
        let old = try runProgram(
            FleetCommandTests.strobe,
            ["fleet", "--history", store, "--metric", "work", "--group-by", "device.class"])
        #expect(old.status == 0, "\(old.errors)")
        let help = try runProgram(FleetCommandTests.strobe, ["fleet", "--help"])
        #expect(help.output.contains("--group-by") && !help.output.contains("--by "), "\(help.output)")
    }
}
