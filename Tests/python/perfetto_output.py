"""How perfetto_decode.py's Decoder turns what it read into the JSON-ready
dict its docstring describes: slices paired per track, instants, counters,
the tracks they use and the import statistics.
"""

import collections

from perfetto_state import (
    BOOTTIME, REALTIME, TYPE_COUNTER, TYPE_INSTANT, TYPE_SLICE_BEGIN, TYPE_SLICE_END, UNIT_NAMES, is_repeated, pb)


class DecodedOutput:
    """The output half of Decoder: its build() and what build() uses."""


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
