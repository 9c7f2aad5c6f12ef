# SPDX-License-Identifier: GPL-2.0
"""Helpers the analysis scripts share (report.py, apps_report.py,
failover.py, loss_report.py, roles_report.py, ha-results.py): reading a
JSON file (one that must be there, or one that may be missing), the runs
of run-experiment's directories, and the nearest-rank percentile every
figure of the project uses."""
import json
import math
import os

NAN = float("nan")


def read_json(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def load_json(path):
    with open(path) as f:
        return json.load(f)


def run_dirs(args):
    """LABEL=DIR arguments: (label, run name, run dir, meta, app) for each
    run under DIR (a directory with a meta.json), in name order"""
    for arg in args:
        label, top = arg.split("=", 1)
        for run in sorted(os.listdir(top)):
            d = os.path.join(top, run)
            if os.path.exists(os.path.join(d, "meta.json")):
                yield (label, run, d, load_json(os.path.join(d, "meta.json")),
                       load_json(os.path.join(d, "app.json")))


def pct(xs, p):
    """nearest-rank percentile: the smallest value with >= p % at or below"""
    if not xs:
        return NAN
    s = sorted(xs)
    return s[max(0, min(len(s) - 1, int(math.ceil(p / 100.0 * len(s) - 1e-9)) - 1))]
