#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""mkfixture.py OUTDIR - a synthetic results directory with known answers,
for testing report.py without a testbed run (tests/testbed-flowgen.bats).

Experiment "fixture", varied = threshold (5 and 20), seeds 1..3, split and
ECMP. Every run has 15 requests from client 10.1.0.1 to server 10.2.0.1:80:
  - 10 listings (GET), data flows of 9 packets: network FCT = k * i ms for
    i = 1..10 (mean 5.5k ms, p50 5k ms, p99 10k ms), app FCT = network FCT +
    0.1 ms, jitter = k * 10 us * i; k = 1 for split, for ECMP
    k = 1.5, 2.0, 2.5 (threshold 5, seeds 1..3) and 3, 3, 3 (threshold 20).
    => speedup of the short-flow mean/p50/p99: 2.0 +- 1.2422 (t, 2 df) and
       3.0 +- 0.
  - 1 video GET and 1 upload PUT, 2000 data packets each: network FCT 110 ms
    (split) / 100 ms (ECMP), app FCT + 1 ms => long-flow penalty 1.1 +- 0.
    The video reuses the last listing's client port, later in time.
  - 1 GET of 100 data packets (neither short nor long).
  - 1 failed request (status 0, error connect) whose port has a flow: excluded.
  - 1 successful request with no flow: unmatched.
Decoys the join must ignore: the reverse (ACK) direction of every flow, with
fct 1 us; a flow from the client port to another server port, earlier.
"""
import json
import os
import sys

SERVER, SPORT, CLIENT = "10.2.0.1", 80, "10.1.0.1"
K_ECMP = {5: [1.5, 2.0, 2.5], 20: [3.0, 3.0, 3.0]}
COLS = ("src,sport,dst,dport,proto,dscp,class,pkts_a,bytes_a,pkts_b,bytes_b,lost,first_a_us,"
        "last_b_us,fct_us,owd_min_us,owd_mean_us,owd_p50_us,owd_p99_us,owd_max_us,jitter_us,"
        "dv_mean_us,dv_std_us,end_reason").split(",")


def flow(src, sport, dst, dport, pkts, t0, fct, jitter):
    return {"src": src, "sport": sport, "dst": dst, "dport": dport, "proto": 6, "dscp": 0,
            "class": "short", "pkts_a": pkts, "bytes_a": pkts * 1000, "pkts_b": pkts,
            "bytes_b": pkts * 1000, "lost": 0, "first_a_us": "%.3f" % t0,
            "last_b_us": "%.3f" % (t0 + fct), "fct_us": "%.3f" % fct, "owd_min_us": 1,
            "owd_mean_us": 1, "owd_p50_us": 1, "owd_p99_us": 1, "owd_max_us": 1,
            "jitter_us": "%.3f" % jitter, "dv_mean_us": 0, "dv_std_us": 0, "end_reason": "fin"}


def run(out, mode, threshold, seed, k):
    d = os.path.join(out, "%s-%d-%d" % (mode, threshold, seed))
    os.makedirs(os.path.join(d, "tap"))
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"mode": mode, "threshold": threshold, "bg_util": 0.4, "seed": seed,
                   "rep": seed, "xdp_mode": "native", "cpu_busy_pct": 10.0,
                   "cpu_busy_max_pct": 20.0, "cpu_saturated": False, "netem": False}, f)
    with open(os.path.join(d, "tap", "summary.json"), "w") as f:
        json.dump({"complete": True, "port_drops": 0}, f)
    reqs, flows = [], []
    t = 1000.0		# tap time, us (any epoch)
    ns = 10 ** 9		# flowgen time, ns (another epoch)

    def req(kind, method, nbytes, port, app_us, status=206, error=""):
        nonlocal ns
        reqs.append([len(reqs), kind, method, nbytes, CLIENT, port, ns, ns + int(app_us * 1000),
                     "%.1f" % app_us, status, ns - 1000, error])
        ns += 10 ** 8

    def data(port, put, pkts, fct, jitter):
        nonlocal t
        if put:
            flows.append(flow(CLIENT, port, SERVER, SPORT, pkts, t, fct, jitter))
            flows.append(flow(SERVER, SPORT, CLIENT, port, 3, t, 1.0, 0.0))
        else:
            flows.append(flow(SERVER, SPORT, CLIENT, port, pkts, t, fct, jitter))
            flows.append(flow(CLIENT, port, SERVER, SPORT, 3, t, 1.0, 0.0))
        t += 100000.0

    for i in range(1, 11):
        port = 40000 + i
        if i == 1:	# earlier flow of the same client port to another server port
            flows.append(flow(SERVER, 9999, CLIENT, port, 2, t - 50.0, 7.0, 0.0))
        net = k * 1000.0 * i
        req("listing", "GET", 7240, port, net + 100.0)
        data(port, False, 9, net, k * 10.0 * i)
    long_fct = 110000.0 if mode == "split" else 100000.0
    req("video", "GET", 2896000, 40010, long_fct + 1000.0)	# reuses port 40010
    data(40010, False, 2000, long_fct, 50.0)
    req("upload", "PUT", 2896000, 40020, long_fct + 1000.0, status=204)
    data(40020, True, 2000, long_fct, 50.0)
    req("websearch", "GET", 144800, 40030, 5000.0)
    data(40030, False, 100, 4000.0, 5.0)
    req("listing", "GET", 7240, 40040, 9e6, status=0, error="connect")
    data(40040, False, 9, 9e9, 9e3)
    req("listing", "GET", 7240, 40050, 300.0)	# no flow: unmatched
    with open(os.path.join(d, "flowgen.csv"), "w") as f:
        f.write("id,kind,method,bytes,local_addr,local_port,start_ns,end_ns,fct_us,status,"
                "sched_ns,error\n")
        for r in reqs:
            f.write(",".join(map(str, r)) + "\n")
    with open(os.path.join(d, "tap", "flows.csv"), "w") as f:
        f.write(",".join(COLS) + "\n")
        for fl in flows:
            f.write(",".join(str(fl[c]) for c in COLS) + "\n")
    tun = {"split": (500, 9000), "ecmp": (4750, 4750)}[mode]
    with open(os.path.join(d, "tunnels-start.json"), "w") as f:
        json.dump({"tunnels": [{"name": "vxs", "tx_packets": 100},
                               {"name": "vxl", "tx_packets": 100}]}, f)
    with open(os.path.join(d, "tunnels.json"), "w") as f:
        json.dump({"mode": mode, "tunnels": [{"name": "vxs", "tx_packets": 100 + tun[0]},
                                             {"name": "vxl", "tx_packets": 100 + tun[1]}]}, f)


def main():
    if len(sys.argv) != 2:
        print("usage: mkfixture.py OUTDIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "experiment.json"), "w") as f:
        json.dump({"experiment": "fixture", "varied": "threshold", "reps": 3}, f)
    for threshold, ks in K_ECMP.items():
        for seed, k in enumerate(ks, 1):
            run(out, "split", threshold, seed, 1.0)
            run(out, "ecmp", threshold, seed, k)
    return 0


if __name__ == "__main__":
    sys.exit(main())
