# SPDX-License-Identifier: GPL-2.0
"""Helpers the analysis scripts share (report.py, apps_report.py,
failover.py): reading a JSON file that may be missing, and the
nearest-rank percentile every figure of the project uses."""
import json
import math

NAN = float("nan")


def read_json(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def pct(xs, p):
    """nearest-rank percentile: the smallest value with >= p % at or below"""
    if not xs:
        return NAN
    s = sorted(xs)
    return s[max(0, min(len(s) - 1, int(math.ceil(p / 100.0 * len(s) - 1e-9)) - 1))]
