// The Lens pipeline demo app: applies a camera lens to generated frames on
// worker threads, traced with Strobe.
//
//   LensPipeline [--frames N] [--kernel vectorized|scalar|rebuilt-curve] [--size WxH] [--trace FILE]
//                [--flight-recorder DIR] [--stall-frame N] [--serial-workers]
//                [--app-version V] [--device-class NAME] [--sampling P] [--cpu-profile HZ]
//
// With --trace, or with STROBE_TRACE_OUTPUT set (as `strobe run` does), the
// run is recorded to a Perfetto trace. With --flight-recorder, the run
// records into a ring and dumps the seconds around any frame over 33 ms into
// DIR; --stall-frame makes frame N wait for a shader compile, so one is late;
// --serial-workers makes the workers apply the lens one after the other.
// With --trace, --cpu-profile HZ also samples every thread's call stack HZ
// times per second of its CPU time into the trace.
// After a late frame the app keeps producing frames until the dump is
// written, so the half second after the trigger is in it on any machine;
// the time before is what the app had run, up to two seconds.
//
// --app-version, --device-class and --sampling make the run one session of
// a fleet: the trace says which version and class of device wrote it, and
// only a share P of sessions is recorded at all (scripts/demo-fleet.sh).

import Foundation
import LensKit
import Strobe

var frames = 120
/// A frame longer than this (two frame budgets, a hitch users see) fires
/// the flight recorder's trigger, in seconds.
let lateFrameThreshold = 0.033
var tracePath: String?
var cpuProfileFrequency: Int?
var flightRecorderDirectory: String?
var configuration = LensPipeline.Configuration()
var metadata = TraceMetadata(appName: "Lens")
var samplingProbability = 1.0
var arguments = CommandLine.arguments.dropFirst()
/// The value after `flag`, read by `parse` and checked by `valid`; when
/// there is none that passes, says what `flag` takes and exits with status 2.
@MainActor func value<Value>(
    of flag: String, _ takes: String, _ parse: (String) -> Value?, where valid: (Value) -> Bool = { _ in true }
) -> Value {
    guard let value = arguments.popFirst().flatMap(parse), valid(value) else {
        FileHandle.standardError.write(Data("LensPipeline: \(flag) \(takes)\n".utf8))
        exit(2)
    }
    return value
}
while let argument = arguments.popFirst() {
    switch argument {
    case "--frames":
        frames = value(of: argument, "needs a positive number", { Int($0) }, where: { $0 > 0 })
    case "--kernel":
        configuration.kernel = value(of: argument, "is vectorized, scalar or rebuilt-curve", Lens.Kernel.init)
    case "--size":
        let size = value(of: argument, "is WIDTHxHEIGHT, for example 640x480") { text in
            let parts = text.split(separator: "x").compactMap { Int($0) }
            return parts.count == 2 && parts[0] > 0 && parts[1] > 0 ? (width: parts[0], height: parts[1]) : nil
        }
        configuration.width = size.width
        configuration.height = size.height
    case "--trace":
        tracePath = value(of: argument, "needs a file path", { $0 })
    case "--cpu-profile":
        cpuProfileFrequency = value(
            of: argument, "needs a rate in samples per second", { Int($0) }, where: { $0 > 0 })
    case "--flight-recorder":
        flightRecorderDirectory = value(of: argument, "needs a directory", { $0 })
    case "--serial-workers":
        configuration.serialWorkers = true
    case "--stall-frame":
        configuration.stallingFrame = value(of: argument, "needs a frame number", { Int($0) }, where: { $0 >= 0 })
    case "--app-version":
        metadata.appVersion = value(
            of: argument, "needs a version, for example 5.2", { $0 }, where: { !$0.isEmpty })
    case "--device-class":
        metadata.dimensions["device.class"] = value(
            of: argument, "needs a name, for example mid", { $0 }, where: { !$0.isEmpty })
    case "--sampling":
        samplingProbability = value(
            of: argument, "is a probability in (0, 1]", { Double($0) }, where: { $0 > 0 && $0 <= 1 })
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
        traceConfiguration.triggers = [.interval("frame", longerThan: .milliseconds(Int64(lateFrameThreshold * 1000)))]
        // With --cpu-profile, each dump carries the call stacks of its window.
        traceConfiguration.cpuProfile = cpuProfileFrequency.map { TraceConfiguration.CPUProfile(frequency: $0) }
        session = try TraceSession.start(traceConfiguration)
    } else if let tracePath {
        var traceConfiguration = TraceConfiguration(outputPath: tracePath)
        traceConfiguration.resourceUsage = .intervals(named: ["frame"])
        traceConfiguration.metadata = metadata
        traceConfiguration.samplingProbability = samplingProbability
        traceConfiguration.cpuProfile = cpuProfileFrequency.map { TraceConfiguration.CPUProfile(frequency: $0) }
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
var report = pipeline.run(frames: frames)
if let session, flightRecorderDirectory != nil {
    // A dump records the window after its trigger while the app runs, and
    // a stop ends it early. So after a frame late enough to fire the
    // trigger, keep producing frames until the session reports the dump
    // written (the writer notices a trigger at its next flush), for at
    // most five seconds.
    let lateFrame = report.frameTimes.contains { $0 > lateFrameThreshold }
    let deadline = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
    func waiting() -> Bool {
        let statistics = session.statistics
        if statistics.dumpsInProgress > 0 { return true }
        return lateFrame && statistics.triggeredDumps + statistics.failedDumps == 0
    }
    while waiting(), DispatchTime.now().uptimeNanoseconds < deadline {
        let seconds = pipeline.processFrame(report.frames)
        report.frames += 1
        report.frameTimes.append(seconds)
        if seconds > configuration.frameBudget { report.missedDeadlines += 1 }
    }
}
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
    print(
        "LensPipeline: flight recorder wrote \(statistics.triggeredDumps) dump(s), "
            + "\(statistics.suppressedTriggers) more trigger(s) counted"
    )
}
print(
    "LensPipeline: \(report.frames) frames, kernel \(configuration.kernel.rawValue), "
        + "median frame \(String(format: "%.2f", median)) ms, \(report.missedDeadlines) over the "
        + "\(String(format: "%.2f", configuration.frameBudget * 1000)) ms budget"
)
