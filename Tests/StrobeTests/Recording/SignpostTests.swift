import Foundation
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import Strobe

/// Signposts: the USDT probe notes in the binary, probes firing under
/// bpftrace, and the exact ftrace marker lines.
@Suite(.serialized, .processWide)
struct SignpostTests {
    static let probeNames = ["begin", "end", "instant", "counter", "counter_f64", "async_begin", "async_end"]

    /// The built child program; it links Strobe.
    static var traceChild: String { builtProgram("TraceChild") }

    static func which(_ command: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(command)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    @Test func theBinaryCarriesEveryProbe() throws {
        #expect(TraceConfiguration.Signposts.available.contains(.probes), "built without sys/sdt.h")
        let readelf = try #require(Self.which("readelf"), "readelf (binutils) is needed to read ELF notes")
        let outcome = try runProgram(readelf, ["-n", Self.traceChild])
        #expect(outcome.status == 0, "\(outcome.errors)")
        // Each note reads "stapsdt ... Provider: strobe / Name: <probe>".
        var found: Set<String> = []
        var provider = ""
        for line in outcome.output.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("Provider: ") { provider = String(text.dropFirst("Provider: ".count)) }
            if text.hasPrefix("Name: "), provider == "strobe" { found.insert(String(text.dropFirst("Name: ".count))) }
        }
        #expect(outcome.output.contains("stapsdt"))
        #expect(found == Set(Self.probeNames))
    }

    @Test func probesFireUnderBpftrace() throws {
        guard let bpftrace = Self.which("bpftrace") else {
            print("skipping the live probe test: bpftrace is not installed")
            return
        }
        let child = Self.traceChild
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let program = """
            usdt:\(child):strobe:begin { printf("begin %s %d\\n", str(arg0, arg1), arg2); }
            usdt:\(child):strobe:end { printf("end %s %d\\n", str(arg0, arg1), arg2); }
            usdt:\(child):strobe:counter { printf("counter %s %d\\n", str(arg0, arg1), arg2); }
            """
        let outcome = try runProgram(
            bpftrace, ["-q", "-e", program, "-c", "\(child) ok 1"],
            environment: [
                TraceSession.outputEnvironmentVariable: path,
                TraceConfiguration.signpostsEnvironmentVariable: "probes",
            ])
        guard outcome.status == 0 else {
            print(
                "skipping the live probe test: bpftrace could not attach here (exit \(outcome.status)): "
                    + "\(outcome.errors)"
            )
            return
        }
        let lines = outcome.output.split(separator: "\n").map(String.init)
        let expected = ["begin startup 0", "begin load 1", "end load 1", "counter items 42", "end startup 0"]
        #expect(lines.filter { !$0.hasPrefix("counter process.") } == expected, "bpftrace printed: \(outcome.output)")
        // The probes do not replace the trace: it holds the same intervals.
        let trace = try TraceReader.read(contentsOf: path)
        #expect(trace.intervals.map(\.name).sorted() == ["load", "startup"])
    }

    @Test func ftraceMarkerLinesAreExact() throws {
        let markerPath = temporaryTracePath() + ".marker"
        let path = temporaryTracePath()
        _ = FileManager.default.createFile(atPath: markerPath, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: markerPath)
            try? FileManager.default.removeItem(atPath: path)
        }
        var configuration = RecordingTests.configuration(path)
        configuration.signposts = [.ftraceMarker]
        configuration.ftraceMarkerPath = markerPath
        var asyncID: UInt64 = 0
        var childID: UInt64 = 0
        _ = try RecordingTests.record(configuration) {
            Trace.begin("outer")
            Trace.counter("queue depth", 7)
            Trace.counter("ratio", 2.5)
            Trace.counter("loss", -3)
            Trace.interval(Trace.Name("a|b\nc")) {
                Trace.instant("tick")
            }
            let fetch = Trace.beginAsync("fetch")
            asyncID = fetch.id
            let decode = Trace.beginAsync(
                Trace.Name("decode"), parent: fetch, arguments: [Trace.Argument(Trace.Name("size"), .int(2))])
            childID = decode.id
            decode.end(arguments: ["bytes": .int(3)])
            Trace.instant(Trace.Name("decoded"), arguments: [Trace.Argument(Trace.Name("ok"), .bool(true))])
            fetch.end()
            Trace.end()
            Trace.end() // unmatched: announces nothing
        }
        let pid = getpid()
        let lines = try String(contentsOfFile: markerPath, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        #expect(asyncID != 0)
        #expect(
            lines == [
                "B|\(pid)|outer",
                "C|\(pid)|queue depth|7",
                "C|\(pid)|ratio|3",
                "C|\(pid)|loss|-3",
                "B|\(pid)|a b c",
                "I|\(pid)|tick",
                "E|\(pid)",
                "S|\(pid)|fetch|\(asyncID)",
                "S|\(pid)|decode|\(childID)",
                "F|\(pid)|decode|\(childID)",
                "I|\(pid)|decoded",
                "F|\(pid)|fetch|\(asyncID)",
                "E|\(pid)",
                "",
            ])
        // The trace itself is unchanged by signposts.
        let trace = try TraceReader.read(contentsOf: path)
        #expect(Set(trace.intervals.map(\.name)) == ["outer", "a|b\nc", "fetch", "decode"])
    }

    @Test func longNamesAreCutAtACharacterBoundary() throws {
        let markerPath = temporaryTracePath() + ".marker"
        _ = FileManager.default.createFile(atPath: markerPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: markerPath) }
        var configuration = TraceConfiguration()
        configuration.processSamplingInterval = .zero
        configuration.signposts = [.ftraceMarker]
        configuration.ftraceMarkerPath = markerPath
        let name = Trace.Name(String(repeating: "é", count: 1500))
        _ = try RecordingTests.record(configuration) {
            Trace.counter(name, Int64(12345))
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: markerPath))
        #expect(data.count <= FtraceMarker.maximumLineLength)
        let line = try #require(String(data: data, encoding: .utf8), "the cut line must stay valid UTF-8")
        #expect(line.hasPrefix("C|\(getpid())|éé"))
        #expect(line.hasSuffix("é|12345\n"))
    }

    @Test func unavailableSignpostsFailTheStartWithTheReason() throws {
        var configuration = TraceConfiguration()
        configuration.processSamplingInterval = .zero
        configuration.signposts = [.ftraceMarker]
        configuration.ftraceMarkerPath = "/nonexistent-directory/trace_marker"
        #expect {
            _ = try TraceSession.start(configuration)
        } throws: { error in
            "\(error)".contains("/nonexistent-directory/trace_marker") && "\(error)".contains("No such file")
        }
        #expect(!Trace.isRecording)
    }

    @Test func signpostListsParse() throws {
        #expect(TraceConfiguration.Signposts(list: "probes, ftrace-marker") == [.probes, .ftraceMarker])
        #expect(TraceConfiguration.Signposts(list: "all") == [.probes, .ftraceMarker, .osSignposts])
        #expect(TraceConfiguration.Signposts(list: "probes,bogus") == nil)
        #expect(throws: TraceSessionError.self) {
            _ = try TraceConfiguration.fromEnvironment([
                TraceSession.outputEnvironmentVariable: "/tmp/x.pftrace",
                TraceConfiguration.signpostsEnvironmentVariable: "bogus",
            ])
        }
        let configuration = try TraceConfiguration.fromEnvironment([
            TraceSession.outputEnvironmentVariable: "/tmp/x.pftrace",
            TraceConfiguration.signpostsEnvironmentVariable: "probes",
        ])
        #expect(configuration?.signposts == .probes)
    }
}
