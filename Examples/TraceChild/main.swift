// A small program for process-level perf tests: it traces itself when
// STROBE_TRACE_OUTPUT is set, and can misbehave on request.
//
//   TraceChild ok|crash|hang|no-trace|fail [milliseconds]

import Foundation
import Strobe

let mode = CommandLine.arguments.dropFirst().first ?? "ok"
let milliseconds = CommandLine.arguments.dropFirst(2).first.flatMap(Double.init) ?? 5

switch mode {
case "no-trace":
    exit(0)
case "fail":
    exit(3)
default:
    break
}

let session: TraceSession?
do {
    session = try TraceSession.startFromEnvironment()
} catch {
    FileHandle.standardError.write(Data("TraceChild: \(error)\n".utf8))
    exit(1)
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
