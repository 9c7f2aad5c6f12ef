#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""roles_report.py - the roles evidence (docs/results/roles.md) from runs of
run-experiment apps: one CSV row per run, or one per condition and mode.

    roles_report.py runs LABEL=DIR [LABEL=DIR...] > roles-runs.csv
    roles_report.py summary LABEL=DIR [LABEL=DIR...] > roles.csv

LABEL names the call that made DIR (e.g. brownout, clean, jitter). Per
run: the condition (LABEL and the tunnels' one-way delays SHORT/LONG),
the mode, bulk, the job's run-time and percentiles, the role moves the
agents logged ("health: roles: " lines of agent-ra.log and agent-rb.log:
one per move), when rA's first move came after the job's start
(meta.json job_at_epoch_s against the log line's time), the cross traffic
and impairments, and the CPU flag. The summary: per condition and mode
the median run-time and p99 over the runs, and the moves summed.
"""
import csv
import datetime
import json
import os
import re
import statistics
import sys

MOVE = re.compile(r'^(\S+Z) splitctl: run: health: roles: (.*)$')


def load(path):
    with open(path) as f:
        return json.load(f)


def moves(path):
    """[(epoch s, text)] of the agent log's role moves."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            m = MOVE.match(line.rstrip('\n'))
            if m:
                t = datetime.datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%S.%fZ')
                t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
                out.append((t, m.group(2)))
    return out


def runs(args):
    for arg in args:
        label, top = arg.split('=', 1)
        for run in sorted(os.listdir(top)):
            d = os.path.join(top, run)
            if not os.path.exists(os.path.join(d, 'meta.json')):
                continue
            meta, app = load(os.path.join(d, 'meta.json')), load(os.path.join(d, 'app.json'))
            ma, mb = moves(os.path.join(d, 'agent-ra.log')), moves(os.path.join(d, 'agent-rb.log'))
            first = ''
            if ma and meta.get('job_at_epoch_s'):
                first = '%.2f' % (ma[0][0] - float(meta['job_at_epoch_s']))
            imp = ';'.join('%s:%s' % (i.get('path', ''), i.get('dir', ''))
                           for i in meta.get('impairments') or [])
            yield {
                'condition': label, 'tunnels': meta['delays'], 'mode': meta['mode'],
                'bulk': meta['bulk_demand'], 'cross_mbit': meta.get('cross_short_mbit', 0),
                'impaired': imp, 'runtime_s': app['runtime_s'], 'p50_ms': app['p50_ms'],
                'p99_ms': app['p99_ms'], 'max_ms': app['max_ms'], 'moves_ra': len(ma),
                'moves_rb': len(mb), 'first_move_s': first,
                'job_s': meta['job_s'], 'cpu_busy_max_pct': meta['cpu_busy_max_pct'],
                'cpu_flagged': str(meta['cpu_flagged']).lower(), 'run': run,
            }


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ('runs', 'summary'):
        sys.stderr.write('usage: roles_report.py runs|summary LABEL=DIR...\n')
        sys.exit(2)
    w = csv.writer(sys.stdout, lineterminator='\n')
    rows = list(runs(sys.argv[2:]))
    if sys.argv[1] == 'runs':
        cols = ['condition', 'tunnels', 'mode', 'bulk', 'cross_mbit', 'runtime_s', 'p50_ms',
                'p99_ms', 'max_ms', 'moves_ra', 'moves_rb', 'first_move_s', 'cpu_busy_max_pct',
                'cpu_flagged', 'run']
        w.writerow(cols)
        for r in rows:
            w.writerow(['%.2f' % r[c] if c == 'runtime_s' else r[c] for c in cols])
        return
    w.writerow(['condition', 'tunnels', 'mode', 'runs', 'run-time s (median)',
                'p99 ms (median)', 'role moves (rA + rB, all runs)'])
    keys = []
    for r in rows:
        k = (r['condition'], r['tunnels'], r['mode'])
        if k not in keys:
            keys.append(k)
    for k in keys:
        sel = [r for r in rows if (r['condition'], r['tunnels'], r['mode']) == k]
        w.writerow([k[0], k[1], k[2], len(sel),
                    '%.2f' % statistics.median(r['runtime_s'] for r in sel),
                    '%.1f' % statistics.median(r['p99_ms'] for r in sel),
                    sum(r['moves_ra'] + r['moves_rb'] for r in sel)])


if __name__ == '__main__':
    main()
