/// The parts of Perfetto's trace format that Strobe writes and reads by hand:
/// field numbers, wire types, tag bytes, enum values, clock ids, sequence
/// flags. Messages written or read through protobuf-c take their numbers
/// from the generated code instead; these are for the hand-written paths
/// (the SDK's event packets, the reader's dense-packet decoder), so both
/// sides spell each number once, here.
///
/// Every value is a public `@inlinable` constant, so the compiler folds it
/// into the caller: a tag written through these costs what a literal did.
/// (They are public rather than `package` because the release build did
/// not inline `package` ones across modules; the target is no product, so
/// no client outside the package sees them.)
public enum PerfettoWire {}

extension PerfettoWire {
    /// A protobuf wire type: how a field's value is encoded.
    public enum WireType {
        /// A base-128 varint.
        @inlinable public static var varint: UInt8 { 0 }
        /// Eight little-endian bytes.
        @inlinable public static var fixed64: UInt8 { 1 }
        /// A varint length, then that many bytes (strings, bytes, messages).
        @inlinable public static var lengthDelimited: UInt8 { 2 }
        /// Four little-endian bytes.
        @inlinable public static var fixed32: UInt8 { 5 }

        /// The tag of `field` with `wireType`, as the varint it is written as.
        @inlinable
        public static func tag(_ field: UInt32, _ wireType: UInt8) -> UInt64 {
            UInt64(field) << 3 | UInt64(wireType)
        }

        /// The field number of `tag`.
        @inlinable
        public static func field(of tag: UInt64) -> UInt64 { tag >> 3 }

        /// The wire type of `tag`.
        @inlinable
        public static func wireType(of tag: UInt64) -> UInt64 { tag & 7 }

        /// The tag of a field numbered below 16, which is one byte.
        @inlinable
        public static func tagByte(_ field: UInt32, _ wireType: UInt8) -> UInt8 {
            UInt8(truncatingIfNeeded: field << 3) | wireType
        }
    }

    /// `Trace`: the file is a sequence of these fields.
    public enum Trace {
        /// `repeated TracePacket packet = 1`.
        @inlinable public static var packet: UInt32 { 1 }
        /// The tag byte of a packet.
        @inlinable public static var packetTag: UInt8 { WireType.tagByte(packet, WireType.lengthDelimited) }
    }

    /// `TracePacket` fields written or read by hand.
    public enum TracePacket {
        /// `uint64 timestamp = 8`.
        @inlinable public static var timestamp: UInt32 { 8 }
        /// `uint32 trusted_packet_sequence_id = 10`.
        @inlinable public static var trustedPacketSequenceID: UInt32 { 10 }
        /// `TrackEvent track_event = 11`.
        @inlinable public static var trackEvent: UInt32 { 11 }
        /// `InternedData interned_data = 12`.
        @inlinable public static var internedData: UInt32 { 12 }
        /// `uint32 sequence_flags = 13`.
        @inlinable public static var sequenceFlags: UInt32 { 13 }
        /// `bool previous_packet_dropped = 42`.
        @inlinable public static var previousPacketDropped: UInt32 { 42 }
        /// `uint32 timestamp_clock_id = 58`.
        @inlinable public static var timestampClockID: UInt32 { 58 }
        /// `TrackDescriptor track_descriptor = 60`.
        @inlinable public static var trackDescriptor: UInt32 { 60 }

        /// The tag byte of `timestamp`.
        @inlinable public static var timestampTag: UInt8 { WireType.tagByte(timestamp, WireType.varint) }
        /// The tag byte of `trusted_packet_sequence_id`.
        @inlinable public static var sequenceIDTag: UInt8 {
            WireType.tagByte(trustedPacketSequenceID, WireType.varint)
        }
        /// The tag byte of `track_event`.
        @inlinable public static var trackEventTag: UInt8 { WireType.tagByte(trackEvent, WireType.lengthDelimited) }
        /// The tag byte of `sequence_flags`.
        @inlinable public static var sequenceFlagsTag: UInt8 { WireType.tagByte(sequenceFlags, WireType.varint) }
    }

    /// `TracePacket.SequenceFlags`.
    public enum SequenceFlags {
        /// `SEQ_INCREMENTAL_STATE_CLEARED`: the packet starts the sequence's
        /// incremental state afresh.
        @inlinable public static var incrementalStateCleared: UInt32 { 1 }
        /// `SEQ_NEEDS_INCREMENTAL_STATE`: the packet refers to interned data
        /// or an incremental clock of its sequence.
        @inlinable public static var needsIncrementalState: UInt32 { 2 }
    }

    /// `TrackEvent` fields written or read by hand.
    public enum TrackEvent {
        /// `repeated uint64 category_iids = 3`.
        @inlinable public static var categoryIIDs: UInt32 { 3 }
        /// `repeated DebugAnnotation debug_annotations = 4`.
        @inlinable public static var debugAnnotations: UInt32 { 4 }
        /// `Type type = 9`.
        @inlinable public static var type: UInt32 { 9 }
        /// `uint64 name_iid = 10`.
        @inlinable public static var nameIID: UInt32 { 10 }
        /// `uint64 track_uuid = 11`.
        @inlinable public static var trackUUID: UInt32 { 11 }
        /// `repeated int64 extra_counter_values = 12`.
        @inlinable public static var extraCounterValues: UInt32 { 12 }
        /// `string name = 23`.
        @inlinable public static var name: UInt32 { 23 }
        /// `int64 counter_value = 30`.
        @inlinable public static var counterValue: UInt32 { 30 }
        /// `repeated uint64 extra_counter_track_uuids = 31`.
        @inlinable public static var extraCounterTrackUUIDs: UInt32 { 31 }
        /// `double double_counter_value = 44`.
        @inlinable public static var doubleCounterValue: UInt32 { 44 }
        /// `repeated fixed64 flow_ids = 47`.
        @inlinable public static var flowIDs: UInt32 { 47 }
        /// `repeated fixed64 terminating_flow_ids = 48`.
        @inlinable public static var terminatingFlowIDs: UInt32 { 48 }

        /// The tag byte of `type`.
        @inlinable public static var typeTag: UInt8 { WireType.tagByte(type, WireType.varint) }
        /// The tag byte of `name_iid`.
        @inlinable public static var nameIIDTag: UInt8 { WireType.tagByte(nameIID, WireType.varint) }
    }

    /// `TrackEvent.Type`.
    public enum EventType {
        /// `TYPE_SLICE_BEGIN`.
        @inlinable public static var sliceBegin: UInt64 { 1 }
        /// `TYPE_SLICE_END`.
        @inlinable public static var sliceEnd: UInt64 { 2 }
        /// `TYPE_INSTANT`.
        @inlinable public static var instant: UInt64 { 3 }
        /// `TYPE_COUNTER`.
        @inlinable public static var counter: UInt64 { 4 }
    }

    /// `DebugAnnotation` fields: an event's arguments.
    public enum DebugAnnotation {
        /// `uint64 name_iid = 1`.
        @inlinable public static var nameIID: UInt32 { 1 }
        /// `bool bool_value = 2`.
        @inlinable public static var boolValue: UInt32 { 2 }
        /// `uint64 uint_value = 3`.
        @inlinable public static var uintValue: UInt32 { 3 }
        /// `int64 int_value = 4`.
        @inlinable public static var intValue: UInt32 { 4 }
        /// `double double_value = 5`.
        @inlinable public static var doubleValue: UInt32 { 5 }
        /// `string string_value = 6`.
        @inlinable public static var stringValue: UInt32 { 6 }
        /// `string name = 10`.
        @inlinable public static var name: UInt32 { 10 }
    }

    /// `InternedData` fields, each a list of `{iid = 1, name = 2}` entries.
    public enum InternedData {
        /// `repeated EventCategory event_categories = 1`.
        @inlinable public static var eventCategories: UInt32 { 1 }
        /// `repeated EventName event_names = 2`.
        @inlinable public static var eventNames: UInt32 { 2 }
        /// `repeated DebugAnnotationName debug_annotation_names = 3`.
        @inlinable public static var debugAnnotationNames: UInt32 { 3 }
        /// An entry's `uint64 iid = 1`.
        @inlinable public static var iid: UInt32 { 1 }
        /// An entry's `string name = 2`.
        @inlinable public static var name: UInt32 { 2 }
    }

    /// `TrackDescriptor` fields written by hand (async tracks).
    public enum TrackDescriptor {
        /// `uint64 uuid = 1`.
        @inlinable public static var uuid: UInt32 { 1 }
        /// `string name = 2`.
        @inlinable public static var name: UInt32 { 2 }
        /// `uint64 parent_uuid = 5`.
        @inlinable public static var parentUUID: UInt32 { 5 }
    }

    /// Clock ids: Perfetto's builtin clocks are below 64, sequence-scoped
    /// clocks 64 to 127.
    public enum Clock {
        /// `BUILTIN_CLOCK_BOOTTIME`: what every Strobe timestamp maps to.
        @inlinable public static var boottime: UInt32 { 6 }
        /// `BUILTIN_CLOCK_REALTIME`: Unix time, in a sequence start's clock
        /// snapshot beside BOOTTIME, so a reader can place the trace in
        /// wall-clock time.
        @inlinable public static var realtime: UInt32 { 1 }
        /// The sequence-scoped incremental clock each Strobe sequence's event
        /// timestamps are deltas on (the first sequence-scoped id).
        @inlinable public static var incremental: UInt32 { 64 }
        /// Whether `id` is a sequence-scoped clock.
        @inlinable
        public static func isSequenceScoped(_ id: UInt32) -> Bool { id >= 64 && id < 128 }
        /// Whether `id` is a builtin (trace-wide) clock.
        @inlinable
        public static func isBuiltin(_ id: UInt32) -> Bool { id < 64 }
    }
}
