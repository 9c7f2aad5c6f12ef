#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""report.py [--short-max N] [--long-min N] RUNSET_DIR

Summarise a set of testbed runs, split vs ECMP (README.md in this directory).

RUNSET_DIR holds experiment.json ({"experiment", "varied": "<meta key>"|null})
and one directory per run: meta.json, flowgen.csv, tap/flows.csv,
tunnels.json (+ tunnels-start.json), splitter.json.

Join: a flowgen request (client address, client port) is matched with the
fct-tap flow of its data direction -- server->client for a GET (dst = client),
client->server for a PUT (src = client) -- whose other end is the server
endpoint (meta.json server_addr/server_port, else the endpoint most requests
talk to): the full TCP 5-tuple. A port reused within a run matches its flows
in time order.

  short flow:  <= --short-max (40) packets in the data direction at port A
  long flow:   >  --long-min (1000) packets in the data direction at port A
  network FCT: fct-tap's fct_us (last packet at B - first packet at A)
  app FCT:     flowgen's fct_us (connect to last response byte)
  keep-alive runs (meta.json keepalive "yes"): one connection carries many
               requests, so one tap flow is no request's flow: requests are
               classed by their body size (bytes / 1448 B per packet against
               the same limits) and judged by app FCT only
  percentiles: nearest rank; CI: 95 % Student-t over repetitions
  speedup:     ECMP / split of a metric, paired by seed (same schedule)
  long-flow penalty: split / ECMP of the long-flow mean FCT (> 1: split slower)

Writes summary.csv (per run), speedups.csv (per varied value and metric),
summary.md and PNG plots into RUNSET_DIR; prints the side-by-side table.
The failover experiment: summary.csv, then failover.py's own report
(failover-summary.md, failover-timeline.png).
Exit: 0 done, 1 no usable run, 2 usage error.
"""
import csv
import json
import math
import os
import sys

from common import pct, read_json

try:
    import numpy as np
    from scipy import stats
except ImportError as e:
    sys.exit("report.py: %s: needs numpy and scipy (apt-get install python3-numpy "
             "python3-scipy)" % e)

SHORT_MAX_PKTS = 40
LONG_MIN_PKTS = 1000
MODES = ("split", "ecmp", "none")
NAN = float("nan")
# meta.json keys copied into summary.csv
META_COLS = ("xdp_mode", "threshold", "ack_short", "bg_util", "cpu_busy_pct", "cpu_busy_max_pct",
             "rtt_ms", "delays", "delay_impl")

# per-run metrics: key, label, unit of the stored value, and whether a speedup
# (ECMP / split) is meaningful for it
METRICS = [
    ("short_fct_mean_us", "short FCT mean", "ms", True),
    ("short_fct_p50_us", "short FCT p50", "ms", True),
    ("short_fct_p99_us", "short FCT p99", "ms", True),
    ("short_app_mean_us", "short app FCT mean", "ms", True),
    ("short_app_p50_us", "short app FCT p50", "ms", True),
    ("short_app_p99_us", "short app FCT p99", "ms", True),
    ("long_fct_mean_us", "long FCT mean", "ms", True),
    ("long_app_mean_us", "long app FCT mean", "ms", True),
    ("short_jitter_mean_us", "short jitter mean", "us", True),
    ("short_jitter_std_us", "short jitter std", "us", True),
    ("retrans_a", "retransmissions (tap A)", "pkts", False),
]
MSS_BYTES = 1448	# TCP payload per packet (testbed MTU 1500, timestamps): keep-alive classes


def mean(xs):
    return sum(xs) / len(xs) if xs else NAN


def std(xs):
    if len(xs) < 2:
        return NAN
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def ci(xs):
    """(mean, half-width of the two-sided 95 % Student-t interval) over the
    finite values; NaN half-width for n < 2"""
    xs = np.asarray([x for x in xs if not math.isnan(x)], dtype=float)
    if len(xs) < 2:
        return mean(list(xs)), NAN
    return float(xs.mean()), float(stats.t.ppf(0.975, len(xs) - 1) * stats.sem(xs))


def fnum(v, fmt="%.1f"):
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt % v


def tunnel_packets(d):
    """packets each tunnel sent from rA during the run (counters are cumulative)"""
    tun = {}
    end = read_json(os.path.join(d, "tunnels.json"), {}) or {}
    start = read_json(os.path.join(d, "tunnels-start.json"), {}) or {}
    for t in end.get("tunnels", []):
        tun[t["name"]] = t.get("tx_packets", 0)
    for t in start.get("tunnels", []):
        if t["name"] in tun:
            tun[t["name"]] -= t.get("tx_packets", 0)
    return tun


def join(requests, flows, meta):
    """[(request, data-direction flow or None)] by 5-tuple (module docstring)"""
    by_dst, by_src = {}, {}
    for fl in flows:
        if fl["proto"] != "6":
            continue
        by_src.setdefault((fl["src"], fl["sport"]), []).append(fl)
        by_dst.setdefault((fl["dst"], fl["dport"]), []).append(fl)
    # time order; a flow the tap never saw at A (capture drops) sorts last
    for lst in list(by_src.values()) + list(by_dst.values()):
        lst.sort(key=lambda fl: float(fl["first_a_us"]) if fl["first_a_us"] else math.inf)

    def candidates(r):
        c = (r["local_addr"], r["local_port"])
        # data direction: server -> client for GET, client -> server for PUT
        if r["method"] == "PUT":
            return [(fl, (fl["dst"], fl["dport"])) for fl in by_src.get(c, [])]
        return [(fl, (fl["src"], fl["sport"])) for fl in by_dst.get(c, [])]

    server = None
    if meta.get("server_addr") and meta.get("server_port"):
        server = (str(meta["server_addr"]), str(meta["server_port"]))
    else:
        votes = {}
        for r in requests:
            for _, ep in candidates(r):
                votes[ep] = votes.get(ep, 0) + 1
        if votes:
            server = max(votes, key=votes.get)
    used = set()
    out = []
    for r in sorted(requests, key=lambda r: int(r["start_ns"] or 0)):
        match = None
        for fl, ep in candidates(r):
            if ep == server and id(fl) not in used:
                match = fl
                used.add(id(fl))
                break
        out.append((r, match))
    return out


def load_run(d, short_max, long_min):
    meta = read_json(os.path.join(d, "meta.json"))
    if not isinstance(meta, dict) or "mode" not in meta:
        return None
    with open(os.path.join(d, "flowgen.csv")) as f:
        requests = list(csv.DictReader(f))
    flows_path = os.path.join(d, "tap", "flows.csv")
    have_tap = os.path.exists(flows_path)
    flows = []
    if have_tap:
        with open(flows_path) as f:
            flows = list(csv.DictReader(f))
    ok = [r for r in requests if r["status"] not in ("", "0") and not r.get("error")]
    s_net, s_app, s_jit, l_net, l_app = [], [], [], [], []
    unmatched = 0
    keepalive = meta.get("keepalive") == "yes"
    for r in ok if keepalive else []:
        pk = math.ceil(int(r["bytes"]) / MSS_BYTES)
        if pk <= short_max:
            s_app.append(float(r["fct_us"]))
        elif pk > long_min:
            l_app.append(float(r["fct_us"]))
    for r, fl in [] if keepalive else join(ok, flows, meta):
        # no flow at the tap, or none of its packets reached B (capture
        # drops): no network FCT to report
        if fl is None or fl.get("fct_us") in (None, ""):
            unmatched += 1
            continue
        pk = int(fl["pkts_a"])
        if pk <= short_max:
            s_net.append(float(fl["fct_us"]))
            s_app.append(float(r["fct_us"]))
            if fl.get("jitter_us") not in (None, ""):
                s_jit.append(float(fl["jitter_us"]))
        elif pk > long_min:
            l_net.append(float(fl["fct_us"]))
            l_app.append(float(r["fct_us"]))
    summ = read_json(os.path.join(d, "tap", "summary.json"), {}) or {}
    run = {
        "run": os.path.basename(d.rstrip("/")), "dir": d, "meta": meta,
        "requests": len(requests), "failed": len(requests) - len(ok),
        "unmatched": unmatched if have_tap else len(ok), "have_tap": have_tap,
        "short_n": len(s_app), "long_n": len(l_app),
        "short_fct_mean_us": mean(s_net), "short_fct_p50_us": pct(s_net, 50),
        "short_fct_p99_us": pct(s_net, 99), "short_app_mean_us": mean(s_app),
        "short_app_p50_us": pct(s_app, 50), "short_app_p99_us": pct(s_app, 99),
        "long_fct_mean_us": mean(l_net), "long_app_mean_us": mean(l_app),
        "short_jitter_mean_us": mean(s_jit), "short_jitter_std_us": std(s_jit),
        "short_fcts": s_net, "short_jits": s_jit, "long_fcts": l_net, "short_apps": s_app,
        "retrans_a": (summ.get("counters") or {}).get("retrans_a", NAN),
        "tunnels": tunnel_packets(d),
        "tap_complete": summ.get("complete") is not False and bool(summ) and have_tap,
    }
    return run


def value_key(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def main(argv):
    short_max, long_min, args = SHORT_MAX_PKTS, LONG_MIN_PKTS, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--short-max", "--long-min"):
            if i + 1 >= len(argv) or not argv[i + 1].isdigit() or int(argv[i + 1]) < 1:
                print("report.py: %s: invalid value '%s': accepted: an integer >= 1"
                      % (a, argv[i + 1] if i + 1 < len(argv) else ""), file=sys.stderr)
                return 2
            if a == "--short-max":
                short_max = int(argv[i + 1])
            else:
                long_min = int(argv[i + 1])
            i += 2
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-"):
            print("report.py: unknown option '%s' (usage: report.py [--short-max N] "
                  "[--long-min N] RUNSET_DIR)" % a, file=sys.stderr)
            return 2
        else:
            args.append(a)
            i += 1
    if len(args) != 1 or not os.path.isdir(args[0]):
        print("report.py: expected one RUNSET_DIR (a directory), got %s (usage: report.py "
              "[--short-max N] [--long-min N] RUNSET_DIR)" % (args or "none"), file=sys.stderr)
        return 2
    if long_min < short_max:
        print("report.py: --long-min %d is below --short-max %d" % (long_min, short_max),
              file=sys.stderr)
        return 2
    top = args[0]
    exp = read_json(os.path.join(top, "experiment.json"), {}) or {}
    varied = exp.get("varied")
    runs = []
    for name in sorted(os.listdir(top)):
        d = os.path.join(top, name)
        if os.path.exists(os.path.join(d, "meta.json")) and \
                os.path.exists(os.path.join(d, "flowgen.csv")):
            r = load_run(d, short_max, long_min)
            if r:
                runs.append(r)
    if not runs:
        print("report.py: no run in %s (a run is a directory with meta.json and flowgen.csv)"
              % top, file=sys.stderr)
        return 1
    # groups: varied value -> mode -> seed -> run
    groups = {}
    for r in runs:
        v = r["meta"].get(varied, "-") if varied else "-"
        groups.setdefault(v, {}).setdefault(r["meta"]["mode"], {})[r["meta"].get("seed", 0)] = r
    values = sorted(groups, key=value_key)

    write_runs_csv(top, runs, varied)
    if exp.get("experiment") == "failover":
        # its own comparison: three configurations, phases, detection
        import failover
        print("\n".join(failover.report(top, [r["dir"] for r in runs])))
        return 0
    lines, rows = compare(groups, values, varied)
    write_speedups_csv(top, rows, varied)
    text = "\n".join(lines)
    print(text.lstrip("\n"))
    plots_made = plots(top, groups, values, varied, rows)
    write_md(top, exp, runs, varied, text, short_max, long_min, plots_made)
    return 0


def write_runs_csv(top, runs, varied):
    cols = [m for m, _, _, _ in METRICS]
    with open(os.path.join(top, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        # the first 8 columns are stable (the testbed smoke test reads column 6)
        w.writerow(["run", "mode", varied or "varied", "seed", "requests", "unmatched",
                    "short_n", "long_n"] + cols +
                   ["failed"] + [k for k in META_COLS if k != varied] +
                   ["tap_complete", "tx_vxs", "tx_vxl"])
        for r in runs:
            m = r["meta"]
            w.writerow([r["run"], m["mode"], m.get(varied, "") if varied else "", m.get("seed", ""),
                        r["requests"], r["unmatched"], r["short_n"], r["long_n"]] +
                       [fnum(r[c]) for c in cols] +
                       [r["failed"]] + [m.get(k, "") for k in META_COLS if k != varied] +
                       [int(r["tap_complete"]), r["tunnels"].get("vxs", ""),
                        r["tunnels"].get("vxl", "")])


def compare(groups, values, varied):
    """side-by-side text and one row per (value, metric) with means, CIs, ratios"""
    lines, rows = [], []
    for v in values:
        g = groups[v]
        modes = [m for m in MODES if m in g] + sorted(m for m in g if m not in MODES)
        paired = "split" in g and "ecmp" in g
        seeds = sorted(set(g["split"]) & set(g["ecmp"])) if paired else \
            sorted(set().union(*[set(g[m]) for m in modes]))
        head = "%d repetitions (seeds %s)" % (len(seeds), ", ".join(map(str, seeds)))
        lines.append("\n" + ("%s = %s, " % (varied, v) if varied else "") + head)
        if paired:
            lines.append("%-22s %18s %18s %20s" % ("metric", "split", "ECMP", "ECMP / split"))
        else:
            lines.append("%-22s" % "metric" + "".join("%18s" % m for m in modes))
        for key, label, unit, ratio in METRICS:
            scale = 1e-3 if unit == "ms" else 1.0
            # rows keep the metric's own unit (us); the text shows ms or us
            row = {"value": v, "metric": key, "n": len(seeds)}
            for m in modes:
                row[m] = ci([g[m][s][key] for s in seeds if s in g[m]])
            if all(math.isnan(row[m][0]) for m in modes):
                continue	# not measured in these runs (network FCT of keep-alive)
            cells = ["%9.2f ± %-6s" % (row[m][0] * scale, fnum(row[m][1] * scale, "%.2f"))
                     for m in (("split", "ecmp") if paired else modes)]
            if paired:
                sp = [g["ecmp"][s][key] / g["split"][s][key] for s in seeds
                      if g["split"][s][key] > 0 and not math.isnan(g["ecmp"][s][key])]
                row["ratio"] = ci(sp)
                row["ratio_n"] = len(sp)
                cells.append("%9.2f ± %-6s" % (row["ratio"][0], fnum(row["ratio"][1], "%.2f"))
                             if ratio else "")
            lines.append("%-22s " % ("%s (%s)" % (label, unit)) + " ".join(cells))
            rows.append(row)
        if paired:
            # keep-alive runs have no per-request network FCT: app FCT
            lk = "long_app_mean_us" if all(g[m][s]["meta"].get("keepalive") == "yes"
                                           for m in ("split", "ecmp") for s in seeds) \
                else "long_fct_mean_us"
            pen = [g["split"][s][lk] / g["ecmp"][s][lk]
                   for s in seeds if g["ecmp"][s][lk] > 0 and not math.isnan(g["split"][s][lk])]
            pm, ph = ci(pen)
            rows.append({"value": v, "metric": "long_penalty", "n": len(seeds),
                         "ratio": (pm, ph), "ratio_n": len(pen)})
            lines.append("%-22s %s" % ("long-flow penalty", "split / ECMP long FCT mean = %.2f ± %s"
                                       % (pm, fnum(ph, "%.2f")) if pen else "n/a (no long flows)"))

        def tx(m, t):
            return mean([g[m][s]["tunnels"].get(t, 0) for s in seeds if s in g[m]])
        lines.append("%-22s " % "packets vxs / vxl (rA)" + " ".join(
            "%8.0f / %-8.0f" % (tx(m, "vxs"), tx(m, "vxl")) for m in
            (("split", "ecmp") if paired else modes)))
        runs = [g[m][s] for m in modes for s in seeds if s in g[m]]
        lines.append("%-22s " % "short / long flows" + " ".join(
            "%8d / %-8d" % (sum(g[m][s]["short_n"] for s in seeds if s in g[m]),
                            sum(g[m][s]["long_n"] for s in seeds if s in g[m]))
            for m in (("split", "ecmp") if paired else modes)))
        cpu = [r["meta"].get("cpu_busy_pct") for r in runs if r["meta"].get("cpu_busy_pct") is not None]
        cpu_max = [r["meta"].get("cpu_busy_max_pct") for r in runs
                   if r["meta"].get("cpu_busy_max_pct") is not None]
        lines.append("requests %d, failed %d, unmatched %d; CPU busy max %s %% (busiest CPU %s %%)" % (
            sum(r["requests"] for r in runs), sum(r["failed"] for r in runs),
            sum(r["unmatched"] for r in runs), fnum(max(cpu) if cpu else NAN),
            fnum(max(cpu_max) if cpu_max else NAN)))
        bad = [r["run"] for r in runs if not r["tap_complete"]]
        if bad:
            lines.append("WARNING: incomplete fct-tap measurement (drops or no tap) in %s"
                         % ", ".join(bad))
        sat = [r["run"] for r in runs if r["meta"].get("cpu_saturated")]
        if sat:
            lines.append("WARNING: a CPU was saturated in %s: the CPU may have been the "
                         "bottleneck" % ", ".join(sat))
    return lines, rows


def write_speedups_csv(top, rows, varied):
    with open(os.path.join(top, "speedups.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow([varied or "varied", "metric", "reps", "split_mean", "split_ci95",
                    "ecmp_mean", "ecmp_ci95", "ratio_mean", "ratio_ci95"])
        for r in rows:
            s, e, q = r.get("split", (NAN, NAN)), r.get("ecmp", (NAN, NAN)), r.get("ratio", (NAN, NAN))
            w.writerow([r["value"], r["metric"], r["n"], fnum(s[0], "%.4f"), fnum(s[1], "%.4f"),
                        fnum(e[0], "%.4f"), fnum(e[1], "%.4f"), fnum(q[0], "%.4f"),
                        fnum(q[1], "%.4f")])


def write_md(top, exp, runs, varied, text, short_max, long_min, plots_made):
    name = exp.get("experiment") or os.path.basename(os.path.abspath(top))
    with open(os.path.join(top, "summary.md"), "w") as f:
        f.write("# %s\n\n" % name)
        f.write("- short flow: <= %d packets in the data direction at port A (server->client "
                "for a download, client->server for an upload); long flow: > %d packets\n"
                % (short_max, long_min))
        f.write("- network FCT: fct-tap (last packet at B - first packet at A, paper §III-B); "
                "app FCT: flowgen (connect to last response byte)\n")
        f.write("- ± : 95 %% Student-t confidence interval over repetitions; ECMP / split: "
                "speedup paired by seed (same request schedule); long-flow penalty = split / "
                "ECMP long-flow mean FCT\n- percentiles: nearest rank; jitter: fct-tap's RFC "
                "3550 jitter of each short flow\n\n```\n%s\n```\n\n" % text.strip("\n"))
        f.write("## Runs\n\n| run | mode | %s | seed | requests | failed | unmatched | short | "
                "long | short FCT mean (ms) | long FCT mean (ms) | CPU busy (%%) |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|\n" % (varied or "-"))
        for r in runs:
            m = r["meta"]
            f.write("| %s | %s | %s | %s | %d | %d | %d | %d | %d | %s | %s | %s |\n" % (
                r["run"], m["mode"], m.get(varied, "-") if varied else "-", m.get("seed", ""),
                r["requests"], r["failed"], r["unmatched"], r["short_n"], r["long_n"],
                fnum(r["short_fct_mean_us"] / 1e3, "%.3f"), fnum(r["long_fct_mean_us"] / 1e3, "%.1f"),
                m.get("cpu_busy_pct", "")))
        if plots_made:
            f.write("\n## Plots\n\n" + "".join("- `%s`: %s\n" % p for p in plots_made))


def save_cdf(fig, ax, top, name, xlabel, what, made):
    """label, grid and write a CDF figure as top/name; list it in made"""
    import matplotlib.pyplot as plt

    ax.set_xlabel(xlabel)
    ax.set_ylabel("CDF")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(top, name), dpi=120)
    plt.close(fig)
    made.append((name, what))


def plots(top, groups, values, varied, rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    colors = {"split": "tab:blue", "ecmp": "tab:red", "none": "tab:grey"}
    made = []

    def pooled(key, mode, vals, unit):
        return sorted(x * unit for v in vals for r in groups[v].get(mode, {}).values()
                      for x in r[key])

    def log_bins(xs_all, n=40):
        lo, hi = min(xs_all), max(xs_all)
        lo = max(lo, 1e-3)
        if hi <= lo:
            hi = lo * 10
        return [lo * (hi / lo) ** (i / n) for i in range(n + 1)]

    # short-flow FCT CDF, all runs pooled per mode
    fig, ax = plt.subplots(figsize=(6, 4))
    for mode in groups[values[0]] if len(values) == 1 else MODES:
        xs = pooled("short_fcts", mode, values, 1e-3)
        if xs:
            ax.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))], label=mode,
                    color=colors.get(mode))
    ax.set_xscale("log")
    save_cdf(fig, ax, top, "fct_cdf.png", "short-flow network FCT (ms)",
             "CDF of short-flow network FCT per mode, log x", made)

    # Fig. 5: PDFs of short-flow FCT and jitter, one panel per varied value
    for key, unit, name, xlabel, what in (
            ("short_fcts", 1e-3, "fct_pdf.png", "short-flow network FCT (ms)", "FCT"),
            ("short_jits", 1.0, "jitter_pdf.png", "short-flow jitter (us)", "jitter")):
        shown = values[:6]
        fig, axes = plt.subplots(1, len(shown), figsize=(4.5 * len(shown), 3.6), squeeze=False)
        for ax, v in zip(axes[0], shown):
            data = {m: pooled(key, m, [v], unit) for m in MODES}
            allx = [x for xs in data.values() for x in xs if x > 0]
            if not allx:
                ax.set_visible(False)
                continue
            bins = log_bins(allx)
            for m, xs in data.items():
                xs = [x for x in xs if x > 0]
                if xs:
                    # probability per log-spaced bin (the density of log x),
                    # log y: the queueing tail stays visible next to the peak
                    ax.hist(xs, bins=bins, weights=[1.0 / len(xs)] * len(xs), alpha=0.5,
                            color=colors.get(m), histtype="stepfilled",
                            label="%s (mean %.3g, std %.3g)" % (m, mean(xs), std(xs)))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(xlabel)
            ax.set_ylabel("probability per bin (%d log bins)" % (len(bins) - 1))
            if varied:
                ax.set_title("%s = %s" % (varied, v))
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(top, name), dpi=120)
        plt.close(fig)
        made.append((name, "PDF of short-flow %s, split vs ECMP (paper Fig. 5)" % what))

    # long-flow FCT: CDF per mode, mean penalty in the title
    if any(r["long_fcts"] for g in groups.values() for m in g.values() for r in m.values()):
        fig, ax = plt.subplots(figsize=(6, 4))
        for mode in MODES:
            xs = pooled("long_fcts", mode, values, 1e-3)
            if xs:
                ax.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))],
                        label="%s (mean %.0f ms)" % (mode, mean(xs)), color=colors.get(mode))
        pen = [r for r in rows if r["metric"] == "long_penalty"]
        if len(pen) == 1 and not math.isnan(pen[0]["ratio"][0]):
            ax.set_title("long-flow penalty split / ECMP = %.2f ± %s" % (
                pen[0]["ratio"][0], fnum(pen[0]["ratio"][1], "%.2f")))
        save_cdf(fig, ax, top, "long_fct.png", "long-flow network FCT (ms)",
                 "CDF of long-flow network FCT per mode", made)

    # Fig. 4a / 4b: speedup vs the varied parameter
    numeric = varied and all(isinstance(v, (int, float)) for v in values)
    # network FCT where fct-tap measured it per flow, else (keep-alive runs:
    # one flow per connection) the requests' application FCT
    kind, what = "short_fct", "short-flow FCT"
    if not any(r["metric"] == "short_fct_mean_us" for r in rows):
        kind, what = "short_app", "short-request app FCT"
    sp = {m: [r for r in rows if r["metric"] == kind + m and "ratio" in r]
          for m in ("_mean_us", "_p99_us")}
    if numeric and sp["_mean_us"]:
        xlabel = {"threshold": "splitter threshold (packets)",
                  "bg_util": "background load (% of the tunnels' capacity)",
                  "rtt_ms": "WAN round-trip time (ms)",
                  "reshort_gap_ms": "reshort-gap (ms; 0 = off)"}.get(varied, varied)
        scale = 100 if varied == "bg_util" else 1
        fig, ax = plt.subplots(figsize=(6, 4))
        for m, label in (("_mean_us", "mean"), ("_p99_us", "p99")):
            xs = [r["value"] * scale for r in sp[m]]
            ax.errorbar(xs, [r["ratio"][0] for r in sp[m]],
                        yerr=[0 if math.isnan(r["ratio"][1]) else r["ratio"][1] for r in sp[m]],
                        marker="o", capsize=3, label=what + ", " + label)
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("FCT speedup, ECMP / split (x)")
        ax.set_title({"threshold": "Fig. 4a", "bg_util": "Fig. 4b"}.get(varied, ""))
        ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(top, "speedup.png"), dpi=120)
        plt.close(fig)
        made.append(("speedup.png", "%s speedup ECMP / split vs %s, 95 %% CI" % (what, varied)))

    # WAN delay: FCTs, speedups and the long-flow penalty vs RTT, or per
    # (SHORT / LONG) one-way delay pair
    if varied in ("rtt_ms", "delays") and kind == "short_fct" and sp["_mean_us"]:
        made.append(delay_plot(top, groups, values, varied, rows, colors))

    # Fig. 6: overhead of the splitter, FCT per XDP mode
    if varied == "xdp_mode":
        order = [v for v in ("none", "generic", "native") if v in groups] + \
            [v for v in values if v not in ("none", "generic", "native")]
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
        for ax, key, label in ((axes[0], "short_fct_mean_us", "network FCT mean (ms)"),
                               (axes[1], "short_app_mean_us", "application FCT mean (ms)")):
            modes = [m for m in MODES if any(m in groups[v] for v in order)]
            w = 0.8 / max(1, len(modes))
            for j, m in enumerate(modes):
                ms = [ci([r[key] * 1e-3 for r in groups[v].get(m, {}).values()]) for v in order]
                ax.bar([i + j * w for i in range(len(order))], [x[0] for x in ms], width=w,
                       yerr=[0 if math.isnan(x[1]) else x[1] for x in ms], capsize=3,
                       color=colors.get(m), label=m)
            ax.set_xticks([i + w * (len(modes) - 1) / 2 for i in range(len(order))])
            ax.set_xticklabels(["no XDP" if v == "none" else "%s XDP" % v for v in order])
            ax.set_ylabel("short-flow " + label)
            ax.legend(fontsize=8)
            ax.grid(alpha=0.3, axis="y")
        fig.suptitle("Fig. 6: splitter overhead, identical small requests")
        fig.tight_layout()
        fig.savefig(os.path.join(top, "overhead.png"), dpi=120)
        plt.close(fig)
        made.append(("overhead.png", "short-flow FCT with no / generic / native XDP (paper Fig. 6)"))
    return made


def delay_plot(top, groups, values, varied, rows, colors):
    """rtt.png (varied rtt_ms) or asym.png (varied delays, "SHORT/LONG" one-way
    ms): short-flow mean and p99 FCT per mode, ECMP / split speedups, long-flow
    penalty split / ECMP, all with 95 % CIs over the repetitions"""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def ratio(metric):
        by = {r["value"]: r for r in rows if r["metric"] == metric and "ratio" in r}
        return [by[v]["ratio"] if v in by else (NAN, NAN) for v in values]

    numeric = varied == "rtt_ms"
    xs = list(values) if numeric else list(range(len(values)))
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for key, style, label in (("short_fct_mean_us", "-o", "mean"), ("short_fct_p99_us", "--s", "p99")):
        for m in ("split", "ecmp"):
            ms = [ci([r[key] * 1e-3 for r in groups[v].get(m, {}).values()]) for v in values]
            axes[0].errorbar(xs, [x[0] for x in ms], yerr=[0 if math.isnan(x[1]) else x[1] for x in ms],
                             fmt=style, capsize=3, color=colors.get(m), label="%s, %s" % (m, label))
    axes[0].set_yscale("log")
    axes[0].set_ylabel("short-flow network FCT (ms)")
    axes[0].legend(fontsize=8)
    for metric, style, label in (("short_fct_mean_us", "-o", "mean"), ("short_fct_p99_us", "--s", "p99")):
        r = ratio(metric)
        axes[1].errorbar(xs, [x[0] for x in r], yerr=[0 if math.isnan(x[1]) else x[1] for x in r],
                         fmt=style, capsize=3, label="short-flow FCT, " + label)
    axes[1].axhline(1, color="grey", lw=0.8)
    axes[1].axhline(1.5, color="grey", lw=0.8, ls=":", label="paper: 1.5 x")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("speedup ECMP / split (x)")
    axes[1].legend(fontsize=8)
    r = ratio("long_penalty")
    axes[2].errorbar(xs, [x[0] for x in r], yerr=[0 if math.isnan(x[1]) else x[1] for x in r],
                     fmt="-o", capsize=3, color="tab:purple")
    axes[2].axhline(1, color="grey", lw=0.8)
    axes[2].set_ylabel("long-flow penalty, split / ECMP mean FCT")
    for ax in axes:
        ax.grid(alpha=0.3)
        if numeric:
            ax.set_xlabel("WAN round-trip time (ms)")
        else:
            ax.set_xticks(xs)
            ax.set_xticklabels(values)
            ax.set_xlabel("one-way delay SHORT / LONG tunnel (ms)")
    name = "rtt.png" if numeric else "asym.png"
    fig.suptitle("split vs ECMP vs WAN delay (95 % CI over the repetitions)")
    fig.tight_layout()
    fig.savefig(os.path.join(top, name), dpi=120)
    plt.close(fig)
    return (name, "short-flow FCT per mode, speedups and long-flow penalty vs %s"
            % ("RTT" if numeric else "the tunnels' one-way delays"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
