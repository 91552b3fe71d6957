import CStrobeCounting
import Foundation
import StrobeProcessRunner

#if canImport(Glibc)
import Glibc
#endif

/// Strobe's instruction-counting plugin for QEMU's user-mode emulator: its C
/// source (`EmulationPlugin/QEMUCountingPlugin.c`, whose text
/// `QEMUCountingPluginSource.swift` holds), and the shared library built
/// from it on first use.
///
/// The plugin counts every thread's guest instructions and, at each
/// marking system call (``CSTROBE_EMULATION_SYSCALL``) that
/// `cstrobe_emulation_mark` makes at a measure block's end, appends what
/// they executed since its start to its output file. The call's number and
/// marks are defined once, in `CStrobeInstructions.h`: the plugin is built
/// with ``definitions``, the values Swift imports from that header.
enum EmulationPlugin {

    /// The macros the plugin is built with, by name: `CStrobeInstructions.h`'s
    /// marking system call and marks, so the plugin and
    /// `cstrobe_emulation_mark` cannot disagree.
    static let definitions: [(name: String, value: Int)] = [
        ("CSTROBE_EMULATION_SYSCALL", Int(CSTROBE_EMULATION_SYSCALL)),
        ("CSTROBE_EMULATION_BEGIN", Int(CSTROBE_EMULATION_BEGIN)),
        ("CSTROBE_EMULATION_END", Int(CSTROBE_EMULATION_END)),
    ]

    /// The compiler's arguments that build the plugin from `sourcePath`
    /// into `library`.
    static func compilerArguments(source sourcePath: String, library: String) -> [String] {
        ["-O2", "-shared", "-fPIC"] + definitions.map { "-D\($0.name)=\($0.value)" }
            + ["-o", library, sourcePath]
    }

    /// The plugin built, from a cache keyed by its source (under
    /// `XDG_CACHE_HOME` or `~/.cache`, else the scratch directory), with
    /// the C compiler on the path; built once per machine and source.
    static func library(environment: [String: String]) throws -> String {
        let directory = cacheDirectory(environment: environment)
        let library = "\(directory)/qemu-counting-\(sourceDigest).so"
        if access(library, R_OK) == 0 { return library }
        guard let compiler = compiler(environment: environment) else {
            throw InstructionCountError(
                problem: "no C compiler (cc, clang or gcc) to build the emulator's counting plugin")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let unique = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let sourcePath = "\(directory)/qemu-counting-\(unique).c"
        let building = "\(directory)/qemu-counting-\(unique).so"
        try Data(source.utf8).write(to: URL(fileURLWithPath: sourcePath))
        defer { unlink(sourcePath) }
        let compile = Process()
        compile.executableURL = URL(fileURLWithPath: compiler)
        compile.arguments = compilerArguments(source: sourcePath, library: building)
        let errors = Pipe()
        compile.standardError = errors
        try compile.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        compile.waitUntilExit()
        guard compile.terminationStatus == 0 else {
            unlink(building)
            throw InstructionCountError(
                problem: "\(compiler) could not build the emulator's counting plugin: "
                    + String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // Two processes may build it at once; the rename makes either whole.
        guard rename(building, library) == 0 else {
            unlink(building)
            throw InstructionCountError(problem: "cannot move the counting plugin to \(library) (errno \(errno))")
        }
        return library
    }

    /// The C compiler on the path that builds the plugin: cc, clang or
    /// gcc, the first found.
    static func compiler(environment: [String: String]) -> String? {
        ["cc", "clang", "gcc"].lazy.compactMap { ProcessRunner.executable(named: $0, environment: environment) }.first
    }

    private static func cacheDirectory(environment: [String: String]) -> String {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/strobe" }
        if let home = environment["HOME"], home.hasPrefix("/"), access(home, W_OK) == 0 {
            return home + "/.cache/strobe"
        }
        return ScratchFiles.base + "/strobe-cache-\(getuid())"
    }

    /// FNV-1a of the source and its definitions, in hexadecimal: a new
    /// source or mark builds anew.
    private static var sourceDigest: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let key = source + definitions.map { "\n\($0.name)=\($0.value)" }.joined()
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
