#!/usr/bin/env python3
"""Independent reader of Perfetto protobuf traces, for Strobe's tests.

usage: python3 Tests/python/perfetto_decode.py TRACE_FILE

Parses TRACE_FILE with the official schema (perfetto_trace_pb2.Trace from the
`perfetto` Python package, not with Strobe's own code) and prints one JSON
object to stdout:

  {
    "packets":   number of TracePackets in the file,
    "sequences": sorted distinct trusted_packet_sequence_id values,
    "tracks":    {"<uuid>": {"name", "kind", "pid", "tid", "parent",
                             "counter_unit"}},
    "slices":    [{"track", "name", "categories", "ts", "dur", "depth", "args",
                   "thread_dur", "flow_ids", "terminating_flow_ids"}],
    "instants":  [{"track", "name", "categories", "ts", "args", "sequence",
                   "clock"}],
    "counters":  [{"track", "name", "ts", "value"}],
    "stats":     {name: value},
    "errors":    [code, ...],
    "realtime_offsets": [REALTIME less BOOTTIME, per clock snapshot that
                         holds both]
  }

The reconstruction follows the rules of Perfetto's trace processor, so a test
that passes here describes what the Perfetto UI will show:

Sequences and incremental state
  Every trusted_packet_sequence_id has its own state: interned event names,
  categories and debug-annotation names, the TracePacketDefaults, and running
  totals of incremental counters. A packet with SEQ_INCREMENTAL_STATE_CLEARED
  (or incremental_state_cleared) starts a fresh, valid state (interned data
  and defaults forgotten). Otherwise a non-zero previous_packet_dropped makes
  the state invalid. A sequence starts out invalid. While the state is
  invalid, interned data is ignored and packets flagged
  SEQ_NEEDS_INCREMENTAL_STATE are skipped entirely (their clock deltas are
  not applied either); each of those cases adds 1 to
  stats["tokenizer_skipped_packets"].

Clocks
  A packet's clock is timestamp_clock_id, else the sequence default, else 0,
  which means "already in trace time". Ids 64..127 are private to the
  sequence. A ClockSnapshot records simultaneous readings (timestamp *
  unit_multiplier_ns); on an incremental clock each packet's timestamp is a
  delta (times unit_multiplier_ns) added to the clock's previous value, which
  every snapshot of that clock resets. Values are converted to the trace
  clock (BOOTTIME, or the first snapshot's primary_trace_clock) along the
  shortest chain of snapshots, using per hop the latest snapshot whose reading
  is not after the value (or the earliest one). A packet whose clock cannot
  be converted yet is retried at the end of the file; if that fails it is
  dropped with error "clock_sync_failure". Packets without a timestamp get
  the latest timestamp seen so far.

Events
  Events are ordered by converted timestamp (file order breaks ties), then:
  TYPE_SLICE_BEGIN pushes onto its track's stack (track = track_uuid or the
  default track_uuid; depth = stack size before the push); TYPE_SLICE_END
  pops it (an END on an empty stack adds "unmatched_end" to errors and is
  otherwise ignored); slices never ended have dur null. Debug annotations of
  begin and end are merged into args (end wins); dict entries become
  "name.key", array items "name[i]". flow_ids / terminating_flow_ids of begin
  and end are concatenated. extra counter values on a counter track of type
  COUNTER_THREAD_TIME_NS give thread_dur = end value - begin value on slices
  (null unless both ends carry one); all other extra values, and TYPE_COUNTER
  events, become counter samples. Counter values are multiplied by the
  track's unit_multiplier and, on is_incremental tracks, accumulated per
  sequence. Slices are sorted by (ts, track).
  Each instant also gives the packet's trusted_packet_sequence_id as
  "sequence" and the id of the clock its timestamp was on as "clock" (the
  packet's timestamp_clock_id, else the sequence default's, else 0; null
  without a timestamp).

Tracks
  kind is "counter", "thread" or "process" when the descriptor has that
  sub-message (checked in that order), "async" for any other described
  track, and "other" for a uuid used by events but never described. name is
  name / static_name, else the thread or process name. pid and tid come from
  the descriptor or, when absent, from its parent chain. counter_unit is the
  unit_name, else "ns" / "count" / "bytes" for the Unit enum, else null.
  Tracks are keyed by the decimal uuid (JSON keys are strings); every other
  place gives uuids as integers.

Stats
  tokenizer_skipped_packets and packets_dropped_marks are always present.
  packets_dropped_marks counts packets with a non-zero
  previous_packet_dropped, except those flagged first_packet_on_sequence
  (a sequence's first packet cannot report a real gap). From the last
  TraceStats packet in the file: every BufferStats field is summed over all
  buffers under its own name (e.g. "chunks_discarded",
  "trace_writer_packet_loss"); scalar TraceStats fields are stored as
  "traced_<field>"; final_flush_outcome becomes traced_final_flush_succeeded
  or traced_final_flush_failed = 1; when writer_stats are present,
  "traced_buf_sequence_packet_loss" counts previous_packet_dropped marks on
  those sequences, excluding each sequence's first packet, as the trace
  processor does.

Errors
  A list of short codes, one entry per occurrence: "parse_error",
  "unmatched_end", "clock_sync_failure", "invalid_clock_snapshot",
  "unknown_name_iid", "unknown_category_iid",
  "unknown_debug_annotation_name_iid", "unknown_debug_annotation_string_iid",
  "event_without_track", "unspecified_event_type",
  "extra_counter_count_mismatch", "state_without_sequence_id".

The module can also be imported: decode_bytes(data) and decode_trace(trace)
return the same dict.
"""

import collections
import json
import sys

from perfetto_state import (  # pb is part of this module's interface too
    COUNTER_THREAD_TIME_NS, SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE, TYPE_COUNTER,
    ClockTracker, Sequence, global_clock_id, is_sequence_clock, pb)
from perfetto_output import DecodedOutput


class Decoder(DecodedOutput):
    def __init__(self):
        self.packets = 0
        self.sequence_ids = set()
        self.sequences = {}
        self.clocks = ClockTracker()
        self.descriptors = {}  # uuid -> merged pb.TrackDescriptor
        self.events = []  # (ts, order, event dict)
        self.deferred = []  # (packet, seq_id, generation) awaiting a clock path
        self.latest_ts = 0
        self.errors = []
        self.stats = collections.OrderedDict(
            [("tokenizer_skipped_packets", 0), ("packets_dropped_marks", 0)])
        self.last_trace_stats = None

    # -- tokenization (file order) -----------------------------------------

    def add_packet(self, packet):
        self.packets += 1
        has_seq = packet.HasField("trusted_packet_sequence_id")
        seq_id = packet.trusted_packet_sequence_id
        if has_seq:
            self.sequence_ids.add(seq_id)
        inserted = seq_id not in self.sequences
        seq = self.sequences.setdefault(seq_id, Sequence())

        if packet.previous_packet_dropped:
            if not packet.first_packet_on_sequence:
                self.stats["packets_dropped_marks"] += 1
            if has_seq and not inserted:
                seq.dropped_marks += 1

        flags = packet.sequence_flags
        if packet.incremental_state_cleared or flags & SEQ_INCREMENTAL_STATE_CLEARED:
            if has_seq:
                seq.clear()
            else:
                self.errors.append("state_without_sequence_id")
        elif packet.previous_packet_dropped:
            if has_seq:
                seq.valid = False
            else:
                self.errors.append("state_without_sequence_id")

        if packet.HasField("trace_packet_defaults"):
            if has_seq:
                seq.set_defaults(packet.trace_packet_defaults)
            else:
                self.errors.append("state_without_sequence_id")

        if packet.HasField("interned_data"):
            if not has_seq:
                self.errors.append("state_without_sequence_id")
            elif not seq.valid:
                self.stats["tokenizer_skipped_packets"] += 1
            else:
                seq.generation.intern(packet.interned_data)

        if packet.HasField("clock_snapshot"):
            self.clocks.add_snapshot(packet.clock_snapshot, seq_id, self.errors)
            return

        if packet.HasField("trace_stats"):
            self.last_trace_stats = packet.trace_stats

        if flags & SEQ_NEEDS_INCREMENTAL_STATE and not seq.valid:
            self.stats["tokenizer_skipped_packets"] += 1
            return

        self.tokenize(packet, seq_id, seq.generation, at_eof=False)

    def tokenize(self, packet, seq_id, generation, at_eof):
        clock_id = None
        if packet.HasField("timestamp"):
            defaults = generation.defaults
            if packet.HasField("timestamp_clock_id"):
                clock_id = packet.timestamp_clock_id
            elif defaults is not None:
                clock_id = defaults.timestamp_clock_id
            else:
                clock_id = 0
            ts = packet.timestamp
            if clock_id:
                if is_sequence_clock(clock_id) and not seq_id:
                    self.errors.append("clock_sync_failure")
                    return
                gid = global_clock_id(seq_id, clock_id)
                if not at_eof and not self.clocks.has_path(gid):
                    self.deferred.append((packet, seq_id, generation))
                    return
                ts = self.clocks.to_trace_time(gid, ts)
                if ts is None:
                    self.errors.append("clock_sync_failure")
                    return
        else:
            ts = self.latest_ts
        self.latest_ts = max(self.latest_ts, ts)

        if packet.HasField("track_descriptor"):
            self.add_descriptor(packet.track_descriptor)
        if packet.HasField("track_event"):
            event = self.resolve_event(packet.track_event, seq_id, generation)
            if event is not None:
                event["sequence"] = seq_id
                event["clock"] = clock_id
                self.events.append((ts, len(self.events), event))

    def finish_tokenizing(self):
        deferred, self.deferred = self.deferred, []
        for packet, seq_id, generation in deferred:
            self.tokenize(packet, seq_id, generation, at_eof=True)

    def add_descriptor(self, desc):
        known = self.descriptors.get(desc.uuid)
        if known is None:
            known = pb.TrackDescriptor()
            self.descriptors[desc.uuid] = known
        known.MergeFrom(desc)

    def resolve_event(self, ev, seq_id, generation):
        defaults = generation.defaults
        ted = defaults.track_event_defaults if (
            defaults is not None and defaults.HasField("track_event_defaults")) else None

        if ev.HasField("track_uuid"):
            track = ev.track_uuid
        elif ted is not None and ted.HasField("track_uuid"):
            track = ted.track_uuid
        else:
            track = 0
        if not track:
            self.errors.append("event_without_track")
            return None

        if ev.type == pb.TrackEvent.TYPE_UNSPECIFIED:
            self.errors.append("unspecified_event_type")
            return None

        name = None
        which = ev.WhichOneof("name_field")
        if which == "name":
            name = ev.name
        elif which == "name_iid":
            name = generation.event_names.get(ev.name_iid)
            if name is None:
                self.errors.append("unknown_name_iid")
        categories = []
        for iid in ev.category_iids:
            if iid not in generation.categories:
                self.errors.append("unknown_category_iid")
            else:
                categories.append(generation.categories[iid])
        categories.extend(ev.categories)

        args = collections.OrderedDict()
        for annotation in ev.debug_annotations:
            self.add_annotation(args, annotation, generation, prefix=None)

        extra = []
        int_tracks = list(ev.extra_counter_track_uuids) or (
            list(ted.extra_counter_track_uuids) if ted is not None else [])
        dbl_tracks = list(ev.extra_double_counter_track_uuids) or (
            list(ted.extra_double_counter_track_uuids) if ted is not None else [])
        for tracks, values in ((int_tracks, ev.extra_counter_values),
                               (dbl_tracks, ev.extra_double_counter_values)):
            if not values:
                continue
            if len(tracks) < len(values):
                self.errors.append("extra_counter_count_mismatch")
            for uuid, value in zip(tracks, values):
                extra.append((uuid, self.counter_value(uuid, value, seq_id)))

        value = None
        if ev.type == TYPE_COUNTER:
            which = ev.WhichOneof("counter_value_field")
            raw = ev.double_counter_value if which == "double_counter_value" else ev.counter_value
            value = self.counter_value(track, raw, seq_id)

        return {
            "type": ev.type,
            "track": track,
            "name": name,
            "categories": categories,
            "args": args,
            "extra": extra,
            "value": value,
            "flow_ids": list(ev.flow_ids_old) + list(ev.flow_ids),
            "terminating_flow_ids": (list(ev.terminating_flow_ids_old)
                                     + list(ev.terminating_flow_ids)),
        }

    def counter_value(self, uuid, value, seq_id):
        desc = self.descriptors.get(uuid)
        counter = desc.counter if desc is not None and desc.HasField("counter") else None
        if counter is not None and counter.unit_multiplier:
            value = value * counter.unit_multiplier
        if counter is not None and counter.is_incremental:
            totals = self.sequences[seq_id].counter_totals
            value = totals.get(uuid, 0) + value
            totals[uuid] = value
        return value

    def add_annotation(self, args, annotation, generation, prefix):
        which = annotation.WhichOneof("name_field")
        if which == "name":
            key = annotation.name
        elif which == "name_iid":
            key = generation.debug_names.get(annotation.name_iid)
            if key is None:
                self.errors.append("unknown_debug_annotation_name_iid")
                key = "<iid %d>" % annotation.name_iid
        else:
            key = ""
        if prefix is not None:
            key = prefix + ("." + key if key else "")
        self.add_annotation_value(args, key, annotation, generation)

    def add_annotation_value(self, args, key, annotation, generation):
        which = annotation.WhichOneof("value")
        if which in ("bool_value", "uint_value", "int_value", "double_value",
                     "string_value", "legacy_json_value"):
            args[key] = getattr(annotation, which)
        elif which == "pointer_value":
            args[key] = "0x%x" % annotation.pointer_value
        elif which == "string_value_iid":
            text = generation.debug_strings.get(annotation.string_value_iid)
            if text is None:
                self.errors.append("unknown_debug_annotation_string_iid")
            args[key] = text
        elif annotation.dict_entries:
            for entry in annotation.dict_entries:
                self.add_annotation(args, entry, generation, prefix=key)
        elif annotation.array_values:
            for i, item in enumerate(annotation.array_values):
                self.add_annotation_value(args, "%s[%d]" % (key, i), item, generation)
        else:
            args[key] = None

    # -- parsing (timestamp order) -----------------------------------------

    def is_thread_time_track(self, uuid):
        desc = self.descriptors.get(uuid)
        return (desc is not None and desc.HasField("counter")
                and desc.counter.type == COUNTER_THREAD_TIME_NS)

    def track_name(self, uuid):
        desc = self.descriptors.get(uuid)
        if desc is None:
            return None
        which = desc.WhichOneof("static_or_dynamic_name")
        if which is not None:
            return getattr(desc, which)
        if desc.HasField("thread") and desc.thread.HasField("thread_name"):
            return desc.thread.thread_name
        if desc.HasField("process") and desc.process.HasField("process_name"):
            return desc.process.process_name
        return None

def decode_trace(trace):
    """Decodes a parsed pb.Trace into the JSON-ready dict described above."""
    decoder = Decoder()
    for packet in trace.packet:
        decoder.add_packet(packet)
    return decoder.build()


def decode_bytes(data):
    """Decodes the bytes of a trace file into the dict described above."""
    trace = pb.Trace()
    try:
        trace.ParseFromString(data)
    except Exception:  # the official parser's DecodeError and friends
        empty = Decoder().build()
        empty["errors"].append("parse_error")
        return empty
    return decode_trace(trace)


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        result = decode_bytes(f.read())
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 1 if "parse_error" in result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
