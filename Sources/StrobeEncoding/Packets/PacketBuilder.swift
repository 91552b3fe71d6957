import CProtobufC
import PerfettoWire
import StrobeProtos

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Builds the metadata packets of a trace (sequence starts, track
/// descriptors, statistics) as protobuf-c messages and packs them.
///
/// These packets are rare, so clarity wins over speed here; the dense event
/// packets are written by ``TraceEncoder`` directly.
enum PacketBuilder {
    /// Packs `packet` into `buffer` as one `Trace.packet` field.
    static func append(_ packet: inout Perfetto__Protos__TracePacket, to buffer: inout ProtoBuffer) {
        withUnsafeMutablePointer(to: &packet.base) { message in
            let size = protobuf_c_message_get_packed_size(message)
            buffer.appendTag(field: PerfettoWire.Trace.packet, wireType: PerfettoWire.WireType.lengthDelimited)
            buffer.appendVarint(UInt64(size))
            buffer.reserve(size)
            let written = protobuf_c_message_pack(message, buffer.bytes + buffer.count)
            buffer.advance(by: written)
        }
    }

    /// A clock of a clock snapshot: clock `id` reads `timestamp`.
    private static func clock(_ id: UInt32, at timestamp: UInt64) -> Perfetto__Protos__ClockSnapshot__Clock {
        var clock = Perfetto__Protos__ClockSnapshot__Clock()
        perfetto__protos__clock_snapshot__clock__init(&clock)
        clock.has_clock_id = 1
        clock.clock_id = id
        clock.has_timestamp = 1
        clock.timestamp = timestamp
        return clock
    }

    /// A packet of sequence `sequenceID` with nothing else set yet.
    private static func emptyPacket(onSequence sequenceID: UInt32) -> Perfetto__Protos__TracePacket {
        var packet = Perfetto__Protos__TracePacket()
        perfetto__protos__trace_packet__init(&packet)
        packet.has_trusted_packet_sequence_id = 1
        packet.trusted_packet_sequence_id = sequenceID
        return packet
    }

    /// The first packet of a sequence, and of a sequence restarted after lost
    /// events: it clears incremental state, sets the defaults (the thread's
    /// track, the incremental clock) and anchors that clock to CLOCK_BOOTTIME
    /// at `boottime`. A `realtimeOffset` other than 0 (CLOCK_REALTIME less
    /// CLOCK_BOOTTIME) adds BUILTIN_CLOCK_REALTIME to the snapshot, so a
    /// reader can place the trace in Unix time.
    static func appendSequenceStart(
        sequenceID: UInt32,
        threadTrack: UInt64,
        boottime: UInt64,
        realtimeOffset: UInt64 = 0,
        previousPacketDropped: Bool,
        first: Bool,
        to buffer: inout ProtoBuffer
    ) {
        var packet = emptyPacket(onSequence: sequenceID)
        packet.has_sequence_flags = 1
        packet.sequence_flags = UInt32(
            PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED.rawValue)
        packet.has_timestamp = 1
        packet.timestamp = boottime
        packet.has_timestamp_clock_id = 1
        packet.timestamp_clock_id = PerfettoWire.Clock.boottime
        if previousPacketDropped {
            packet.has_previous_packet_dropped = 1
            packet.previous_packet_dropped = 1
        }
        if first {
            packet.has_first_packet_on_sequence = 1
            packet.first_packet_on_sequence = 1
        }

        var eventDefaults = Perfetto__Protos__TrackEventDefaults()
        perfetto__protos__track_event_defaults__init(&eventDefaults)
        eventDefaults.has_track_uuid = 1
        eventDefaults.track_uuid = threadTrack
        var defaults = Perfetto__Protos__TracePacketDefaults()
        perfetto__protos__trace_packet_defaults__init(&defaults)
        defaults.has_timestamp_clock_id = 1
        defaults.timestamp_clock_id = PerfettoWire.Clock.incremental

        var boot = clock(PerfettoWire.Clock.boottime, at: boottime)
        var incremental = clock(PerfettoWire.Clock.incremental, at: boottime)
        incremental.has_is_incremental = 1
        incremental.is_incremental = 1
        incremental.has_unit_multiplier_ns = 1
        incremental.unit_multiplier_ns = 1
        var realtime = clock(PerfettoWire.Clock.realtime, at: boottime &+ realtimeOffset)
        var snapshot = Perfetto__Protos__ClockSnapshot()
        perfetto__protos__clock_snapshot__init(&snapshot)
        snapshot.has_primary_trace_clock = 1
        snapshot.primary_trace_clock = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME

        withUnsafeMutablePointer(to: &eventDefaults) { eventDefaults in
            withUnsafeMutablePointer(to: &defaults) { defaults in
                defaults.pointee.track_event_defaults = eventDefaults
                withUnsafeMutablePointer(to: &boot) { boot in
                    withUnsafeMutablePointer(to: &incremental) { incremental in
                        withUnsafeMutablePointer(to: &realtime) { realtime in
                            var clocks: [UnsafeMutablePointer<Perfetto__Protos__ClockSnapshot__Clock>?] = [
                                boot, incremental,
                            ]
                            if realtimeOffset != 0 { clocks.append(realtime) }
                            clocks.withUnsafeMutableBufferPointer { clocks in
                                snapshot.n_clocks = clocks.count
                                snapshot.clocks = clocks.baseAddress
                                withUnsafeMutablePointer(to: &snapshot) { snapshot in
                                    packet.trace_packet_defaults = defaults
                                    packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT
                                    packet.clock_snapshot = snapshot
                                    append(&packet, to: &buffer)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Perfetto's `CounterDescriptor.Unit` for nanoseconds.
    static let counterUnitNanoseconds: UInt8 = 1
    /// Perfetto's `CounterDescriptor.Unit` for a count.
    static let counterUnitCount: UInt8 = 2

    /// What a track descriptor describes.
    enum TrackKind {
        case process(pid: Int32, name: String)
        case thread(pid: Int32, tid: Int64, name: String)
        /// `unit` is Perfetto's `CounterDescriptor.Unit` (the raw value of
        /// Strobe's `Trace.CounterUnit`), 0 for none.
        case counter(name: String, unit: UInt8, threadTime: Bool)
        case async(name: String)
    }

    /// A track descriptor packet.
    /// An async interval's track, written by hand: there is one per async
    /// interval (a span per request), so it is on the writer's hot path. The
    /// fields go in field-number order, byte for byte what protobuf-c writes.
    static func appendAsyncTrack(
        uuid: UInt64, parent: UInt64, name: UnsafeRawBufferPointer, sequenceID: UInt32, to buffer: inout ProtoBuffer
    ) {
        let packet = buffer.beginMessage(PerfettoWire.Trace.packet)
        buffer.appendVarintField(PerfettoWire.TracePacket.trustedPacketSequenceID, UInt64(sequenceID))
        let track = buffer.beginMessage(PerfettoWire.TracePacket.trackDescriptor)
        buffer.appendVarintField(PerfettoWire.TrackDescriptor.uuid, uuid)
        buffer.appendBytesField(PerfettoWire.TrackDescriptor.name, name)
        buffer.appendVarintField(PerfettoWire.TrackDescriptor.parentUUID, parent)
        buffer.endMessage(track)
        buffer.endMessage(packet)
    }

    static func appendTrack(
        uuid: UInt64, parent: UInt64?, kind: TrackKind, sequenceID: UInt32, to buffer: inout ProtoBuffer
    ) {
        let strings = CStrings()
        var packet = emptyPacket(onSequence: sequenceID)
        var track = Perfetto__Protos__TrackDescriptor()
        perfetto__protos__track_descriptor__init(&track)
        track.has_uuid = 1
        track.uuid = uuid
        if let parent {
            track.has_parent_uuid = 1
            track.parent_uuid = parent
        }
        var process = Perfetto__Protos__ProcessDescriptor()
        perfetto__protos__process_descriptor__init(&process)
        var thread = Perfetto__Protos__ThreadDescriptor()
        perfetto__protos__thread_descriptor__init(&thread)
        var counter = Perfetto__Protos__CounterDescriptor()
        perfetto__protos__counter_descriptor__init(&counter)

        withUnsafeMutablePointer(to: &process) { process in
            withUnsafeMutablePointer(to: &thread) { thread in
                withUnsafeMutablePointer(to: &counter) { counter in
                    switch kind {
                    case .process(let pid, let name):
                        process.pointee.has_pid = 1
                        process.pointee.pid = pid
                        process.pointee.process_name = strings.make(name)
                        track.process = process
                    case .thread(let pid, let tid, let name):
                        thread.pointee.has_pid = 1
                        thread.pointee.pid = pid
                        thread.pointee.has_tid = 1
                        thread.pointee.tid = tid
                        thread.pointee.thread_name = strings.make(name)
                        track.thread = thread
                    case .counter(let name, let unit, let threadTime):
                        track.static_or_dynamic_name_case =
                            PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME
                        track.name = strings.make(name)
                        if threadTime {
                            counter.pointee.has_type = 1
                            counter.pointee.type =
                                PERFETTO__PROTOS__COUNTER_DESCRIPTOR__BUILTIN_COUNTER_TYPE__COUNTER_THREAD_TIME_NS
                        }
                        if unit != 0 {
                            counter.pointee.has_unit = 1
                            counter.pointee.unit = Perfetto__Protos__CounterDescriptor__Unit(rawValue: UInt32(unit))
                        }
                        track.counter = counter
                    case .async(let name):
                        track.static_or_dynamic_name_case =
                            PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME
                        track.name = strings.make(name)
                    }
                    withUnsafeMutablePointer(to: &track) { track in
                        packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR
                        packet.track_descriptor = track
                        append(&packet, to: &buffer)
                    }
                }
            }
        }
    }

    /// Loss accounting of one thread, for the trace's statistics.
    struct ThreadLoss {
        var sequenceID: UInt32
        var recorded: UInt64
        var discarded: UInt64
        var overwritten: UInt64
        var orphanEnds: UInt64
        var bufferSize: UInt64 = 0
    }

    /// The TraceStats packet: one buffer entry per thread.
    static func appendStatistics(
        _ threads: [ThreadLoss], sequenceID: UInt32, invalidRecords: UInt64, to buffer: inout ProtoBuffer
    ) {
        var buffers = threads.map { loss -> Perfetto__Protos__TraceStats__BufferStats in
            var stats = Perfetto__Protos__TraceStats__BufferStats()
            perfetto__protos__trace_stats__buffer_stats__init(&stats)
            stats.has_buffer_size = 1
            stats.buffer_size = loss.bufferSize
            stats.has_chunks_written = 1
            stats.chunks_written = loss.recorded
            stats.has_chunks_discarded = 1
            stats.chunks_discarded = loss.discarded
            stats.has_chunks_overwritten = 1
            stats.chunks_overwritten = loss.overwritten
            stats.has_trace_writer_packet_loss = 1
            stats.trace_writer_packet_loss = loss.discarded &+ loss.overwritten
            stats.has_patches_failed = 1
            stats.patches_failed = loss.orphanEnds
            return stats
        }
        var writers = threads.enumerated().map { index, loss -> Perfetto__Protos__TraceStats__WriterStats in
            var stats = Perfetto__Protos__TraceStats__WriterStats()
            perfetto__protos__trace_stats__writer_stats__init(&stats)
            stats.has_sequence_id = 1
            stats.sequence_id = UInt64(loss.sequenceID)
            stats.has_buffer = 1
            stats.buffer = UInt32(index)
            return stats
        }
        var statistics = Perfetto__Protos__TraceStats()
        perfetto__protos__trace_stats__init(&statistics)
        statistics.has_total_buffers = 1
        statistics.total_buffers = UInt32(threads.count)
        statistics.has_invalid_packets = 1
        statistics.invalid_packets = invalidRecords
        statistics.has_final_flush_outcome = 1
        statistics.final_flush_outcome = PERFETTO__PROTOS__TRACE_STATS__FINAL_FLUSH_OUTCOME__FINAL_FLUSH_SUCCEEDED

        buffers.withUnsafeMutableBufferPointer { buffers in
            writers.withUnsafeMutableBufferPointer { writers in
                var bufferPointers = (0..<buffers.count).map { Optional(buffers.baseAddress! + $0) }
                var writerPointers = (0..<writers.count).map { Optional(writers.baseAddress! + $0) }
                bufferPointers.withUnsafeMutableBufferPointer { bufferPointers in
                    writerPointers.withUnsafeMutableBufferPointer { writerPointers in
                        statistics.n_buffer_stats = bufferPointers.count
                        statistics.buffer_stats = bufferPointers.baseAddress
                        statistics.n_writer_stats = writerPointers.count
                        statistics.writer_stats = writerPointers.baseAddress
                        var packet = emptyPacket(onSequence: sequenceID)
                        withUnsafeMutablePointer(to: &statistics) { statistics in
                            packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_STATS
                            packet.trace_stats = statistics
                            append(&packet, to: &buffer)
                        }
                    }
                }
            }
        }
    }
}

/// C strings that live as long as this object, for protobuf-c messages.
package final class CStrings {
    private var pointers: [UnsafeMutablePointer<CChar>] = []

    package init() {}

    package func make(_ text: String) -> UnsafeMutablePointer<CChar> {
        let pointer = strdup(text)!
        pointers.append(pointer)
        return pointer
    }

    deinit {
        for pointer in pointers { free(pointer) }
    }
}
