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

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError:  # pragma: no cover - depends on the machine
    sys.exit("perfetto_decode: the `perfetto` Python package is required "
             "(pip install perfetto)")

SEQ_INCREMENTAL_STATE_CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
SEQ_NEEDS_INCREMENTAL_STATE = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE

TYPE_SLICE_BEGIN = pb.TrackEvent.TYPE_SLICE_BEGIN
TYPE_SLICE_END = pb.TrackEvent.TYPE_SLICE_END
TYPE_INSTANT = pb.TrackEvent.TYPE_INSTANT
TYPE_COUNTER = pb.TrackEvent.TYPE_COUNTER

COUNTER_THREAD_TIME_NS = pb.CounterDescriptor.COUNTER_THREAD_TIME_NS

BOOTTIME = pb.BUILTIN_CLOCK_BOOTTIME
REALTIME = pb.BUILTIN_CLOCK_REALTIME

UNIT_NAMES = {
    pb.CounterDescriptor.UNIT_TIME_NS: "ns",
    pb.CounterDescriptor.UNIT_COUNT: "count",
    pb.CounterDescriptor.UNIT_SIZE_BYTES: "bytes",
}


def is_repeated(field):
    """FieldDescriptor.is_repeated, also on protobuf releases that lack it."""
    flag = getattr(field, "is_repeated", None)
    return flag if flag is not None else field.label == field.LABEL_REPEATED


def is_sequence_clock(clock_id):
    return 64 <= clock_id < 128


def global_clock_id(seq_id, clock_id):
    """Sequence-scoped clocks are made unique by folding in the sequence id."""
    if is_sequence_clock(clock_id):
        return (seq_id << 32) | clock_id
    return clock_id


class Generation:
    """One generation of a sequence's incremental state."""

    def __init__(self, previous=None, keep_interned=False):
        if previous is not None and keep_interned:
            self.event_names = dict(previous.event_names)
            self.categories = dict(previous.categories)
            self.debug_names = dict(previous.debug_names)
            self.debug_strings = dict(previous.debug_strings)
        else:
            self.event_names = {}
            self.categories = {}
            self.debug_names = {}
            self.debug_strings = {}
        self.defaults = None  # pb.TracePacketDefaults or None

    def intern(self, data):
        for e in data.event_names:
            self.event_names[e.iid] = e.name
        for e in data.event_categories:
            self.categories[e.iid] = e.name
        for e in data.debug_annotation_names:
            self.debug_names[e.iid] = e.name
        for e in data.debug_annotation_string_values:
            self.debug_strings[e.iid] = e.str.decode("utf-8", "replace")


class Sequence:
    def __init__(self):
        self.valid = False
        self.generation = Generation()
        self.counter_totals = {}  # track uuid -> running value
        self.dropped_marks = 0  # as counted by the trace processor

    def clear(self):
        self.valid = True
        self.generation = Generation()
        self.counter_totals = {}

    def set_defaults(self, defaults):
        generation = Generation(self.generation, keep_interned=True)
        generation.defaults = defaults
        self.generation = generation


class ClockTracker:
    """Converts timestamps of any clock to the trace clock via snapshots."""

    def __init__(self):
        self.trace_clock = BOOTTIME
        self.trace_clock_fixed = False
        self.domains = {}  # global id -> {"mult", "incremental", "last"}
        self.snapshots = []  # list of {global id: ns}
        self.edges = collections.defaultdict(set)  # global id -> neighbours

    def add_snapshot(self, snapshot, seq_id, errors):
        if not self.trace_clock_fixed:
            self.trace_clock_fixed = True
            if snapshot.HasField("primary_trace_clock"):
                self.trace_clock = snapshot.primary_trace_clock
        readings = {}
        for clock in snapshot.clocks:
            if is_sequence_clock(clock.clock_id) and not seq_id:
                errors.append("invalid_clock_snapshot")
                return
            gid = global_clock_id(seq_id, clock.clock_id)
            mult = clock.unit_multiplier_ns if clock.HasField("unit_multiplier_ns") else 1
            # Incremental encoding is only allowed on sequence-scoped clocks.
            if gid in readings or mult == 0 or (
                    clock.is_incremental and not is_sequence_clock(clock.clock_id)):
                errors.append("invalid_clock_snapshot")
                return
            ns = clock.timestamp * mult
            readings[gid] = ns
            domain = self.domains.setdefault(
                gid, {"mult": mult, "incremental": clock.is_incremental, "last": 0})
            if domain["mult"] != mult or domain["incremental"] != clock.is_incremental:
                errors.append("invalid_clock_snapshot")
                return
            if domain["incremental"]:
                domain["last"] = ns
        self.snapshots.append(readings)
        for a in readings:
            for b in readings:
                if a != b:
                    self.edges[a].add(b)

    def has_path(self, gid):
        return gid == self.trace_clock or self._path(gid) is not None

    def _path(self, gid):
        """Shortest list of clocks from gid to the trace clock, or None."""
        if gid not in self.edges:
            return None
        previous = {gid: None}
        queue = collections.deque([gid])
        while queue:
            node = queue.popleft()
            if node == self.trace_clock:
                path = []
                while node is not None:
                    path.append(node)
                    node = previous[node]
                return path[::-1]
            for nxt in sorted(self.edges[node]):
                if nxt not in previous:
                    previous[nxt] = node
                    queue.append(nxt)
        return None

    def _hop(self, src, dst, value):
        candidates = [s for s in self.snapshots if src in s and dst in s]
        candidates.sort(key=lambda s: s[src])  # stable: file order on ties
        chosen = candidates[0]
        for snap in candidates:
            if snap[src] <= value:
                chosen = snap
        return chosen[dst] + (value - chosen[src])

    def to_trace_time(self, gid, timestamp):
        """Returns the trace-time value of a packet timestamp, or None."""
        domain = self.domains.get(gid)
        if gid == self.trace_clock and (domain is None or not domain["incremental"]):
            return timestamp * (domain["mult"] if domain else 1)
        if domain is None:
            return None
        path = self._path(gid)
        if path is None:
            return None
        value = timestamp * domain["mult"]
        if domain["incremental"]:
            value = domain["last"] + value
            domain["last"] = value
        for src, dst in zip(path, path[1:]):
            value = self._hop(src, dst, value)
        return value


class Decoder:
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

    def build(self):
        self.finish_tokenizing()
        self.events.sort(key=lambda e: (e[0], e[1]))
        stacks = collections.defaultdict(list)
        slices, instants, counters = [], [], []
        used_tracks = set()

        def sample(uuid, ts, value):
            used_tracks.add(uuid)
            counters.append({"track": uuid, "name": self.track_name(uuid),
                             "ts": ts, "value": value})

        for ts, _, ev in self.events:
            track = ev["track"]
            used_tracks.add(track)
            kind = ev["type"]
            thread_time = None
            for uuid, value in ev["extra"]:
                if kind in (TYPE_SLICE_BEGIN, TYPE_SLICE_END) and self.is_thread_time_track(uuid):
                    used_tracks.add(uuid)
                    thread_time = value
                else:
                    sample(uuid, ts, value)

            if kind == TYPE_SLICE_BEGIN:
                record = {
                    "track": track, "name": ev["name"], "ts": ts, "dur": None,
                    "categories": ev["categories"],
                    "depth": len(stacks[track]), "args": dict(ev["args"]),
                    "thread_dur": None, "flow_ids": ev["flow_ids"],
                    "terminating_flow_ids": ev["terminating_flow_ids"],
                    "_thread_ts": thread_time,
                }
                stacks[track].append(record)
                slices.append(record)
            elif kind == TYPE_SLICE_END:
                if not stacks[track]:
                    self.errors.append("unmatched_end")
                    continue
                record = stacks[track].pop()
                record["dur"] = ts - record["ts"]
                record["args"].update(ev["args"])
                record["flow_ids"] = record["flow_ids"] + ev["flow_ids"]
                record["terminating_flow_ids"] = (record["terminating_flow_ids"]
                                                  + ev["terminating_flow_ids"])
                if record["_thread_ts"] is not None and thread_time is not None:
                    record["thread_dur"] = thread_time - record["_thread_ts"]
            elif kind == TYPE_INSTANT:
                instants.append({"track": track, "name": ev["name"], "ts": ts,
                                 "categories": ev["categories"],
                                 "args": dict(ev["args"]),
                                 "sequence": ev["sequence"],
                                 "clock": ev["clock"]})
            elif kind == TYPE_COUNTER:
                sample(track, ts, ev["value"])

        for record in slices:
            del record["_thread_ts"]
        slices.sort(key=lambda s: (s["ts"], s["track"]))
        self.fill_stats()

        return {
            "packets": self.packets,
            "sequences": sorted(self.sequence_ids),
            "tracks": self.tracks_json(used_tracks),
            "slices": slices,
            "instants": instants,
            "counters": counters,
            "stats": dict(self.stats),
            "errors": self.errors,
            "realtime_offsets": [
                readings[REALTIME] - readings[BOOTTIME]
                for readings in self.clocks.snapshots
                if REALTIME in readings and BOOTTIME in readings],
        }

    def tracks_json(self, used_tracks):
        def lookup(uuid, attr):
            seen = set()
            while uuid is not None and uuid not in seen:
                seen.add(uuid)
                desc = self.descriptors.get(uuid)
                if desc is None:
                    return None
                if attr == "pid":
                    if desc.HasField("thread") and desc.thread.HasField("pid"):
                        return desc.thread.pid
                    if desc.HasField("process") and desc.process.HasField("pid"):
                        return desc.process.pid
                elif desc.HasField("thread") and desc.thread.HasField("tid"):
                    return desc.thread.tid
                uuid = desc.parent_uuid if desc.HasField("parent_uuid") else None
            return None

        out = {}
        for uuid in sorted(set(self.descriptors) | used_tracks):
            desc = self.descriptors.get(uuid)
            if desc is None:
                kind = "other"
            elif desc.HasField("counter"):
                kind = "counter"
            elif desc.HasField("thread"):
                kind = "thread"
            elif desc.HasField("process"):
                kind = "process"
            else:
                kind = "async"
            unit = None
            if desc is not None and desc.HasField("counter"):
                if desc.counter.unit_name:
                    unit = desc.counter.unit_name
                else:
                    unit = UNIT_NAMES.get(desc.counter.unit)
            out[str(uuid)] = {
                "name": self.track_name(uuid),
                "kind": kind,
                "pid": lookup(uuid, "pid"),
                "tid": lookup(uuid, "tid"),
                "parent": desc.parent_uuid if desc is not None and desc.HasField("parent_uuid") else None,
                "counter_unit": unit,
            }
        return out

    def fill_stats(self):
        ts = self.last_trace_stats
        if ts is None:
            return
        for buf in ts.buffer_stats:
            for field, value in buf.ListFields():
                self.stats[field.name] = self.stats.get(field.name, 0) + value
        for field, value in ts.ListFields():
            if is_repeated(field) or field.message_type is not None:
                continue
            if field.name == "final_flush_outcome":
                if value == pb.TraceStats.FINAL_FLUSH_SUCCEEDED:
                    self.stats["traced_final_flush_succeeded"] = 1
                elif value == pb.TraceStats.FINAL_FLUSH_FAILED:
                    self.stats["traced_final_flush_failed"] = 1
                continue
            self.stats["traced_" + field.name] = value
        if len(ts.writer_stats):
            loss = 0
            for writer in ts.writer_stats:
                seq = self.sequences.get(writer.sequence_id)
                if seq is not None:
                    loss += seq.dropped_marks
            self.stats["traced_buf_sequence_packet_loss"] = loss


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
