#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""report.py RUNSET_DIR - summarise a set of testbed runs: split vs ECMP.

RUNSET_DIR holds one directory per run (meta.json, flowgen.csv, tap/flows.csv,
tunnels.json) and optionally experiment.json {"varied": "<meta key>"}.

Each flowgen request is joined with the fct-tap flow of its data direction
(server->client for GET, client->server for PUT) by the client's port.
  short flow: data direction has <= 40 packets at A (the paper's short range)
  long flow:  data direction has > 1000 packets at A
  network FCT: fct-tap's last packet at B - first packet at A of that flow
  app FCT:     flowgen's request start to response complete
Per run: mean / p50 / p99 of short network FCT, short app FCT, long mean FCT,
mean jitter of short flows. Across repetitions (same seeds in both modes):
mean and 95 % Student-t confidence interval; speedup = ECMP / split per seed.
Writes summary.csv, summary.md and PNG plots into RUNSET_DIR, prints the table.
"""
import csv
import json
import math
import os
import sys

SHORT_MAX_PKTS = 40
LONG_MIN_PKTS = 1000
# two-sided 95 % Student t quantiles, by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365,
       8: 2.306, 9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}


def t95(df):
    if df <= 0:
        return float("nan")
    keys = sorted(k for k in T95 if k <= df)
    return T95[keys[-1]] if keys else T95[1]


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def pct(xs, p):
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(math.ceil(p / 100.0 * len(s))) - 1))
    return s[k]


def ci(xs):
    """mean and 95 % half-width"""
    if len(xs) < 2:
        return mean(xs), float("nan")
    m = mean(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return m, t95(len(xs) - 1) * sd / math.sqrt(len(xs))


def load_run(d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    flows = {}
    with open(os.path.join(d, "tap", "flows.csv")) as f:
        for r in csv.DictReader(f):
            flows[(r["src"], int(r["sport"]), r["dst"], int(r["dport"]))] = r
    short_net, short_app, long_net, short_jit, rows = [], [], [], [], 0
    missing = 0
    with open(os.path.join(d, "flowgen.csv")) as f:
        for r in csv.DictReader(f):
            rows += 1
            if r["status"] == "0":
                continue
            port = int(r["local_port"])
            cl = r["local_addr"]
            # the server is the other end of every flow with this client port
            key = None
            for k in flows:
                if r["method"] == "GET" and k[1] == 80 and k[3] == port and k[2] == cl:
                    key = k
                elif r["method"] == "PUT" and k[0] == cl and k[1] == port and k[3] == 80:
                    key = k
                if key:
                    break
            if not key:
                missing += 1
                continue
            fl = flows[key]
            pk = int(fl["pkts_a"])
            if pk <= SHORT_MAX_PKTS:
                short_net.append(float(fl["fct_us"]))
                short_app.append(float(r["fct_us"]))
                short_jit.append(float(fl["jitter_us"]))
            elif pk > LONG_MIN_PKTS:
                long_net.append(float(fl["fct_us"]))
    # packets each tunnel sent from rA during the run (counters are cumulative)
    tun = {}
    try:
        for t in json.load(open(os.path.join(d, "tunnels.json")))["tunnels"]:
            tun[t["name"]] = t["tx_packets"]
        for t in json.load(open(os.path.join(d, "tunnels-start.json")))["tunnels"]:
            tun[t["name"]] -= t["tx_packets"]
    except (OSError, ValueError, KeyError):
        pass
    try:
        drops = json.load(open(os.path.join(d, "tap", "summary.json"))).get("complete") is False
    except (OSError, ValueError):
        drops = True
    return {
        "run": os.path.basename(d), "meta": meta, "requests": rows, "unmatched": missing,
        "short_n": len(short_net), "long_n": len(long_net),
        "short_mean": mean(short_net), "short_p50": pct(short_net, 50),
        "short_p99": pct(short_net, 99), "short_app_mean": mean(short_app),
        "short_app_p99": pct(short_app, 99), "long_mean": mean(long_net),
        "short_jitter": mean(short_jit), "short_fcts": short_net, "short_jits": short_jit,
        "tunnels": tun, "tap_incomplete": drops,
    }


METRICS = [("short_mean", "short FCT mean (ms)"), ("short_p50", "short FCT p50 (ms)"),
           ("short_p99", "short FCT p99 (ms)"), ("short_app_mean", "short app FCT mean (ms)"),
           ("long_mean", "long FCT mean (ms)"), ("short_jitter", "short jitter mean (us)")]


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: report.py RUNSET_DIR", file=sys.stderr)
        return 2
    top = sys.argv[1]
    exp = {}
    if os.path.exists(os.path.join(top, "experiment.json")):
        exp = json.load(open(os.path.join(top, "experiment.json")))
    varied = exp.get("varied")
    runs = []
    for name in sorted(os.listdir(top)):
        d = os.path.join(top, name)
        if os.path.exists(os.path.join(d, "meta.json")) and os.path.exists(os.path.join(d, "tap", "flows.csv")):
            runs.append(load_run(d))
    if not runs:
        print("report.py: no complete runs in %s" % top, file=sys.stderr)
        return 1
    # groups: (varied value) -> mode -> seed -> run
    groups = {}
    for r in runs:
        v = r["meta"].get(varied) if varied else "-"
        groups.setdefault(v, {}).setdefault(r["meta"]["mode"], {})[r["meta"]["seed"]] = r

    with open(os.path.join(top, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", "mode", varied or "varied", "seed", "requests", "unmatched", "short_n",
                    "long_n"] + [m for m, _ in METRICS] + ["cpu_busy_pct", "tx_vxs", "tx_vxl"])
        for r in runs:
            w.writerow([r["run"], r["meta"]["mode"], r["meta"].get(varied, "") if varied else "",
                        r["meta"]["seed"], r["requests"], r["unmatched"], r["short_n"], r["long_n"]]
                       + ["%.1f" % r[m] for m, _ in METRICS]
                       + [r["meta"].get("cpu_busy_pct", ""), r["tunnels"].get("vxs", ""),
                          r["tunnels"].get("vxl", "")])

    lines = []
    table = []
    for v in sorted(groups, key=lambda x: (isinstance(x, str), x)):
        g = groups[v]
        if "split" not in g or "ecmp" not in g:
            continue
        seeds = sorted(set(g["split"]) & set(g["ecmp"]))
        head = "%s = %s, %d repetitions (seeds %s)" % (varied, v, len(seeds), seeds) if varied \
            else "%d repetitions (seeds %s)" % (len(seeds), seeds)
        lines.append("\n" + head)
        lines.append("%-26s %20s %20s %18s" % ("metric", "split", "ECMP", "speedup ECMP/split"))
        row = {"value": v}
        for m, label in METRICS:
            scale = 1e-3 if "(ms)" in label else 1
            s = [g["split"][k][m] * scale for k in seeds]
            e = [g["ecmp"][k][m] * scale for k in seeds]
            sp = [b / a for a, b in zip(s, e) if a > 0]
            (sm, sh), (em, eh), (pm, ph) = ci(s), ci(e), ci(sp)
            lines.append("%-26s %11.2f ± %-6.2f %11.2f ± %-6.2f %9.2f ± %-6.2f" % (label, sm, sh, em, eh, pm, ph))
            row[m] = (pm, ph)
        tx = lambda mode, t: mean([g[mode][k]["tunnels"].get(t, 0) for k in seeds])
        lines.append("%-26s %9.0f / %-8.0f %9.0f / %-8.0f" % ("packets vxs / vxl (rA tx)", tx("split", "vxs"),
                                                           tx("split", "vxl"), tx("ecmp", "vxs"), tx("ecmp", "vxl")))
        cpu = [g[mo][k]["meta"].get("cpu_busy_pct", 0) for mo in ("split", "ecmp") for k in seeds]
        lines.append("%-26s %d / %d split, %d / %d ECMP; CPU busy max %.1f %%" % (
            "short / long flows", sum(g["split"][k]["short_n"] for k in seeds),
            sum(g["split"][k]["long_n"] for k in seeds), sum(g["ecmp"][k]["short_n"] for k in seeds),
            sum(g["ecmp"][k]["long_n"] for k in seeds), max(cpu)))
        bad = [g[mo][k]["run"] for mo in ("split", "ecmp") for k in seeds if g[mo][k]["tap_incomplete"]]
        if bad:
            lines.append("WARNING: fct-tap dropped packets in %s (see tap/summary.txt)" % ", ".join(bad))
        table.append(row)
    text = "\n".join(lines)
    print(text.lstrip("\n"))
    with open(os.path.join(top, "summary.md"), "w") as f:
        f.write("# %s\n\nShort flow: data direction <= %d packets; long: > %d packets. "
                "Network FCT from fct-tap (last packet at B - first at A); app FCT from flowgen. "
                "± = 95 %% Student-t confidence interval over repetitions; speedup = ECMP / split "
                "per seed.\n\n```\n%s\n```\n" % (exp.get("experiment", os.path.basename(top.rstrip("/"))),
                                                  SHORT_MAX_PKTS, LONG_MIN_PKTS, text.strip("\n")))
    plots(top, groups, table, varied)
    return 0


def plots(top, groups, table, varied):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # CDF of short-flow FCT and PDF of short-flow jitter, all runs pooled per mode
    for key, unit, name, xlabel in (("short_fcts", 1e-3, "fct_cdf.png", "short-flow FCT (ms)"),
                                    ("short_jits", 1, "jitter_pdf.png", "short-flow jitter (us)")):
        fig, ax = plt.subplots(figsize=(6, 4))
        for mode, color in (("split", "tab:blue"), ("ecmp", "tab:red")):
            xs = sorted(x * unit for g in groups.values() for r in g.get(mode, {}).values() for x in r[key])
            if not xs:
                continue
            if name.endswith("cdf.png"):
                ax.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))], label=mode, color=color)
                ax.set_ylabel("CDF")
                ax.set_xscale("log")
            else:
                ax.hist(xs, bins=50, density=True, alpha=0.5, label=mode, color=color)
                ax.set_ylabel("probability density (1/us)")
        ax.set_xlabel(xlabel)
        ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(top, name), dpi=120)
        plt.close(fig)
    if varied and len(table) > 1:
        fig, ax = plt.subplots(figsize=(6, 4))
        xs = [r["value"] for r in table]
        for m, label in (("short_mean", "mean"), ("short_p99", "p99")):
            # no interval with a single repetition: draw the points alone
            ax.errorbar(xs, [r[m][0] for r in table],
                        yerr=[0 if math.isnan(r[m][1]) else r[m][1] for r in table], marker="o",
                        capsize=3, label="short-flow FCT speedup, " + label)
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xlabel(varied)
        ax.set_ylabel("speedup ECMP / split (x)")
        ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(top, "speedup.png"), dpi=120)
        plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
