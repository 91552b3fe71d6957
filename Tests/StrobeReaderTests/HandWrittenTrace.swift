@testable import StrobeReader

/// A trace written packet by packet with exact times, for the edge cases
/// of the streaming export: instants at the start and end of intervals and
/// between them, an interval that never ends, two intervals at one start,
/// an async interval whose end comes before its begin and whose parent's
/// track begins later in the file, and a flow whose end comes first.
enum HandWrittenTrace {
    static func bytes() -> [UInt8] {
        var trace = ProtobufWriter()
        // The tracks: threads 7 and 8 of process 42, and an async
        // `request` holding the track of its child `query`.
        describe(&trace, uuid: 100) {
            $0.message(3) {
                $0.varint(1, 42)
                $0.string(6, "app")
            }
        }
        describe(&trace, uuid: 1) {
            $0.message(4) {
                $0.varint(1, 42)
                $0.varint(2, 7)
                $0.string(5, "main")
            }
        }
        describe(&trace, uuid: 2) {
            $0.message(4) {
                $0.varint(1, 42)
                $0.varint(2, 8)
                $0.string(5, "worker")
            }
        }
        describe(&trace, uuid: 10) {
            $0.string(2, "request")
            $0.varint(5, 100)
        }
        describe(&trace, uuid: 11) {
            $0.string(2, "query")
            $0.varint(5, 10)
        }

        // Sequence 3 on thread 8: the flow's end, first in the file.
        start(&trace, sequence: 3, track: 2)
        event(&trace, 3, at: 850, .begin("consume"), terminatingFlow: 9)
        event(&trace, 3, at: 870, .end)

        // Sequence 2: the async intervals, the child's end first.
        start(&trace, sequence: 2, track: 2)
        event(&trace, 2, at: 720, .end, track: 11)
        event(&trace, 2, at: 620, .begin("query"), track: 11)
        event(&trace, 2, at: 600, .begin("request"), track: 10)
        event(&trace, 2, at: 700, .end, track: 10)

        // Sequence 1 on thread 7.
        start(&trace, sequence: 1, track: 1)
        event(&trace, 1, at: 100, .begin("A"))
        event(&trace, 1, at: 110, .begin("B"))
        event(&trace, 1, at: 110, .instant("at B's start"))
        event(&trace, 1, at: 150, .end)
        event(&trace, 1, at: 150, .instant("at B's end and C's start"))
        event(&trace, 1, at: 150, .begin("C"))
        event(&trace, 1, at: 160, .end)
        event(&trace, 1, at: 200, .end)
        event(&trace, 1, at: 200, .instant("at A's end"))
        event(&trace, 1, at: 300, .instant("alone"))
        event(&trace, 1, at: 400, .begin("D"))
        event(&trace, 1, at: 400, .end)
        event(&trace, 1, at: 400, .begin("E"))
        event(&trace, 1, at: 410, .end)
        event(&trace, 1, at: 800, .begin("produce"), flow: 9)
        event(&trace, 1, at: 820, .end)
        event(&trace, 1, at: 900, .begin("U"))
        event(&trace, 1, at: 900, .instant("at U's start"))
        event(&trace, 1, at: 950, .instant("after U began"))
        return trace.bytes
    }

    enum Kind {
        case begin(String)
        case end
        case instant(String)
    }

    private static func describe(_ trace: inout ProtobufWriter, uuid: UInt64, _ fields: (inout ProtobufWriter) -> Void)
    {
        trace.message(1) { packet in
            packet.message(60) { descriptor in
                descriptor.varint(1, uuid)
                fields(&descriptor)
            }
        }
    }

    /// A sequence's first packet: its state cleared, `track` its default.
    private static func start(_ trace: inout ProtobufWriter, sequence: UInt64, track: UInt64) {
        trace.message(1) { packet in
            packet.varint(10, sequence)
            packet.varint(13, 1)
            packet.message(59) { defaults in defaults.message(11) { $0.varint(11, track) } }
        }
    }

    private static func event(
        _ trace: inout ProtobufWriter, _ sequence: UInt64, at time: UInt64, _ kind: Kind, track: UInt64? = nil,
        flow: UInt64? = nil, terminatingFlow: UInt64? = nil
    ) {
        trace.message(1) { packet in
            packet.varint(8, time)
            packet.varint(10, sequence)
            packet.message(11) { event in
                switch kind {
                case .begin(let name):
                    event.varint(9, 1)
                    event.string(23, name)
                case .end:
                    event.varint(9, 2)
                case .instant(let name):
                    event.varint(9, 3)
                    event.string(23, name)
                }
                if let track { event.varint(11, track) }
                if let flow { event.fixed64(47, flow) }
                if let terminatingFlow { event.fixed64(48, terminatingFlow) }
            }
        }
    }
}
