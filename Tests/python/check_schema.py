#!/usr/bin/env python3
"""Checks Proto/perfetto_trace.proto against Perfetto's official schema.

Compiles our .proto to a descriptor set with protoc-c (or protoc) and compares
every message, field and enum value it declares with the same-named element
of the descriptors shipped in the `perfetto` Python package
(perfetto.protos.perfetto.trace.perfetto_trace_pb2):

  * every message and enum we declare must exist upstream under the same name;
  * every field must exist upstream with the same number, label, type,
    message/enum type and packed-ness, and sit in a oneof of the same name
    when it is in a oneof here (see ONEOF_EXEMPT for the one deliberate
    exception);
  * every enum value must exist upstream with the same number.

Prints one line per mismatch and exits 1 if there is any; otherwise prints
`schema: N messages, M fields checked, 0 mismatches` and exits 0.

usage: python3 Tests/python/check_schema.py [path/to/perfetto_trace.proto]
"""

import os
import shutil
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2
except ImportError:  # pragma: no cover - depends on the machine
    sys.exit("check_schema: the `perfetto` Python package is required "
             "(pip install perfetto)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_PROTO = os.path.join(ROOT, "Proto", "perfetto_trace.proto")

# Fields that upstream wraps in a oneof but that we declare as plain fields.
# A oneof does not change the encoding; a plain field gives simpler C code.
ONEOF_EXEMPT = {
    ".perfetto.protos.TracePacket.trusted_packet_sequence_id",
}

LABELS = {v.number: v.name[len("LABEL_"):].lower()
          for v in descriptor_pb2.FieldDescriptorProto.Label.DESCRIPTOR.values}
TYPES = {v.number: v.name[len("TYPE_"):].lower()
         for v in descriptor_pb2.FieldDescriptorProto.Type.DESCRIPTOR.values}


def compile_ours(proto_path):
    """Returns the FileDescriptorProto of `proto_path`, compiled by protoc."""
    compiler = shutil.which("protoc-c") or shutil.which("protoc")
    if compiler is None:
        sys.exit("check_schema: protoc-c or protoc is required to read the .proto")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ours.desc")
        proc = subprocess.run(
            [compiler, "--proto_path=" + os.path.dirname(os.path.abspath(proto_path)),
             "--descriptor_set_out=" + out, os.path.abspath(proto_path)],
            capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit("check_schema: %s failed:\n%s" % (compiler, proc.stderr))
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
    return fds.file[0]


def official_file():
    fdp = descriptor_pb2.FileDescriptorProto()
    perfetto_trace_pb2.DESCRIPTOR.CopyToProto(fdp)
    return fdp


def index(fdp):
    """Maps full names to message and enum descriptor protos."""
    messages, enums = {}, {}
    prefix = "." + fdp.package if fdp.package else ""

    def walk(msg, scope):
        name = scope + "." + msg.name
        messages[name] = msg
        for nested in msg.nested_type:
            walk(nested, name)
        for enum in msg.enum_type:
            enums[name + "." + enum.name] = enum

    for msg in fdp.message_type:
        walk(msg, prefix)
    for enum in fdp.enum_type:
        enums[prefix + "." + enum.name] = enum
    return messages, enums


def oneof_name(msg, field):
    if field.HasField("oneof_index") and not field.proto3_optional:
        return msg.oneof_decl[field.oneof_index].name
    return None


def describe(field):
    text = "%s %s" % (LABELS[field.label], TYPES[field.type])
    if field.type_name:
        text += " " + field.type_name
    return text


def packed(field):
    return field.options.packed if field.options.HasField("packed") else False


def compare(ours, theirs):
    mismatches = []
    our_msgs, our_enums = index(ours)
    their_msgs, their_enums = index(theirs)
    fields_checked = 0

    if ours.package != theirs.package:
        mismatches.append("package: ours %r, official %r" % (ours.package, theirs.package))
    if (ours.syntax or "proto2") != (theirs.syntax or "proto2"):
        mismatches.append("syntax: ours %r, official %r"
                          % (ours.syntax or "proto2", theirs.syntax or "proto2"))

    for name in sorted(our_msgs):
        msg = our_msgs[name]
        up = their_msgs.get(name)
        if up is None:
            mismatches.append("%s: message not in the official schema" % name)
            continue
        up_by_name = {f.name: f for f in up.field}
        up_by_number = {f.number: f for f in up.field}
        for field in msg.field:
            fields_checked += 1
            fname = "%s.%s" % (name, field.name)
            uf = up_by_name.get(field.name)
            if uf is None:
                other = up_by_number.get(field.number)
                hint = (" (official uses %d for %s)" % (field.number, other.name)
                        if other is not None else "")
                mismatches.append("%s: field not in the official schema%s" % (fname, hint))
                continue
            if field.number != uf.number:
                mismatches.append("%s: number ours %d, official %d"
                                  % (fname, field.number, uf.number))
            if field.label != uf.label:
                mismatches.append("%s: label ours %s, official %s"
                                  % (fname, LABELS[field.label], LABELS[uf.label]))
            if field.type != uf.type or field.type_name != uf.type_name:
                mismatches.append("%s: type ours %s, official %s"
                                  % (fname, describe(field), describe(uf)))
            if packed(field) != packed(uf):
                mismatches.append("%s: packed ours %s, official %s"
                                  % (fname, packed(field), packed(uf)))
            our_oneof, up_oneof = oneof_name(msg, field), oneof_name(up, uf)
            if our_oneof != up_oneof and not (our_oneof is None and fname in ONEOF_EXEMPT):
                mismatches.append("%s: oneof ours %s, official %s"
                                  % (fname, our_oneof, up_oneof))
            if field.HasField("default_value") or uf.HasField("default_value"):
                if field.default_value != uf.default_value:
                    mismatches.append("%s: default ours %r, official %r"
                                      % (fname, field.default_value, uf.default_value))

    for name in sorted(our_enums):
        enum = our_enums[name]
        up = their_enums.get(name)
        if up is None:
            mismatches.append("%s: enum not in the official schema" % name)
            continue
        up_values = {v.name: v.number for v in up.value}
        for value in enum.value:
            if value.name not in up_values:
                mismatches.append("%s.%s: enum value not in the official schema"
                                  % (name, value.name))
            elif value.number != up_values[value.name]:
                mismatches.append("%s.%s: value ours %d, official %d"
                                  % (name, value.name, value.number, up_values[value.name]))

    return mismatches, len(our_msgs), fields_checked


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 2
    proto = argv[1] if len(argv) == 2 else DEFAULT_PROTO
    mismatches, n_messages, n_fields = compare(compile_ours(proto), official_file())
    for line in mismatches:
        print(line)
    print("schema: %d messages, %d fields checked, %d mismatches"
          % (n_messages, n_fields, len(mismatches)))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
