#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""spill_proto_report.py DIR... - one table of testbed/apps runs made with
and without the spill prototype (testbed/spill-proto-hook).

Each DIR is a run directory of `testbed/apps run` (app.json, bulk.json,
nstat.json, meta.json; spill-ra.jsonl and spill-rb.jsonl when the
prototype ran). The label of a run is its directory name without the
trailing -<rep>; runs with one label are summarised together: run-time,
p50/p99, bulk per direction, reordering counters of both endpoints
(TcpExtTCPSACKReorder, TcpExtTCPDSACKRecv, TcpRetransSegs), the busiest
CPU, and from the prototype's logs: grants taken, of them moved (a flow
already on LONG), the holds, SHORT's one-way queueing delay during the
job (mean and p99 of the per-tick filtered value) and the spilled rate.
Prints a Markdown table; every figure is min..max over the runs (or the
one value).
"""
import json
import os
import re
import sys
from collections import OrderedDict


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
    except (OSError, ValueError):
        pass
    return rows


def pct(vals, p):
    if not vals:
        return None
    v = sorted(vals)
    return v[max(0, min(len(v) - 1, int(round(p / 100 * len(v))) - 1))]


def spill_stats(run):
    """grants, moved, holds, queueing delay and rate over the job window"""
    meta = load(os.path.join(run, "meta.json")) or {}
    out = {}
    for r in ("ra", "rb"):
        rows = jsonl(os.path.join(run, "spill-%s.jsonl" % r))
        if not rows:
            continue
        # the job runs from bulk start + warm-up to the end of the job;
        # the log starts SPILL_SETTLE_S (1 s) before the bulk
        t_end = rows[-1]["t_s"]
        t_job = t_end - float(meta.get("job_s", 0))
        job = [x for x in rows if x["t_s"] >= t_job]
        qd = [x["qd_short_ms"] for x in job]
        out[r] = {
            "taken": rows[-1]["taken"],
            "moved": rows[-1]["moved"],
            "holds": sum(1 for x in rows if x.get("why", "").startswith("grant taken")),
            "qd_mean": sum(qd) / len(qd) if qd else None,
            "qd_p99": pct(qd, 99),
            "rate": sum(x["used_mbit"] for x in job) / len(job) if job else None,
            "one_way": all(x.get("one_way", False) for x in job),
        }
    return out


def rng(vals, fmt="%.1f"):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    lo, hi = min(vals), max(vals)
    return fmt % lo if lo == hi else (fmt + "..." + fmt) % (lo, hi)


def main(dirs):
    groups = OrderedDict()
    for d in dirs:
        if not os.path.isfile(os.path.join(d, "app.json")):
            continue
        label = re.sub(r"-\d+$", "", os.path.basename(os.path.normpath(d)))
        groups.setdefault(label, []).append(d)
    print("| runs | n | run-time s | p50 / p99 ms | bulk up / down Mbit/s | "
          "SACK reorder | DSACK | retrans segs | busiest CPU % | "
          "grants (moved) | SHORT queue ms mean / p99 | spilled Mbit/s |")
    print("|" + "---|" * 12)
    for label, runs in groups.items():
        app = [load(os.path.join(r, "app.json")) or {} for r in runs]
        bulk = [load(os.path.join(r, "bulk.json")) or {} for r in runs]
        ns = [load(os.path.join(r, "nstat.json")) or {} for r in runs]
        meta = [load(os.path.join(r, "meta.json")) or {} for r in runs]
        sp = [spill_stats(r) for r in runs]

        def nsum(n, key):
            return sum((n.get(side) or {}).get(key, 0) for side in ("client", "server"))

        def bd(b, k):
            return (b.get(k) or {}).get("mbit") if b else None

        grants = []
        for s in sp:
            if s:
                grants.append("%s (%s)" % ("+".join(str(s[r]["taken"]) for r in s),
                                           "+".join(str(s[r]["moved"]) for r in s)))
        qd_mean = [max(v["qd_mean"] for v in s.values() if v["qd_mean"] is not None)
                   for s in sp if s]
        qd_p99 = [max(v["qd_p99"] for v in s.values() if v["qd_p99"] is not None)
                  for s in sp if s]
        rate = ["+".join("%.1f" % v["rate"] for v in s.values() if v["rate"] is not None)
                for s in sp if s]
        print("| %s | %d | %s | %s / %s | %s / %s | %s | %s | %s | %s | %s | %s / %s | %s |" % (
            label, len(runs),
            rng([a.get("runtime_s") for a in app], "%.2f"),
            rng([a.get("p50_ms") for a in app]), rng([a.get("p99_ms") for a in app]),
            rng([bd(b, "up") for b in bulk]), rng([bd(b, "down") for b in bulk]),
            rng([nsum(n, "TcpExtTCPSACKReorder") for n in ns], "%d"),
            rng([nsum(n, "TcpExtTCPDSACKRecv") for n in ns], "%d"),
            rng([nsum(n, "TcpRetransSegs") for n in ns], "%d"),
            rng([m.get("cpu_busy_max_pct") for m in meta]),
            ", ".join(grants) if grants else "-",
            rng(qd_mean, "%.2f"), rng(qd_p99, "%.1f"),
            ", ".join(rate) if rate else "-"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.stderr.write("usage: spill_proto_report.py DIR...\n")
        sys.exit(2)
    main(sys.argv[1:])
