#!/usr/bin/env python3
"""Independent reader of the CPU samples in a Perfetto trace, for Strobe's tests.

usage: python3 Tests/python/perfetto_profile.py TRACE_FILE

Parses TRACE_FILE with the official schema (perfetto_trace_pb2.Trace from the
`perfetto` Python package) and prints one JSON object to stdout:

  {
    "samples":  [{"ts", "pid", "tid", "cpu", "cpu_mode",
                  "frames": [{"function", "mapping_path", "build_id",
                              "rel_pc"}, ...]}]   (root first),
    "mappings": [{"path", "build_id", "start", "end", "exact_offset",
                  "start_offset"}],
    "defaults": [{"sequence", "frequency", "counter", "timestamp_clock"}],
    "errors":   ["<what did not resolve>", ...],
    "lost_records": samples counted lost (PerfSample.kernel_records_lost)
  }

The interned data follows the trace processor's rules for PerfSample
packets: each trusted_packet_sequence_id has its own tables (function_names,
frames, callstacks, mappings, build_ids, mapping_paths), which
SEQ_INCREMENTAL_STATE_CLEARED empties. Build ids are bytes in the schema and
are printed as hex (a build id written as hex text prints as the hex of that
text). A callstack_iid, frame id, mapping
id or string id that does not resolve on the sample's sequence is an error.
"""

import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

SEQ_INCREMENTAL_STATE_CLEARED = 1


def main(path):
    trace = pb.Trace()
    with open(path, "rb") as handle:
        trace.ParseFromString(handle.read())
    tables = {}
    samples, errors, mappings_seen = [], [], {}
    lost_records = 0
    defaults = []
    for packet in trace.packet:
        seq = packet.trusted_packet_sequence_id
        if packet.HasField("trace_packet_defaults") and \
                packet.trace_packet_defaults.HasField("perf_sample_defaults"):
            timebase = packet.trace_packet_defaults.perf_sample_defaults.timebase
            defaults.append({"sequence": seq, "frequency": timebase.frequency,
                             "counter": timebase.counter, "timestamp_clock": timebase.timestamp_clock})
        if packet.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED or seq not in tables:
            if packet.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED:
                tables[seq] = {k: {} for k in ("function_names", "build_ids", "mapping_paths",
                                               "mappings", "frames", "callstacks")}
        if packet.HasField("interned_data") and seq in tables:
            data = packet.interned_data
            for kind in ("function_names", "mapping_paths"):
                for entry in getattr(data, kind):
                    tables[seq][kind][entry.iid] = entry.str.decode("utf-8", "replace")
            for entry in data.build_ids:
                tables[seq]["build_ids"][entry.iid] = entry.str.hex()
            for kind in ("mappings", "frames", "callstacks"):
                for entry in getattr(data, kind):
                    tables[seq][kind][entry.iid] = entry
        if not packet.HasField("perf_sample"):
            continue
        sample = packet.perf_sample
        if sample.kernel_records_lost:
            lost_records += sample.kernel_records_lost
            continue
        if seq not in tables:
            errors.append("sample on sequence %d before its state was cleared" % seq)
            continue
        table = tables[seq]
        stack = table["callstacks"].get(sample.callstack_iid)
        if stack is None:
            errors.append("callstack %d unresolved" % sample.callstack_iid)
            continue
        frames = []
        for frame_id in stack.frame_ids:
            frame = table["frames"].get(frame_id)
            if frame is None:
                errors.append("frame %d unresolved" % frame_id)
                continue
            function = table["function_names"].get(frame.function_name_id)
            if function is None:
                errors.append("function name %d unresolved" % frame.function_name_id)
            mapping_path, build_id = None, None
            if frame.HasField("mapping_id"):
                mapping = table["mappings"].get(frame.mapping_id)
                if mapping is None:
                    errors.append("mapping %d unresolved" % frame.mapping_id)
                else:
                    paths = [table["mapping_paths"].get(i) for i in mapping.path_string_ids]
                    if None in paths:
                        errors.append("mapping path of mapping %d unresolved" % frame.mapping_id)
                    mapping_path = "/".join(p or "" for p in paths)
                    if mapping.HasField("build_id"):
                        build_id = table["build_ids"].get(mapping.build_id)
                        if build_id is None:
                            errors.append("build id %d unresolved" % mapping.build_id)
                    mappings_seen[(seq, frame.mapping_id)] = {
                        "path": mapping_path, "build_id": build_id,
                        "start": mapping.start, "end": mapping.end,
                        "exact_offset": mapping.exact_offset if mapping.HasField("exact_offset") else None,
                        "start_offset": mapping.start_offset if mapping.HasField("start_offset") else None}
            frames.append({"function": function, "mapping_path": mapping_path,
                           "build_id": build_id, "rel_pc": frame.rel_pc})
        samples.append({"ts": packet.timestamp, "pid": sample.pid, "tid": sample.tid,
                        "cpu": sample.cpu, "cpu_mode": sample.cpu_mode, "frames": frames})
    json.dump({"samples": samples, "mappings": list(mappings_seen.values()), "errors": errors,
               "lost_records": lost_records, "defaults": defaults}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
