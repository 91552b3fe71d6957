import CStrobeCounting
import Foundation
import StrobeProcessRunner
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Counts under Valgrind's callgrind, for `--instructions simulated`: the
/// suite runs again as a child process under it, and counts per function.
///
/// The child runs a copy of the executable without its debug information
/// (Debian 12's Valgrind cannot read the DWARF 5 that Swift writes; the
/// symbol table names the functions), placed beside the executable so that
/// resource bundles are found as usual. Callgrind starts with its
/// instrumentation off; a window switches it on, and its end has callgrind
/// write what it counted to a dump file in a scratch directory, which the
/// child reads back at once for the total and the counts per function
/// (``CallgrindDump``). Callgrind counts every thread; the runner keeps the
/// session's writer asleep through the block instead (``PerfRunner`` gives
/// a counting iteration's session a flush interval longer than any block),
/// so that the writer's wake-ups, which follow the clock, add nothing. The
/// child's environment and layout are fixed (``CountingChild``), so that no
/// per-process seed moves its counts.
final class CallgrindEngine: InstructionEngine {
    static var facts: CountingEngine { .callgrind }

    /// The environment variable through which the launch tells the child
    /// where callgrind writes its dumps.
    static let dumpDirectoryVariable = "STROBE_SIMULATION_DUMPS"

    /// Valgrind's options for the child; the dump file name is added.
    static let valgrindOptions = [
        "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=yes", "--dump-instr=no",
        "--compress-strings=no", "--compress-pos=no", "-q",
    ]

    /// Dumps callgrind has written in this process: they are numbered per
    /// process, whichever engine asked for them.
    private static let dumpsWritten = Atomic<Int>(0)

    /// The directory callgrind writes this process's dumps to.
    private let dumps: String

    private init(dumps: String) {
        self.dumps = dumps
    }

    /// Why the simulation cannot run here, or nil when it can.
    static func problem(environment: [String: String]) -> String? {
        guard cstrobe_simulation_built() != 0 else {
            return "the suite was built without Valgrind's headers (valgrind/callgrind.h): install Valgrind "
                + "(apt-get install valgrind) and build it again"
        }
        guard ProcessRunner.executable(named: "valgrind", environment: environment) != nil else {
            return "Valgrind is not installed (apt-get install valgrind)"
        }
        return nil
    }

    static func runsUnderTool(environment: [String: String]) -> Bool { cstrobe_simulation_running() != 0 }

    /// Runs the suite with `arguments` under callgrind and returns its exit
    /// status; throws when the child cannot be started.
    static func launch(arguments: [String], environment: [String: String]) throws -> Int32? {
        guard let valgrind = ProcessRunner.executable(named: "valgrind", environment: environment) else {
            throw InstructionCountError(problem: "Valgrind is not installed (apt-get install valgrind)")
        }
        let original = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let copy = try strippedCopy(of: original, environment: environment)
        let dumps = ScratchFiles.base + "/strobe-simulation-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dumps, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: dumps)
            if copy != original { unlink(copy) }
        }
        var childEnvironment = environment
        childEnvironment[dumpDirectoryVariable] = dumps
        return try CountingChild.run(
            valgrind, arguments: valgrindOptions + ["--callgrind-out-file=\(dumps)/callgrind.out", copy] + arguments,
            environment: childEnvironment)
    }

    /// The engine, in a process that runs under Valgrind as the launch
    /// starts it (with a dump directory); a process under Valgrind without
    /// one says it counts nothing.
    static func attach(mode: InstructionCounting, environment: [String: String]) -> InstructionEngineAttachment {
        guard runsUnderTool(environment: environment) else { return .notHere }
        guard let dumps = environment[dumpDirectoryVariable], !dumps.isEmpty else {
            return .cannotCount(
                "the process runs under Valgrind, but not as --instructions simulated starts it; "
                    + "instructions are not counted")
        }
        return .counting(CallgrindEngine(dumps: dumps))
    }

    func begin(excluding writer: Int32?) {
        cstrobe_simulation_begin()
    }

    func end(label: [CChar]) throws -> InstructionReading {
        label.withUnsafeBufferPointer { cstrobe_simulation_end($0.baseAddress) }
        let number = Self.dumpsWritten.add(1, ordering: .relaxed).newValue
        let path = try dumpPath(number: number)
        defer { unlink(path) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InstructionCountError(problem: "cannot read callgrind's dump \(path)")
        }
        let dump = try CallgrindDump(parsing: String(decoding: data, as: UTF8.self), source: path)
        return InstructionReading(instructions: dump.total, profile: dump.profile)
    }

    func abandon() {
        cstrobe_simulation_end("strobe abandoned window")
        let number = Self.dumpsWritten.add(1, ordering: .relaxed).newValue
        if let path = try? dumpPath(number: number) { unlink(path) }
    }

    /// Callgrind names the n-th dump of a run `OUT.n`, OUT being the
    /// `--callgrind-out-file` the launch gave (`DIR/callgrind.out`).
    private func dumpPath(number: Int) throws -> String {
        let path = "\(dumps)/callgrind.out.\(number)"
        guard FileManager.default.fileExists(atPath: path) else {
            let found = (try? FileManager.default.contentsOfDirectory(atPath: dumps)) ?? []
            throw InstructionCountError(
                problem: "callgrind wrote no dump \(path) (found: \(found.sorted().joined(separator: ", ")))")
        }
        return path
    }

    /// A copy of `path` without debug sections, beside it (or in the
    /// scratch directory where its folder is not writable); `path` itself
    /// where no objcopy is installed.
    private static func strippedCopy(of path: String, environment: [String: String]) throws -> String {
        guard
            let objcopy = ProcessRunner.executable(named: "objcopy", environment: environment)
                ?? ProcessRunner.executable(named: "llvm-objcopy", environment: environment)
        else { return path }
        let url = URL(fileURLWithPath: path)
        let name = ".\(url.lastPathComponent).simulated-\(getpid())"
        var destination = url.deletingLastPathComponent().appendingPathComponent(name).path
        if access(url.deletingLastPathComponent().path, W_OK) != 0 { destination = ScratchFiles.base + "/" + name }
        let strip = Process()
        strip.executableURL = URL(fileURLWithPath: objcopy)
        strip.arguments = ["--strip-debug", path, destination]
        try strip.run()
        strip.waitUntilExit()
        guard strip.terminationStatus == 0 else {
            throw InstructionCountError(problem: "\(objcopy) --strip-debug \(path) failed")
        }
        return destination
    }
}
