import Foundation
import StrobeTestSupport
import Testing

/// `strobe diff-traces` on traces recorded here: a trace against itself
/// changes nothing, a longer spin is called slower, bad paths exit 2.
extension StrobeCLITests {
    @Test func diffTracesOfATraceAgainstItselfChangesNothingAndALongerSpinIsSlower() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let before = folder + "/before.pftrace"
        try Self.writeProfiledTrace(before, spinMilliseconds: 10)
        try FileManager.default.createDirectory(atPath: folder + "/after", withIntermediateDirectories: true)
        // Four times the thread CPU time: the verdict is on wall time, and a
        // 10 ms spin recorded while the other core's tests preempt it can take
        // twice its CPU time (21 ms against the after's 20.6 ms, seen in a CI
        // run with the spin doubled only).
        try Self.writeProfiledTrace(folder + "/after/spin.pftrace", spinMilliseconds: 40)

        let same = try Self.strobe("diff-traces", before, before, "--format", "json")
        #expect(same.status == 0, "\(same.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(same.output.utf8)) as? [String: Any])
        #expect((object["headline"] as? String)?.hasPrefix("no interval changed") == true, "\(object)")
        let intervals = try #require(object["intervals"] as? [[String: Any]])
        let busy = try #require(intervals.first { $0["name"] as? String == "busy" })
        // Thread CPU time, by its mean: most of each 10 ms spin, not 0 and
        // not more than the interval.
        let cpu = try #require(busy["cpuTime"] as? [String: Any])
        let mean = try #require(cpu["baselineMedian"] as? Double)
        #expect(mean > 5e6 && mean < 15e6, "\(cpu)")

        let slower = try Self.strobe("diff-traces", before, folder + "/after")
        #expect(slower.status == 1, "\(slower.errors)")
        let busyRow = try #require(slower.output.split(separator: "\n").first { $0.hasPrefix("busy ") })
        #expect(busyRow.contains("slower"), "\(slower.output)")
        #expect(slower.output.contains("functions inside busy"))
        #expect(slower.output.contains("StrobeCLITests.StrobeCLITests.profiledSpin(nanoseconds:)"))

        let page = try Self.strobe("diff-traces", before, folder + "/after", "--format", "html")
        #expect(page.output.contains("<div class=\"flame\">"))

        let missing = try Self.strobe("diff-traces", before, folder + "/none.pftrace")
        #expect(missing.status == 2)
        #expect(missing.errors.contains("\(folder)/none.pftrace: no such file or directory"), "\(missing.errors)")
        let empty = folder + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let noTraces = try Self.strobe("diff-traces", empty, before)
        #expect(noTraces.status == 2 && noTraces.errors.contains("\(empty): holds no .pftrace file"))
    }
}
