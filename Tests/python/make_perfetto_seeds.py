"""Writes traces through Perfetto's official Python schema, as fuzzing seeds
for Strobe's reader: track events with interned names and incremental
state, counters, a clock snapshot, and process and thread descriptors.

Usage: make_perfetto_seeds.py DIR
"""
import os
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def descriptors(trace, seq):
    packet = trace.packet.add()
    packet.trusted_packet_sequence_id = seq
    packet.track_descriptor.uuid = 10
    packet.track_descriptor.process.pid = 42
    packet.track_descriptor.process.process_name = "seed process"
    packet = trace.packet.add()
    packet.trusted_packet_sequence_id = seq
    packet.track_descriptor.uuid = 11
    packet.track_descriptor.parent_uuid = 10
    packet.track_descriptor.thread.pid = 42
    packet.track_descriptor.thread.tid = 43
    packet.track_descriptor.thread.thread_name = "seed thread"
    packet = trace.packet.add()
    packet.trusted_packet_sequence_id = seq
    packet.track_descriptor.uuid = 12
    packet.track_descriptor.parent_uuid = 10
    packet.track_descriptor.name = "seed counter"
    packet.track_descriptor.counter.unit = pb.CounterDescriptor.UNIT_SIZE_BYTES


def interned_trace():
    trace = pb.Trace()
    seq = 7
    packet = trace.packet.add()
    packet.trusted_packet_sequence_id = seq
    packet.timestamp = 1000
    clock = packet.clock_snapshot.clocks.add()
    clock.clock_id = 6
    clock.timestamp = 1000
    clock = packet.clock_snapshot.clocks.add()
    clock.clock_id = 64
    clock.timestamp = 0
    clock.unit_multiplier_ns = 1
    clock.is_incremental = True
    descriptors(trace, seq)
    packet = trace.packet.add()
    packet.trusted_packet_sequence_id = seq
    packet.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    packet.trace_packet_defaults.track_event_defaults.track_uuid = 11
    packet.trace_packet_defaults.timestamp_clock_id = 64
    name = packet.interned_data.event_names.add()
    name.iid = 1
    name.name = "interned slice"
    for index in range(20):
        packet = trace.packet.add()
        packet.trusted_packet_sequence_id = seq
        packet.sequence_flags = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
        packet.timestamp = 100 + index
        packet.track_event.type = pb.TrackEvent.TYPE_SLICE_BEGIN if index % 2 == 0 else pb.TrackEvent.TYPE_SLICE_END
        if index % 2 == 0:
            packet.track_event.name_iid = 1
            annotation = packet.track_event.debug_annotations.add()
            annotation.name = "index"
            annotation.int_value = index
    for index in range(5):
        packet = trace.packet.add()
        packet.trusted_packet_sequence_id = seq
        packet.timestamp = 2000 + index
        packet.timestamp_clock_id = 6
        packet.track_event.type = pb.TrackEvent.TYPE_COUNTER
        packet.track_event.track_uuid = 12
        packet.track_event.counter_value = index * 1024
    return trace


def plain_trace():
    trace = pb.Trace()
    descriptors(trace, 1)
    for index, kind in enumerate([pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_INSTANT, pb.TrackEvent.TYPE_SLICE_END]):
        packet = trace.packet.add()
        packet.trusted_packet_sequence_id = 1
        packet.timestamp = 5000 + index * 10
        packet.track_event.type = kind
        packet.track_event.track_uuid = 11
        if kind != pb.TrackEvent.TYPE_SLICE_END:
            packet.track_event.name = "plain"
        packet.track_event.flow_ids.append(5)
    return trace


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    for name, trace in [("perfetto-interned.pftrace", interned_trace()), ("perfetto-plain.pftrace", plain_trace())]:
        with open(os.path.join(argv[1], name), "wb") as f:
            f.write(trace.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
