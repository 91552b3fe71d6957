import ArgumentParser
import Foundation
import StrobeCrashRecovery

/// `strobe recover CRASHFILE`: turns a crash file into a trace.
struct RecoverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Turn the crash file of a session with crash capture into a trace.",
        discussion: """
            A session started with TraceConfiguration.crashCapture writes its buffers to a crash file \
            when the process dies of a fatal signal. Recover writes them as a trace (to --output, or \
            the crash file's path with .pftrace appended), with an instant named "crash" on the thread \
            that received the signal, and says what it recovered. A file that is not a complete crash \
            file of this version is rejected with the byte offset of the problem (exit status 2).
            """
    )

    @Argument(help: "The crash file.")
    var crashFile: String

    @Option(name: .shortAndLong, help: "Write the trace here (default: the crash file's path plus .pftrace).")
    var output: String?

    func run() throws {
        let target = output ?? crashFile + ".pftrace"
        // A file that is not a crash file is bad input: exit status 2.
        let outcome = try CrashRecovery.recover(crashFile: crashFile, writingTo: target)
        var line =
            "\(target): \(outcome.events) events on \(outcome.threads) threads of process \(outcome.processID); "
            + "\(outcome.signalName) on thread \(outcome.threadID) at 0x\(String(outcome.faultAddress, radix: 16))"
        if outcome.lostEvents > 0 { line += "; \(outcome.lostEvents) events lost" }
        if outcome.invalidRecords > 0 { line += "; \(outcome.invalidRecords) unreadable records" }
        if outcome.unknownNames > 0 { line += "; \(outcome.unknownNames) names without text" }
        print(line)
    }
}
