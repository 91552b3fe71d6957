#!/usr/bin/env python3
"""Self-test of perfetto_decode.py: builds traces with the official Perfetto
classes and checks the decoder's output field by field.

usage: python3 Tests/python/test_perfetto_decode.py
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import perfetto_decode  # noqa: E402
from perfetto_decode import pb  # noqa: E402

CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
BEGIN = pb.TrackEvent.TYPE_SLICE_BEGIN
END = pb.TrackEvent.TYPE_SLICE_END
INSTANT = pb.TrackEvent.TYPE_INSTANT
COUNTER = pb.TrackEvent.TYPE_COUNTER

# Track uuids.
PROCESS, HEAP, WIDGETS, REQUESTS = 100, 300, 301, 400
MAIN, MAIN_CPU, WORKER, ORPHAN = 200, 201, 210, 999


def packet(trace, seq=None, ts=None, flags=0, **fields):
    p = trace.packet.add()
    if seq is not None:
        p.trusted_packet_sequence_id = seq
    if ts is not None:
        p.timestamp = ts
    if flags:
        p.sequence_flags = flags
    for key, value in fields.items():
        setattr(p, key, value)
    return p


def event(trace, seq, ts, type, flags=NEEDS, **fields):
    p = packet(trace, seq, ts, flags)
    ev = p.track_event
    ev.type = type
    for key, value in fields.items():
        if isinstance(value, list):
            getattr(ev, key).extend(value)
        else:
            setattr(ev, key, value)
    return p


def build_trace():
    t = pb.Trace()

    # Sequence 1: process-wide metadata and a global clock snapshot.
    p = packet(t, seq=1, flags=CLEARED, first_packet_on_sequence=True)
    p.clock_snapshot.clocks.add(clock_id=pb.BUILTIN_CLOCK_BOOTTIME, timestamp=5_000_000)
    p.clock_snapshot.clocks.add(clock_id=pb.BUILTIN_CLOCK_MONOTONIC, timestamp=2_000_000)
    # The wall clock beside BOOTTIME, as Strobe writes it.
    p.clock_snapshot.clocks.add(clock_id=pb.BUILTIN_CLOCK_REALTIME, timestamp=1_700_000_000_005_000_000)
    d = packet(t, seq=1).track_descriptor
    d.uuid = PROCESS
    d.process.pid = 42
    d.process.process_name = "proc"
    d = packet(t, seq=1).track_descriptor
    d.uuid, d.parent_uuid, d.name = HEAP, PROCESS, "heap"
    d.counter.unit = pb.CounterDescriptor.UNIT_SIZE_BYTES
    d.counter.unit_multiplier = 1024
    d = packet(t, seq=1).track_descriptor
    d.uuid, d.parent_uuid, d.static_name = WIDGETS, PROCESS, "widgets"
    d.counter.unit_name = "widgets"
    d.counter.is_incremental = True
    d = packet(t, seq=1).track_descriptor
    d.uuid, d.parent_uuid, d.name = REQUESTS, PROCESS, "requests"

    # Sequence 2: thread "main" on an incremental, sequence-scoped clock (64)
    # in microseconds, linked to MONOTONIC (two hops from BOOTTIME).
    p = packet(t, seq=2, flags=CLEARED, first_packet_on_sequence=True,
               previous_packet_dropped=1)
    p.trace_packet_defaults.timestamp_clock_id = 64
    p.trace_packet_defaults.track_event_defaults.track_uuid = MAIN
    p.trace_packet_defaults.track_event_defaults.extra_counter_track_uuids.append(MAIN_CPU)
    p.interned_data.event_names.add(iid=1, name="outer")
    p.interned_data.event_names.add(iid=2, name="inner")
    p.interned_data.debug_annotation_names.add(iid=1, name="n")
    p.interned_data.event_categories.add(iid=1, name="cat")
    p.clock_snapshot.clocks.add(clock_id=pb.BUILTIN_CLOCK_MONOTONIC, timestamp=2_000_000)
    p.clock_snapshot.clocks.add(clock_id=64, timestamp=1000, is_incremental=True,
                                unit_multiplier_ns=1000)
    d = packet(t, seq=2).track_descriptor
    d.uuid = MAIN
    d.thread.pid, d.thread.tid, d.thread.thread_name = 42, 1001, "main"
    d = packet(t, seq=2).track_descriptor
    d.uuid, d.parent_uuid = MAIN_CPU, MAIN
    d.counter.type = pb.CounterDescriptor.COUNTER_THREAD_TIME_NS
    d.counter.unit = pb.CounterDescriptor.UNIT_TIME_NS

    p = event(t, 2, 10, BEGIN, name_iid=1, category_iids=[1], extra_counter_values=[500])
    p.track_event.debug_annotations.add(name_iid=1, int_value=7)
    p = event(t, 2, 5, BEGIN, name_iid=2, extra_counter_values=[600])
    p.track_event.debug_annotations.add(name="s", string_value="x")
    event(t, 2, 20, END, extra_counter_values=[900])
    p = event(t, 2, 15, END, extra_counter_values=[1000])
    p.track_event.debug_annotations.add(name="result", bool_value=True)
    event(t, 2, 1, END)  # nothing open any more: unmatched

    # Sequence 3: thread "worker" in absolute BOOTTIME; its iid 1 means
    # something else than on sequence 2.
    p = packet(t, seq=3, flags=CLEARED, first_packet_on_sequence=True)
    p.trace_packet_defaults.track_event_defaults.track_uuid = WORKER
    p.interned_data.event_names.add(iid=1, name="work")
    d = p.track_descriptor
    d.uuid = WORKER
    d.thread.pid, d.thread.tid, d.thread.thread_name = 42, 1002, "worker"
    event(t, 3, 5_020_000, BEGIN, name_iid=1, flow_ids=[77])
    p = event(t, 3, 5_021_000, BEGIN, track_uuid=REQUESTS, name="req")
    p.track_event.debug_annotations.add(name="id", uint_value=9)
    p = event(t, 3, 2_026_000, INSTANT, name="tick")  # on MONOTONIC
    p.timestamp_clock_id = pb.BUILTIN_CLOCK_MONOTONIC
    p.track_event.debug_annotations.add(name="ptr", pointer_value=0xBEEF)
    p.track_event.debug_annotations.add(name="ratio", double_value=0.5)
    event(t, 3, 5_030_000, COUNTER, track_uuid=HEAP, counter_value=4)
    event(t, 3, 5_031_000, COUNTER, track_uuid=WIDGETS, double_counter_value=5.0)
    event(t, 3, 5_032_000, COUNTER, track_uuid=WIDGETS, double_counter_value=3.0)
    event(t, 3, 5_033_000, INSTANT, track_uuid=ORPHAN, name="orphan")
    event(t, 3, 5_040_000, END)
    # A gap: the state is invalid until the next clear, so these two are
    # skipped by the trace processor.
    p = event(t, 3, 5_045_000, BEGIN, name_iid=1)
    p.previous_packet_dropped = 1
    event(t, 3, 5_046_000, END)
    p = event(t, 3, 5_060_000, END, flags=CLEARED | NEEDS, track_uuid=REQUESTS,
              terminating_flow_ids=[77])
    p.trace_packet_defaults.track_event_defaults.track_uuid = WORKER
    p.interned_data.event_names.add(iid=1, name="again")
    event(t, 3, 5_070_000, BEGIN, name_iid=1)  # never ended

    # Sequence 4 never clears its state: interned data and the event are
    # both skipped.
    p = event(t, 4, 5_080_000, INSTANT, name_iid=1)
    p.interned_data.event_names.add(iid=1, name="lost")

    # Writer-side statistics, one buffer per thread.
    p = packet(t, seq=1)
    ts = p.trace_stats
    ts.buffer_stats.add(buffer_size=4096, bytes_written=100, chunks_written=10,
                        chunks_discarded=3, trace_writer_packet_loss=3)
    ts.buffer_stats.add(buffer_size=4096, bytes_written=50, chunks_written=5,
                        chunks_overwritten=2, bytes_overwritten=16,
                        trace_writer_packet_loss=2)
    ts.writer_stats.add(sequence_id=2, buffer=0)
    ts.writer_stats.add(sequence_id=3, buffer=1)
    ts.total_buffers = 2
    ts.final_flush_outcome = pb.TraceStats.FINAL_FLUSH_SUCCEEDED
    return t


EXPECTED = {
    "packets": 28,
    "sequences": [1, 2, 3, 4],
    "tracks": {
        "100": {"name": "proc", "kind": "process", "pid": 42, "tid": None,
                "parent": None, "counter_unit": None},
        "200": {"name": "main", "kind": "thread", "pid": 42, "tid": 1001,
                "parent": None, "counter_unit": None},
        "201": {"name": None, "kind": "counter", "pid": 42, "tid": 1001,
                "parent": 200, "counter_unit": "ns"},
        "210": {"name": "worker", "kind": "thread", "pid": 42, "tid": 1002,
                "parent": None, "counter_unit": None},
        "300": {"name": "heap", "kind": "counter", "pid": 42, "tid": None,
                "parent": 100, "counter_unit": "bytes"},
        "301": {"name": "widgets", "kind": "counter", "pid": 42, "tid": None,
                "parent": 100, "counter_unit": "widgets"},
        "400": {"name": "requests", "kind": "async", "pid": 42, "tid": None,
                "parent": 100, "counter_unit": None},
        "999": {"name": None, "kind": "other", "pid": None, "tid": None,
                "parent": None, "counter_unit": None},
    },
    "slices": [
        {"track": MAIN, "name": "outer", "categories": ["cat"], "ts": 5_010_000, "dur": 40_000, "depth": 0,
         "args": {"n": 7, "result": True}, "thread_dur": 500,
         "flow_ids": [], "terminating_flow_ids": []},
        {"track": MAIN, "name": "inner", "categories": [], "ts": 5_015_000, "dur": 20_000, "depth": 1,
         "args": {"s": "x"}, "thread_dur": 300,
         "flow_ids": [], "terminating_flow_ids": []},
        {"track": WORKER, "name": "work", "categories": [], "ts": 5_020_000, "dur": 20_000, "depth": 0,
         "args": {}, "thread_dur": None,
         "flow_ids": [77], "terminating_flow_ids": []},
        {"track": REQUESTS, "name": "req", "categories": [], "ts": 5_021_000, "dur": 39_000, "depth": 0,
         "args": {"id": 9}, "thread_dur": None,
         "flow_ids": [], "terminating_flow_ids": [77]},
        {"track": WORKER, "name": "again", "categories": [], "ts": 5_070_000, "dur": None, "depth": 0,
         "args": {}, "thread_dur": None,
         "flow_ids": [], "terminating_flow_ids": []},
    ],
    "instants": [
        {"track": WORKER, "name": "tick", "categories": [], "ts": 5_026_000,
         "args": {"ptr": "0xbeef", "ratio": 0.5}, "sequence": 3, "clock": pb.BUILTIN_CLOCK_MONOTONIC},
        {"track": ORPHAN, "name": "orphan", "categories": [], "ts": 5_033_000, "args": {},
         "sequence": 3, "clock": 0},
    ],
    "counters": [
        {"track": HEAP, "name": "heap", "ts": 5_030_000, "value": 4096},
        {"track": WIDGETS, "name": "widgets", "ts": 5_031_000, "value": 5.0},
        {"track": WIDGETS, "name": "widgets", "ts": 5_032_000, "value": 8.0},
    ],
    "stats": {
        "tokenizer_skipped_packets": 4,
        "packets_dropped_marks": 1,
        "buffer_size": 8192,
        "bytes_written": 150,
        "chunks_written": 15,
        "chunks_discarded": 3,
        "trace_writer_packet_loss": 5,
        "chunks_overwritten": 2,
        "bytes_overwritten": 16,
        "traced_total_buffers": 2,
        "traced_final_flush_succeeded": 1,
        "traced_buf_sequence_packet_loss": 1,
    },
    "errors": ["unmatched_end"],
    "realtime_offsets": [1_700_000_000_000_000_000],
}


def check_equal(actual, expected, path="result"):
    """Asserts equality, naming the first differing element."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), "%s: expected a dict, got %r" % (path, actual)
        assert set(actual) == set(expected), "%s: keys %s != %s" % (
            path, sorted(actual), sorted(expected))
        for key in expected:
            check_equal(actual[key], expected[key], "%s[%r]" % (path, key))
    elif isinstance(expected, list):
        assert isinstance(actual, list), "%s: expected a list, got %r" % (path, actual)
        assert len(actual) == len(expected), "%s: %d items, expected %d:\n%s" % (
            path, len(actual), len(expected), json.dumps(actual, indent=1))
        for i, (a, e) in enumerate(zip(actual, expected)):
            check_equal(a, e, "%s[%d]" % (path, i))
    else:
        assert actual == expected and type(actual) is type(expected), \
            "%s: %r, expected %r" % (path, actual, expected)


def test_full_trace():
    result = perfetto_decode.decode_bytes(build_trace().SerializeToString())
    check_equal(result, EXPECTED)


def test_command_line():
    data = build_trace().SerializeToString()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.pftrace")
        with open(path, "wb") as f:
            f.write(data)
        proc = subprocess.run([sys.executable, os.path.join(HERE, "perfetto_decode.py"), path],
                              capture_output=True, text=True, check=True)
    assert proc.stdout.count("\n") == 1, "expected exactly one line of JSON"
    check_equal(json.loads(proc.stdout), json.loads(json.dumps(EXPECTED)))


def test_incremental_clock_reset_by_snapshot():
    # A second snapshot of an incremental clock restarts its running value;
    # packets without a timestamp inherit the latest one.
    t = pb.Trace()
    p = packet(t, seq=5, flags=CLEARED)
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=1_000)
    p.clock_snapshot.clocks.add(clock_id=70, timestamp=0, is_incremental=True)
    p = packet(t, seq=5)
    p.track_descriptor.uuid = 1
    p.track_descriptor.name = "t"
    p = event(t, 5, 10, INSTANT, track_uuid=1, name="a")
    p.timestamp_clock_id = 70
    p = packet(t, seq=5)
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=2_000)
    p.clock_snapshot.clocks.add(clock_id=70, timestamp=500, is_incremental=True)
    p = event(t, 5, 7, INSTANT, track_uuid=1, name="b")
    p.timestamp_clock_id = 70
    p = event(t, 5, None, INSTANT, track_uuid=1, name="c")
    result = perfetto_decode.decode_trace(t)
    check_equal([(i["name"], i["ts"]) for i in result["instants"]],
                [("a", 1_010), ("b", 2_007), ("c", 2_007)])
    check_equal(result["errors"], [])


def test_state_rules():
    t = pb.Trace()
    # The clear resets defaults and interning; a later packet that needs the
    # state then uses the new generation only.
    p = event(t, 6, 100, BEGIN, flags=CLEARED | NEEDS, name_iid=1)
    p.trace_packet_defaults.track_event_defaults.track_uuid = 7
    p.interned_data.event_names.add(iid=1, name="first")
    p = event(t, 6, 200, INSTANT, flags=CLEARED | NEEDS, name_iid=1, track_uuid=8)
    p.interned_data.event_names.add(iid=2, name="second")
    # No defaults any more: an event without a track is rejected.
    event(t, 6, 300, END)
    # A packet without timestamp clock uses the raw value as trace time.
    event(t, 6, 400, END, track_uuid=7)
    # Unknown name iid after the clear.
    result = perfetto_decode.decode_trace(t)
    check_equal(result["slices"], [
        {"track": 7, "name": "first", "categories": [], "ts": 100, "dur": 300, "depth": 0, "args": {},
         "thread_dur": None, "flow_ids": [], "terminating_flow_ids": []}])
    check_equal(result["instants"], [{"track": 8, "name": None, "categories": [], "ts": 200, "args": {},
                                        "sequence": 6, "clock": 0}])
    check_equal(result["errors"], ["unknown_name_iid", "event_without_track"])
    check_equal(result["stats"], {"tokenizer_skipped_packets": 0, "packets_dropped_marks": 0})


def test_clock_snapshot_after_use():
    # A packet whose clock is only defined later in the file is kept and
    # converted at the end, as the trace processor does; a clock that is
    # never defined drops the packet.
    t = pb.Trace()
    p = event(t, 9, 50, INSTANT, flags=CLEARED | NEEDS, track_uuid=1, name="late")
    p.timestamp_clock_id = pb.BUILTIN_CLOCK_MONOTONIC
    p = event(t, 9, 50, INSTANT, track_uuid=1, name="never")
    p.timestamp_clock_id = pb.BUILTIN_CLOCK_REALTIME
    p = packet(t, seq=9)
    p.clock_snapshot.clocks.add(clock_id=3, timestamp=0)
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=1_000_000)
    result = perfetto_decode.decode_trace(t)
    check_equal(result["instants"], [{"track": 1, "name": "late", "categories": [], "ts": 1_000_050, "args": {},
                                        "sequence": 9, "clock": pb.BUILTIN_CLOCK_MONOTONIC}])
    check_equal(result["errors"], ["clock_sync_failure"])


def test_invalid_clock_snapshots():
    t = pb.Trace()
    # Incremental encoding on a global clock is rejected.
    p = packet(t, seq=10, flags=CLEARED)
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=0)
    p.clock_snapshot.clocks.add(clock_id=3, timestamp=0, is_incremental=True)
    # The same clock twice in one snapshot is rejected.
    p = packet(t, seq=10)
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=0)
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=5)
    # A sequence-scoped clock needs a sequence.
    p = packet(t)
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=0)
    p.clock_snapshot.clocks.add(clock_id=64, timestamp=0)
    result = perfetto_decode.decode_trace(t)
    check_equal(result["errors"], ["invalid_clock_snapshot"] * 3)
    check_equal(result["sequences"], [10])
    check_equal(result["packets"], 3)


def test_parse_error():
    result = perfetto_decode.decode_bytes(b"\x0a\xff\xff\xff\x0f garbage")
    check_equal(result["errors"], ["parse_error"])
    check_equal(result["packets"], 0)


def main():
    tests = [(name, fn) for name, fn in sorted(globals().items())
             if name.startswith("test_") and callable(fn)]
    for name, fn in tests:
        fn()
        print("ok   %s" % name)
    print("perfetto_decode self-test: %d tests passed" % len(tests))


if __name__ == "__main__":
    main()
