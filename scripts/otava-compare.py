#!/usr/bin/env python3
"""Runs Apache Otava's change-point detection on the synthetic histories that
`make bench changepoints` writes, and prints the rates that the benchmark
prints for StepDetector: flat suites with any change point, the 10% step
found, and placed within one run of the truth.

    STROBE_CHANGEPOINTS_CSV=.build/changepoints .build/release/StrobeBenchmarks changepoints
    python3 -m venv .build/otava-venv && .build/otava-venv/bin/pip install apache-otava
    .build/otava-venv/bin/python scripts/otava-compare.py .build/changepoints [--histories 200]

Otava is used as the project's benchmark only, never at run time. It runs
with its defaults (e-divisive with a t-test significance check over windows
of 50 points, `otava.analysis.compute_change_points`) at p <= 0.001 (its
default) and at p <= 0.00001.
"""

import argparse
import csv
import sys
import time
from collections import defaultdict

try:
    from otava.analysis import compute_change_points
except ImportError:
    sys.exit("otava-compare.py: apache-otava is not installed (pip install apache-otava)")


def read_histories(path, limit):
    """{history: {metric: [values by run]}} for the first `limit` histories."""
    histories = defaultdict(lambda: defaultdict(list))
    with open(path, newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        metrics = header[2:]
        for line, row in enumerate(reader, start=2):
            if len(row) != len(header):
                sys.exit(f"{path}, line {line}: {len(row)} fields, expected {len(header)}")
            history = int(row[0])
            if history >= limit:
                continue
            for metric, value in zip(metrics, row[2:]):
                histories[history][metric].append(float(value))
    return histories


def read_truth(path):
    truth = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            truth[int(row["history"])] = (row["metric"], int(row["first_after"]))
    return truth


def change_points(values, max_pvalue):
    """Indices of the first point after each change point Otava reports."""
    points, _ = compute_change_points(values, window_len=50, max_pvalue=max_pvalue, min_magnitude=0.0)
    return [point.index for point in points]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", help="where the benchmark wrote flat.csv, step.csv and step-truth.csv")
    parser.add_argument("--histories", type=int, default=200, help="histories of each kind (default 200)")
    arguments = parser.parse_args()
    flat = read_histories(f"{arguments.directory}/flat.csv", arguments.histories)
    step = read_histories(f"{arguments.directory}/step.csv", arguments.histories)
    truth = read_truth(f"{arguments.directory}/step-truth.csv")
    if len(flat) < arguments.histories or len(step) < arguments.histories:
        sys.exit(f"otava-compare.py: fewer than {arguments.histories} histories in {arguments.directory}")
    for max_pvalue in (0.001, 0.00001):
        started = time.monotonic()
        alarmed = sum(
            1 for metrics in flat.values() if any(change_points(values, max_pvalue) for values in metrics.values())
        )
        found = 0
        placed = 0
        exact = 0
        for history, metrics in step.items():
            metric, first_after = truth[history]
            points = change_points(metrics[metric], max_pvalue)
            if not points:
                continue
            found += 1
            nearest = min(points, key=lambda index: abs(index - first_after))
            placed += abs(nearest - first_after) <= 1
            exact += nearest == first_after
        count = len(flat)
        print(
            f"Otava p <= {max_pvalue:g}: flat suites with any change point {100 * alarmed / count:.1f}% "
            f"({alarmed} of {count}); step found {100 * found / count:.1f}% ({found} of {count}); "
            f"placed within one run {100 * placed / max(found, 1):.1f}% of those found "
            f"(exactly {100 * exact / max(found, 1):.1f}%); {time.monotonic() - started:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
