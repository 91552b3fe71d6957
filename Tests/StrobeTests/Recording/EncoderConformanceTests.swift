import CProtobufC
import Foundation
import Strobe
import StrobeProtos
import StrobeTestSupport
import Testing

/// The encoder writes event packets by hand for speed. Each packet it writes
/// must be exactly what protobuf-c writes for the same message: unpacking it
/// with protobuf-c and packing it again gives back the same bytes.
///
/// Nested in ``RecordingTests`` so that it never runs beside another session.
extension RecordingTests {
    @Suite struct EncoderConformanceTests {
        @Test func handEncodedPacketsMatchProtobufC() throws {
            let path = temporaryTracePath()
            defer { try? FileManager.default.removeItem(atPath: path) }
            var configuration = TraceConfiguration(outputPath: path)
            configuration.processSamplingInterval = .zero
            let session = try TraceSession.start(configuration)
            let flow = Trace.Flow()
            Trace.begin("plain")
            Trace.begin(
                "with everything", capturing: .resourceUsage, flow: flow,
                arguments: [
                    "int": -42, "double": 2.5, "bool": true,
                    "string": "a string argument that is longer than eight bytes",
                ])
            Trace.counter("int counter", Int64(-7))
            Trace.counter("double counter", 3.25)
            Trace.instant("instant", arguments: ["k": 1])
            let interval = Trace.beginAsync("async")
            interval.end()
            let renamable = Trace.beginAsync(
                Trace.Name("renamable"), parent: nil, arguments: [Trace.Argument(Trace.Name("k"), .int(2))],
                renamable: true)
            Trace.instant("between")
            renamable.end(renamedTo: Trace.Name("renamed"))
            let reported = Trace.beginAsync(Trace.Name("reported late"), parent: nil, startedAgo: .microseconds(50))
            reported.end(arguments: [], endedAgo: .microseconds(10))
            Trace.begin(Trace.Name(String(repeating: "long name ", count: 40)), terminatingFlow: flow)
            Trace.end()
            Trace.end()
            Trace.end()
            try session.stop()

            let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            var offset = 0
            var packets = 0
            while offset < data.count {
                #expect(data[offset] == 0x0A)
                var length = 0
                var shift = 0
                var position = offset + 1
                while true {
                    let byte = data[position]
                    length |= Int(byte & 0x7F) << shift
                    position += 1
                    if byte & 0x80 == 0 { break }
                    shift += 7
                }
                let packet = Array(data[position..<(position + length)])
                let repacked = try Self.repack(packet)
                #expect(repacked == packet, "packet \(packets) at byte \(offset) differs from protobuf-c's encoding")
                offset = position + length
                packets += 1
            }
            #expect(packets > 12)
        }

        static func repack(_ bytes: [UInt8]) throws -> [UInt8] {
            let message = bytes.withUnsafeBufferPointer { buffer in
                perfetto__protos__trace_packet__unpack(nil, buffer.count, buffer.baseAddress)
            }
            let unpacked = try #require(message)
            defer { perfetto__protos__trace_packet__free_unpacked(unpacked, nil) }
            let size = perfetto__protos__trace_packet__get_packed_size(unpacked)
            var output = [UInt8](repeating: 0, count: size)
            _ = output.withUnsafeMutableBufferPointer { perfetto__protos__trace_packet__pack(unpacked, $0.baseAddress) }
            return output
        }
    }
}
