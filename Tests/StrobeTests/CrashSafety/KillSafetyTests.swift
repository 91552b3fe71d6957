import Foundation
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// What a process killed with SIGKILL leaves: after `strobe repair` (here
/// `TraceRepair`), a trace that Perfetto's official schema decodes, with
/// every event up to the last write. Only child processes record, but the
/// repairs and decodes take this process's CPU time, which the CPU-timer
/// profiler's tests share: the suite runs in the process-wide turn.
@Suite(.serialized, .processWide)
struct KillSafetyTests {
    /// The built child program.
    static var traceChild: String { builtProgram("TraceChild") }

    /// The sorted values of the counter `flood index`, which counts the
    /// child's loops from 0.
    static func floodIndexes(_ trace: OfficialDecoder.Decoded) -> [Int] {
        trace.counters.filter { $0.name == "flood index" }.map { Int($0.value) }.sorted()
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: traceChild) && OfficialDecoder.isUsable))
    func randomKillsLeaveTracesTheOfficialSchemaDecodesAfterRepair() throws {
        var repaired = 0
        for run in 0..<12 {
            let path = temporaryTracePath("kill\(run)")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let child = Process()
            child.executableURL = URL(fileURLWithPath: Self.traceChild)
            // Bursts 60 ms apart: the writer still appends every 20 ms, and
            // the traces the official decoder reads stay small.
            child.arguments = ["flood", "60"]
            child.environment = ProcessInfo.processInfo.environment.merging(["STROBE_TRACE_OUTPUT": path]) { $1 }
            child.standardOutput = FileHandle.nullDevice
            try child.run()
            // The kill lands at a random moment of the writing, once the
            // writer has begun: on a loaded machine the child can take longer
            // than the random wait to start its session.
            waitForFile(path, toReach: 1)
            usleep(UInt32.random(in: 100_000...400_000))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal)

            let outcome = try TraceRepair.repair(file: path)
            if outcome.droppedBytes > 0 { repaired += 1 }
            #expect(outcome.packets > 0, "run \(run): the writer appended before the kill")
            let trace = try OfficialDecoder.decode(path)
            #expect(trace.errors.isEmpty, "run \(run): \(trace.errors.prefix(3))")
            let indexes = Self.floodIndexes(trace)
            #expect(!indexes.isEmpty, "run \(run)")
            // Every event up to the last one written is there: the loop
            // indexes run from 0 with no gap.
            #expect(indexes == Array(0..<indexes.count), "run \(run): \(indexes.count) indexes with gaps")
            #expect(trace.slices(named: "flood").count >= indexes.count - 1)
        }
        print("KillSafetyTests: \(repaired) of 12 killed traces ended in a cut packet")
    }

    /// A trace cut at any byte, as a kill between two pages of a write
    /// leaves it, is repaired to its complete packets, which the official
    /// schema decodes.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: traceChild) && OfficialDecoder.isUsable))
    func traceCutAnywhereIsRepairedToItsCompletePackets() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: Self.traceChild)
        child.arguments = ["flood", "20"]
        child.environment = ProcessInfo.processInfo.environment.merging(["STROBE_TRACE_OUTPUT": path]) { $1 }
        try child.run()
        // Kill once the writer has appended a few pages: on a loaded
        // machine 300 ms can pass before the child writes anything.
        waitForFile(path, toReach: 16_384)
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        _ = try TraceRepair.repair(file: path)
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        try #require(whole.count >= 2, "the child wrote \(whole.count) bytes before it was killed")
        let complete = TraceRepair.scan(whole)
        #expect(complete.problem == nil && complete.keptBytes == whole.count)

        var cuts = (0..<8).map { _ in Int.random(in: 1..<whole.count) }
        cuts += [4096, 8192, whole.count - 1].filter { $0 < whole.count }
        var previousPackets = -1
        for cut in cuts.sorted() {
            let outcome = TraceRepair.scan(Array(whole[0..<cut]), source: "cut")
            #expect(outcome.keptBytes <= cut)
            #expect(outcome.keptBytes + outcome.droppedBytes == cut)
            #expect(outcome.packets >= previousPackets, "a longer prefix never holds fewer packets")
            previousPackets = outcome.packets
            let cutPath = path + ".cut"
            defer { try? FileManager.default.removeItem(atPath: cutPath) }
            try Data(whole[0..<cut]).write(to: URL(fileURLWithPath: cutPath))
            let repaired = try TraceRepair.repair(file: cutPath)
            #expect(repaired == TraceRepair.scan(Array(whole[0..<cut]), source: cutPath))
            let size = try FileManager.default.attributesOfItem(atPath: cutPath)[.size] as? Int
            #expect(size == outcome.keptBytes)
            if outcome.packets > 0 {
                let trace = try OfficialDecoder.decode(cutPath)
                #expect(trace.packets == outcome.packets)
                let indexes = Self.floodIndexes(trace)
                #expect(indexes == Array(0..<indexes.count))
            }
        }
    }

    @Test func repairRefusesAFileThatIsNotATrace() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = Array("not a trace at all\n".utf8)
        try Data(text).write(to: URL(fileURLWithPath: path))
        #expect(throws: TraceReadError.self) { try TraceRepair.repair(file: path) }
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(after == text, "a file that is not a trace is left as it is")
    }
}
