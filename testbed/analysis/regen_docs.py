#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Regenerate the tables and plots of docs/results/ (and the README's
headline table) from docs/results/data/.

    /usr/bin/python3 testbed/analysis/regen_docs.py [--check] [--root DIR]

Each table in a results page sits between two markers,

    <!-- table NAME: data/NAME.csv -->
    | ... |
    <!-- /table -->

(in README.md: docs/results/data/NAME.csv)
and is the CSV docs/results/data/NAME.csv, one row per table row, the
header row the table's header. The CSV holds each cell as published (the
figures are copied, never recomputed: the per-run data of most runs was not
kept); markdown emphasis is not data, so a column listed in TABLES below is
stored without it and bolded here. The plots (PLOTS) are drawn from the
same CSVs with matplotlib.

--check: write nothing; exit 1 naming every table whose page differs from
its data (the docs and the data cannot drift), or whose marker or CSV is
missing. --root: the repository to work on (default: this one).
Exit: 0 done (or no drift), 1 drift or a missing file, 2 usage error.
"""
import argparse
import csv
import os
import re
import sys

# Per table: "bold": columns bolded in every row (and in the header too
# with "bold_header"); "bold_if": (column,
# value, bolded column): bolded where the row's column has that value.
TABLES = {
    'demo-headline': {},
    'demo-apps': {},
    'demo-deployed': {},
    'apps-model': {},
    'apps-sweep': {'bold': ['speedup ECMP/split'], 'bold_header': True},
    'persistent': {'bold': ['split / no bulk: run-time; p99']},
    'persistent-rtt0': {},
    'persistent-redis': {},
    'reorder': {},
    'datapath-cost': {},
    'filehosting-demo': {},
    'filehosting-sweeps-rtt0': {},
    'rtt': {},
    'asym-filehosting': {},
    'filehosting-sweeps-rtt20': {},
    'failover': {},
    'failover-ping': {},
    'failover-phases': {},
    'failover-runs': {},
    'spill-50mbit': {'bold_if': ('mode', 'spill', 'mode')},
    'spill-lease': {},
    'spill-wrk': {'bold_if': ('mode', 'spill', 'mode')},
    'spill-flowgen': {'bold_if': ('mode', 'spill', 'mode')},
    'spill-flowgen-link': {'bold_if': ('mode', 'spill', 'mode')},
    'spill-pgbench': {'bold_if': ('mode', 'spill', 'mode')},
    'spill-frame': {'bold_if': ('mode', 'spill', 'mode')},
    'flood': {},
    'forwarding': {},
    'loss': {},
    'roles': {},
    'roles-jitter': {},
    'ha': {},
}

MARK = re.compile(r'^( *)<!-- table ([a-z0-9-]+): (?:docs/results/)?data/\2\.csv -->$')
END = '<!-- /table -->'


def split_row(line):
    """The cells of a markdown table row (no cell holds a '|')."""
    return [c.strip() for c in line.strip().strip('|').split('|')]


def _bare(cell):
    return cell[2:-2] if cell.startswith('**') and cell.endswith('**') and len(cell) > 4 else cell


def unbold_header(spec, header):
    return [_bare(h) for h in header]


def unbold(spec, header, cells):
    """A published row as stored: emphasis off the columns spec bolds."""
    names = unbold_header(spec, header)
    out = list(cells)
    for i, n in enumerate(names):
        if n in spec.get('bold', []) or (spec.get('bold_if') and n == spec['bold_if'][2]):
            out[i] = _bare(out[i])
    return out


def _row(cells):
    return '|' + '|'.join(' %s ' % c if c else ' ' for c in cells) + '|'


def render_table(name, path):
    """The markdown lines of table NAME from its CSV at PATH."""
    spec = TABLES[name]
    with open(path, newline='') as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    bold = set(spec.get('bold', []))
    hb = bold if spec.get('bold_header') else set()
    out = [_row(['**%s**' % h if h in hb else h for h in header]),
           '|' + '|'.join('---' for _ in header) + '|']
    for r in body:
        if len(r) != len(header):
            raise ValueError('%s: a row of %d cells under %d columns' % (path, len(r), len(header)))
        cells = list(r)
        for i, h in enumerate(header):
            if h in bold and cells[i]:
                cells[i] = '**%s**' % cells[i]
        if spec.get('bold_if'):
            col, val, tgt = spec['bold_if']
            if r[header.index(col)] == val:
                j = header.index(tgt)
                cells[j] = '**%s**' % cells[j]
        out.append(_row(cells))
    return out


def regen_page(page, data_dir, seen):
    """(new text, names of its tables) of the results page at PAGE."""
    with open(page) as f:
        lines = f.read().split('\n')
    out, i = [], 0
    while i < len(lines):
        m = MARK.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        indent, name = m.group(1), m.group(2)
        if name not in TABLES:
            raise ValueError('%s: table %s is not in regen_docs.TABLES' % (page, name))
        seen.append(name)
        while i < len(lines) and lines[i].strip() != END:
            i += 1
        if i == len(lines):
            raise ValueError('%s: table %s has no %s' % (page, name, END))
        out.extend(indent + t for t in render_table(name, os.path.join(data_dir, name + '.csv')))
    return '\n'.join(out)


def _num(cell):
    """The first number of a cell ("1.72 ± 0.02×" -> 1.72), None if none."""
    m = re.search(r'-?\d+(?:\.\d+)?', cell.replace('**', ''))
    return float(m.group(0)) if m else None


def _ci(cell):
    m = re.search(r'± *(\d+(?:\.\d+)?)', cell)
    return float(m.group(1)) if m else 0.0


def _read(data_dir, name):
    with open(os.path.join(data_dir, name + '.csv'), newline='') as f:
        return list(csv.DictReader(f))


def _against_rtt(ax, ylabel, title, legend_size):
    """Label a ratio-against-the-RTT plot, 1 (no gain) marked."""
    ax.axhline(1, color='grey', lw=0.8)
    ax.set_xlabel('RTT (ms)')
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=legend_size)


def _save(fig, out):
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def plot_apps(data_dir, out):
    """Speedup ECMP/split against the RTT, equal tunnels, per bulk."""
    import matplotlib.pyplot as plt
    rows = [r for r in _read(data_dir, 'apps-sweep') if '/' not in r['RTT (tunnels)']]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for bulk in sorted({r['bulk per direction'] for r in rows}):
        sel = [r for r in rows if r['bulk per direction'] == bulk]
        x = [_num(r['RTT (tunnels)']) for r in sel]
        for col, lab, ls in (('speedup ECMP/split', 'split, defaults', '-'),
                             ("paper's rule: speedup", "paper's rule", ':')):
            ax.errorbar(x, [_num(r[col]) for r in sel], yerr=[_ci(r[col]) for r in sel],
                        ls=ls, marker='o', capsize=3, label='%s, %s' % (lab, bulk))
    ax.set_yscale('log')
    _against_rtt(ax, 'run-time speedup ECMP / split',
                 'wrk, 400 GETs over 4 keep-alive connections, under bulk', 7)
    _save(fig, out)


def plot_spill(data_dir, out):
    """Bulk's share of both tunnels per mode, beside wrk and flowgen."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    modes = ['ECMP', 'spill', 'split, spill off']
    for ax, table, what in ((axes[0], 'spill-wrk', 'wrk'), (axes[1], 'spill-flowgen', 'flowgen')):
        rows = _read(data_dir, table)
        cells = [(r['RTT'], r['bulk demand']) for r in rows if r['mode'] == 'ECMP']
        for k, mode in enumerate(modes):
            sel = {(r['RTT'], r['bulk demand']): r for r in rows if r['mode'] == mode}
            ax.bar([i + 0.27 * (k - 1) for i in range(len(cells))],
                   [_num(sel[c]['of both tunnels']) for c in cells], width=0.27, label=mode)
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels(['%s\n%s' % (c[0], c[1].replace(' (unpaced)', '')) for c in cells],
                           fontsize=7)
        ax.set_ylim(0, 1)
        ax.set_ylabel("bulk's share of both tunnels")
        ax.set_title('beside %s (20 Mbit/s tunnels)' % what, fontsize=9)
    axes[0].legend(fontsize=7)
    _save(fig, out)


def plot_rtt(data_dir, out):
    """The file-hosting mix: short-flow FCT speedup against the RTT."""
    import matplotlib.pyplot as plt
    rows = [r for r in _read(data_dir, 'rtt') if _num(r['RTT']) is not None]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    x = [_num(r['RTT']) for r in rows]
    for col in ('mean speedup', 'p99 speedup'):
        ax.errorbar(x, [_num(r[col]) for r in rows], yerr=[_ci(r[col]) for r in rows],
                    marker='o', capsize=3, label=col)
    _against_rtt(ax, 'short-flow FCT, ECMP / split',
                 'file-hosting mix, 40 % background, T = 20', 8)
    _save(fig, out)


def plot_ha(data_dir, out):
    """An HA pair's takeover and fail-back: the bulk's throughput (as its
    receiver saw it, 0.5 s means) and the job's requests, per run, against
    the time from the kill of the active router."""
    import matplotlib.pyplot as plt
    rows = _read(data_dir, 'ha-timeline')
    runs = sorted({r['run'] for r in rows})
    fig, (top, bot) = plt.subplots(2, 1, figsize=(8, 5.6), sharex=True)
    for k, run in enumerate(runs):
        c = 'C%d' % k
        bulk = [(float(r['t_from_kill_s']), float(r['value'])) for r in rows
                if r['run'] == run and r['series'] == 'bulk_mbit']
        # 0.5 s means of the 0.1 s intervals
        xs, ys = [], []
        for i in range(0, len(bulk) - 4, 5):
            xs.append(bulk[i][0] + 0.25)
            ys.append(sum(v for _, v in bulk[i:i + 5]) / 5)
        top.plot(xs, ys, color=c, lw=1, label=run)
        req = [(float(r['t_from_kill_s']), float(r['value'])) for r in rows
               if r['run'] == run and r['series'] == 'request_ms']
        bot.scatter([t for t, _ in req], [d for _, d in req], s=4, color=c)
        for r in rows:
            if r['run'] == run and r['series'] == 'failback_start':
                for ax in (top, bot):
                    ax.axvline(float(r['t_from_kill_s']), color=c, ls=':', lw=0.8)
    for ax in (top, bot):
        ax.axvline(0, color='k', lw=1)
    top.set_ylabel('bulk (Mbit/s, 0.5 s means)')
    top.set_title('kill of the active router at 0 (dotted: the old one\'s keepalived '
                  'starts; it takes the site back 2 s later)', fontsize=9)
    top.legend(fontsize=7, ncol=len(runs))
    bot.set_yscale('log')
    bot.set_ylabel('request duration (ms)')
    bot.set_xlabel('time from the kill (s)')
    bot.set_xlim(-5, 18)
    _save(fig, out)


# plot file (under docs/results/img/) -> its function
PLOTS = {'apps.png': plot_apps, 'spill.png': plot_spill, 'rtt.png': plot_rtt,
         'ha-timeline.png': plot_ha}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--check', action='store_true', help='write nothing; exit 1 on drift')
    ap.add_argument('--root', default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   '..', '..'))
    a = ap.parse_args()
    res = os.path.join(a.root, 'docs', 'results')
    data = os.path.join(res, 'data')
    seen, drift = [], []
    try:
        pages = [os.path.join('docs', 'results', p) for p in sorted(os.listdir(res))
                 if p.endswith('.md')] + ['README.md']
        for page in pages:
            path = os.path.join(a.root, page)
            new = regen_page(path, data, seen)
            with open(path) as f:
                old = f.read()
            if new != old:
                drift.append(page)
                if not a.check:
                    with open(path, 'w') as f:
                        f.write(new)
    except (OSError, ValueError) as e:
        print('regen_docs: %s' % e, file=sys.stderr)
        return 1
    missing = sorted(set(TABLES) - set(seen))
    for name in missing:
        print('regen_docs: table %s is on no page (docs/results/*.md, README.md)' % name,
              file=sys.stderr)
    if a.check:
        for page in drift:
            print('regen_docs: %s differs from its data (run make results-docs)' % page,
                  file=sys.stderr)
        return 1 if drift or missing else 0
    for name, fn in PLOTS.items():
        fn(data, os.path.join(res, 'img', name))
    for page in drift:
        print('regenerated %s' % page)
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
