import Foundation
import StrobeTestSupport
import Testing

/// The `strobe` command on files that are not traces, and `strobe repair`.
@Suite struct CommandLineTests {
    /// The built `strobe` command.
    static let strobe = builtProgram("strobe")

    static var strobeIsBuilt: Bool { FileManager.default.isExecutableFile(atPath: strobe) }

    @Test(.enabled(if: strobeIsBuilt))
    func summarizeAndExportRefuseAFileWithNoReadablePacket() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let inputs: [(bytes: [UInt8], byte: Int)] = [
            (Array("this is a text file, not a trace\n".utf8), 0),
            ([], 0),
            // One well-framed packet whose content is not a packet.
            ([0x0A, 0x03, 0xFF, 0xFF, 0xFF], 0),
        ]
        for input in inputs {
            try Data(input.bytes).write(to: URL(fileURLWithPath: path))
            for arguments in [["summarize", path], ["export", path, "--format", "csv"]] {
                let outcome = try runProgram(Self.strobe, arguments)
                #expect(outcome.status == 2, "\(arguments[0]) on \(input.bytes.prefix(8)): \(outcome.errors)")
                #expect(outcome.errors.contains("\(path): byte \(input.byte):"), "\(outcome.errors)")
                #expect(outcome.output.isEmpty)
            }
        }
    }

    @Test(.enabled(if: strobeIsBuilt))
    func repairSaysWhatItDropped() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Two complete packets, then one cut short.
        let complete: [UInt8] = [0x0A, 0x02, 0x08, 0x01, 0x0A, 0x00]
        try Data(complete + [0x0A, 0x10, 0x01, 0x02]).write(to: URL(fileURLWithPath: path))
        let cut = try runProgram(Self.strobe, ["repair", path])
        #expect(cut.status == 0, "\(cut.errors)")
        #expect(cut.output.contains("kept 6 bytes (2 packets); dropped 4 bytes from byte 6"), "\(cut.output)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == complete)
        let again = try runProgram(Self.strobe, ["repair", path])
        #expect(again.output.contains("dropped 0 bytes"), "\(again.output)")
        try Data("plain text".utf8).write(to: URL(fileURLWithPath: path))
        let text = try runProgram(Self.strobe, ["repair", path])
        #expect(text.status == 2)
        #expect(text.errors.contains("\(path): byte 0: not a trace"), "\(text.errors)")
    }
}
