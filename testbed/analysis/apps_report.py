#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""apps_report.py [--demo] [--include-flagged] RUNSET_DIR

Summarise the runs of `run-experiment apps` (or `testbed/demo`): real
applications (wrk, pgbench, redis) under long-lived iperf3 bulk, per mode.

RUNSET_DIR holds one directory per run (testbed/apps run): meta.json,
app.json, bulk.json, nstat.json; the directory name ends in -REP.

  group:     tunnels (one-way SHORT/LONG delays), application, bulk demand,
             bulk congestion control; within a group every mode ran with
             every repetition on the same testbed
  run-time:  the job's application run-time (app.json runtime_s)
  speedup:   ECMP / mode run-time, paired by repetition; mean ± 95 %
             Student-t interval over the pairs
  p99 ratio: ECMP / mode p99 per request, paired the same way
  bulk:      iperf3 throughput per direction (up: client->server) during the
             job, Mbit/s; ratio mode / ECMP paired; share of the capacity of
             the two tunnels in that direction (2 x rate)
  reorder:   the endpoints' TCP counters over the run, client + server:
             TcpExtTCPSACKReorder, TcpExtTCPDSACKRecv, TcpRetransSegs (per
             1000 segments sent, TcpOutSegs)
  fct-tap:   with --tap yes: retransmissions seen at the WAN side of the
             routers (retrans_a) and packets lost between them, all flows
  bulk on SHORT: the bulk's data flows (iperf3's data streams, by their
             client ports) in the routers' flow tables (flows-warmup.json
             at the end of the warm-up, flows.json after the bulk stopped):
             a data flow re-shorted at a message boundary sends at most one
             threshold of packets on SHORT per re-short, so its bytes on
             SHORT after its first threshold are at most re-shorts x
             threshold x 1448 B (a full segment; 0 when it never re-shorted);
             given as a share of the bytes iperf3 moved in that period
             (warm-up: slow start and the first losses; job: steady state)
  app re-shorts: message boundaries counted on the application's flows
  CPU:       the busiest CPU over the job (/proc/stat); a run above its
             cpu_flag_pct (80 %), or whose CPUs the host took more than
             steal_flag_pct (2 %) of over the bulk's run (steal: on a
             virtual machine, the hypervisor running something else), is
             flagged and left out of every figure, as is a job that did
             not complete or whose bulk lost a direction's report (iperf3
             died: meta.json bulk_ok false)
  no bulk:   bulk demand 0: the job's limit, per repetition one ECMP run
             (both tunnels) and, when the design has it, one split run (the
             split's routing: every message of the job on one tunnel).
             "run-time / no-bulk" is over ECMP's no-bulk run-time;
             "/ no-bulk, same routing" over the no-bulk run of the routing
             the mode uses (ECMP for ecmp, split for every split mode): the
             bulk's cost alone, where a job is bound by a tunnel's rate (RTT
             0) and the split's limit is one tunnel's
  path load: what each WAN path's bottleneck sent during the job
             (paths.json: load = Mbit/s over the tunnel rate, per direction,
             over the window of its two counter reads); path 1 carries
             SHORT, path 2 LONG. The table gives, per path and for its busier
             direction, the time the tunnel's rate needs for those bytes
             over the job's run-time (bytes x 8 / rate / run-time): near or
             above 1, that tunnel's rate, not the RTT, bounded what it
             carried (the window holds a few tens of ms of harness around
             the job, so a path carrying bulk shows above 1 for short jobs)
  spill:     with the spill modes (deployed, earlier named spill: agents
             at their defaults, spill on; nospill: agents, spill off): the routers' counters over the job
             (splitter-job.json, `splitctl -j stats` at its start and end):
             bytes marked with the spill code point per direction (rA's: the
             upload, rB's: the download) as Mbit/s over the job, grants
             taken (spill_flows) over the job and the whole run; the
             agents' spill state at the job's end (routes-job.json, `route
             show -j`: health.spill.state while spill is active) and the tunnel downs the agents'
             health counted by then (flaps of LONG and SHORT, rA + rB: a
             down moves its class onto the other tunnel); bulk as a share
             of both tunnels' capacity in both directions together (4 x
             rate); run-time and p99 against the no-bulk runs and against
             nospill (paired); SHORT's probe delay: the agents' own
             probes of SHORT (they log each with -v) above the path's
             minimum, p99 over the run, the worse of rA's (upload) and
             rB's (download): the queue the controller steers by, and the
             testbed's jitter (nospill: short traffic and jitter alone);
             beside it, path 1's delay line (delayline-w1.json, both
             directions): its worst late read or late send over the run,
             ms (the delay the testbed itself added to a frame)

Writes apps.csv (per run), apps-speedups.csv (per group and mode),
apps-summary.md and apps-speedup.png, apps-bulk.png into RUNSET_DIR, and
with spill-mode runs spill-summary.md and spill.png; prints the tables.
--demo: also the one-line headline (testbed/demo): flowsplit as deployed
(mode deployed, or its earlier name spill: the agent on both routers)
against ECMP; a run set without it: the split without the agent, said so.
--include-flagged: count CPU-flagged runs too (a shared machine's
preview; the summary says so on its first line).
Exit: 0 done, 1 no usable run, 2 usage error.
"""
import csv
import json
import math
import os
import re
import sys

from common import read_json

try:
    import numpy as np
    from scipy import stats
except ImportError as e:
    sys.exit("apps_report.py: %s: needs numpy and scipy (apt-get install python3-numpy "
             "python3-scipy)" % e)

NAN = float("nan")
BASE = "ecmp"		# the baseline every mode is compared with
MODE_ORDER = ("ecmp", "deployed", "spill", "split", "spillrate", "nospill", "paper", "reshort20")
SPILL_MODES = ("deployed", "spill", "spillrate", "nospill")	# runs with these make the spill report
# the headline's mode, first found: flowsplit as deployed (agents at their
# defaults; "spill" is its earlier name), else the split without the agent
HEADLINE_MODES = (("deployed", "flowsplit as deployed (agent on both routers)"),
                  ("spill", "flowsplit as deployed (agent on both routers)"),
                  ("split", "split without the agent"))
SPILL_BASE = "nospill"			# split without spill, the p99 reference
# jobs paced by their own schedule (flowgen: Poisson arrivals of short
# flows): their run-time is the schedule's length, not a figure; p50/p99 are
PACED_APPS = ("flowgen",)
COLS = ("run", "mode", "app", "rep", "delays", "rtt_ms", "bulk_demand", "bulk_cc",
        "bulk_streams", "rate_mbit", "queue_ms", "burst_bytes", "requests", "conns", "complete",
        "runtime_s", "p50_ms", "p99_ms", "tps", "bulk_up_mbit", "bulk_down_mbit", "sack_reorder",
        "dsack_recv", "retrans_segs", "out_segs", "tap_retrans", "tap_lost", "tap_drops",
        "bulk_flows", "bulk_flows_found", "bulk_reshorts_warmup", "bulk_reshorts_job",
        "bulk_short_pct_warmup", "bulk_short_pct_job", "bulk_short_pct", "app_reshorts", "threshold",
        "agents", "spill_up_mbit", "spill_down_mbit", "spill_grants_job", "spill_grants",
        "spill_packets", "spill_state", "downs_long", "downs_short", "short_probe_p99_ms", "dl1_worst_ms",
        "path1_up_load", "path1_down_load", "path2_up_load", "path2_down_load",
        "path1_time_ratio", "path2_time_ratio",
        "cpu_busy_max_pct", "cpu_steal_pct", "delayline_cpu_pct", "cpu_flagged", "used")
SEG_BYTES = 1448	# payload of a full segment (MTU 1500, TCP timestamps)
APP_PORTS = {"wrk": 80, "pgbench": 5432, "redis": 6379}
BULK_PORTS = {"up": 5201, "down": 5202}	# testbed/apps: iperf3 servers


def ci(xs):
    """(mean, half-width of the two-sided 95 % t-interval); NaN width for n < 2"""
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    if not xs:
        return NAN, NAN
    if len(xs) < 2:
        return xs[0], NAN
    a = np.asarray(xs, dtype=float)
    return float(a.mean()), float(stats.t.ppf(0.975, len(a) - 1) * stats.sem(a))


def fmt(m, h=NAN, f="%.2f", unit=""):
    if m is None or math.isnan(m):
        return "–"
    s = f % m
    if not math.isnan(h):
        s += " ± " + f % h
    return s + unit


def fmt_ms(m):
    """a latency: 0.1 ms resolution below 10 ms (RTT 0), 1 ms above"""
    return fmt(m, f="%.1f" if not math.isnan(m) and m < 10 else "%.0f")


def num(v):
    return NAN if v is None else float(v)


def bulk_on_short(d, meta):
    """the bulk's data flows in the flow tables: (flows expected, found,
    re-shorts in the warm-up, in the job, bound of bytes on SHORT after
    the first threshold as % of the bytes moved, warm-up and job), or None
    without bulk or flow tables"""
    thr = (meta.get("splitter") or {}).get("threshold")
    warm = read_json(os.path.join(d, "flows-warmup.json"))
    end = read_json(os.path.join(d, "flows.json"))
    if not thr or not warm or not end or "ra" not in end:
        return None
    at = float(meta.get("bulk_warmup_at_s") or meta.get("bulk_warmup_s") or 0)
    expected = found = n_warm = n_end = 0
    bytes_warm = bytes_job = 0.0
    for direction, port in BULK_PORTS.items():
        ip = read_json(os.path.join(d, "iperf3-%s.json" % direction))
        if not ip or "start" not in ip:
            continue
        ports = {c["local_port"] for c in ip["start"].get("connected", [])}
        router = "ra" if direction == "up" else "rb"

        def data_flows(snap):
            # up: client -> server:5201 at rA's LAN; down: server:5202 -> client at rB's
            if direction == "up":
                return [f for f in snap.get(router) or [] if f["dport"] == port and f["sport"] in ports]
            return [f for f in snap.get(router) or [] if f["sport"] == port and f["dport"] in ports]
        expected += len(ports)
        found += len(data_flows(end))
        n_warm += sum(f["boundaries"] for f in data_flows(warm))
        n_end += sum(f["boundaries"] for f in data_flows(end))
        for iv in ip.get("intervals", []):
            if "sum" not in iv:
                continue	# an interval iperf3 began as SIGINT came: no streams
            b = iv["sum"]["bytes"]
            if iv["sum"]["end"] <= at + 0.5:
                bytes_warm += b
            else:
                bytes_job += b
    if not expected:
        return None

    def pct(n, total):
        return 100.0 * n * thr * SEG_BYTES / total if total else NAN
    return (expected, found, n_warm, n_end - n_warm, pct(n_warm, bytes_warm),
            pct(n_end - n_warm, bytes_job), thr, pct(n_end, bytes_warm + bytes_job))


def app_reshorts(d, app):
    """message boundaries on the application's flows (both routers)"""
    end = read_json(os.path.join(d, "flows.json"))
    port = APP_PORTS.get(app)
    if not end or "ra" not in end or not port:
        return NAN
    return sum(f["boundaries"] for r in ("ra", "rb") for f in end.get(r) or []
               if port in (f["sport"], f["dport"]))


def spill_counters(d, meta):
    """(spilled Mbit/s up, down over the job; grants over the job, over the
    run; spilled packets over the run; the agents' spill state at the job's
    end, "ra/rb"; tunnel downs of LONG, of SHORT by then, rA + rB); NaN or
    "" where a file or counter is missing"""
    job = read_json(os.path.join(d, "splitter-job.json")) or {}
    end = read_json(os.path.join(d, "splitter.json")) or {}
    job_s = num(meta.get("job_s"))

    def diff(router, key):
        a = (job.get("start") or {}).get(router) or {}
        b = (job.get("end") or {}).get(router) or {}
        return b[key] - a[key] if key in a and key in b else NAN

    def mbit(router):
        return diff(router, "bytes_spill") * 8 / 1e6 / job_s if job_s > 0 else NAN

    def total(key):
        vals = [(end.get(r) or {}).get(key) for r in ("ra", "rb")]
        return sum(vals) if all(v is not None for v in vals) else NAN
    routes = read_json(os.path.join(d, "routes-job.json")) or {}
    states = []
    downs = {"long": NAN, "short": NAN}
    for r in ("ra", "rb"):
        sp = ((routes.get(r) or {}).get("health") or {}).get("spill")
        states.append(str(sp.get("state", "")) if isinstance(sp, dict) and sp.get("active") else "")
        for t in ((routes.get(r) or {}).get("health") or {}).get("tunnels") or []:
            if t.get("role") in downs and t.get("flaps") is not None:
                downs[t["role"]] = (0 if math.isnan(downs[t["role"]]) else downs[t["role"]]) + t["flaps"]
    return (mbit("ra"), mbit("rb"), diff("ra", "spill_flows") + diff("rb", "spill_flows"),
            total("spill_flows"), total("packets_spill"),
            "/".join(states) if any(states) else "", downs["long"], downs["short"])


def short_probe_p99(d):
    """the worse of the two agents' p99 of SHORT's probe delays above the
    path's minimum (ms; NaN without agent logs or probe lines)"""
    worst = NAN
    for r in ("ra", "rb"):
        try:
            with open(os.path.join(d, "agent-%s.log" % r)) as f:
                text = f.read()
        except OSError:
            continue
        m = re.search(r"health: probing (\S+) \(short\)", text)
        if not m:
            continue
        vals = sorted(float(v) for v in re.findall(
            r"spill: probe on %s: [a-zA-Z -]+ (-?[0-9.]+) ms above" % re.escape(m.group(1)), text))
        if vals:
            p99 = vals[min(len(vals) - 1, int(0.99 * len(vals)))]
            worst = p99 if math.isnan(worst) else max(worst, p99)
    return worst


def dl_worst(d, path):
    """path's delay line over the run: its worst late read or late send,
    both directions, ms (NaN without its counters)"""
    dl = read_json(os.path.join(d, "delayline-w%d.json" % path))
    if not dl or not dl.get("lines"):
        return NAN
    return max(max(num(l.get("rx_age_max_us")), num(l.get("late_max_us")))
               for l in dl["lines"]) / 1e3


def path_words(runs):
    """the WAN paths the runs had, in words: rate, FIFO and the bottleneck's
    bucket (runs made before testbed's --burst had the default one)"""
    first = runs[0]
    buckets = sorted({"%d B" % r["burst_bytes"] if r.get("burst_bytes") else "the testbed's default"
                      for r in runs})
    return "tunnels %s Mbit/s each, FIFO %s ms, bottleneck bucket %s" % (
        first["rate_mbit"], first["queue_ms"], " and ".join(buckets))


def flag_rule(runs):
    """which runs testbed/apps flagged, in words, from the limits their
    meta.json gives (runs made before the steal limit have none)"""
    def limit(k):
        return next((r[k] for r in runs if not math.isnan(r[k])), NAN)
    rule = "runs whose busiest CPU was above %s %%" % fmt(limit("cpu_flag_pct"), f="%g")
    steal = limit("steal_flag_pct")
    if not math.isnan(steal):
        rule += " or whose CPUs the host took more than %s %% of (steal)" % fmt(steal, f="%g")
    return rule


def load_run(d, include_flagged=False):
    meta = read_json(os.path.join(d, "meta.json"))
    app = read_json(os.path.join(d, "app.json"))
    if not meta or meta.get("experiment") != "apps" or not app:
        return None
    bulk = read_json(os.path.join(d, "bulk.json"), {}) or {}
    ns = read_json(os.path.join(d, "nstat.json"), {}) or {}
    m = re.search(r"-(\d+)$", os.path.basename(d))

    def tcp(key):
        return sum((ns.get(side) or {}).get(key, 0) for side in ("client", "server"))

    def mbit(direction):
        return num((bulk.get(direction) or {}).get("mbit"))

    complete = bool(app.get("complete")) and meta.get("bulk_ok") is not False
    flagged = bool(meta.get("cpu_flagged"))
    tap = (read_json(os.path.join(d, "tap", "summary.json"), {}) or {}).get("counters") or {}
    bs = bulk_on_short(d, meta) if str(meta["bulk_demand"]) != "0" else None
    bs = bs or (NAN,) * 8
    drops = meta.get("tap_port_drops")
    sp = spill_counters(d, meta)
    paths = read_json(os.path.join(d, "paths.json"), {}) or {}

    def load(path, direction):
        return num(((paths.get(path) or {}).get(direction) or {}).get("load"))

    def time_ratio(path):
        """the busier direction's bytes at the tunnel rate, over the run-time"""
        p = paths.get(path) or {}
        b = max([(p.get(x) or {}).get("bytes", 0) for x in ("up", "down")] or [0])
        rt, rate = num(app.get("runtime_s")), meta.get("rate_mbit")
        return b * 8 / (rate * 1e6) / rt if p and rate and rt > 0 else NAN
    return {
        "run": os.path.basename(d), "mode": meta["mode"], "app": meta["app"],
        "rep": int(m.group(1)) if m else 1, "delays": meta["delays"], "rtt_ms": meta["rtt_ms"],
        "bulk_demand": str(meta["bulk_demand"]), "bulk_cc": meta["bulk_cc"],
        "bulk_streams": meta["bulk_streams"], "rate_mbit": meta["rate_mbit"],
        "queue_ms": meta.get("queue_ms"), "burst_bytes": meta.get("burst_bytes"),
        "requests": meta["requests"], "conns": meta["conns"],
        "complete": complete, "runtime_s": num(app.get("runtime_s")),
        "p50_ms": num(app.get("p50_ms")), "p99_ms": num(app.get("p99_ms")),
        "tps": num(app.get("tps")),
        "bulk_up_mbit": mbit("up"), "bulk_down_mbit": mbit("down"),
        "sack_reorder": tcp("TcpExtTCPSACKReorder"), "dsack_recv": tcp("TcpExtTCPDSACKRecv"),
        "retrans_segs": tcp("TcpRetransSegs"), "out_segs": tcp("TcpOutSegs"),
        "tap_retrans": num(tap.get("retrans_a")), "tap_lost": num(tap.get("lost")),
        "tap_drops": num(drops),
        "bulk_flows": bs[0], "bulk_flows_found": bs[1], "bulk_reshorts_warmup": bs[2],
        "bulk_reshorts_job": bs[3], "bulk_short_pct_warmup": bs[4], "bulk_short_pct_job": bs[5],
        "threshold": bs[6], "bulk_short_pct": bs[7], "app_reshorts": app_reshorts(d, meta["app"]),
        "agents": bool(meta.get("agents")), "spill_up_mbit": sp[0], "spill_down_mbit": sp[1],
        "spill_grants_job": sp[2], "spill_grants": sp[3], "spill_packets": sp[4],
        "spill_state": sp[5], "downs_long": sp[6], "downs_short": sp[7],
        "short_probe_p99_ms": short_probe_p99(d), "dl1_worst_ms": dl_worst(d, 1),
        "path1_up_load": load("w1", "up"), "path1_down_load": load("w1", "down"),
        "path2_up_load": load("w2", "up"), "path2_down_load": load("w2", "down"),
        "path1_time_ratio": time_ratio("w1"), "path2_time_ratio": time_ratio("w2"),
        "cpu_busy_max_pct": num(meta.get("cpu_busy_max_pct")), "cpu_flagged": flagged,
        "cpu_steal_pct": num(meta.get("cpu_steal_pct")),
        "cpu_flag_pct": num(meta.get("cpu_flag_pct")),
        "steal_flag_pct": num(meta.get("steal_flag_pct")),
        "delayline_cpu_pct": num(meta.get("delayline_cpu_pct")),
        "used": complete and (include_flagged or not flagged),
    }


def _real(xs):
    return [x for x in xs if x is not None and not math.isnan(x)]


def mean_of(xs):
    xs = _real(xs)
    return sum(xs) / len(xs) if xs else NAN


def sum_of(xs):
    xs = _real(xs)
    return sum(xs) if xs else NAN


def max_of(xs):
    xs = _real(xs)
    return max(xs) if xs else NAN


def group_key(r):
    return (r["delays"], r["app"], r["bulk_demand"], r["bulk_cc"])


def demand_sort(d):
    return math.inf if d == "max" else float(d)


def delays_sort(d):
    s, l = (float(x) for x in d.split("/"))
    return (s != l, s + l, s)


def routing(mode):
    """the routing a mode uses: ECMP, or the split's (every split mode)"""
    return BASE if mode == BASE else "split"


def summarise(runs):
    """rows of apps-speedups.csv: one per (group, mode)"""
    groups = {}
    for r in runs:
        groups.setdefault(group_key(r), []).append(r)
    # the no-bulk limit per routing: (delays, app, routing) -> mean run-time, p99
    nobulk = {}
    for (delays, app, demand, cc), rs in groups.items():
        if demand_sort(demand) == 0:
            for rt in {routing(r["mode"]) for r in rs}:
                mine = [r for r in rs if r["used"] and routing(r["mode"]) == rt]
                nobulk[(delays, app, rt)] = (mean_of([r["runtime_s"] for r in mine]),
                                             mean_of([r["p99_ms"] for r in mine]))
    out = []
    for key in sorted(groups, key=lambda k: (delays_sort(k[0]), k[1], demand_sort(k[2]), k[3])):
        delays, app, demand, cc = key
        rs = groups[key]
        base = {r["rep"]: r for r in rs if r["mode"] == BASE and r["used"]}
        nospill = {r["rep"]: r for r in rs if r["mode"] == SPILL_BASE and r["used"]}
        modes = sorted({r["mode"] for r in rs},
                       key=lambda m: MODE_ORDER.index(m) if m in MODE_ORDER else 99)
        for mode in modes:
            mine = [r for r in rs if r["mode"] == mode]
            used = [r for r in mine if r["used"]]
            pairs = [(base[r["rep"]], r) for r in used if r["rep"] in base]
            rate = mine[0]["rate_mbit"]
            row = {
                "delays": delays, "rtt_ms": mine[0]["rtt_ms"], "app": app, "bulk_demand": demand,
                "bulk_cc": cc, "mode": mode, "runs": len(mine), "used": len(used),
                "flagged": sum(r["cpu_flagged"] for r in mine),
                "incomplete": sum(not r["complete"] for r in mine), "rate_mbit": rate,
                "requests": mine[0]["requests"], "conns": mine[0]["conns"],
                "cpu_busy_max_pct": max(r["cpu_busy_max_pct"] for r in mine),
            }
            for k in ("runtime_s", "p50_ms", "p99_ms", "bulk_up_mbit", "bulk_down_mbit"):
                row[k], row[k + "_ci"] = ci([r[k] for r in used])
            row["speedup"], row["speedup_ci"] = ci([b["runtime_s"] / r["runtime_s"] for b, r in pairs])
            row["p99_ratio"], row["p99_ratio_ci"] = ci([b["p99_ms"] / r["p99_ms"] for b, r in pairs])
            for d in ("up", "down"):
                k = "bulk_%s_mbit" % d
                row["bulk_%s_ratio" % d], row["bulk_%s_ratio_ci" % d] = ci(
                    [r[k] / b[k] for b, r in pairs if b[k] and not math.isnan(b[k])])
                row["bulk_%s_capacity" % d] = row[k] / (2 * rate) if rate else NAN
            for k in ("sack_reorder", "dsack_recv", "retrans_segs", "tap_retrans", "tap_lost",
                      "app_reshorts"):
                row[k] = mean_of([r[k] for r in used])
            for k in ("bulk_reshorts_warmup", "bulk_reshorts_job"):
                row[k] = sum_of([r[k] for r in used])
            for k in ("bulk_short_pct_warmup", "bulk_short_pct_job", "bulk_short_pct"):
                row[k] = max_of([r[k] for r in used])
            row["bulk_flows_missing"] = sum_of([r["bulk_flows"] - r["bulk_flows_found"] for r in used])
            segs = sum(r["out_segs"] for r in used)
            row["retrans_per_1000"] = 1000 * sum(r["retrans_segs"] for r in used) / segs if segs else NAN
            for k in ("spill_up_mbit", "spill_down_mbit", "spill_grants_job", "spill_grants",
                      "downs_long", "downs_short", "short_probe_p99_ms", "dl1_worst_ms"):
                row[k] = mean_of([r[k] for r in used])
            row["spill_states"] = " ".join(sorted({r["spill_state"] for r in used if r["spill_state"]}))
            # both directions together against both tunnels' capacity
            row["bulk_capacity_both"], row["bulk_capacity_both_ci"] = ci(
                [(r["bulk_up_mbit"] + r["bulk_down_mbit"]) / (4 * rate) for r in used] if rate else [])
            # against what the bulk offered per direction: its demand, at most
            # both tunnels (max: unpaced, both tunnels)
            offered = min(demand_sort(demand), 2) * rate
            row["bulk_vs_offered"] = ((row["bulk_up_mbit"] + row["bulk_down_mbit"]) / (2 * offered)
                                      if offered > 0 else NAN)
            # against split without spill, paired by repetition: mode / nospill
            sp_pairs = [(nospill[r["rep"]], r) for r in used if r["rep"] in nospill]
            row["p99_vs_nospill"], row["p99_vs_nospill_ci"] = ci(
                [r["p99_ms"] / b["p99_ms"] for b, r in sp_pairs])
            row["runtime_vs_nospill"], row["runtime_vs_nospill_ci"] = ci(
                [r["runtime_s"] / b["runtime_s"] for b, r in sp_pairs])
            row["nobulk_runtime_s"], row["nobulk_p99_ms"] = nobulk.get((delays, app, BASE), (NAN, NAN))
            # against the limit: run-time and p99 over the no-bulk runs' means
            row["vs_nobulk"] = row["runtime_s"] / row["nobulk_runtime_s"]
            row["p99_vs_nobulk"] = row["p99_ms"] / row["nobulk_p99_ms"]
            # ... and over the limit of the mode's own routing
            own = nobulk.get((delays, app, routing(mode)), (NAN, NAN))
            row["own_nobulk_runtime_s"], row["own_nobulk_p99_ms"] = own
            row["vs_own_nobulk"] = row["runtime_s"] / own[0]
            row["p99_vs_own_nobulk"] = row["p99_ms"] / own[1]
            for n in (1, 2):
                row["path%d_time_ratio" % n] = mean_of([r["path%d_time_ratio" % n] for r in used])
            out.append(row)
    return out


def tables(rows):
    lines = [
        "| tunnels one-way | app | bulk | cc | mode | runs used | run-time s | speedup ECMP/mode "
        "| p50 ms | p99 ms | p99 ECMP/mode | no-bulk run-time s / p99 ms | run-time / no-bulk "
        "| p99 / no-bulk p99 | run-time; p99 / no-bulk, same routing | tunnel time / run-time, path 1 / 2 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        bulk = "none" if demand_sort(r["bulk_demand"]) == 0 else r["bulk_demand"] + " x"
        lines.append("| %s ms | %s | %s | %s | %s | %d/%d | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s; %s | %s / %s |" % (
            r["delays"], r["app"], bulk, r["bulk_cc"], r["mode"], r["used"], r["runs"],
            fmt(r["runtime_s"], r["runtime_s_ci"], "%.2f"),
            fmt(r["speedup"], r["speedup_ci"], "%.2f", " x") if r["mode"] != BASE else "1",
            fmt_ms(r["p50_ms"]), fmt_ms(r["p99_ms"]),
            fmt(r["p99_ratio"], r["p99_ratio_ci"], "%.2f", " x") if r["mode"] != BASE else "1",
            fmt(r["nobulk_runtime_s"], f="%.2f"), fmt_ms(r["nobulk_p99_ms"]),
            fmt(r["vs_nobulk"], f="%.2f"), fmt(r["p99_vs_nobulk"], f="%.2f"),
            fmt(r["vs_own_nobulk"], f="%.2f"), fmt(r["p99_vs_own_nobulk"], f="%.2f"),
            fmt(r["path1_time_ratio"], f="%.2f"), fmt(r["path2_time_ratio"], f="%.2f")))
    lines += [
        "",
        "| tunnels one-way | app | bulk | cc | mode | bulk up / down Mbit/s | mode/ECMP up | "
        "mode/ECMP down | share of capacity up / down | SACK reorder | DSACK | retrans / 1000 segs "
        "| fct-tap retrans / lost | busiest CPU % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if demand_sort(r["bulk_demand"]) == 0:
            continue
        lines.append("| %s ms | %s | %s x | %s | %s | %s / %s | %s | %s | %s / %s | %s | %s | %s | %s | %s |" % (
            r["delays"], r["app"], r["bulk_demand"], r["bulk_cc"], r["mode"],
            fmt(r["bulk_up_mbit"], f="%.1f"), fmt(r["bulk_down_mbit"], f="%.1f"),
            fmt(r["bulk_up_ratio"], r["bulk_up_ratio_ci"], "%.2f") if r["mode"] != BASE else "1",
            fmt(r["bulk_down_ratio"], r["bulk_down_ratio_ci"], "%.2f") if r["mode"] != BASE else "1",
            fmt(100 * r["bulk_up_capacity"], f="%.0f", unit=" %"),
            fmt(100 * r["bulk_down_capacity"], f="%.0f", unit=" %"),
            fmt(r["sack_reorder"], f="%.1f"), fmt(r["dsack_recv"], f="%.1f"),
            fmt(r["retrans_per_1000"], f="%.2f"),
            "–" if math.isnan(r["tap_retrans"]) else "%s / %s" % (
                fmt(r["tap_retrans"], f="%.0f"), fmt(r["tap_lost"], f="%.0f")),
            fmt(r["cpu_busy_max_pct"], f="%.0f")))
    lines += [
        "",
        "Bulk on SHORT (flow tables; bound: re-shorts x threshold x 1448 B, as a share of the "
        "bytes moved; warm-up = slow start and its first losses, job = steady state; "
        "the application's re-shorts for comparison):",
        "",
        "| tunnels one-way | app | bulk | cc | mode | bulk data flows missing | bulk re-shorts "
        "warm-up / job | bulk bytes on SHORT after threshold, max % warm-up / job / whole run | "
        "app re-shorts per run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if demand_sort(r["bulk_demand"]) == 0 or r["mode"] == BASE:
            continue
        lines.append("| %s ms | %s | %s x | %s | %s | %s | %s / %s | %s / %s / %s | %s |" % (
            r["delays"], r["app"], r["bulk_demand"], r["bulk_cc"], r["mode"],
            fmt(r["bulk_flows_missing"], f="%.0f"), fmt(r["bulk_reshorts_warmup"], f="%.0f"),
            fmt(r["bulk_reshorts_job"], f="%.0f"), fmt(r["bulk_short_pct_warmup"], f="%.2f"),
            fmt(r["bulk_short_pct_job"], f="%.2f"), fmt(r["bulk_short_pct"], f="%.2f"),
            fmt(r["app_reshorts"], f="%.0f")))
    return "\n".join(lines)


def spill_table(rows):
    """the spill report's table: every group that has a spill mode, every
    mode in it, and the no-bulk limit of its testbed and application"""
    keys = {(r["delays"], r["app"]) for r in rows if r["mode"] in SPILL_MODES}
    lines = [
        "| RTT ms (one-way SHORT/LONG) | app | bulk | mode | runs used | bulk up / down Mbit/s | bulk / both "
        "tunnels' capacity | bulk / offered | run-time s | run-time / no-bulk (ECMP) | run-time / no-bulk, "
        "same routing | p50 ms | p99 ms | p99 / nospill "
        "| SACK reorder / DSACK per run | spilled Mbit/s up / down | grants per job (run) "
        "| agents' spill state | tunnel downs LONG / SHORT per run | SHORT probe delay p99 ms "
        "| path 1 delay line late, worst ms | busiest CPU % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if (r["delays"], r["app"]) not in keys:
            continue
        nobulk = demand_sort(r["bulk_demand"]) == 0
        paced = r["app"] in PACED_APPS
        lines.append("| %g (%s) | %s | %s | %s | %d/%d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["rtt_ms"], r["delays"], r["app"], "none" if nobulk else r["bulk_demand"] + " x",
            r["mode"], r["used"], r["runs"],
            "–" if nobulk else "%s / %s" % (fmt(r["bulk_up_mbit"], f="%.1f"),
                                          fmt(r["bulk_down_mbit"], f="%.1f")),
            "–" if nobulk else fmt(r["bulk_capacity_both"], r["bulk_capacity_both_ci"], "%.2f"),
            "–" if nobulk else fmt(r["bulk_vs_offered"], f="%.2f"),
            fmt(r["runtime_s"], r["runtime_s_ci"], "%.2f"),
            "–" if paced else fmt(r["vs_nobulk"], f="%.2f"),
            "–" if paced else fmt(r["vs_own_nobulk"], f="%.2f"),
            fmt(r["p50_ms"], f="%.1f"), fmt(r["p99_ms"], f="%.1f"),
            "1" if r["mode"] == SPILL_BASE else fmt(r["p99_vs_nospill"], r["p99_vs_nospill_ci"], "%.2f"),
            "%s / %s" % (fmt(r["sack_reorder"], f="%.1f"), fmt(r["dsack_recv"], f="%.1f")),
            "%s / %s" % (fmt(r["spill_up_mbit"], f="%.1f"), fmt(r["spill_down_mbit"], f="%.1f")),
            "%s (%s)" % (fmt(r["spill_grants_job"], f="%.1f"), fmt(r["spill_grants"], f="%.1f")),
            r["spill_states"] or "–",
            "%s / %s" % (fmt(r["downs_long"], f="%.1f"), fmt(r["downs_short"], f="%.1f")),
            fmt(r["short_probe_p99_ms"], f="%.1f"), fmt(r["dl1_worst_ms"], f="%.1f"),
            fmt(r["cpu_busy_max_pct"], f="%.0f")))
    return "\n".join(lines)


def spill_plot(rows, outdir):
    """spill.png: per application, bulk against both tunnels' capacity and
    the run-time against the no-bulk run-time (a paced job's: p99 against
    nospill's), vs RTT, per mode and demand"""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("apps_report.py: no matplotlib: no plots", file=sys.stderr)
        return
    keys = {(r["delays"], r["app"]) for r in rows if r["mode"] in SPILL_MODES}
    mine = [r for r in rows if (r["delays"], r["app"]) in keys and demand_sort(r["bulk_demand"]) > 0
            and r["delays"].split("/")[0] == r["delays"].split("/")[1]]
    apps = sorted({r["app"] for r in mine})
    if not apps:
        return
    rtts = sorted({r["rtt_ms"] for r in mine})
    fig, axes = plt.subplots(2, len(apps), figsize=(5.5 * len(apps), 7), squeeze=False)
    styles = {}
    for col, app in enumerate(apps):
        second = (("p99_vs_nospill", "p99 / nospill's p99, paired (log)", 1.2, True)
                  if app in PACED_APPS else
                  ("vs_own_nobulk", "run-time / no-bulk run-time, same routing (log)", 1.2, True))
        for row, (key, ylabel, ref, log) in enumerate((
                ("bulk_capacity_both", "bulk / both tunnels' capacity (up + down)", 0.85, False),
                second)):
            ax = axes[row][col]
            for mode, demand in sorted({(r["mode"], r["bulk_demand"]) for r in mine if r["app"] == app},
                                       key=lambda md: (MODE_ORDER.index(md[0]) if md[0] in MODE_ORDER
                                                       else 99, demand_sort(md[1]))):
                pts = sorted((r["rtt_ms"], r) for r in mine if r["app"] == app and r["mode"] == mode
                             and r["bulk_demand"] == demand and not math.isnan(r[key]))
                if not pts:
                    continue
                color = styles.setdefault(mode, "C%d" % len(styles))
                hw = [0] * len(pts)
                if key + "_ci" in pts[0][1]:
                    hw = [0 if math.isnan(p[1][key + "_ci"]) else p[1][key + "_ci"] for p in pts]
                ys = [p[1][key] for p in pts]
                # an interval reaching below 0 is drawn down to 5 % of the mean
                ax.errorbar([p[0] for p in pts], ys, yerr=[[min(h, 0.95 * y) for h, y in zip(hw, ys)], hw],
                            color=color,
                            marker="s" if demand_sort(demand) <= 1 else "o" if demand != "max" else "^",
                            capsize=3,
                            linestyle=":" if demand_sort(demand) <= 1 else "-" if demand != "max" else "--",
                            label="%s, bulk %s x" % (mode, demand))
            ax.axhline(ref, color="grey", linewidth=0.8, linestyle="--")
            ax.set_xticks(rtts)
            ax.set_xlim(rtts[0] - 3, rtts[-1] + 3)
            if log:
                ax.set_yscale("log")
            else:
                ax.set_ylim(0, 1.05)
            ax.set_title("%s" % app)
            ax.set_xlabel("RTT ms (equal tunnels)")
            ax.set_ylabel(ylabel)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "spill.png"), dpi=110)
    plt.close(fig)


def plots(rows, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("apps_report.py: no matplotlib: no plots", file=sys.stderr)
        return
    equal = [r for r in rows if r["delays"].split("/")[0] == r["delays"].split("/")[1]
             and r["mode"] != BASE and demand_sort(r["bulk_demand"]) > 0]
    panels = sorted({(r["app"], r["bulk_cc"]) for r in equal})
    if not panels:
        return
    for name, key, ylabel in (("speedup", "speedup", "run-time speedup ECMP / mode"),
                              ("bulk", "bulk_down_ratio", "bulk throughput mode / ECMP (down; up dashed)")):
        fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
        for ax, (app, cc) in zip(axes[0], panels):
            mine = [r for r in equal if r["app"] == app and r["bulk_cc"] == cc]
            for mode, demand in sorted({(r["mode"], r["bulk_demand"]) for r in mine}):
                pts = sorted(((r["rtt_ms"], r) for r in mine if r["mode"] == mode and
                              r["bulk_demand"] == demand and not math.isnan(r[key])), key=lambda p: p[0])
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                ys = [p[1][key] for p in pts]
                hw = [0 if math.isnan(p[1][key + "_ci"]) else p[1][key + "_ci"] for p in pts]
                # log axis: an interval reaching below 0 is drawn down to 5 % of the mean
                line = ax.errorbar(xs, ys, yerr=[[min(h, 0.95 * y) for h, y in zip(hw, ys)], hw],
                                   marker="o", capsize=3, label="%s, bulk %s x" % (mode, demand))
                if name == "bulk":
                    ax.plot(xs, [p[1]["bulk_up_ratio"] for p in pts], linestyle="--",
                            color=line[0].get_color())
            ax.axhline(1, color="grey", linewidth=0.8)
            ax.set_yscale("log")
            ax.set_title("%s, bulk %s" % (app, cc))
            ax.set_xlabel("RTT ms (equal tunnels)")
            ax.set_ylabel(ylabel)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "apps-%s.png" % name), dpi=110)
        plt.close(fig)


def headline_pairs(runs, ok, mode):
    """per-pair ratios over every ECMP/MODE pair whose two runs pass ok()"""
    sp, p99, bulk = [], [], []
    for key in {group_key(r) for r in runs if demand_sort(r["bulk_demand"]) > 0
                and r["app"] not in PACED_APPS}:
        rs = [r for r in runs if group_key(r) == key and ok(r)]
        base = {r["rep"]: r for r in rs if r["mode"] == BASE}
        for r in rs:
            if r["mode"] != mode or r["rep"] not in base:
                continue
            b = base[r["rep"]]
            sp.append(b["runtime_s"] / r["runtime_s"])
            p99.append(b["p99_ms"] / r["p99_ms"])
            tot_b = b["bulk_up_mbit"] + b["bulk_down_mbit"]
            if tot_b:
                bulk.append((r["bulk_up_mbit"] + r["bulk_down_mbit"]) / tot_b)
    return sp, p99, bulk


def headline_mode(runs):
    """(mode, words): the first of HEADLINE_MODES with a run, or (None, None)"""
    have = {r["mode"] for r in runs}
    return next(((m, w) for m, w in HEADLINE_MODES if m in have), (None, None))


def headline(runs):
    """the demo's last line: every used ECMP/deployed pair (headline_mode),
    all apps together (bulk: both directions' sum). With no used pair (every
    run CPU-flagged, e.g. a shared machine) the complete runs, and a line
    before it saying so."""
    mode, words = headline_mode(runs)
    sp, p99, bulk = headline_pairs(runs, lambda r: r["used"], mode)
    note = ""
    if not sp:
        sp, p99, bulk = headline_pairs(runs, lambda r: r["complete"], mode)
        if sp:
            note = ("note: every ECMP/%s pair was CPU-flagged: the line below counts "
                    "them (a preview, not a figure)\n" % mode)
    rtts = sorted({r["rtt_ms"] for r in runs})
    (s, sh), (p, _), (w, _) = ci(sp), ci(p99), ci(bulk)
    return note + ("at RTT %s ms, %s: application run-time speedup ECMP/%s %s ± %s x, "
                   "p99 %s x; bulk throughput %s/ECMP %s x" % (
                       "/".join("%g" % x for x in rtts), words, mode, fmt(s, f="%.2f"),
                       fmt(sh, f="%.2f"), fmt(p, f="%.2f"), mode, fmt(w, f="%.2f")))


def main(argv):
    demo = "--demo" in argv
    loose = "--include-flagged" in argv
    args = [a for a in argv if a not in ("--demo", "--include-flagged")]
    if len(args) != 1 or args[0].startswith("-"):
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    top = args[0]
    if not os.path.isdir(top):
        print("apps_report.py: '%s': not a directory" % top, file=sys.stderr)
        return 2
    runs = [r for r in (load_run(os.path.join(top, d), loose) for d in sorted(os.listdir(top))
                        if os.path.isdir(os.path.join(top, d))) if r]
    if not runs:
        print("apps_report.py: no apps run in %s" % top, file=sys.stderr)
        return 1
    with open(os.path.join(top, "apps.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLS)
        w.writeheader()
        for r in runs:
            w.writerow({k: r[k] for k in COLS})
    if demo and not loose and not headline_pairs(runs, lambda r: r["used"], headline_mode(runs)[0])[0]:
        # the demo on a loaded machine: show what ran, said to be a preview
        loose = True
        runs = [load_run(os.path.join(top, r["run"]), True) for r in runs]
    rows = summarise(runs)
    with open(os.path.join(top, "apps-speedups.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    t = tables(rows)
    bad = [r for r in runs if not r["used"]]
    notes = ["", "Runs left out of every figure: %d of %d." % (len(bad), len(runs))]
    if loose:
        flagged = [r for r in runs if r["cpu_flagged"]]
        notes += ["", "**Preview: CPU-flagged runs are counted** (--include-flagged): %d of %d runs "
                  "flagged (%s): %s." % (len(flagged), len(runs), flag_rule(runs),
                                         ", ".join(r["run"] for r in flagged) or "none")]
    for r in bad:
        why = []
        if r["cpu_flagged"]:
            why.append("busiest CPU %.0f %%, host steal %s %%" % (
                r["cpu_busy_max_pct"], fmt(r["cpu_steal_pct"], f="%.1f")))
        if not r["complete"]:
            why.append("job incomplete")
        notes.append("- %s: %s" % (r["run"], ", ".join(why)))
    first = runs[0]
    exp = read_json(os.path.join(top, "experiment.json"), {}) or {}
    design = []
    if exp.get("design"):
        design = ["Design `%s` (`testbed/run-experiment apps --design %s`), %d repetitions unless "
                  "a block says otherwise, one cross product per block (no-bulk runs: ECMP and split only):"
                  % (exp["design"], exp["design"], exp.get("reps", 0)), ""]
        design += ["- `%s`" % b for b in exp.get("blocks") or []]
        design += ["", "Job sizes: %s (requests; pgbench: transactions)." % exp.get("requests", "?"), ""]
    if exp.get("calls"):
        design += ["The calls that made this run set (a later one resumes the same directory: "
                   "the runs done stay):", ""]
        design += ["    " + c for c in exp["calls"]] + [""]
    md = ["# Real applications under long-lived bulk", ""] + design + [
          "`%s` — %s; the job: wrk = %s GETs of 1 KB, pgbench = "
          "transactions (simple-update, 5 round trips), redis = GETs of 64 B by redis-benchmark, "
          "over %s persistent connections; bulk: "
          "iperf3, %s streams per direction for the whole run, demand x one tunnel's rate "
          "per direction (max: unpaced). Speedup and ratios paired by repetition, ± = 95 %% "
          "t-interval; %s are left out "
          "(`testbed/analysis/apps_report.py` says how each figure is made)." % (
              os.path.basename(os.path.abspath(top)), path_words(runs),
              next((r["requests"] for r in runs if r["app"] == "wrk"), "–"), first["conns"],
              first["bulk_streams"], flag_rule(runs)), "", t] + notes
    if demo:
        md += ["", headline(runs)]
    with open(os.path.join(top, "apps-summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    plots(rows, top)
    if any(r["mode"] in SPILL_MODES for r in runs):
        st = spill_table(rows)
        spill_md = ["# Spill: bulk onto SHORT's spare capacity", ""] + design + [
            "`%s` — %s; bulk: iperf3 cubic, %s streams per "
            "direction, demand x one tunnel's rate per direction. Modes: `ecmp`; `split`: "
            "split without agents (here only the no-bulk limit of the split's routing); "
            "`deployed` (earlier named `spill`): split with the agent (`splitctl run`, "
            "defaults: health, failover, spill) on both routers, as the README deploys "
            "flowsplit; `nospill`: the same with spill off in the splitter (`splitctl set "
            "spill no`); `paper`: the paper's rule (no re-short, no spill, no agent). Bulk / "
            "both tunnels' capacity: up + down over 4 x the tunnel rate; bulk / offered: up + "
            "down over twice the demand per direction (its demand x the tunnel rate, at most "
            "both tunnels; max: both tunnels); run-time / no-bulk: over the no-bulk runs' "
            "mean, ECMP's and the mode's own routing's (ECMP or split: at RTT 0 a job is "
            "bound by the tunnels' rate, the split's being one tunnel's); p99 / nospill: "
            "paired by repetition; ± = 95 %% t-interval; spilled Mbit/s: bytes the routers "
            "marked with the spill code point during the job (rA: upload, rB: download); "
            "tunnel downs: the agents' health flaps by the job's end (rA + rB; a down moves "
            "its class onto the other tunnel); flowgen: short flows, each a GET of 5 packets "
            "on a new connection, Poisson arrivals: its run-time is its schedule's, so its "
            "figures are p50/p99 (connect to last byte); %s are left out "
            "(`testbed/analysis/apps_report.py`)." % (
                os.path.basename(os.path.abspath(top)), path_words(runs),
                first["bulk_streams"], flag_rule(runs)), "", st] + notes
        with open(os.path.join(top, "spill-summary.md"), "w") as f:
            f.write("\n".join(spill_md) + "\n")
        spill_plot(rows, top)
        print(st)
    print(t)
    print("\n".join(notes))
    if demo:
        print()
        print(headline(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
