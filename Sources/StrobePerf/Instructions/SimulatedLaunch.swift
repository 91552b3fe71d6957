import CStrobeCounting
import Foundation
import StrobeProcessRunner

#if canImport(Glibc)
import Glibc
#endif

/// Runs the suite again as a child process under Valgrind's callgrind, for
/// `--instructions simulated`, and waits for it.
///
/// The child runs a copy of the executable without its debug information
/// (Debian 12's Valgrind cannot read the DWARF 5 that Swift writes; the
/// symbol table names the functions), placed beside the executable so that
/// resource bundles are found as usual. Callgrind starts with its
/// instrumentation off, counts only inside measure blocks (the runner
/// switches it on and off) and writes a dump per
/// window into a scratch directory, which the child reads itself. The child
/// hashes deterministically (`SWIFT_DETERMINISTIC_HASHING=1`), so that no
/// per-process seed moves its counts.
enum SimulatedLaunch {
    /// Valgrind's options for the child; the dump file name is added.
    static let valgrindOptions = [
        "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=yes", "--dump-instr=no",
        "--compress-strings=no", "--compress-pos=no", "-q",
    ]

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

    /// Runs the suite with `arguments` under callgrind and returns its exit
    /// status; throws when the child cannot be started.
    static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
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
        childEnvironment[InstructionCounter.dumpDirectoryVariable] = dumps
        return try CountingChild.run(
            valgrind, arguments: valgrindOptions + ["--callgrind-out-file=\(dumps)/callgrind.out", copy] + arguments,
            environment: childEnvironment)
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
