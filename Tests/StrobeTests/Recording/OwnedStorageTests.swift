import StrobeTestTraits
import Testing

@testable import Strobe
@testable import StrobeEncoding

/// The encoder's buffers and intern tables own their memory, freed with the
/// last value that uses it; a copied intern table is a value of its own.
@Suite(.processWide)
struct OwnedStorageTests {
    private static func bytes(_ buffer: ProtoBuffer) -> [UInt8] {
        buffer.withBytes { Array($0) }
    }

    @Test func aProtoBufferMovedOutAndBackKeepsItsBytes() {
        var original = ProtoBuffer(capacity: 0)
        original.appendVarintField(1, 150)
        // What the encoder does with its buffer: move it into a local, leave
        // an empty one in its place, and move it back.
        var lent = original
        original = ProtoBuffer(capacity: 0)
        let message = lent.beginMessage(3)
        lent.appendVarintField(1, 7)
        lent.endMessage(message)
        original = lent
        lent = ProtoBuffer(capacity: 0)
        #expect(Self.bytes(original) == [0x08, 0x96, 0x01, 0x1A, 0x02, 0x08, 0x07])
        #expect(Self.bytes(lent).isEmpty)
        original.removeAll()
        #expect(Self.bytes(original).isEmpty)
    }

    @Test func aProtoBufferGrowsPastItsCapacity() {
        var buffer = ProtoBuffer(capacity: 0)
        let message = buffer.beginMessage(1)
        for value in 0..<1000 { buffer.appendVarintField(2, UInt64(value)) }
        buffer.endMessage(message)
        let written = Self.bytes(buffer)
        // Tag, a two-byte length, then the fields.
        #expect(written.prefix(3) == [0x0A, UInt8((written.count - 3) & 0x7F) | 0x80, UInt8((written.count - 3) >> 7)])
        #expect(written.count == 3 + 128 * 2 + 872 * 3)
    }

    @Test func aCopiedInternTableKeepsItsOwnIds() {
        var original = InternTable()
        #expect(original.id(for: 10) == (1, true))
        var copy = original
        #expect(copy.id(for: 20) == (2, true))
        // Not in the original's cache, though the copy cached it.
        #expect(original.id(for: 20) == (2, true))
        #expect(original.id(for: 10) == (1, false))
        #expect(copy.id(for: 30) == (3, true))
        #expect(original.id(for: 30) == (3, true))
        copy.removeAll()
        #expect(copy.id(for: 10) == (1, true))
        #expect(original.id(for: 10) == (1, false) && original.id(for: 20) == (2, false))
    }
}
