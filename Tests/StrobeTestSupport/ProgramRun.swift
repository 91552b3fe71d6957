import Foundation

/// What a finished program printed and how it exited.
public struct ProgramOutcome {
    public var status: Int32
    public var output: String
    public var errors: String
}

/// Runs `executable` to completion with `arguments`, the test's environment
/// plus `environment`, and collects its output.
public func runProgram(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ProgramOutcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProgramOutcome(
        status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
        errors: String(decoding: errorData, as: UTF8.self))
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
