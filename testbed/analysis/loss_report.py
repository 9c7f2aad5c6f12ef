#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""loss_report.py - one CSV row per run of run-experiment's design "loss"
(docs/results/loss.md): the loss applied on SHORT, mode, bulk, the
job's run-time and percentiles, bulk throughput, what the copy cost.

    loss_report.py LABEL=DIR [LABEL=DIR...] > loss.csv

LABEL names the impairment of the call that made DIR (e.g. random-1%).
dup_share: the copies' bytes (dup_bytes of both routers over the job,
inner packets as the splitter counts them) over the bytes both paths'
bottlenecks sent in both directions over the job (VXLAN packets).
"""
import csv
import os
import sys

from common import load_json as load, run_dirs


def dup_bytes(d):
    total = 0
    for r in ("ra", "rb"):
        a, b = d["start"].get(r, {}), d["end"].get(r, {})
        if a.get("attached") and b.get("attached"):
            total += b["counters"]["dup_bytes"] - a["counters"]["dup_bytes"]
    return total


def main():
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["loss", "mode", "bulk", "runtime_s", "p50_ms", "p99_ms", "max_ms",
                "bulk_up_mbit", "bulk_down_mbit", "bulk_mbit", "dup_bytes",
                "tunnel_bytes", "dup_share", "short_lost_pkts", "cpu_busy_max_pct",
                "cpu_flagged", "run"])
    for label, run, d, meta, app in run_dirs(sys.argv[1:]):
        bulk, paths = load(os.path.join(d, "bulk.json")), load(os.path.join(d, "paths.json"))
        dup = load(os.path.join(d, "dup-job.json"))
        tb = sum(paths[p][x]["bytes"] for p in ("w1", "w2") for x in ("up", "down"))
        db = dup_bytes(dup)
        up = (bulk.get("up") or {}).get("mbit")
        down = (bulk.get("down") or {}).get("mbit")
        lost = sum(i["lost"] for i in meta.get("impaired") or [] if i["tunnel"] == "SHORT")
        w.writerow([label, meta["mode"], meta["bulk_demand"],
                    "%.2f" % app["runtime_s"], app["p50_ms"], app["p99_ms"], app["max_ms"],
                    "%.1f" % up if up is not None else "",
                    "%.1f" % down if down is not None else "",
                    "%.1f" % (up + down) if up is not None and down is not None else "",
                    db, tb, "%.4f" % (db / tb) if tb else "", lost,
                    meta["cpu_busy_max_pct"], str(meta["cpu_flagged"]).lower(), run])


if __name__ == "__main__":
    main()
