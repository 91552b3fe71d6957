#!/usr/bin/env python3
"""Reads `strobe export --format otlp` back with OpenTelemetry's own schema
(PyPI's opentelemetry-proto) and checks it against the trace's intervals as
`strobe export --format ndjson` gives them: a span per interval with the
same name and duration, every parent present, instants as events, and the
resource from the trace's metadata, times in Unix nanoseconds within the
recording; and `--format otlp-json`, which must
hold the same request.

Needs both packages built (`swift build`, `swift build --package-path
Tools`): it records a trace with the lens demo.

usage: python3 Tests/python/test_otlp_export.py
"""

import base64
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LENS = os.path.join(ROOT, ".build", "debug", "LensPipeline")
STROBE = os.path.join(ROOT, "Tools", ".build", "debug", "strobe")


def skip(reason):
    print(f"test_otlp_export: skipped: {reason}")
    sys.exit(0)


try:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
except ImportError:
    skip("opentelemetry-proto is not installed (scripts/setup.sh installs it)")
for program in (LENS, STROBE):
    if not os.access(program, os.X_OK):
        skip(f"{program} is not built")


def value(any_value):
    return getattr(any_value, any_value.WhichOneof("value"))


def hex_ids_to_base64(node):
    """OTLP's JSON spells ids in hex where protobuf's JSON has base64."""
    if isinstance(node, list):
        return [hex_ids_to_base64(item) for item in node]
    if isinstance(node, dict):
        return {key: base64.b64encode(bytes.fromhex(item)).decode()
                if key in ("traceId", "spanId", "parentSpanId") else hex_ids_to_base64(item)
                for key, item in node.items()}
    return node


def main():
    with tempfile.TemporaryDirectory() as folder:
        trace = os.path.join(folder, "lens.pftrace")
        before = time.time_ns()
        subprocess.run(
            [LENS, "--frames", "12", "--size", "160x120", "--app-version", "2.1.0", "--device-class", "laptop",
             "--sampling", "1", "--trace", trace],
            check=True, capture_output=True)
        after = time.time_ns()
        otlp = os.path.join(folder, "lens.otlp")
        subprocess.run([STROBE, "export", trace, "--format", "otlp", "-o", otlp], check=True)
        rows = subprocess.run(
            [STROBE, "export", trace, "--format", "ndjson"], check=True, capture_output=True, text=True).stdout
        request = trace_service_pb2.ExportTraceServiceRequest()
        with open(otlp, "rb") as file:
            request.ParseFromString(file.read())
        # A second export gives the same bytes: ids derive from the trace.
        again = os.path.join(folder, "again.otlp")
        subprocess.run([STROBE, "export", trace, "--format", "otlp", "-o", again], check=True)
        with open(otlp, "rb") as first, open(again, "rb") as second:
            assert first.read() == second.read(), "two exports differ"
        # The JSON encoding holds the same request.
        json_text = subprocess.run(
            [STROBE, "export", trace, "--format", "otlp-json"], check=True, capture_output=True, text=True).stdout
        from_json = json_format.ParseDict(
            hex_ids_to_base64(json.loads(json_text)), trace_service_pb2.ExportTraceServiceRequest())
        assert from_json == request, "otlp-json differs from otlp"

    rows = [json.loads(line) for line in rows.splitlines() if line]
    intervals = [row for row in rows if row["kind"] in ("interval", "async_interval") and row["dur_ns"] is not None]
    instants = [row for row in rows if row["kind"] == "instant" and not row["name"].startswith("strobe.")]

    assert len(request.resource_spans) == 1
    resource_spans = request.resource_spans[0]
    resource = {attribute.key: value(attribute.value) for attribute in resource_spans.resource.attributes}
    assert resource["service.name"] == "Lens", resource
    assert resource["service.version"] == "2.1.0", resource
    assert resource["device.class"] == "laptop", resource
    assert resource["sampling.probability"] == 1.0, resource

    spans = [span for scope in resource_spans.scope_spans for span in scope.spans]
    trace_ids = {span.trace_id for span in spans}
    assert len(trace_ids) == 1 and len(next(iter(trace_ids))) == 16, trace_ids
    ids = {span.span_id for span in spans}
    assert len(ids) == len(spans), "span ids repeat"
    assert all(len(span.span_id) == 8 for span in spans)
    def flagged(span, key):
        return any(attribute.key == key and attribute.value.bool_value for attribute in span.attributes)

    interval_spans = [span for span in spans
                      if not flagged(span, "strobe.instant") and not flagged(span, "strobe.unfinished")]
    assert len(interval_spans) == len(intervals), (len(interval_spans), len(intervals))
    mine = collections.Counter((span.name, span.end_time_unix_nano - span.start_time_unix_nano)
                               for span in interval_spans)
    theirs = collections.Counter((row["name"], row["dur_ns"]) for row in intervals)
    assert mine == theirs, (mine - theirs, theirs - mine)
    for span in spans:
        assert not span.parent_span_id or span.parent_span_id in ids, span.name
    assert any(span.parent_span_id for span in spans), "no span has a parent"
    threads = [span for span in spans if any(attribute.key == "thread.id" for attribute in span.attributes)]
    assert threads, "no thread attributes"
    events = sum(len(span.events) for span in spans)
    assert events == len(instants), (events, len(instants))
    # Unix time: the trace records the wall clock beside BOOTTIME, so every
    # span lies within the recording (a second's slack for a slewed clock).
    for span in spans:
        assert before - 10**9 <= span.start_time_unix_nano <= span.end_time_unix_nano <= after + 10**9, \
            (span.name, before, span.start_time_unix_nano, after)
    for span in spans:
        for event in span.events:
            assert span.start_time_unix_nano <= event.time_unix_nano <= span.end_time_unix_nano, span.name
    print(f"test_otlp_export: {len(spans)} spans, {events} events, "
          f"{sum(len(span.links) for span in spans)} links: ok")


if __name__ == "__main__":
    main()
