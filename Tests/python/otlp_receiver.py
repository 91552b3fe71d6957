#!/usr/bin/env python3
"""An OTLP/HTTP receiver on loopback for the tests of `--otlp-endpoint`: it
decodes each request body with OpenTelemetry's own classes (PyPI's
opentelemetry-proto), answers with the statuses it is told, and appends one
JSON line per request to the output file: the request's number, arrival
time (monotonic seconds), path, Content-Type, the status answered, and,
for a request it accepted, its spans (trace id, span id and parent id in
hex, name, start and end in Unix nanoseconds, the resource's service.name).

usage: otlp_receiver.py --out FILE [--answers 503,200] [--retry-after SECONDS]

It listens on 127.0.0.1 on a free port and prints the port on its first
line of standard output. The statuses in --answers are used in turn, the
last one for every later request (default: 200). A body that does not
decode is answered 400 and recorded with its error. It runs until killed.
"""

import argparse
import http.server
import json
import sys
import time

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


def spans_of(request):
    spans = []
    for resource_spans in request.resource_spans:
        service = None
        for attribute in resource_spans.resource.attributes:
            if attribute.key == "service.name":
                service = attribute.value.string_value
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append({
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "name": span.name,
                    "start": span.start_time_unix_nano,
                    "end": span.end_time_unix_nano,
                    "service": service,
                })
    return spans


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--answers", default="200")
    parser.add_argument("--retry-after", default=None)
    options = parser.parse_args(argv)
    answers = [int(status) for status in options.answers.split(",")]
    state = {"count": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            number = state["count"]
            state["count"] += 1
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            status = answers[min(number, len(answers) - 1)]
            record = {
                "number": number + 1,
                "time": time.monotonic(),
                "path": self.path,
                "content_type": self.headers.get("Content-Type"),
                "bytes": len(body),
            }
            reply = b""
            reply_type = "text/plain"
            if 200 <= status < 300:
                try:
                    request = trace_service_pb2.ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    record["spans"] = spans_of(request)
                    reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                    reply_type = "application/x-protobuf"
                except Exception as error:  # the sender's bug: say so
                    status = 400
                    record["error"] = str(error)
                    reply = f"cannot decode the request: {error}".encode()
            elif status == 400:
                reply = b"invalid request: spans refused by the test receiver\n"
            else:
                reply = b"busy, try again\n"
            record["status"] = status
            with open(options.out, "a") as out:
                out.write(json.dumps(record) + "\n")
            self.send_response(status)
            self.send_header("Content-Type", reply_type)
            self.send_header("Content-Length", str(len(reply)))
            if status in (429, 503) and options.retry_after is not None:
                self.send_header("Retry-After", options.retry_after)
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *arguments):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
