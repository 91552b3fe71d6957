// A small program for process-level perf tests: it traces itself when
// STROBE_TRACE_OUTPUT is set, and can misbehave on request.
//
//   TraceChild ok|crash|hang|no-trace|fail|flood [milliseconds]
//   TraceChild crash-capture HOW CRASHFILE [MARKER]   (see CrashCapture.swift)
//   TraceChild churn THREADS TRACEPATH                (see ThreadChurn.swift)
//
// `flood` records until it is killed: bursts of intervals, each with a
// counter of the loop index, a pause of `milliseconds` between bursts, and
// the writer appending every 20 ms.

import Foundation
import Strobe

let mode = CommandLine.arguments.dropFirst().first ?? "ok"
let milliseconds = CommandLine.arguments.dropFirst(2).first.flatMap(Double.init) ?? 5

switch mode {
case "no-trace":
    exit(0)
case "fail":
    exit(3)
case "crash-capture":
    runCrashCapture(Array(CommandLine.arguments.dropFirst(2)))
case "churn":
    runThreadChurn(Array(CommandLine.arguments.dropFirst(2)))
default:
    break
}

let session: TraceSession?
do {
    if mode == "flood", var configuration = try TraceConfiguration.fromEnvironment(ProcessInfo.processInfo.environment)
    {
        configuration.flushInterval = .milliseconds(20)
        session = try TraceSession.start(configuration)
    } else {
        session = try TraceSession.startFromEnvironment()
    }
} catch {
    FileHandle.standardError.write(Data("TraceChild: \(error)\n".utf8))
    exit(1)
}

if mode == "flood" {
    var index = 0
    while true {
        for _ in 0..<500 {
            Trace.begin("flood")
            Trace.counter("flood index", index)
            Trace.end()
            index += 1
        }
        usleep(UInt32(milliseconds * 1000))
    }
}

Trace.interval("startup") {
    Trace.interval("load") { usleep(UInt32(milliseconds * 1000)) }
    Trace.counter("items", 42)
}
switch mode {
case "crash":
    // A real bad pointer: the process dies of SIGSEGV.
    UnsafeMutablePointer<Int>(bitPattern: 8)!.pointee = 1
case "hang":
    while true { sleep(1) }
default:
    break
}
try? session?.stop()
