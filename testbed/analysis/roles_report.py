#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""roles_report.py - the roles evidence (docs/results/roles.md) from runs of
run-experiment apps: one CSV row per run, or one per condition and mode.

    roles_report.py runs LABEL=DIR [LABEL=DIR...] > roles-runs.csv
    roles_report.py summary LABEL=DIR [LABEL=DIR...] > roles.csv
    roles_report.py timeline RUN_DIR OUT.png

LABEL names the call that made DIR (e.g. brownout, clean, jitter). Per
run: the condition (LABEL and the tunnels' one-way delays SHORT/LONG),
the mode, bulk, the job's run-time and percentiles, the role moves the
agents logged ("health: roles: " lines of agent-ra.log and agent-rb.log:
one per move), when rA's first move came after the job's start
(meta.json job_at_epoch_s against the log line's time), the cross traffic
and impairments, and the CPU flag. The summary: per condition and mode
the median run-time and p99 over the runs, and the moves summed.
timeline: one run's brownout as rA's agent saw it (its -v log): each
spill probe's one-way delay above the path's minimum per tunnel, over
the time from the job's start, the job's span (the cross traffic's, with
--cross-short) shaded, and each role move marked.
"""
import csv
import datetime
import os
import re
import statistics
import sys

from common import load_json as load, run_dirs

MOVE = re.compile(r'^(\S+Z) splitctl: run: health: roles: (.*)$')
PROBE = re.compile(r'^(\S+Z) splitctl: run: spill: probe on (\S+): one-way delay ([0-9.]+) ms')


def epoch(ts):
    t = datetime.datetime.strptime(ts, '%Y-%m-%dT%H:%M:%S.%fZ')
    return t.replace(tzinfo=datetime.timezone.utc).timestamp()


def moves(path):
    """[(epoch s, text)] of the agent log's role moves."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            m = MOVE.match(line.rstrip('\n'))
            if m:
                out.append((epoch(m.group(1)), m.group(2)))
    return out


def runs(args):
    for label, run, d, meta, app in run_dirs(args):
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


def requests(run):
    """flowgen's requests: (s from the job's start, completion ms). flowgen
    starts with the job; its clock is monotonic, so the first request's
    scheduled time stands for the job's start (its first arrival comes
    within a few tens of ms of it)."""
    path = os.path.join(run, 'flowgen.csv')
    if not os.path.exists(path):
        return []
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r['fct_us']]
    if not rows:
        return []
    t0 = min(int(r['sched_ns']) for r in rows)
    return [((int(r['sched_ns']) - t0) / 1e9, float(r['fct_us']) / 1e3) for r in rows]


def phases(meta):
    """The schedule's phases (testbed up --impair ...:at=S:for=S), in s
    from the job's start (the schedule starts with the bulk warm-up), one
    per --impair spec: (from, to, spec)."""
    out, seen = [], set()
    for imp in meta.get('impairments') or []:
        if imp.get('at_s') is None or imp['spec'] in seen:
            continue
        seen.add(imp['spec'])
        a = imp['at_s'] - meta.get('bulk_warmup_s', 0)
        out.append((a, a + (imp.get('for_s') or meta['job_s']), imp['spec']))
    return out


def timeline(run, png):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    meta = load(os.path.join(run, 'meta.json'))
    t0 = float(meta['job_at_epoch_s'])
    series = {}
    with open(os.path.join(run, 'agent-ra.log')) as f:
        for line in f:
            m = PROBE.match(line)
            if m:
                series.setdefault(m.group(2), []).append((epoch(m.group(1)) - t0,
                                                          float(m.group(3))))
    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.axvspan(0, meta['job_s'], color='0.9',
               label='job%s' % (' and cross traffic on SHORT (%d Mbit/s each way)' %
                                meta['cross_short_mbit'] if meta.get('cross_short_mbit') else ''))
    for ph in phases(meta):
        ax.axvspan(ph[0], ph[1], color='tab:red', alpha=0.12, label=ph[2])
    reqs = requests(run)
    if reqs:
        xs, ys = zip(*reqs)
        ax.plot(xs, ys, '.', ms=2, color='0.45', label='request completion time (flowgen)')
    for dev in sorted(series):
        xs, ys = zip(*series[dev])
        ax.plot(xs, ys, '.', ms=3, label='%s one-way delay above its minimum' % dev)
    top = 250	# ms: the 100 ms FIFO's queue shows; a stall's seconds are clipped
    ax.set_ylim(-5, top)
    ax.set_xlim(-3, meta['job_s'] + 5)
    shown = [(t, text) for t, text in moves(os.path.join(run, 'agent-ra.log'))
             if -3 <= t - t0 <= meta['job_s'] + 5]
    for i, (t, text) in enumerate(shown):
        ax.axvline(t - t0, color='k', ls='--', lw=0.8, label='role move' if i == 0 else None)
        ax.text(t - t0, top * 0.95, ' ' + text.split(' (')[0], fontsize=7, va='top',
                rotation=90)
    ax.set_xlabel('s from the job\'s start (rA\'s agent)')
    ax.set_ylabel('ms (clipped at %d)' % top)
    ax.set_title('%s, %s: roles auto (the default) under %s of SHORT' %
                 (meta['app'], meta['delays'] + ' ms one-way',
                  'a brownout' if meta.get('cross_short_mbit') else 'an impairment'), fontsize=9)
    ax.legend(fontsize=7, loc='center right')
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == 'timeline':
        timeline(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) < 3 or sys.argv[1] not in ('runs', 'summary'):
        sys.stderr.write('usage: roles_report.py runs|summary LABEL=DIR... | timeline RUN OUT.png\n')
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
