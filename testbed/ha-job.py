#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ha-job.py - a persistent-connection job for the HA pair (docs/ha.md).

  ha-job.py --server ADDR --duration S [--interval-ms MS] [--bytes N] --out FILE

One HTTP/1.1 keep-alive connection to nginx; a GET of the first N bytes of
/data (a Range request) every MS ms, each waiting for the previous one, for S
seconds. FILE gets one JSON object: requests, errors (each a failed request:
a reset, a timeout of 10 s, a short read), reconnects, the longest request
(s) and when it started (CLOCK_REALTIME, s), and every request's start and
duration. A request lost in a takeover shows as a long one (TCP retransmits
it), not as an error: an error means the connection did not survive.
Exit 0 when it ran (whatever the errors), 2 on bad arguments.
"""
import argparse
import http.client
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--interval-ms", type=float, default=20)
    ap.add_argument("--bytes", type=int, default=1000)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.duration <= 0 or a.interval_ms <= 0 or a.bytes < 1:
        print("ha-job.py: --duration, --interval-ms and --bytes must be > 0", file=sys.stderr)
        sys.exit(2)
    hdr = {"Range": "bytes=0-%d" % (a.bytes - 1)}
    conn = http.client.HTTPConnection(a.server, 80, timeout=10)
    reqs, errors, reconnects = [], [], 0
    end = time.monotonic() + a.duration
    while time.monotonic() < end:
        t_wall, t0 = time.time(), time.monotonic()
        try:
            conn.request("GET", "/data", headers=hdr)
            r = conn.getresponse()
            body = r.read()
            if len(body) != a.bytes:
                raise IOError("short body: %d of %d bytes" % (len(body), a.bytes))
        except Exception as e:  # any failure counts, then a new connection
            errors.append({"t": t_wall, "error": repr(e)})
            conn.close()
            conn = http.client.HTTPConnection(a.server, 80, timeout=10)
            reconnects += 1
            continue
        d = time.monotonic() - t0
        reqs.append([round(t_wall, 6), round(d, 6)])
        time.sleep(max(0.0, a.interval_ms / 1000 - d))
    longest = max(reqs, key=lambda x: x[1]) if reqs else [0, 0]
    with open(a.out, "w") as f:
        json.dump({"requests": len(reqs), "errors": len(errors), "error_list": errors,
                   "reconnects": reconnects, "longest_s": longest[1],
                   "longest_at": longest[0], "log": reqs}, f)


if __name__ == "__main__":
    main()
