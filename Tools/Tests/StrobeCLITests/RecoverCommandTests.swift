import Foundation
import StrobeReader
import StrobeTestSupport
import Testing

extension StrobeCLITests {
    /// `strobe recover` on the crash file of a child that died of SIGSEGV,
    /// then on a file that is not a crash file, on one cut short and on one
    /// of a newer version.
    @Test func recoverTurnsACrashFileIntoATraceAndRefusesOthers() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let crashFile = folder + "/app.strobe-crash"
        let child = try runProgram(
            Self.traceChild, ["crash-capture", "segv", crashFile], environment: ["SWIFT_BACKTRACE": "enable=no"])
        #expect(child.status == SIGSEGV, "\(child.errors)")

        let recovered = try Self.strobe("recover", crashFile, "-o", folder + "/crash.pftrace")
        #expect(recovered.status == 0, "\(recovered.errors)")
        #expect(recovered.output.contains("SIGSEGV on thread"), "\(recovered.output)")
        #expect(recovered.output.contains("at 0x8"), "\(recovered.output)")
        let trace = try TraceReader.read(contentsOf: folder + "/crash.pftrace")
        #expect(trace.isComplete)
        #expect(trace.instants.contains { $0.name == "crash" })

        let byDefault = try Self.strobe("recover", crashFile)
        #expect(byDefault.status == 0)
        #expect(FileManager.default.fileExists(atPath: crashFile + ".pftrace"))

        try Self.write("not a crash file\n", to: folder + "/text")
        let garbage = try Self.strobe("recover", folder + "/text")
        #expect(garbage.status == 2)
        #expect(garbage.errors.contains("\(folder)/text: byte 0: not a Strobe crash file"), "\(garbage.errors)")

        let bytes = try Data(contentsOf: URL(fileURLWithPath: crashFile))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: folder + "/cut"))
        let cut = try Self.strobe("recover", folder + "/cut")
        #expect(cut.status == 2)
        #expect(cut.errors.contains("\(folder)/cut: byte "), "\(cut.errors)")
        #expect(cut.errors.contains("truncated"), "\(cut.errors)")

        // A session without metadata writes version 1, which every strobe
        // reads; a version this strobe does not know is named as newer.
        #expect(bytes[8] == 1)
        var newer = bytes
        newer[8] = 3
        try newer.write(to: URL(fileURLWithPath: folder + "/newer"))
        let refused = try Self.strobe("recover", folder + "/newer")
        #expect(refused.status == 2)
        #expect(
            refused.errors.contains(
                "\(folder)/newer: byte 8: crash file version 3 is newer than this strobe reads (versions 1 to 2)"),
            "\(refused.errors)")

        let missing = try Self.strobe("recover", folder + "/missing")
        #expect(missing.status == 2)
        #expect(missing.errors.contains("\(folder)/missing: No such file or directory (errno 2)"), "\(missing.errors)")
    }
}
