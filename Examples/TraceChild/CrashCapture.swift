import Foundation
import Strobe

/// `crash-capture HOW CRASHFILE [MARKER]`: records numbered steps on two
/// threads into a flight recorder with crash capture, for 300 ms, then
/// dies as HOW says: `segv` (a bad pointer), `bus` (a page past the end of
/// a mapped file), `overflow` (endless recursion), `fatal` (`fatalError`),
/// or `ill`, `abrt`, `fpe`, `trap` (the signal raised). With MARKER, a
/// handler installed before the session (as a crash reporter would be)
/// appends `previous handler: SIGNAL` to that file, then lets the signal
/// end the process. Each step takes 50 µs; `TRACE_CHILD_BUFFER_BYTES` sets
/// the ring size (default 256 KiB, which wraps in about 250 ms).
func runCrashCapture(_ arguments: [String]) -> Never {
    guard arguments.count >= 2 else {
        FileHandle.standardError.write(Data("usage: TraceChild crash-capture HOW CRASHFILE [MARKER]\n".utf8))
        exit(64)
    }
    let how = arguments[0]
    if arguments.count >= 3 { installMarkerHandler(path: arguments[2]) }
    var configuration = TraceConfiguration()
    configuration.whenBufferFull = .overwriteOldest
    configuration.bufferSizePerThread =
        ProcessInfo.processInfo.environment["TRACE_CHILD_BUFFER_BYTES"].flatMap(Int.init) ?? 256 << 10
    configuration.crashCapture = .init(path: arguments[1])
    let session: TraceSession
    do {
        session = try TraceSession.start(configuration)
    } catch {
        FileHandle.standardError.write(Data("TraceChild: \(error)\n".utf8))
        exit(1)
    }
    let worker = Thread {
        var index = 0
        while true {
            Trace.begin("worker step")
            Trace.counter("worker index", index)
            Trace.end()
            index += 1
            usleep(200)
        }
    }
    worker.name = "crash worker"
    worker.start()

    let interned = Trace.Name("run-time name \(getpid() % 7)")
    let category = Trace.Category("crash.test")
    let start = DispatchTime.now().uptimeNanoseconds
    var index = 0
    while DispatchTime.now().uptimeNanoseconds - start < 300_000_000 {
        Trace.begin("step")
        Trace.counter("step index", index)
        if index % 100 == 0 {
            Trace.instant(interned)
            Trace.instant("categorized", category: category)
        }
        let stepEnd = DispatchTime.now().uptimeNanoseconds + 50_000
        while DispatchTime.now().uptimeNanoseconds < stepEnd {}
        Trace.end()
        index += 1
    }
    Trace.instant("last step", arguments: ["index": .int(Int64(index - 1))])
    withExtendedLifetime(session) { die(how) }
}

private func die(_ how: String) -> Never {
    switch how {
    case "segv":
        UnsafeMutablePointer<Int>(bitPattern: 8)!.pointee = 1
    case "bus":
        let path = NSTemporaryDirectory() + "trace-child-bus-\(getpid())"
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        unlink(path)
        _ = ftruncate(descriptor, 4096)
        let mapped = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)!
        _ = ftruncate(descriptor, 0)
        mapped.storeBytes(of: 1, as: UInt8.self)
    case "overflow":
        print(recurse(1))
    case "fatal":
        fatalError("TraceChild crash-capture fatal")
    case "ill":
        raise(SIGILL)
    case "abrt":
        abort()
    case "fpe":
        raise(SIGFPE)
    case "trap":
        raise(SIGTRAP)
    default:
        FileHandle.standardError.write(Data("TraceChild: unknown way to crash: \(how)\n".utf8))
        exit(64)
    }
    FileHandle.standardError.write(Data("TraceChild: still alive after \(how)\n".utf8))
    exit(70)
}

@inline(never)
private func recurse(_ depth: Int) -> Int {
    var frame = (depth, depth &+ 1, depth &+ 2, depth &+ 3)
    return withUnsafeMutableBytes(of: &frame) { bytes in
        recurse(depth &+ Int(bytes[0] & 1) &+ 1) &+ Int(bytes[8])
    }
}

nonisolated(unsafe) private var markerDescriptor: Int32 = -1
/// `previous handler: N\n` for each signal number, made before any crash:
/// a signal handler may not allocate.
nonisolated(unsafe) private var markerTexts: [UnsafeMutablePointer<CChar>] = []

/// A crash reporter's handler: notes the signal, then lets it end the
/// process with the default action.
private func installMarkerHandler(path: String) {
    markerDescriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    markerTexts = (0..<65).map { strdup("previous handler: \($0)\n")! }
    var action = sigaction()
    action.__sigaction_handler.sa_sigaction = { signal, _, _ in
        let text = markerTexts[Int(signal)]
        _ = write(markerDescriptor, text, strlen(text))
        Glibc.signal(signal, SIG_DFL)
        raise(signal)
    }
    action.sa_flags = SA_SIGINFO
    for signal in [SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE, SIGTRAP] { sigaction(signal, &action, nil) }
}
