// SPDX-License-Identifier: GPL-2.0
/*
 * metrics.c - the splitter's counters, config and table fill in the
 * Prometheus text exposition format (checked with `promtool check metrics`).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "bpfutil.h"
#include "health_agent.h"
#include "ha.h"
#include "ops.h"
#include "tunnel_cfg.h"

/* A Prometheus label value: \\, " and newline escaped (exposition format).
 * Writes at most len bytes including the NUL; returns out. */
static char *sc_prom_label_escape(const char *in, char *out, size_t len)
{
	size_t o = 0;

	/* the exposition format escapes exactly these three in label values */
	for (; *in && o + 3 <= len; in++) {
		if (*in == '\\' || *in == '"') {
			out[o++] = '\\';
			out[o++] = *in;
		} else if (*in == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = *in;
		}
	}
	if (len)
		out[o < len ? o : len - 1] = '\0';
	return out;
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	char num[32];

	fprintf(f, "# HELP flowsplit_%s %s\n# TYPE flowsplit_%s gauge\nflowsplit_%s %s\n",
		name, help, name, name, fs_prom_double(v, num, sizeof(num)));
}

static void counter(FILE *f, const char *name, const char *help, __u64 v)
{
	fprintf(f,
		"# HELP flowsplit_%s_total %s\n# TYPE flowsplit_%s_total counter\n"
		"flowsplit_%s_total %llu\n",
		name, help, name, name, (unsigned long long)v);
}

/* A counter by class, as labels: one series to sum or compare. */
static void class_counter(FILE *f, const char *name, const char *help, __u64 s, __u64 l)
{
	fprintf(f,
		"# HELP flowsplit_%s_total %s\n# TYPE flowsplit_%s_total counter\n"
		"flowsplit_%s_total{class=\"short\"} %llu\n"
		"flowsplit_%s_total{class=\"long\"} %llu\n",
		name, help, name, name, (unsigned long long)s, name, (unsigned long long)l);
}

static void write_config(FILE *f, const struct split_config *cfg)
{
	gauge(f, "threshold_packets", "packets per flow marked short", cfg->threshold);
	gauge(f, "idle_timeout_seconds", "silence after which a flow is forgotten",
	      cfg->idle_timeout_ms / 1000.0);
	gauge(f, "dscp_short", "DSCP code point of short flows", cfg->dscp_short);
	gauge(f, "dscp_long", "DSCP code point of long flows", cfg->dscp_long);
	gauge(f, "enabled", "1 when the splitter classifies and marks",
	      cfg->flags & FS_CFG_F_ENABLED ? 1 : 0);
	gauge(f, "ack_short", "1 when pure ACKs of long flows keep the short mark",
	      cfg->flags & FS_CFG_F_ACK_SHORT ? 1 : 0);
	gauge(f, "midstream_long", "1 when a flow first seen without a SYN starts long",
	      cfg->flags & FS_CFG_F_MIDSTREAM_LONG ? 1 : 0);
	gauge(f, "threshold_bytes", "TCP payload bytes per flow marked short (0: none)",
	      cfg->threshold_bytes);
	gauge(f, "reshort_boundary",
	      "1 when a long flow counts as short again at a message boundary",
	      cfg->flags & FS_CFG_F_RESHORT_BOUNDARY ? 1 : 0);
	gauge(f, "reshort_gap_seconds", "silence after which a flow counts as short again (0: off)",
	      cfg->reshort_gap_ms / 1000.0);
	gauge(f, "rules", "policy rules (IPv4 and IPv6)", cfg->rules4 + cfg->rules6);
	gauge(f, "spill",
	      "1 when long flows may spill onto the SHORT tunnel (spill yes; the agent grants)",
	      cfg->flags & FS_CFG_F_SPILL ? 1 : 0);
	gauge(f, "dscp_spill", "DSCP code point of spilled long flows", cfg->dscp_spill);
}

/* One series per interface name: a removed interface has none (its name
 * is gone, and two of them would repeat a label set), it is counted in
 * flowsplit_interfaces_removed until "detach --gone". */
static void write_ifaces(FILE *f, const struct sc_iface *ifs, int n)
{
	char name[4 * IF_NAMESIZE];
	int i, removed = 0;

	fprintf(f, "# HELP flowsplit_attached Interfaces running the splitter.\n# TYPE "
		   "flowsplit_attached gauge\n");
	for (i = 0; i < n; i++)
		if (sc_iface_removed(&ifs[i]))
			removed++;
		else
			fprintf(f,
				"flowsplit_attached{interface=\"%s\",hook=\"%s\",mode=\"%s\"} 1\n",
				sc_prom_label_escape(ifs[i].name, name, sizeof(name)),
				sc_hook_name(ifs[i].hook), ifs[i].mode);
	gauge(f, "interfaces_removed",
	      "interfaces the splitter was attached to that were removed (splitctl detach --gone "
	      "forgets them)",
	      removed);
	/* without its observer an interface's flows never see a message
	 * boundary (reshort boundary is off for them, silently) */
	fprintf(f, "# HELP flowsplit_observer_attached 1 when the interface's observer (TC egress) "
		   "records the ACKs that reshort boundary needs.\n# TYPE "
		   "flowsplit_observer_attached gauge\n");
	for (i = 0; i < n; i++)
		if (!sc_iface_removed(&ifs[i]))
			fprintf(f, "flowsplit_observer_attached{interface=\"%s\"} %d\n",
				sc_prom_label_escape(ifs[i].name, name, sizeof(name)),
				ifs[i].observer ? 1 : 0);
}

/* The packet and byte counters of the classes. */
static void write_classes(FILE *f, const __u64 *v)
{
	class_counter(f, "class_packets", "TCP packets marked, by class.", v[FS_STAT_PKTS_SHORT],
		      v[FS_STAT_PKTS_LONG]);
	class_counter(f, "class_bytes", "Bytes of the TCP packets marked, by class.",
		      v[FS_STAT_BYTES_SHORT], v[FS_STAT_BYTES_LONG]);
}

/* Interface counters of the SHORT and LONG tunnels of route up (none
 * without a route up in this namespace). */
static void write_tunnel_traffic(FILE *f)
{
	static const char *const role[2] = { "short", "long" };
	static const struct { const char *name, *help; size_t off; } series[] = {
		{ "tunnel_transmit_packets_total", "Packets sent into the tunnel.",
		  offsetof(struct tcfg_tunnel_traffic, tx_packets) },
		{ "tunnel_transmit_bytes_total", "Bytes sent into the tunnel.",
		  offsetof(struct tcfg_tunnel_traffic, tx_bytes) },
		{ "tunnel_receive_packets_total", "Packets received from the tunnel.",
		  offsetof(struct tcfg_tunnel_traffic, rx_packets) },
		{ "tunnel_receive_bytes_total", "Bytes received from the tunnel.",
		  offsetof(struct tcfg_tunnel_traffic, rx_bytes) },
	};
	struct tcfg_tunnel_traffic t[2];
	char dev[4 * IF_NAMESIZE];
	size_t s;
	int i;

	if (tcfg_tunnel_traffic(t))
		return;
	for (s = 0; s < sizeof(series) / sizeof(series[0]); s++) {
		fprintf(f, "# HELP flowsplit_%s %s\n# TYPE flowsplit_%s counter\n",
			series[s].name, series[s].help, series[s].name);
		for (i = 0; i < 2; i++)
			if (t[i].dev[0])
				fprintf(f, "flowsplit_%s{tunnel=\"%s\",dev=\"%s\"} %llu\n",
					series[s].name, role[i],
					sc_prom_label_escape(t[i].dev, dev, sizeof(dev)),
					*(unsigned long long *)((char *)&t[i] + series[s].off));
	}
}

/* The LONG shaper of route up --long-rate, per class (none without it). */
static void write_long_shaper(FILE *f)
{
	static const char *const cls[TCFG_LONGQ_CLASSES] = { "short", "bulk" };
	static const struct { const char *name, *type, *help; } series[] = {
		{ "long_shaper_sent_bytes_total", "counter",
		  "Bytes the LONG shaper's class sent." },
		{ "long_shaper_sent_packets_total", "counter",
		  "Packets the LONG shaper's class sent." },
		{ "long_shaper_drops_total", "counter",
		  "Packets the LONG shaper's class dropped (its queue full)." },
		{ "long_shaper_backlog_bytes", "gauge",
		  "Bytes queued in the LONG shaper's class." },
	};
	struct tcfg_longq_state st;
	char dev[IF_NAMESIZE], esc[4 * IF_NAMESIZE];
	unsigned long long v[TCFG_LONGQ_CLASSES][4];
	size_t s;
	int k;

	if (!tcfg_longq_recorded(dev, &st))
		return;
	sc_prom_label_escape(dev, esc, sizeof(esc));
	for (k = 0; k < TCFG_LONGQ_CLASSES; k++) {
		v[k][0] = st.cls[k].bytes;
		v[k][1] = st.cls[k].packets;
		v[k][2] = st.cls[k].drops;
		v[k][3] = st.cls[k].backlog;
	}
	for (s = 0; s < sizeof(series) / sizeof(series[0]); s++) {
		fprintf(f, "# HELP flowsplit_%s %s\n# TYPE flowsplit_%s %s\n", series[s].name,
			series[s].help, series[s].name, series[s].type);
		for (k = 0; k < TCFG_LONGQ_CLASSES; k++)
			fprintf(f, "flowsplit_%s{class=\"%s\",dev=\"%s\"} %llu\n", series[s].name,
				cls[k], esc, v[k][s]);
	}
}

/* The datapath's side of fs_spill (the agent's gauges are its own). */
static void write_spill(FILE *f, const struct sc_state *st)
{
	struct fs_spill a, d;

	if (sc_spill_read(st, &a, &d))
		return;
	fprintf(f,
		"# HELP flowsplit_spill_moved_total Spill grants taken by a flow whose previous "
		"packet was long (moved from LONG behind a hold).\n"
		"# TYPE flowsplit_spill_moved_total counter\nflowsplit_spill_moved_total %llu\n",
		(unsigned long long)d.moved);
	fprintf(f,
		"# HELP flowsplit_spill_generation The agent's spill generation in force (0: none, "
		"nothing spills).\n"
		"# TYPE flowsplit_spill_generation gauge\nflowsplit_spill_generation %u\n",
		a.gen);
}

/*
 * A counter's metric name (flowsplit_NAME_total): the stat's name
 * (bpf/flowsplit.h, also the JSON key of "stats"), except where that
 * would put the unit first or read as a unit; NULL for the per-class
 * counters, which flowsplit_class_{packets,bytes}_total{class} carry (one
 * series per value). docs/operations.md lists the renames.
 */
static const char *prom_stat_name(enum fs_stat id)
{
	switch (id) {
	case FS_STAT_PKTS_SHORT:
	case FS_STAT_BYTES_SHORT:
	case FS_STAT_PKTS_LONG:
	case FS_STAT_BYTES_LONG:
		return NULL;
	case FS_STAT_PKTS_SPILL:
		return "spill_packets";
	case FS_STAT_BYTES_SPILL:
		return "spill_bytes";
	case FS_STAT_PROMOTED_PKTS:
		return "flows_promoted_by_packets";
	case FS_STAT_PROMOTED_BYTES:
		return "flows_promoted_by_bytes";
	default:
		return fs_stat_name(id);
	}
}

int sc_metrics_write(FILE *f, const struct sc_state *st)
{
	struct sc_iface ifs[SC_MAX_IFACES];
	__u64 v[FS_STAT_MAX], n4, n6;
	struct split_config cfg;
	int i, n, err;

	if ((err = sc_stats_read(st, v)) || (err = sc_config_read(st, &cfg)) ||
	    (err = fs_map__count(st->flows4_fd, &n4)) ||
	    (err = fs_map__count(st->flows6_fd, &n6)))
		return err;
	n = sc_ifaces_list(st->dir, ifs, SC_MAX_IFACES);
	if (n < 0)
		return n;
	for (i = 0; i < FS_STAT_MAX; i++) {
		const char *name = prom_stat_name(i);

		if (name)
			counter(f, name, fs_stat_help(i), v[i]);
	}
	write_config(f, &cfg);
	fprintf(f,
		"# HELP flowsplit_flows Flows in the flow table.\n# TYPE flowsplit_flows gauge\n");
	fprintf(f, "flowsplit_flows{family=\"ipv4\"} %llu\n", (unsigned long long)n4);
	fprintf(f, "flowsplit_flows{family=\"ipv6\"} %llu\n", (unsigned long long)n6);
	fprintf(f, "# HELP flowsplit_flows_capacity Flow table size.\n# TYPE "
		   "flowsplit_flows_capacity gauge\n");
	fprintf(f, "flowsplit_flows_capacity{family=\"ipv4\"} %u\n",
		fs_map__capacity(st->flows4_fd));
	fprintf(f, "flowsplit_flows_capacity{family=\"ipv6\"} %u\n",
		fs_map__capacity(st->flows6_fd));
	write_ifaces(f, ifs, n);
	write_classes(f, v);
	write_spill(f, st);
	write_tunnel_traffic(f);
	write_long_shaper(f);
	sc_ha_metrics_write(f);
	return ferror(f) ? -EIO : 0;
}

static void tunnel_series(FILE *f, const struct health_metrics *m, const char *name,
			  const char *help, const double v[2])
{
	static const char *const tunnel[2] = { "short", "long" };
	char dev[4 * IF_NAMESIZE], num[32];
	int t;

	fprintf(f, "# HELP flowsplit_%s %s\n# TYPE flowsplit_%s gauge\n", name, help, name);
	for (t = 0; t < 2; t++)
		fprintf(f, "flowsplit_%s{tunnel=\"%s\",dev=\"%s\"} %s\n", name, tunnel[t],
			sc_prom_label_escape(m->dev[t], dev, sizeof(dev)),
			fs_prom_double(v[t], num, sizeof(num)));
}

static void write_roles(FILE *f, const struct health_metrics *m);

void sc_metrics_write_health(FILE *f, const struct health_metrics *m)
{
	const double up[2] = { m->up[0], m->up[1] };

	fprintf(f, "# HELP flowsplit_failovers_total Route changes after a tunnel went down.\n"
		   "# TYPE flowsplit_failovers_total counter\nflowsplit_failovers_total %llu\n",
		(unsigned long long)m->failovers);
	if (!m->probing)
		return;
	tunnel_series(f, m, "tunnel_up", "1 when the tunnel answers its probes.", up);
	tunnel_series(f, m, "tunnel_probe_rtt_seconds", "Probe round-trip time (EWMA).", m->rtt_s);
	tunnel_series(f, m, "tunnel_probe_timeout_seconds",
		      "Timeout of a probe sent now (adaptive: from the probe RTT).", m->timeout_s);
	tunnel_series(f, m, "tunnel_probe_loss_ratio", "Lost probes over the loss window.",
		      m->loss);
	fprintf(f,
		"# HELP flowsplit_class_failed_over 1 while the class's traffic is routed off its "
		"own tunnel (failover; ecmp: off either member).\n"
		"# TYPE flowsplit_class_failed_over gauge\n"
		"flowsplit_class_failed_over{class=\"short\"} %d\n"
		"flowsplit_class_failed_over{class=\"long\"} %d\n",
		m->failed_over[0], m->failed_over[1]);
	write_roles(f, m);
}

/* Path quality per tunnel and the roles (health/roles.h): base units. */
static void write_roles(FILE *f, const struct health_metrics *m)
{
	int c;

	tunnel_series(f, m, "tunnel_base_rtt_seconds",
		      "Path minimum RTT of the probes measured while not busy with our traffic.",
		      m->base_rtt_s);
	tunnel_series(f, m, "tunnel_queueing_delay_seconds",
		      "Least RTT of the last 4 probes above the base RTT.", m->queue_s);
	tunnel_series(f, m, "tunnel_jitter_seconds", "Probe RTT jitter (RFC 3550).", m->jitter_s);
	tunnel_series(f, m, "tunnel_short_loss_ratio",
		      "Lost probes over the last 20 (what the roles count).", m->short_loss);
	tunnel_series(f, m, "tunnel_expected_delay_seconds",
		      "A short request's expected delay: base + queueing + loss x (200 ms + RTT).",
		      m->expected_s);
	fprintf(f,
		"# HELP flowsplit_roles_swapped 1 while the short class rides the configured LONG "
		"tunnel.\n"
		"# TYPE flowsplit_roles_swapped gauge\nflowsplit_roles_swapped %d\n",
		m->swapped);
	fprintf(f, "# HELP flowsplit_role_moves_total Moves of the short class between the "
		   "tunnels, by cause.\n"
		   "# TYPE flowsplit_role_moves_total counter\n");
	for (c = ROLES_CAUSE_BASE; c < ROLES_CAUSES; c++)
		fprintf(f, "flowsplit_role_moves_total{cause=\"%s\"} %llu\n", roles_cause_name(c),
			(unsigned long long)m->role_moves[c]);
}

/* Spill (health/spill_agent.h): its rate, SHORT's estimated capacity, its
 * back-offs (those on a queue not SHORT's own too) and holds, and each tunnel's queueing delay
 * while it runs. */
void sc_metrics_write_spill(FILE *f, const struct spill_view *v)
{
	static const char *const tunnel[2] = { "short", "long" };
	char dev[4 * IF_NAMESIZE], num[32];
	int t;

	fprintf(f, "# HELP flowsplit_spill_active 1 while the agent runs spill on the tunnels.\n"
		   "# TYPE flowsplit_spill_active gauge\nflowsplit_spill_active %d\n", v->active);
	/* the generation: the datapath's side (write_spill), from fs_spill */
	/* bytes per second: Prometheus' base unit (promtool refuses bits) */
	fprintf(f,
		"# HELP flowsplit_spill_rate_bytes_per_second The spill class's rate (0: held or "
		"off).\n"
		"# TYPE flowsplit_spill_rate_bytes_per_second "
		"gauge\nflowsplit_spill_rate_bytes_per_second %s\n",
		fs_prom_double(v->active && v->state != SPILL_OFF ? v->rate_bps / 8.0 : 0, num,
			       sizeof(num)));
	fprintf(f,
		"# HELP flowsplit_spill_capacity_bytes_per_second SHORT's capacity as spill last "
		"estimated it (0: none yet).\n"
		"# TYPE flowsplit_spill_capacity_bytes_per_second "
		"gauge\nflowsplit_spill_capacity_bytes_per_second %s\n",
		fs_prom_double(v->active ? v->cap_bps / 8.0 : 0, num, sizeof(num)));
	fprintf(f,
		"# HELP flowsplit_spill_top_bytes_per_second Short and spilled traffic together at "
		"most, on the router (the HTB's top; the configured or line rate while nothing "
		"spills).\n"
		"# TYPE flowsplit_spill_top_bytes_per_second "
		"gauge\nflowsplit_spill_top_bytes_per_second %s\n",
		fs_prom_double(v->active ? v->top_bps / 8.0 : 0, num, sizeof(num)));
	fprintf(f,
		"# HELP flowsplit_spill_backoffs_total Spill rate back-offs on SHORT's queueing "
		"delay.\n"
		"# TYPE flowsplit_spill_backoffs_total counter\nflowsplit_spill_backoffs_total "
		"%llu\n",
		(unsigned long long)v->backoffs);
	fprintf(f,
		"# HELP flowsplit_spill_backoffs_foreign_total Of those, back-offs on a queue "
		"SHORT's device did not build (path jitter or cross traffic: the rate cut, the top "
		"kept).\n"
		"# TYPE flowsplit_spill_backoffs_foreign_total "
		"counter\nflowsplit_spill_backoffs_foreign_total %llu\n",
		(unsigned long long)v->backoffs_foreign);
	fprintf(f, "# HELP flowsplit_spill_holds_total Holds of the spill class before a grant.\n"
		   "# TYPE flowsplit_spill_holds_total counter\nflowsplit_spill_holds_total %llu\n",
		(unsigned long long)v->holds);
	if (!v->active)
		return;
	fprintf(f, "# HELP flowsplit_tunnel_queue_delay_seconds Queueing delay towards the far "
		   "end: the recent minimum above the path's minimum.\n"
		   "# TYPE flowsplit_tunnel_queue_delay_seconds gauge\n");
	for (t = 0; t < 2; t++)
		if (v->qd_valid[t])
			fprintf(f,
				"flowsplit_tunnel_queue_delay_seconds{tunnel=\"%s\",dev=\"%s\"} "
				"%s\n",
				tunnel[t], sc_prom_label_escape(v->dev[t], dev, sizeof(dev)),
				fs_prom_double(v->qd_ns[t] / 1e9, num, sizeof(num)));
}

void sc_metrics_write_dup(FILE *f, const char *dir, const struct dup_view *v)
{
	__u64 sum[FS_DUP_STAT_MAX];
	bool attached = !sc_dup_counters(dir, sum);
	int i;

	gauge(f, "dup_attached",
	      "1 while the short class's copy and dedup are attached (dup attach).", attached);
	gauge(f, "dup_copy",
	      "1 while the short class is copied onto LONG (the agent's view; 0 without an agent).",
	      v->running && v->copy);
	fprintf(f,
		"# HELP flowsplit_dup_copy_changes_total Copy switched on or off by the agent "
		"([dup] copy).\n"
		"# TYPE flowsplit_dup_copy_changes_total counter\nflowsplit_dup_copy_changes_total "
		"%llu\n",
		(unsigned long long)v->changes);
	if (!attached)
		return;
	for (i = 0; i < FS_DUP_STAT_MAX; i++)
		counter(f, fs_dup_stat_descs[i].name, fs_dup_stat_descs[i].help, sum[i]);
}
