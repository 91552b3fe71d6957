import Foundation
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// A process killed with SIGKILL leaves a trace readable up to its last drain.
@Suite(.processWide) struct CrashSafetyTests {
    /// The built example app.
    static var lensPipeline: String { builtProgram("LensPipeline") }

    /// The offset just past the last complete top-level packet.
    static func completePrefix(of data: [UInt8]) -> Int {
        var offset = 0
        var complete = 0
        while offset < data.count {
            guard data[offset] == 0x0A else { break }
            var length = 0
            var shift = 0
            var position = offset + 1
            var finished = false
            while position < data.count, shift < 64 {
                let byte = data[position]
                length |= Int(byte & 0x7F) << shift
                position += 1
                if byte & 0x80 == 0 {
                    finished = true
                    break
                }
                shift += 7
            }
            guard finished, length >= 0, position + length <= data.count else { break }
            offset = position + length
            complete = offset
        }
        return complete
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: lensPipeline) && OfficialDecoder.isUsable))
    func killedProcessLeavesAReadableTrace() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: Self.lensPipeline)
        child.arguments = ["--frames", "1000000", "--size", "64x48", "--trace", path]
        child.standardOutput = FileHandle.nullDevice
        try child.run()
        // Kill once the writer has appended several drains' worth of frames.
        let written = waitForFile(path, toReach: 65_536)
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        try #require(written >= 65_536, "the child wrote \(written) bytes in 20 s")
        #expect(child.terminationReason == .uncaughtSignal)

        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let prefix = Self.completePrefix(of: data)
        #expect(prefix > 0)
        #expect(data.count - prefix < 1 << 16, "at most one partial write at the end")
        let trimmed = path + ".complete"
        defer { try? FileManager.default.removeItem(atPath: trimmed) }
        try Data(data[0..<prefix]).write(to: URL(fileURLWithPath: trimmed))
        let trace = try OfficialDecoder.decode(trimmed)
        #expect(!trace.errors.contains("parse_error"))
        let frames = trace.slices(named: "frame").filter { $0.dur != nil }
        #expect(frames.count > 10, "frames drained before the kill are in the file")
        #expect(trace.slices(named: "lens apply").count > 10)
    }
}
