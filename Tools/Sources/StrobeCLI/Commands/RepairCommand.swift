import ArgumentParser
import Foundation
import StrobeReader

/// `strobe repair TRACE`: cuts a trace back to its last complete packet.
struct RepairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Cut a trace back to its last complete packet, so that every reader accepts it.",
        discussion: """
            A process killed while it appends to its trace may leave the last packet cut short. \
            Strobe's own reader keeps everything before it; readers that parse the whole file at once \
            (Perfetto's Python schema, protoc --decode) reject the file. Repair drops the cut packet, \
            in place or into --output, and says how many bytes it dropped. A whole trace is left as it is.
            """
    )

    @Argument(help: "The trace file.")
    var trace: String

    @Option(name: .shortAndLong, help: "Write the repaired trace here and leave the input as it is.")
    var output: String?

    func run() throws {
        let outcome = try TraceRepair.repair(file: trace, writingTo: output)
        let target = output ?? trace
        if let problem = outcome.problem {
            print(
                "\(target): kept \(outcome.keptBytes) bytes (\(outcome.packets) packets); "
                    + "dropped \(outcome.droppedBytes) bytes from byte \(problem.offset): \(problem.problem)")
        } else {
            print("\(target): complete, \(outcome.keptBytes) bytes (\(outcome.packets) packets); dropped 0 bytes")
        }
    }
}
