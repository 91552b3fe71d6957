import Foundation

/// What a finished program printed and how it exited.
public struct ProgramOutcome {
    public var status: Int32
    public var output: String
    public var errors: String
}

/// Runs `executable` to completion with `arguments`, the test's environment
/// plus `environment`, and collects its output.
///
/// A program still running after `timeLimit` seconds is killed (SIGKILL),
/// and its outcome says so in `errors`, so a hung child fails its test
/// instead of hanging the run.
public func runProgram(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeLimit: Double = 300
) throws -> ProgramOutcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let killed = WatchdogFlag()
    let watchdog = DispatchWorkItem { [process] in
        if process.isRunning {
            killed.set()
            kill(process.processIdentifier, SIGKILL)
        }
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: watchdog)
    // Both pipes are drained at once: a child that fills one while the
    // other is read would otherwise block forever.
    let errorReader = DispatchGroup()
    nonisolated(unsafe) var errorData = Data()
    DispatchQueue.global().async(group: errorReader) {
        errorData = errors.fileHandleForReading.readDataToEndOfFile()
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    errorReader.wait()
    process.waitUntilExit()
    watchdog.cancel()
    var errorText = String(decoding: errorData, as: UTF8.self)
    if killed.isSet { errorText += "\n[killed: still running after \(timeLimit) s]" }
    return ProgramOutcome(
        status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self), errors: errorText)
}

/// Whether the watchdog of ``runProgram(_:_:environment:timeLimit:)`` killed
/// its program.
private final class WatchdogFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() { lock.withLock { value = true } }

    var isSet: Bool { lock.withLock { value } }
}

/// Runs `body` on a new thread and returns when it has finished, so that
/// what the thread wrote is visible afterwards (to ThreadSanitizer too).
public func runOnNewThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    Thread {
        body()
        done.signal()
    }.start()
    done.wait()
}

/// The path of `name`, a program that either package builds, for a test in
/// either package: beside the running test bundle when it is there (the same
/// package built it), else in the SDK package's build directory of the same
/// configuration, where the tools package's tests find the examples (such as
/// `TraceChild`). `make test` builds the SDK package first.
public func builtProgram(_ name: String) -> String {
    let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let beside = bundleDirectory.appendingPathComponent(name).path
    if FileManager.default.isExecutableFile(atPath: beside) { return beside }
    return repositoryRoot.appendingPathComponent(".build").appendingPathComponent(bundleDirectory.lastPathComponent)
        .appendingPathComponent(name).path
}

/// The repository, whose root is the SDK package: this file is
/// `Tests/Support/Sources/StrobeTestSupport/ProgramRun.swift` in it.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Waits until the file at `path` holds at least `bytes` bytes, polling
/// every 10 ms for at most `seconds`, and returns its size then (0 while it
/// does not exist): a child's writer has appended that much, however
/// loaded the machine is, without a fixed wait.
@discardableResult
public func waitForFile(_ path: String, toReach bytes: Int, within seconds: Double = 20) -> Int {
    func size() -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
    let deadline = Date().addingTimeInterval(seconds)
    var current = size()
    while current < bytes, Date() < deadline {
        usleep(10_000)
        current = size()
    }
    return current
}
