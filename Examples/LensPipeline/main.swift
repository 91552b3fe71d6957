// The Lens pipeline demo app: applies a camera lens to generated frames on
// worker threads, traced with Strobe.
//
//   LensPipeline [--frames N] [--kernel vectorized|scalar] [--size WxH] [--trace FILE]
//                [--flight-recorder DIR] [--stall-frame N]
//
// With --trace, or with STROBE_TRACE_OUTPUT set (as `strobe run` does), the
// run is recorded to a Perfetto trace. With --flight-recorder, the run
// records into a ring and dumps the seconds around any frame over 33 ms into
// DIR; --stall-frame makes frame N wait for a shader compile, so one is late.

import Foundation
import LensKit
import Strobe

var frames = 120
var tracePath: String?
var flightRecorderDirectory: String?
var configuration = LensPipeline.Configuration()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--frames":
        guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
            FileHandle.standardError.write(Data("LensPipeline: --frames needs a positive number\n".utf8))
            exit(2)
        }
        frames = value
    case "--kernel":
        guard let value = arguments.popFirst().flatMap(Lens.Kernel.init(rawValue:)) else {
            FileHandle.standardError.write(Data("LensPipeline: --kernel is vectorized or scalar\n".utf8))
            exit(2)
        }
        configuration.kernel = value
    case "--size":
        let parts = arguments.popFirst()?.split(separator: "x").compactMap { Int($0) } ?? []
        guard parts.count == 2, parts[0] > 0, parts[1] > 0 else {
            FileHandle.standardError.write(Data("LensPipeline: --size is WIDTHxHEIGHT, for example 640x480\n".utf8))
            exit(2)
        }
        configuration.width = parts[0]
        configuration.height = parts[1]
    case "--trace":
        guard let value = arguments.popFirst() else {
            FileHandle.standardError.write(Data("LensPipeline: --trace needs a file path\n".utf8))
            exit(2)
        }
        tracePath = value
    case "--flight-recorder":
        guard let value = arguments.popFirst() else {
            FileHandle.standardError.write(Data("LensPipeline: --flight-recorder needs a directory\n".utf8))
            exit(2)
        }
        flightRecorderDirectory = value
    case "--stall-frame":
        guard let value = arguments.popFirst().flatMap(Int.init), value >= 0 else {
            FileHandle.standardError.write(Data("LensPipeline: --stall-frame needs a frame number\n".utf8))
            exit(2)
        }
        configuration.stallingFrame = value
    default:
        FileHandle.standardError.write(Data("LensPipeline: unknown argument \(argument)\n".utf8))
        exit(2)
    }
}

let session: TraceSession?
do {
    if let flightRecorderDirectory {
        // A flight recorder: nothing is written unless a frame takes more
        // than two frame budgets, a hitch users see.
        var traceConfiguration = TraceConfiguration()
        traceConfiguration.whenBufferFull = .overwriteOldest
        traceConfiguration.bufferSizePerThread = 4 << 20
        traceConfiguration.flightRecorder = .init(
            directory: flightRecorderDirectory, before: .seconds(2), after: .milliseconds(500))
        traceConfiguration.triggers = [.interval("frame", longerThan: .milliseconds(33))]
        session = try TraceSession.start(traceConfiguration)
    } else if let tracePath {
        var traceConfiguration = TraceConfiguration(outputPath: tracePath)
        traceConfiguration.resourceUsage = .intervals(named: ["frame"])
        session = try TraceSession.start(traceConfiguration)
    } else {
        session = try TraceSession.startFromEnvironment()
    }
} catch {
    FileHandle.standardError.write(Data("LensPipeline: \(error)\n".utf8))
    exit(1)
}

Trace.setThreadName("main")
let pipeline = Trace.interval("app startup") { LensPipeline(configuration: configuration) }
let report = pipeline.run(frames: frames)
pipeline.shutDown()
do {
    try session?.stop()
} catch {
    FileHandle.standardError.write(Data("LensPipeline: \(error)\n".utf8))
    exit(1)
}
let sorted = report.frameTimes.sorted()
let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2] * 1000
if let statistics = session?.statistics, flightRecorderDirectory != nil {
    print("LensPipeline: flight recorder wrote \(statistics.triggeredDumps) dump(s), \(statistics.suppressedTriggers) more trigger(s) counted")
}
print("LensPipeline: \(report.frames) frames, kernel \(configuration.kernel.rawValue), median frame \(String(format: "%.2f", median)) ms, \(report.missedDeadlines) over the \(String(format: "%.2f", configuration.frameBudget * 1000)) ms budget")
