/// The top-level packets of a trace file, for tests that cut or damage one.
package enum TracePackets {
    /// The offsets of each top-level packet of `bytes`: the start of its
    /// field (the tag 0x0a), the start of its payload, and its end.
    package static func offsets(_ bytes: [UInt8]) -> [(field: Int, payload: Int, end: Int)] {
        var result: [(Int, Int, Int)] = []
        var offset = 0
        while offset < bytes.count {
            let field = offset
            offset += 1 // the tag 0x0a
            var length = 0
            var shift = 0
            while bytes[offset] & 0x80 != 0 {
                length |= Int(bytes[offset] & 0x7f) << shift
                shift += 7
                offset += 1
            }
            length |= Int(bytes[offset]) << shift
            offset += 1
            result.append((field, offset, offset + length))
            offset += length
        }
        return result
    }

    /// `bytes` cut in the middle of the payload of the packet that holds
    /// the byte at `fraction` of its length. A cut where a packet ends
    /// would leave a whole, shorter trace; this one never does.
    package static func cutInsidePacket(_ bytes: [UInt8], at fraction: Double) -> [UInt8] {
        let target = Int(Double(bytes.count) * fraction)
        let packets = offsets(bytes)
        // A payload of two bytes or more has a middle that is neither end.
        let packet =
            packets.first { $0.end > target && $0.end - $0.payload >= 2 }
            ?? packets.max { $0.end - $0.payload < $1.end - $1.payload }!
        return Array(bytes.prefix((packet.payload + packet.end) / 2))
    }
}
