import Foundation
import StrobeReader
import StrobeTestSupport
import Testing

@testable import StrobeCLI

/// `strobe export --format pprof`, read by pprof's own reader (`go tool
/// pprof`, Debian's golang-go) on a profiled run of the lens demo.
extension StrobeCLITests {
    /// The `go` command, or nil when it is not installed.
    static let goCommand: String? = ["/usr/bin/go", "/usr/local/go/bin/go", "/usr/lib/go/bin/go"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `strobe` with `arguments` as a list.
    static func strobeRun(_ arguments: [String]) throws -> ProgramOutcome {
        try runProgram(strobePath, arguments, environment: ["CI": "true"])
    }

    /// One function's row of `go tool pprof -top`: flat% and cum%. (The
    /// test sorts by cum: in a debug build `Lens.apply` keeps little self
    /// time, so it may not be among the top 20 by flat.)
    static func pprofTopShares(_ text: String, function: String) -> (flat: Double, cumulative: Double)? {
        for line in text.split(separator: "\n") where line.hasSuffix(function) {
            let percents = line.split(separator: " ").filter { $0.hasSuffix("%") }.compactMap {
                Double($0.dropLast())
            }
            guard percents.count == 3 else { continue }
            return (percents[0], percents[2])
        }
        return nil
    }

    @Test(
        .enabled(
            if: goCommand != nil,
            "go is not installed: apt-get install golang-go (scripts/setup.sh) to check the pprof export with pprof"))
    func pprofExportReadsInGoToolPprofWithTheSummarysShares() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/lens.pftrace"
        let lens = try runProgram(
            builtProgram("LensPipeline"),
            ["--frames", "60", "--size", "320x240", "--cpu-profile", "999", "--trace", trace])
        #expect(lens.status == 0, "\(lens.errors)")
        let function = "LensKit.Lens.apply(to:rows:into:)"
        for interval in [nil, "lens apply"] {
            let scope = interval.map { ["--interval", $0] } ?? []
            let file = folder + "/lens.pb.gz"
            let export = try Self.strobeRun(["export", trace, "--format", "pprof", "-o", file] + scope)
            #expect(export.status == 0, "\(export.errors)")
            let top = try runProgram(
                Self.goCommand!, ["tool", "pprof", "-top", "-cum", "-nodecount=20", file],
                environment: ["HOME": folder, "PPROF_TMPDIR": folder])
            #expect(top.status == 0, "\(top.errors)")
            let pprof = try #require(Self.pprofTopShares(top.output, function: function), "\(top.output)")

            let summary = try Self.strobeRun(
                ["summarize", trace, "--profile", "--format", "json", "--top", "1000"] + scope)
            let object = try JSONSerialization.jsonObject(with: Data(summary.output.utf8)) as? [String: Any]
            let section = try #require((object?["sections"] as? [[String: Any]])?.last)
            let rows = try #require(section["functions"] as? [[String: Any]])
            let row = try #require(rows.first { $0["function"] as? String == function })
            let selfPercent = try #require(row["selfPercent"] as? Double)
            let inclusivePercent = try #require(row["inclusivePercent"] as? Double)
            #expect(abs(pprof.flat - selfPercent) <= 1, "\(top.output)")
            #expect(abs(pprof.cumulative - inclusivePercent) <= 1, "\(top.output)")
        }
    }

    @Test func pprofExportIsGzippedWithThreadLabels() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/profiled.pftrace"
        try Self.writeProfiledTrace(trace)
        let file = folder + "/busy.pb.gz"
        let export = try Self.strobe("export", trace, "--format", "pprof", "--interval", "busy", "-o", file)
        #expect(export.status == 0, "\(export.errors)")
        let gzipped = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(gzipped.starts(with: [0x1f, 0x8b]))
        let bytes = try Gzip.decompress(gzipped)
        let profile = try CPUProfile.read(contentsOf: trace)
        let parsed = try TraceReader.read(contentsOf: trace)
        let inside = profile.samples(within: parsed.intervals(named: "busy"))
        #expect(bytes == PprofExport.encode(profile, samples: inside, threads: parsed.threads))

        let wrongFormat = try Self.strobe("export", trace, "--format", "csv", "--interval", "busy")
        #expect(wrongFormat.status == 2)
        let plain = folder + "/plain.pftrace"
        try Self.writeTrace(plain)
        let nothing = try Self.strobe("export", plain, "--format", "pprof", "-o", folder + "/none.pb.gz")
        #expect(nothing.status == 2)
        #expect(nothing.errors.contains("no CPU samples to export"))
    }
}
