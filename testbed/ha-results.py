#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ha-results.py - the per-run figures of "testbed/ha failover" runs as the
CSV files of docs/results/ha.md.

  ha-results.py --table FILE --timeline FILE RUN_DIR...

Each RUN_DIR is one "ha failover --out DIR" (its summary.json, job.json,
bulk.json, bulk-server.json). --table gets one row per run (the cells as
published), and --timeline the series of the timeline plot: per run, the
bulk's throughput as its receiver saw it per 0.1 s (iperf3's server
report) and every request of the job, against the time from the kill (s). Exit 0, 1 when a run directory is incomplete, 2 on
bad arguments.

Definitions (docs/results/ha.md): the takeover is from the kill to the
moment the restarted router's keepalived starts (the fail-back's start);
"run-time added" is the sum over the requests started in the 1 s before
and the 3 s after the kill of (duration - the run's median duration): what
the takeover added to the job's run-time.
"""
import argparse
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'analysis'))
from common import load_json, read_json  # noqa: E402

TABLE = ['run', 'requests before the kill: median, longest (ms)',
         'traffic again after the kill (ms)', 'longest request, takeover (ms)',
         'run-time added by the takeover (ms)', 'resets / failed requests',
         'bulk Mbit/s: 1 s before, 1 s after the kill',
         'bulk sent short after the takeover', 'bulk spilled onto SHORT (the agent\'s grant)',
         'requests short after the takeover', 'fail-back: longest gap (ms)',
         'longest request, fail-back (ms)', 'bulk sent short after the fail-back',
         'bulk spilled onto SHORT, fail-back']


def mb(b):
    return '%.1f MB' % (b / 1e6)


def share(part, total):
    return '%d B of %s (%.2f %%)' % (part, mb(total), 100.0 * part / total) if total else '–'


def load(d):
    s, job, bulk = (load_json(os.path.join(d, n)) for n in ('summary.json', 'job.json', 'bulk.json'))
    # the receiver's intervals where the run has them (its start: the
    # client's, the same connection)
    srv = read_json(os.path.join(d, 'bulk-server.json'), {})
    if 'intervals' in srv:
        bulk['intervals'] = srv['intervals']
    return s, job, bulk


def row(name, s, job, bulk):
    t0, kill = s['t0'], s['t0'] + s['fail_at_s']
    back = s['t0'] + s['keepalived_at_s'] if s.get('keepalived_at_s') else float('inf')
    log = job['log']
    med = statistics.median(d for _, d in log)
    pre = [d for t, d in log if t < kill - 1]
    take = [d for t, d in log if kill - 1 <= t < back]
    fb = [d for t, d in log if t >= back]
    added = sum(d - med for t, d in log if kill - 1 <= t < kill + 3)
    iv = [(t0 + i['sum']['start'], i['sum']['bits_per_second'] / 1e6) for i in bulk['intervals']]
    before = [m for t, m in iv if kill - 1 <= t < kill]
    after = [m for t, m in iv if kill <= t < kill + 1]
    r2 = s['ra2']
    r1 = s.get('ra1_after_back') or {}
    tot2 = r2['bulk_short'] + r2.get('bulk_spill', 0) + r2['bulk_long']
    tot1 = r1.get('bulk_short', 0) + r1.get('bulk_spill', 0) + r1.get('bulk_long', 0)
    # the short class (DSCP short: after a takeover, the midstream
    # threshold) and spilled bulk (DSCP spill), counted apart
    if 'bulk_spill' not in r2:
        raise ValueError('no bulk_spill counter: a run of before the counters told it apart')
    jobs = r2['job_short'] + r2['job_long']
    resets = job['errors'] + job['reconnects'] + (1 if bulk.get('error') else 0)
    return [name, '%d, %d' % (round(statistics.median(pre) * 1000), round(max(pre) * 1000)),
            '%d' % round(s['flows_again_s'] * 1000), '%d' % round(max(take) * 1000),
            '%d' % round(added * 1000), '%d' % resets,
            '%.1f, %.1f' % (statistics.mean(before), statistics.mean(after))
            if before and after else '–',
            share(r2['bulk_short'], tot2), share(r2['bulk_spill'], tot2),
            '%.1f %%' % (100.0 * r2['job_short'] / jobs) if jobs else '–',
            '%d' % round(s['failback_gap_s'] * 1000) if s.get('failback_gap_s') is not None
            else '–',
            '%d' % round(max(fb) * 1000) if fb else '–',
            share(r1.get('bulk_short', 0), tot1) if r1 else '–',
            share(r1.get('bulk_spill', 0), tot1) if r1 else '–']


def timeline(name, s, job, bulk):
    t0, kill = s['t0'], s['t0'] + s['fail_at_s']
    out = []
    for i in bulk['intervals']:
        out.append([name, 'bulk_mbit', '%.3f' % (t0 + i['sum']['start'] - kill),
                    '%.1f' % (i['sum']['bits_per_second'] / 1e6)])
    for t, d in job['log']:
        out.append([name, 'request_ms', '%.3f' % (t - kill), '%.1f' % (d * 1000)])
    if s.get('keepalived_at_s'):
        out.append([name, 'failback_start', '%.3f' % (s['keepalived_at_s'] - s['fail_at_s']), ''])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--table', required=True)
    ap.add_argument('--timeline', required=True)
    ap.add_argument('runs', nargs='+')
    a = ap.parse_args()
    rows, tl = [], []
    for i, d in enumerate(a.runs, 1):
        name = 'links %d' % i
        try:
            s, job, bulk = load(d)
            rows.append(row(name, s, job, bulk))
        except (OSError, ValueError, KeyError) as e:
            print('ha-results.py: %s: %s' % (d, e), file=sys.stderr)
            return 1
        tl.extend(timeline(name, s, job, bulk))
    with open(a.table, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(TABLE)
        w.writerows(rows)
    with open(a.timeline, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(['run', 'series', 't_from_kill_s', 'value'])
        w.writerows(tl)
    return 0


if __name__ == '__main__':
    sys.exit(main())
