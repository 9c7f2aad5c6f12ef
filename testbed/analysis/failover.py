# SPDX-License-Identifier: GPL-2.0
"""The failover experiment's analysis (report.py calls it for a run set whose
experiment.json says "failover"; README.md in this directory).

Per run: flowgen.csv (application FCT of every request, CLOCK_MONOTONIC
start), failures.json (testbed/failover-inject: when the path failed and
healed, and every tunnel state change the routers' agents published).

  configuration: split + health, ECMP + health, split without health
                 (meta.json mode and health)
  short / long:  the request kind: listing (5 packets) / video, upload
  phases:        a request started in [fail - W, fail) is "before", in
                 [fail, heal) "during", in [heal, heal + W) "after",
                 W = the outage length (--fail-s); elsewhere: none
  failed:        status 0 or an error (flowgen's own verdict)
  injection:     the midpoint of the nft command (failures.json has its
                 start and end; their gap is the uncertainty)
  detection:     the agent's down transition of the failed path's tunnel
                 (its own since time) - the injection; per failure the
                 later of the two routers (traffic both ways is steered)
  restoration:   its up transition after the heal - the heal
"""
import csv
import math
import os

from common import load_json, pct as _pct

CONFIGS = (("split", "yes", "split + health"), ("ecmp", "yes", "ECMP + health"),
           ("split", "no", "split, no health"))
SHORT_KINDS = ("listing",)
PHASES = ("before", "during", "after")
NAN = float("nan")


def _mean(xs):
    return sum(xs) / len(xs) if xs else NAN


def _median(xs):
    if not xs:
        return NAN
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _f(v, fmt="%.1f"):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt % v


def _mid(a, b):
    return (a + b) / 2.0


def phase_of(start_ns, failures, window_ns):
    """"during" before "after" before "before" where windows overlap"""
    found = None
    for f in failures:
        fail, heal = f["fail_ns"], f["heal_ns"]
        if fail <= start_ns < heal:
            return "during"
        if heal <= start_ns < heal + window_ns:
            found = "after"
        elif found is None and fail - window_ns <= start_ns < fail:
            found = "before"
    return found


def _transition(trans, router, tunnel, state, lo, hi):
    for t in trans:
        if t["router"] == router and t["tunnel"] == tunnel and t["state"] == state and \
                t["since_ns"] is not None and lo <= t["since_ns"] < hi:
            return t["since_ns"]
    return None


def detections(rec, tunnel):
    """per failure: {"detect_ms": {router: ms|None}, "restore_ms": {...}, "nft_ms"}"""
    trans = sorted(rec["transitions"], key=lambda t: t["since_ns"] or 0)
    routers = sorted({t["router"] for t in trans})
    fs = rec["failures"]
    out = []
    for i, f in enumerate(fs):
        nxt = fs[i + 1]["fail_before_ns"] if i + 1 < len(fs) else math.inf
        d, r = {}, {}
        for rt in routers:
            down = _transition(trans, rt, tunnel, "down", f["fail_before_ns"],
                               f.get("heal_after_ns", math.inf))
            up = _transition(trans, rt, tunnel, "up", f.get("heal_before_ns", math.inf), nxt)
            d[rt] = (down - f["fail_ns"]) / 1e6 if down is not None else None
            r[rt] = (up - f["heal_ns"]) / 1e6 if up is not None and "heal_ns" in f else None
        out.append({"detect_ms": d, "restore_ms": r,
                    "nft_ms": max((f["fail_after_ns"] - f["fail_before_ns"]) / 1e6,
                                  (f.get("heal_after_ns", 0) - f.get("heal_before_ns", 0)) / 1e6)})
    return out


def load(d):
    """one run: meta, requests (with phase, class, ok), failures, detections"""
    meta = load_json(os.path.join(d, "meta.json"))
    rec = load_json(os.path.join(d, "failures.json"))
    with open(os.path.join(d, "flowgen.csv")) as f:
        rows = list(csv.DictReader(f))
    for fl in rec["failures"]:
        fl["fail_ns"] = _mid(fl["fail_before_ns"], fl["fail_after_ns"])
        if "heal_before_ns" in fl:
            fl["heal_ns"] = _mid(fl["heal_before_ns"], fl["heal_after_ns"])
    window = rec["fail_s"] * 1e9
    t0 = rec["t0_ns"]
    reqs = []
    for r in rows:
        start = int(r["start_ns"] or 0) or int(r["sched_ns"] or 0)
        reqs.append({
            "t_s": (start - t0) / 1e9, "fct_ms": float(r["fct_us"] or 0) / 1e3,
            "short": r["kind"] in SHORT_KINDS,
            "ok": r["status"] not in ("", "0") and not r.get("error"),
            "phase": phase_of(start, [x for x in rec["failures"] if "heal_ns" in x], window)})
    tunnel = int(meta.get("fail_path", 1)) - 1
    return {"dir": d, "run": os.path.basename(d.rstrip("/")), "meta": meta, "rec": rec,
            "reqs": reqs, "det": detections(rec, tunnel)}


def _times(runs, key):
    """per failure: the later router's time (None if one never switched)"""
    per, missing = [], 0
    for r in runs:
        for f in r["det"]:
            v = list(f[key].values())
            if not v or any(x is None for x in v):
                missing += 1
            else:
                per.append(max(v))
    return per, missing


def config_rows(runs):
    """the summary of one configuration's runs"""
    reqs = [q for r in runs for q in r["reqs"]]
    row = {"runs": len(runs), "requests": len(reqs),
           "failed": sum(not q["ok"] for q in reqs),
           "failures": sum(len(r["det"]) for r in runs)}
    for ph in PHASES:
        sel = [q for q in reqs if q["phase"] == ph]
        s = [q["fct_ms"] for q in sel if q["ok"] and q["short"]]
        lg = [q["fct_ms"] for q in sel if q["ok"] and not q["short"]]
        row[ph] = {"n": len(sel), "failed": sum(not q["ok"] for q in sel),
                   "short_n": len(s), "short_mean": _mean(s), "short_p50": _pct(s, 50),
                   "short_p99": _pct(s, 99), "short_max": max(s) if s else NAN,
                   "short_over_1s": sum(x > 1000 for x in s),
                   "long_n": len(lg), "long_mean": _mean(lg), "long_max": max(lg) if lg else NAN}
    health = runs[0]["meta"].get("health") == "yes"
    for key in ("detect_ms", "restore_ms"):
        t, missing = _times(runs, key)
        row[key] = {"n": len(t), "missing": missing if health else None,
                    "median": _median(t), "max": max(t) if t else NAN,
                    "min": min(t) if t else NAN}
    row["nft_max_ms"] = max([f["nft_ms"] for r in runs for f in r["det"]] or [NAN])
    cpu = [r["meta"].get("cpu_busy_max_pct") for r in runs
           if r["meta"].get("cpu_busy_max_pct") is not None]
    row["cpu_max"] = max(cpu) if cpu else NAN
    return row


def _table(groups):
    labels = [lab for _, _, lab in CONFIGS if lab in groups]
    head = "| | " + " | ".join(labels) + " |"
    lines = [head, "|---" * (len(labels) + 1) + "|"]

    def line(name, fn):
        lines.append("| %s | %s |" % (name, " | ".join(fn(groups[lab]) for lab in labels)))
    line("runs / failures", lambda g: "%d / %d" % (g["runs"], g["failures"]))
    line("requests / failed", lambda g: "%d / %d" % (g["requests"], g["failed"]))
    for ph in PHASES:
        line("%s: requests / failed" % ph,
             lambda g, ph=ph: "%d / %d" % (g[ph]["n"], g[ph]["failed"]))
        line("%s: short FCT mean / p99 / max (ms)" % ph, lambda g, ph=ph: "%s / %s / %s" % (
            _f(g[ph]["short_mean"], "%.2f"), _f(g[ph]["short_p99"], "%.1f"),
            _f(g[ph]["short_max"], "%.0f")))
        line("%s: short requests > 1 s" % ph,
             lambda g, ph=ph: "%d of %d" % (g[ph]["short_over_1s"], g[ph]["short_n"]))
        line("%s: long FCT mean / max (ms)" % ph, lambda g, ph=ph: "%s / %s" % (
            _f(g[ph]["long_mean"], "%.0f"), _f(g[ph]["long_max"], "%.0f")))
    for key, name in (("detect_ms", "detection"), ("restore_ms", "restoration")):
        line("%s median / max (ms), n" % name, lambda g, key=key: "-" if g[key]["missing"] is None
             else "%s / %s, n = %d%s" % (_f(g[key]["median"], "%.0f"), _f(g[key]["max"], "%.0f"),
                                         g[key]["n"], ", %d not seen" % g[key]["missing"]
                                         if g[key]["missing"] else ""))
    line("nft command max (ms)", lambda g: _f(g["nft_max_ms"], "%.0f"))
    line("busiest CPU max (%)", lambda g: _f(g["cpu_max"], "%.0f"))
    return lines


def timeline(top, by_cfg):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [lab for _, _, lab in CONFIGS if lab in by_cfg]
    fig, axes = plt.subplots(len(labels), 1, figsize=(10, 2.6 * len(labels)), sharex=True,
                             squeeze=False)
    for ax, lab in zip(axes[:, 0], labels):
        runs = by_cfg[lab]
        shaded = set()
        for r in runs:
            t0 = r["rec"]["t0_ns"]
            for f in r["rec"]["failures"]:
                if "heal_ns" in f:
                    span = (round((f["fail_ns"] - t0) / 1e9, 1), round((f["heal_ns"] - t0) / 1e9, 1))
                    if span not in shaded:
                        ax.axvspan(span[0], span[1], color="0.85", zorder=0)
                        shaded.add(span)
        qs = [q for r in runs for q in r["reqs"]]
        ok_s = [q for q in qs if q["ok"] and q["short"]]
        ok_l = [q for q in qs if q["ok"] and not q["short"]]
        bad = [q for q in qs if not q["ok"]]
        ax.scatter([q["t_s"] for q in ok_s], [max(q["fct_ms"], 0.01) for q in ok_s], s=4,
                   label="short (listing)", color="tab:blue")
        ax.scatter([q["t_s"] for q in ok_l], [max(q["fct_ms"], 0.01) for q in ok_l], s=10,
                   marker="^", label="long (video, upload)", color="tab:orange")
        ax.set_yscale("log")
        if bad:
            top_y = ax.get_ylim()[1]
            ax.scatter([q["t_s"] for q in bad], [top_y] * len(bad), marker="x", color="red",
                       label="failed")
        ax.set_ylabel("FCT (ms)")
        ax.set_title("%s (runs overlaid: %d; shaded: path %s down)" % (
            lab, len(runs), runs[0]["meta"].get("fail_path")), fontsize=10)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("request start (s after failover-inject started, with the workload)")
    fig.tight_layout()
    fig.savefig(os.path.join(top, "failover-timeline.png"), dpi=110)
    plt.close(fig)


def _per_run(runs):
    lines = ["| run | requests | failed | detection ms (ra / rb) | restoration ms (ra / rb) |",
             "|---|---|---|---|---|"]
    for r in runs:
        det = "; ".join(" / ".join(_f(f["detect_ms"].get(k), "%.0f") for k in ("ra", "rb"))
                        for f in r["det"])
        res = "; ".join(" / ".join(_f(f["restore_ms"].get(k), "%.0f") for k in ("ra", "rb"))
                        for f in r["det"])
        lines.append("| %s | %d | %d | %s | %s |" % (
            r["run"], len(r["reqs"]), sum(not q["ok"] for q in r["reqs"]),
            det if r["meta"].get("health") == "yes" else "-",
            res if r["meta"].get("health") == "yes" else "-"))
    return lines


def report(top, run_dirs):
    """text lines; writes failover-summary.md, failover-timeline.png"""
    runs = [load(d) for d in run_dirs if os.path.exists(os.path.join(d, "failures.json"))]
    if not runs:
        return ["failover: no run with failures.json"]
    by_cfg = {}
    for mode, health, lab in CONFIGS:
        sel = [r for r in runs if r["meta"].get("mode") == mode and
               r["meta"].get("health") == health]
        if sel:
            by_cfg[lab] = sel
    groups = {lab: config_rows(rs) for lab, rs in by_cfg.items()}
    m = runs[0]["meta"]
    lines = ["Failover: WAN path %s fails for %g s every %g s from %g s on; %g s workload at "
             "%g requests/s, background %g; %d runs" % (
                 m.get("fail_path"), m.get("fail_s"), m.get("fail_every_s"), m.get("fail_at_s"),
                 m.get("duration_s"), m.get("req_rate"), m.get("bg_util"), len(runs)), ""]
    lines += _table(groups)
    timeline(top, by_cfg)
    with open(os.path.join(top, "failover-summary.md"), "w") as f:
        f.write("# Failover experiment\n\n`testbed/run-experiment failover`, results in `%s`.\n\n"
                % os.path.basename(os.path.abspath(top)))
        f.write("\n".join(lines) + "\n\n")
        f.write("Definitions (testbed/analysis/failover.py):\n\n```\n%s```\n\n"
                % __doc__.split("\n\n", 1)[1])
        f.write("![timeline](failover-timeline.png)\n\n## Runs\n\n")
        f.write("\n".join(_per_run(runs)) + "\n")
    return lines
