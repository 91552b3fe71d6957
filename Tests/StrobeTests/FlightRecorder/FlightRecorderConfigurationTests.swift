import Foundation
import StrobeTestTraits
import Testing

@testable import Strobe

/// Flight-recorder settings: every bad one names the problem, and trigger
/// reasons make safe file names.
@Suite(.serialized, .processWide)
struct FlightRecorderConfigurationTests {
    @Test func badConfigurationsNameTheProblem() throws {
        let directory = FlightRecorderTriggerTests.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func problem(_ change: (inout TraceConfiguration) -> Void) -> String {
            var configuration = FlightRecorderTriggerTests.configuration(directory: directory)
            change(&configuration)
            do {
                let session = try TraceSession.start(configuration)
                try? session.stop()
                return "no error"
            } catch {
                return error.description
            }
        }
        func expectProblem(
            _ text: String, sourceLocation: SourceLocation = #_sourceLocation,
            _ change: (inout TraceConfiguration) -> Void
        ) {
            let description = problem(change)
            #expect(description.contains(text), "\(description)", sourceLocation: sourceLocation)
        }
        expectProblem("triggers need a flightRecorder") {
            $0.flightRecorder = nil
            $0.triggers = [.counter("x", above: 1)]
        }
        expectProblem("whenBufferFull = .overwriteOldest") { $0.whenBufferFull = .discardNewest }
        expectProblem("flightRecorder.before must not be negative") { $0.flightRecorder?.before = .milliseconds(-1) }
        expectProblem("flightRecorder.after must not be negative") { $0.flightRecorder?.after = .seconds(-2) }
        expectProblem("flightRecorder.minimumSpacing") { $0.flightRecorder?.minimumSpacing = .seconds(-1) }
        expectProblem("flightRecorder.maximumFiles must be at least 1") { $0.flightRecorder?.maximumFiles = 0 }
        expectProblem("flightRecorder.maximumBytes must be positive") { $0.flightRecorder?.maximumBytes = 0 }
        expectProblem("triggers[0]: the interval name is empty") {
            $0.triggers = [.interval("", longerThan: .milliseconds(1))]
        }
        expectProblem("triggers[1] (frame): the threshold must not be negative") {
            $0.triggers = [.counter("depth", above: 1), .interval("frame", longerThan: .milliseconds(-5))]
        }
        expectProblem("must be a finite number") { $0.triggers = [.counter("depth", above: .nan)] }
        expectProblem("triggers[1] (depth above 1) is listed twice") {
            $0.triggers = [.counter("depth", above: 1), .counter("depth", above: 1)]
        }
        // A directory that cannot exist: its parent is a file.
        let file = directory + "-file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let notCreatable = problem { $0.flightRecorder?.directory = file + "/dumps" }
        #expect(notCreatable.contains("flightRecorder.directory \(file)/dumps: cannot create"), "\(notCreatable)")
        #expect(notCreatable.hasSuffix("(errno \(ENOTDIR))"), "\(notCreatable)")
        expectProblem("is not a directory") { $0.flightRecorder?.directory = file }
        // A directory on a read-only file system.
        let readOnly = problem { $0.flightRecorder?.directory = "/proc/self" }
        #expect(readOnly.contains("flightRecorder.directory /proc/self is not writable"), "\(readOnly)")
        #expect(readOnly.contains("(errno "), "\(readOnly)")
        let none = problem { _ in }
        #expect(none == "no error")
    }

    @Test func reasonsMakeSafeFileNames() {
        #expect(TriggerText.fileNamePart("frame over 33ms") == "frame-over-33ms")
        #expect(TriggerText.fileNamePart("  Checkout FAILED: card/declined!! ") == "checkout-failed-card-declined")
        #expect(TriggerText.fileNamePart("../../etc/passwd") == "etc-passwd")
        #expect(TriggerText.fileNamePart("✈︎ ünïcode") == "n-code")
        #expect(TriggerText.fileNamePart("") == "trigger")
        #expect(TriggerText.fileNamePart(String(repeating: "a", count: 500)).count == 64)
        #expect(
            TraceConfiguration.Trigger.interval("frame", longerThan: .milliseconds(33)).description == "frame over 33ms"
        )
        #expect(
            TraceConfiguration.Trigger.interval("load", longerThan: .milliseconds(1500)).description == "load over 1.5s"
        )
        #expect(TraceConfiguration.Trigger.counter("queue.depth", above: 100).description == "queue.depth above 100")
        #expect(TriggerDirectory.isDumpName("20261123T171502.123Z-frame-over-33ms.pftrace"))
        #expect(!TriggerDirectory.isDumpName("20261123T171502.123Z-frame-over-33ms.pftrace.partial"))
        #expect(!TriggerDirectory.isDumpName("20261123T171502.123Z-Frame.pftrace"))
        #expect(!TriggerDirectory.isDumpName("notes.pftrace"))
        #expect(TriggerDirectory.timeStamp(realtime: 1_795_454_102_123_000_000) == "20261123T171502.123Z")
    }

    /// The environment turns on a flight recorder with its settings and
    /// triggers, and crash capture; every value it cannot read is named.
    @Test func theEnvironmentAsksForAFlightRecorderAndCrashCapture() throws {
        let environment = [
            "STROBE_FLIGHT_RECORDER_DIR": "/tmp/dumps",
            "STROBE_FLIGHT_RECORDER_BEFORE": "1.5s",
            "STROBE_FLIGHT_RECORDER_AFTER": "250ms",
            "STROBE_FLIGHT_RECORDER_SPACING": "2m",
            "STROBE_FLIGHT_RECORDER_MAX_FILES": "3",
            "STROBE_FLIGHT_RECORDER_MAX_BYTES": "1048576",
            "STROBE_FLIGHT_RECORDER_TRIGGERS": "interval:frame>33ms, counter:queue.depth>100,counter:fps<29.5",
            "STROBE_CRASH_CAPTURE": "/tmp/app.strobe-crash",
        ]
        let configuration = try #require(try TraceConfiguration.fromEnvironment(environment))
        #expect(configuration.outputPath == nil)
        #expect(configuration.whenBufferFull == .overwriteOldest)
        #expect(
            configuration.flightRecorder
                == .init(
                    directory: "/tmp/dumps", before: .milliseconds(1500), after: .milliseconds(250),
                    minimumSpacing: .seconds(120),
                    maximumFiles: 3, maximumBytes: 1 << 20))
        #expect(
            configuration.triggers == [
                .interval("frame", longerThan: .milliseconds(33)), .counter("queue.depth", above: 100),
                .counter("fps", below: 29.5),
            ])
        #expect(configuration.crashCapture?.path == "/tmp/app.strobe-crash")

        let crashOnly = try #require(try TraceConfiguration.fromEnvironment(["STROBE_CRASH_CAPTURE": "/tmp/c"]))
        #expect(crashOnly.flightRecorder == nil && crashOnly.whenBufferFull == .overwriteOldest)
        let streamed = try #require(
            try TraceConfiguration.fromEnvironment([
                "STROBE_TRACE_OUTPUT": "/tmp/t.pftrace", "STROBE_CRASH_CAPTURE": "/tmp/c",
            ]))
        #expect(streamed.whenBufferFull == .discardNewest && streamed.crashCapture?.path == "/tmp/c")
        #expect(try TraceConfiguration.fromEnvironment(["HOME": "/root"]) == nil)

        func problem(_ changes: [String: String], base: [String: String] = environment) -> String {
            var environment = base
            for (key, value) in changes { environment[key] = value }
            do {
                _ = try TraceConfiguration.fromEnvironment(environment)
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(problem(["STROBE_FLIGHT_RECORDER_BEFORE": "soon"]).contains("STROBE_FLIGHT_RECORDER_BEFORE=soon"))
        #expect(problem(["STROBE_FLIGHT_RECORDER_AFTER": "5"]).contains("expected a duration"))
        #expect(problem(["STROBE_FLIGHT_RECORDER_MAX_FILES": "0"]).contains("STROBE_FLIGHT_RECORDER_MAX_FILES=0"))
        #expect(problem(["STROBE_FLIGHT_RECORDER_TRIGGERS": "frame>33ms"]).contains("\"frame>33ms\""))
        #expect(problem(["STROBE_FLIGHT_RECORDER_TRIGGERS": "counter:depth>lots"]).contains("counter:depth>lots"))
        #expect(problem(["STROBE_FLIGHT_RECORDER_AFTR": "1s"]).contains("STROBE_FLIGHT_RECORDER_AFTR: unknown"))
        #expect(
            problem(["STROBE_FLIGHT_RECORDER_BEFORE": "1s"], base: [:]).contains("needs STROBE_FLIGHT_RECORDER_DIR"))
    }
}
