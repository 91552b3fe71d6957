"""The state perfetto_decode.py keeps while it reads a trace: the official
schema, its constants, each sequence's incremental state (interned names,
packet defaults) and the clocks that convert timestamps to the trace clock.
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
