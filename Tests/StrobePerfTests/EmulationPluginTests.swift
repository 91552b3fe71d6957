import CStrobeCounting
import Foundation
import Testing

@testable import StrobePerf

/// QEMU's counting plugin takes its marking system call and marks from
/// `CStrobeInstructions.h`, the header `cstrobe_emulation_mark` is built
/// with, rather than defining them again.
struct EmulationPluginTests {
    @Test func thePluginIsBuiltWithTheHeadersMarks() {
        let values = Dictionary(uniqueKeysWithValues: EmulationPlugin.definitions.map { ($0.name, $0.value) })
        #expect(values["CSTROBE_EMULATION_SYSCALL"] == Int(CSTROBE_EMULATION_SYSCALL))
        #expect(values["CSTROBE_EMULATION_BEGIN"] == Int(CSTROBE_EMULATION_BEGIN))
        #expect(values["CSTROBE_EMULATION_END"] == Int(CSTROBE_EMULATION_END))
        let arguments = EmulationPlugin.compilerArguments(source: "plugin.c", library: "plugin.so")
        #expect(arguments.contains("-DCSTROBE_EMULATION_SYSCALL=\(CSTROBE_EMULATION_SYSCALL)"))
    }

    @Test func thePluginsSourceNamesTheMarksAndWritesNoNumberOfItsOwn() throws {
        let source = EmulationPlugin.source
        let used = Set(source.matches(of: try Regex("CSTROBE_[A-Z_]+")).map { String(source[$0.range]) })
        #expect(used == Set(EmulationPlugin.definitions.map(\.name)))
        let number = String(CSTROBE_EMULATION_SYSCALL, radix: 16)
        #expect(!source.lowercased().contains(number), "the plugin writes the marking call's number itself")
    }

    @Test func thePluginDoesNotBuildWithoutTheMarks() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let compiler = EmulationPlugin.compiler(environment: environment) else { return }
        let source = NSTemporaryDirectory() + "strobe-plugin-\(UUID().uuidString).c"
        try Data(EmulationPlugin.source.utf8).write(to: URL(fileURLWithPath: source))
        defer { try? FileManager.default.removeItem(atPath: source) }
        let flags = EmulationPlugin.definitions.map { "-D\($0.name)=\($0.value)" }
        #expect(try status(compiler, ["-fsyntax-only"] + flags + [source]) == 0)
        #expect(try status(compiler, ["-fsyntax-only", source]) != 0)
    }

    private func status(_ compiler: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: compiler)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
