#!/usr/bin/env bash
# QEMU's counting plugin is written in C (Sources/StrobePerf/EmulationPlugin/
# QEMUCountingPlugin.c) and compiled on the machine that counts, so a `strobe`
# binary carries its text: this writes that text into
# Sources/StrobePerf/Instructions/QEMUCountingPluginSource.swift.
# (SwiftPM's embedInCode resources are not generated when the package is a
# dependency of another, which is how an app builds the runner.)
# `--check` fails when the committed Swift file is not the C file's text.
set -euo pipefail
cd "$(dirname "$0")/.."
source=Sources/StrobePerf/EmulationPlugin/QEMUCountingPlugin.c
target=Sources/StrobePerf/Instructions/QEMUCountingPluginSource.swift
generate() {
    printf '%s\n' "// Generated from EmulationPlugin/QEMUCountingPlugin.c by scripts/generate-plugin-source.sh;" \
        "// edit the C file and run the script again." "" "extension EmulationPlugin {" \
        "    /// The plugin's C source, the text of \`EmulationPlugin/QEMUCountingPlugin.c\`." \
        "    static let source = #\"\"\""
    sed 's/^/        /; s/^        $//' "$source"
    printf '%s\n' "        \"\"\"#" "}"
}
if [ "${1:-}" = "--check" ]; then
    if ! diff -u "$target" <(generate) >/dev/null; then
        echo "generate-plugin-source: $target is not the text of $source; run scripts/generate-plugin-source.sh" >&2
        exit 1
    fi
    echo "generate-plugin-source: $target is current"
else
    generate > "$target"
fi
