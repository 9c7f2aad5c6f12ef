// SPDX-License-Identifier: GPL-2.0
/*
 * fct-tap - DPDK timestamping tap: reads capture point A (leaving the source
 * border router) and B (arriving at the destination border router), matches
 * every packet A<->B and writes per-flow FCT, delay, jitter and loss.
 *
 *   fct-tap <EAL args> -- --port-a N --port-b N --out DIR [options]
 *
 * Timestamps (chosen per run, printed at start and stored in summary.json):
 *   pcap  net_pcap rx_pcap= ports: the file's record time, which net_pcap
 *         22.11 stores in the rx timestamp dynamic mbuf field in microseconds
 *         (tv_sec * US_PER_S + tv_usec), so offline results
 *         are exact and reproducible;
 *   kernel net_pcap rx_iface= ports: the same field, filled from libpcap's
 *         header, i.e. the kernel's capture time (CLOCK_REALTIME, us) taken
 *         when the packet reached the interface: independent of when
 *         fct-tap polls, so immune to the idle back-off and to preemption;
 *   hw    both ports offer RTE_ETH_RX_OFFLOAD_TIMESTAMP and rte_eth_read_clock:
 *         the NIC clock, converted to ns with a frequency measured at start;
 *   tsc   otherwise: the TSC read right after rte_eth_rx_burst, in ns.
 *
 * End of input: net_pcap reads the file synchronously inside rx_burst, so
 * an rx_pcap port returning an empty burst while its rx_nombuf counter did
 * not move is at end of file (it returns 0 forever from then on). The run
 * ends when both ports are at EOF, or on SIGINT/SIGTERM.
 *
 * Idle back-off (af_packet and other software ports): after --idle-polls
 * empty polls of both ports, sleep --idle-sleep-us. It trades CPU for
 * timestamp error on the first packet after a pause (see README, noise floor).
 * With TSC stamps a packet is also late by any time the tap is preempted:
 * on a live path run it on an lcore of its own with --rt-priority (SCHED_FIFO
 * for the poll loop); README "Accuracy" has the measured FCT errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pcap/pcap.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "flowsplit.h"
#include "json_print.h"
#include "params.h"
#include "tap.h"
#include "util.h"

#define BURST		32
#define NB_MBUF		8191
#define MBUF_CACHE	256
#define NB_RXD		1024
#define HW_CAL_MS	100	/* NIC clock frequency measurement */
#define TAP_DRAIN_MS	200	/* see poll_loop() */

enum ts_source { TS_PCAP, TS_KERNEL, TS_HW, TS_TSC };
static const char *const ts_names[] = { "pcap", "kernel", "hw", "tsc" };

/* the command line after the EAL's part (tap_options below) */
struct tap_opts {
	__u32 given;			/* params.h: first member */
	uint32_t port_a, port_b;	/* UINT32_MAX: not given */
	const char *out;
	uint64_t idle_ns, loss_ns;	/* flow idle and loss timeouts */
	uint32_t flows, inflight, owd_samples, summary_flows;
	uint32_t dscp_long, vxlan_port, idle_polls;
	uint64_t idle_sleep_ns;		/* UINT64_MAX: default for the ports */
	bool busy_poll;			/* idle_sleep_ns = 0 */
	uint32_t rt_prio;		/* 0: normal scheduling */
	int timestamp;			/* enum ts_choice */
};

struct port {
	uint16_t id;
	enum port_role role;
	bool pcap_file;		/* net_pcap with rx_pcap=: EOF detectable */
	bool eof;
	bool live_sw;		/* software port on a live interface */
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[64];
	uint64_t rx_capa;	/* rx offload capabilities */
	struct rte_mbuf *buf[BURST];
	uint16_t n, i;
	/* TSC source: time of this burst, and how late it may be for its
	 * packets: they arrived after drained_ns, the last poll that left the
	 * ring empty (returned less than a full burst) */
	int64_t burst_ts, burst_err, drained_ns;
	uint64_t nombuf;
	/* hw: ns = (clock - clk0) * 1e9 / hz + ns0 */
	uint64_t clk0, hz;
	int64_t ns0;
};

/* one run of the tap */
struct tap {
	struct tap_opts o;
	struct port ports[2];
	enum ts_source src;
	struct parse_cfg pcfg;
	struct tracker *tr;
	struct out_file csv, jsonl;
	uint64_t unparsed[PARSE__MAX];
	int64_t t_start, t_end, t_first;	/* CLOCK_MONOTONIC ns */
	const char *end;			/* "eof" or "stop" */
};

static char no_shconf[] = "--no-shconf";
static int ts_off = -1;
static uint64_t ts_flag;
static uint64_t tsc_hz, tsc0;

static int64_t tsc_ns(void)
{
	return (int64_t)((__uint128_t)(rte_rdtsc() - tsc0) * 1000000000u / tsc_hz);
}

static int64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- options ---------------------------------------------------------- */

enum ts_choice { TS_AUTO, TS_FORCE_TSC };
static const struct sc_enum ts_choices[] = {
	{ "auto", TS_AUTO }, { "tsc", TS_FORCE_TSC }, { NULL, 0 },
};

#define TAP_OPT(name, type, member, ...) \
	SC_OPTION(name, type, struct tap_opts, member, __VA_ARGS__)
static const struct sc_option tap_options[] = {
	TAP_OPT("port-a", SC_OPT_UINT, port_a, .metavar = "N", .lo = 0,
		.hi = RTE_MAX_ETHPORTS - 1,
		.help = "DPDK port id of capture point A (leaving the source router)"),
	TAP_OPT("port-b", SC_OPT_UINT, port_b, .metavar = "N", .lo = 0,
		.hi = RTE_MAX_ETHPORTS - 1,
		.help = "DPDK port id of capture point B (arriving at the destination router)"),
	TAP_OPT("out", SC_OPT_PATH, out, .metavar = "DIR", .noun = "path",
		.help = "output directory (created): flows.csv flows.jsonl summary.* hist_*.csv"),
	TAP_OPT("idle-timeout-ms", SC_OPT_DURATION, idle_ns, .metavar = "M",
		.unit = SC_UNIT_MS, .lo = 1, .hi = TAP_MAX_TIMEOUT_MS,
		.help = "end a flow after M ms without packets (>= the loss timeout)"),
	TAP_OPT("loss-timeout-ms", SC_OPT_DURATION, loss_ns, .metavar = "M",
		.unit = SC_UNIT_MS, .lo = 1, .hi = TAP_MAX_TIMEOUT_MS,
		.help = "a packet at A not seen at B within M ms is lost"),
	TAP_OPT("flows", SC_OPT_UINT, flows, .metavar = "N", .lo = TAP_MIN_TABLE,
		.hi = TAP_MAX_TABLE, .help = "flow table size"),
	TAP_OPT("inflight", SC_OPT_UINT, inflight, .metavar = "N", .lo = TAP_MIN_TABLE,
		.hi = TAP_MAX_TABLE, .help = "in-flight packet table size"),
	TAP_OPT("owd-samples", SC_OPT_UINT, owd_samples, .metavar = "N", .lo = 0,
		.hi = UINT32_MAX, .help = "delay samples kept for percentiles, all flows"),
	TAP_OPT("summary-flows", SC_OPT_UINT, summary_flows, .metavar = "N", .lo = 0,
		.hi = UINT32_MAX, .help = "flows kept for the summary percentiles"),
	TAP_OPT("dscp-long", SC_OPT_DSCP, dscp_long, .metavar = "V", .noun = "DSCP",
		.help = "inner DSCP of the long class"),
	TAP_OPT("vxlan-port", SC_OPT_UINT, vxlan_port, .metavar = "P", .lo = 1,
		.hi = 65535, .help = "UDP port parsed as VXLAN"),
	TAP_OPT("timestamp", SC_OPT_ENUM, timestamp, .metavar = "auto|tsc",
		.values = ts_choices,
		.help = "timestamp source: auto (pcap, else kernel, else hw, else tsc) or tsc"),
	TAP_OPT("idle-polls", SC_OPT_UINT, idle_polls, .metavar = "N", .lo = 1,
		.hi = UINT32_MAX, .help = "empty polls before the idle back-off"),
	TAP_OPT("idle-sleep-us", SC_OPT_DURATION, idle_sleep_ns, .metavar = "U",
		.unit = SC_UNIT_US, .lo = 0, .hi = 1000000,
		.help = "back-off sleep; 0 = busy poll (default on live ports: "
			"20 with TSC stamps, 200 with kernel stamps; 0 on pcap files and NICs)"),
	TAP_OPT("busy-poll", SC_OPT_FLAG, busy_poll, .help = "same as --idle-sleep-us 0"),
	TAP_OPT("rt-priority", SC_OPT_UINT, rt_prio, .metavar = "N", .lo = 1, .hi = 99,
		.help = "poll at SCHED_FIFO priority N (default: normal scheduling); with "
			"TSC stamps on live ports a preempted tap stamps late: give it a "
			"core of its own (EAL -l) too"),
	SC_OPTIONS_END,
};
_Static_assert(TAP_DEF_IDLE_SLEEP_US == 20 && TAP_DEF_IDLE_SLEEP_KERNEL_US == 200,
	       "the --idle-sleep-us help states the defaults");

static const struct tap_opts tap_defaults = {
	.port_a = UINT32_MAX, .port_b = UINT32_MAX,
	.idle_ns = TAP_DEF_IDLE_MS * 1000000ULL, .loss_ns = TAP_DEF_LOSS_MS * 1000000ULL,
	.flows = TAP_DEF_FLOWS, .inflight = TAP_DEF_INFLIGHT,
	.owd_samples = TAP_DEF_OWD_SAMPLES, .summary_flows = TAP_DEF_SUMMARY_FLOWS,
	.dscp_long = FS_DEFAULT_DSCP_LONG, .vxlan_port = TAP_VXLAN_PORT,
	.idle_polls = TAP_DEF_IDLE_POLLS, .idle_sleep_ns = UINT64_MAX,
};

static void usage(FILE *o)
{
	sc_usage(o, "<EAL args> -- --port-a N --port-b N --out DIR [options]",
		 tap_options, &tap_defaults,
		 "EAL for veth taps: --no-huge -m 256 --no-pci --in-memory -l 0 "
		 "--vdev=net_af_packet0,iface=X --vdev=net_af_packet1,iface=Y\n"
		 "EAL for pcaps:     --no-huge -m 256 --no-pci --in-memory -l 0 "
		 "--vdev=net_pcap0,rx_pcap=a.pcap --vdev=net_pcap1,rx_pcap=b.pcap\n");
}

/* fct-tap's own options (after the EAL's). 0 to run, 1 for --help, or
 * FS_EXIT_USAGE (printed). */
static int opts_parse(int argc, char **argv, struct tap_opts *o)
{
	int rc;

	*o = tap_defaults;
	rc = sc_options_parse(tap_options, NULL, argc, argv, o, false, NULL);
	if (!rc && o->busy_poll)
		o->idle_sleep_ns = 0;
	return rc;
}

/* what the options ask of the ports: FS_EXIT_OK or the exit code (printed) */
static int opts_check(const struct tap_opts *o)
{
	uint16_t navail = rte_eth_dev_count_avail();

	if (navail == 0) {
		pr_err("no DPDK ports: give two with --vdev= (net_af_packet, "
		       "net_pcap, ...) or bind NICs to DPDK");
	} else if (o->port_a == UINT32_MAX || o->port_b == UINT32_MAX || !o->out) {
		pr_err("--port-a, --port-b and --out are required");
	} else if (o->port_a == o->port_b) {
		pr_err("--port-a and --port-b are both %u: A and B must be two "
		       "different ports", o->port_a);
	} else if (!rte_eth_dev_is_valid_port((uint16_t)o->port_a) ||
		   !rte_eth_dev_is_valid_port((uint16_t)o->port_b)) {
		pr_err("port %u does not exist: %u ports available (0..%u)",
		       rte_eth_dev_is_valid_port((uint16_t)o->port_a) ? o->port_b :
		       o->port_a, navail, navail - 1);
	} else if (o->idle_ns < o->loss_ns) {
		pr_err("--idle-timeout-ms %g is below --loss-timeout-ms %g: accepted "
		       "idle >= loss timeout", o->idle_ns / 1e6, o->loss_ns / 1e6);
	} else {
		return FS_EXIT_OK;
	}
	return FS_EXIT_USAGE;
}

/* ---- EAL set-up ------------------------------------------------------- */

/* The --vdev argument at argv[*i] (either "--vdev X" or "--vdev=X"), *i
 * moved past it; NULL when argv[*i] is something else. */
static const char *vdev_arg(int argc, char **argv, int *i)
{
	if (!strcmp(argv[*i], "--vdev") && *i + 1 < argc)
		return argv[++*i];
	if (!strncmp(argv[*i], "--vdev=", 7))
		return argv[*i] + 7;
	return NULL;
}

/* One rx_pcap= file, read with libpcap as net_pcap will: FS_EXIT_OK, or
 * the exit code with the file and the problem named. */
static int pcap_check(const char *file)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	FILE *f = in_file_open(file);
	pcap_t *p;
	int dlt;

	if (!f) {
		pr_err("cannot read pcap file '%s': %s", file, strerror(errno));
		return FS_EXIT_RUNTIME;
	}
	p = pcap_fopen_offline(f, errbuf);	/* owns f from here */
	if (!p) {
		fclose(f);
		pr_err("'%s' is not a pcap file: %s", file, errbuf);
		return FS_EXIT_RUNTIME;
	}
	dlt = pcap_datalink(p);
	pcap_close(p);
	if (dlt == DLT_EN10MB)
		return FS_EXIT_OK;
	pr_err("'%s' has link type %s (%s): accepted EN10MB (Ethernet) only", file,
	       pcap_datalink_val_to_name(dlt) ? pcap_datalink_val_to_name(dlt) : "?",
	       pcap_datalink_val_to_description(dlt) ?
	       pcap_datalink_val_to_description(dlt) : "unknown");
	return FS_EXIT_USAGE;
}

/* Check the rx_pcap= file of each net_pcap --vdev before EAL init so a bad
 * file is reported by name (the PMD's own error is generic, or none: a
 * port just does not appear). */
static int pcap_args_check(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = vdev_arg(argc, argv, &i), *p;

		for (p = a ? strstr(a, "rx_pcap=") : NULL; p; p = strstr(p + 1, "rx_pcap=")) {
			char file[4096];
			size_t n = strcspn(p + 8, ",");
			int rc;

			if (n >= sizeof(file))
				n = sizeof(file) - 1;
			memcpy(file, p + 8, n);
			file[n] = 0;
			rc = pcap_check(file);
			if (rc)
				return rc;
		}
	}
	return FS_EXIT_OK;
}

static bool vdev_is_rx_pcap(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = vdev_arg(argc, argv, &i);

		if (a && !strncmp(a, name, n) && a[n] == ',' && strstr(a, "rx_pcap="))
			return true;
	}
	return false;
}

/* rte_eal_init; the number of arguments it used, or -1 (printed) */
static int eal_start(int argc, char **argv)
{
	bool nohuge = false;
	int n;

	/* DPDK 22.11 refuses --in-memory with --no-huge (which implies legacy
	 * memory), and the usual veth/pcap EAL line has both. --no-shconf
	 * gives what --in-memory is there for: no shared files, so several
	 * taps can run at once. */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		nohuge |= !strcmp(argv[i], "--no-huge");
	for (int i = 1; i < argc && strcmp(argv[i], "--") && nohuge; i++)
		if (!strcmp(argv[i], "--in-memory"))
			argv[i] = no_shconf;
	n = rte_eal_init(argc, argv);
	if (n < 0)
		pr_err("EAL initialisation failed: %s (check the EAL arguments, "
		       "e.g. an unknown PMD in --vdev; see --help)",
		       rte_strerror(rte_errno));
	return n;
}

/* on the calling thread only: the EAL main lcore, i.e. the poll loop (the
 * EAL's control threads keep normal scheduling) */
static int set_rt_priority(uint32_t prio)
{
	struct sched_param sp = { .sched_priority = (int)prio };

	if (!sched_setscheduler(0, SCHED_FIFO, &sp))
		return 0;
	pr_err("--rt-priority %u: SCHED_FIFO refused: %s (needs root or "
	       "CAP_SYS_NICE, or RLIMIT_RTPRIO >= %u)", prio, strerror(errno), prio);
	return -1;
}

static int mkdir_p(const char *dir)
{
	char tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

/* ---- ports and timestamps --------------------------------------------- */

/* name, driver and capabilities of port p (before choosing the stamps) */
static void port_probe(struct port *p, int argc, char **argv)
{
	struct rte_eth_dev_info info;

	rte_eth_dev_get_name_by_port(p->id, p->name);
	p->pcap_file = vdev_is_rx_pcap(argc, argv, p->name);
	memset(&info, 0, sizeof(info));
	rte_eth_dev_info_get(p->id, &info);
	p->rx_capa = info.rx_offload_capa;
	snprintf(p->driver, sizeof(p->driver), "%s",
		 info.driver_name ? info.driver_name : "?");
	p->live_sw = !strcmp(p->driver, "net_af_packet") ||
		     !strcmp(p->driver, "net_af_xdp") ||
		     (!strcmp(p->driver, "net_pcap") && !p->pcap_file);
}

static int port_setup(struct port *p, struct rte_mempool *mp, bool want_ts)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	if (want_ts)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
	rc = rte_eth_dev_configure(p->id, 1, 1, &conf);
	if (!rc)
		rc = rte_eth_rx_queue_setup(p->id, 0, NB_RXD,
					    rte_eth_dev_socket_id(p->id), NULL, mp);
	if (!rc)
		rc = rte_eth_tx_queue_setup(p->id, 0, NB_RXD,
					    rte_eth_dev_socket_id(p->id), NULL);
	p->drained_ns = tsc_ns();	/* nothing in its ring before the start */
	if (!rc)
		rc = rte_eth_dev_start(p->id);
	if (rc) {
		pr_err("port %u (%s): cannot start: %s", p->id, p->name,
		       strerror(rc < 0 ? -rc : rc));
		return -1;
	}
	rte_eth_promiscuous_enable(p->id);	/* not all PMDs can: ignore */
	return 0;
}

/* NIC clock -> ns: measure the clock frequency against CLOCK_MONOTONIC and
 * anchor it to the TSC time base so A and B share one base */
static int hw_calibrate(struct port *p)
{
	uint64_t c0, c1, m0, m1;

	if (rte_eth_read_clock(p->id, &c0))
		return -1;
	m0 = mono_ns();
	rte_delay_ms(HW_CAL_MS);
	if (rte_eth_read_clock(p->id, &c1))
		return -1;
	m1 = mono_ns();
	if (c1 <= c0 || m1 <= m0)
		return -1;
	p->hz = (uint64_t)((__uint128_t)(c1 - c0) * 1000000000u / (m1 - m0));
	p->clk0 = c1;
	p->ns0 = tsc_ns();
	return p->hz ? 0 : -1;
}

/* The timestamp source for what the ports can do (the list in the header
 * comment, in that order of preference). */
static enum ts_source ts_choose(const struct tap *t)
{
	const struct port *a = &t->ports[0], *b = &t->ports[1];

	if (ts_off < 0 || t->o.timestamp == TS_FORCE_TSC)
		return TS_TSC;
	if (a->pcap_file != b->pcap_file)
		return TS_TSC;	/* one pcap and one live port share no clock */
	if (a->pcap_file)
		return TS_PCAP;
	if (!strcmp(a->driver, "net_pcap") && !strcmp(b->driver, "net_pcap"))
		return TS_KERNEL;	/* rx_iface=: libpcap's kernel capture time */
	if (a->rx_capa & b->rx_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP)
		return TS_HW;
	return TS_TSC;
}

/* mbuf pool, ports, timestamp source, back-off: 0 or -1 (printed) */
static int ports_start(struct tap *t, int argc, char **argv)
{
	struct rte_mempool *mp;

	tsc_hz = rte_get_tsc_hz();
	tsc0 = rte_rdtsc();
	t->ports[0].id = (uint16_t)t->o.port_a;
	t->ports[1].id = (uint16_t)t->o.port_b;
	t->ports[1].role = ROLE_B;
	mp = rte_pktmbuf_pool_create("fct_tap_pool", NB_MBUF, MBUF_CACHE, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (!mp) {
		pr_err("cannot create the mbuf pool: %s (raise EAL -m)",
		       rte_strerror(rte_errno));
		return -1;
	}
	if (rte_mbuf_dyn_rx_timestamp_register(&ts_off, &ts_flag))
		ts_off = -1;
	port_probe(&t->ports[0], argc, argv);
	port_probe(&t->ports[1], argc, argv);
	t->src = ts_choose(t);
	if (port_setup(&t->ports[0], mp, t->src == TS_HW) ||
	    port_setup(&t->ports[1], mp, t->src == TS_HW))
		return -1;
	if (t->src == TS_HW && (hw_calibrate(&t->ports[0]) || hw_calibrate(&t->ports[1]))) {
		pr_warn("NIC clock unreadable (rte_eth_read_clock): using the TSC");
		t->src = TS_TSC;
	}
	/* back-off default: TSC stamps are late by the sleep, so keep it
	 * short; kernel stamps do not depend on when we poll, so sleep
	 * longer (the kernel ring only has to hold that long) */
	if (t->o.idle_sleep_ns == UINT64_MAX)
		t->o.idle_sleep_ns = !(t->ports[0].live_sw || t->ports[1].live_sw) ? 0 :
			1000ULL * (t->src == TS_KERNEL ? TAP_DEF_IDLE_SLEEP_KERNEL_US :
				   TAP_DEF_IDLE_SLEEP_US);
	/* the default 50 us timer slack would more than triple a 20 us
	 * back-off sleep, and with it the stamp error after a pause */
	if (t->o.idle_sleep_ns)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	return 0;
}

static double ts_resolution_ns(const struct tap *t)
{
	switch (t->src) {
	case TS_PCAP:
	case TS_KERNEL:
		return 1000.0;
	case TS_HW:
		return 1e9 / (double)t->ports[0].hz;
	default:
		return 1e9 / (double)tsc_hz;
	}
}

static void print_start(const struct tap *t)
{
	const struct port *a = &t->ports[0], *b = &t->ports[1];

	printf("fct-tap: A = port %u (%s, %s), B = port %u (%s, %s)\n", a->id,
	       a->name, a->driver, b->id, b->name, b->driver);
	printf("fct-tap: timestamp source %s, resolution %.3f ns%s; idle back-off "
	       "%u us after %u empty polls\n", ts_names[t->src], ts_resolution_ns(t),
	       t->src == TS_TSC ? " (one TSC read per rx burst)" : "",
	       (unsigned int)(t->o.idle_sleep_ns / 1000), t->o.idle_polls);
	if (t->o.rt_prio)
		printf("fct-tap: polling on lcore %u at SCHED_FIFO priority %u\n",
		       rte_lcore_id(), t->o.rt_prio);
	else
		printf("fct-tap: polling on lcore %u, normal scheduling\n",
		       rte_lcore_id());
	fflush(stdout);
}

/* flows.csv, flows.jsonl and the tracker writing them: 0 or -1 (printed) */
static int tracker_start(struct tap *t)
{
	struct track_cfg tcfg = {
		.max_flows = t->o.flows,
		.max_inflight = t->o.inflight,
		.loss_timeout_ns = (int64_t)t->o.loss_ns,
		.idle_timeout_ns = (int64_t)t->o.idle_ns,
		.owd_samples = t->o.owd_samples,
		.summary_flows = t->o.summary_flows,
		.dscp_long = (uint8_t)t->o.dscp_long,
	};

	t->pcfg.vxlan_port = (uint16_t)t->o.vxlan_port;
	if (tap_out_open(&t->csv, t->o.out, "flows.csv"))
		return -1;
	if (tap_out_open(&t->jsonl, t->o.out, "flows.jsonl")) {
		out_file_abort(&t->csv);
		return -1;
	}
	t->tr = tracker_new(&tcfg, t->csv.f, t->jsonl.f);
	if (!t->tr) {
		pr_err("out of memory for %u flows / %u in-flight entries (lower "
		       "--flows/--inflight)", t->o.flows, t->o.inflight);
		out_file_abort(&t->csv);
		out_file_abort(&t->jsonl);
		return -1;
	}
	return 0;
}

/* ---- poll loop -------------------------------------------------------- */

/* the stamp of m (ns) and how late it may be (*err, ns) */
static int64_t pkt_ts(const struct port *p, enum ts_source src,
		      struct rte_mbuf *m, int64_t *err)
{
	uint64_t v;

	*err = 0;
	if (src == TS_TSC || !(m->ol_flags & ts_flag)) {
		*err = p->burst_err;
		return p->burst_ts;
	}
	v = *RTE_MBUF_DYNFIELD(m, ts_off, rte_mbuf_timestamp_t *);
	if (src == TS_PCAP || src == TS_KERNEL)
		return (int64_t)v * 1000;	/* us -> ns */
	return p->ns0 + (int64_t)((__int128)((int64_t)(v - p->clk0)) * 1000000000 /
				  (int64_t)p->hz);
}

/* rx_burst on every port whose last burst is used up; polled_empty[i] set
 * for a port that returned nothing */
static void poll_ports(struct tap *t, bool polled_empty[2])
{
	for (int i = 0; i < 2; i++) {
		struct port *p = &t->ports[i];
		struct rte_eth_stats st;

		if (p->i < p->n || p->eof)
			continue;
		p->n = rte_eth_rx_burst(p->id, 0, p->buf, BURST);
		p->i = 0;
		if (t->src == TS_TSC) {
			int64_t now = tsc_ns();

			p->burst_ts = now;
			p->burst_err = now - p->drained_ns;
			if (p->n < BURST)
				p->drained_ns = now;
		}
		if (p->n) {
			if (t->t_first < 0)
				t->t_first = (int64_t)mono_ns();
			continue;
		}
		polled_empty[i] = true;
		if (p->pcap_file) {
			rte_eth_stats_get(p->id, &st);
			if (st.rx_nombuf == p->nombuf)
				p->eof = true;
			p->nombuf = st.rx_nombuf;
		}
	}
}

/* Hand the polled packets to the tracker, the two streams merged in
 * timestamp order while both have packets; a port that is at EOF or just
 * polled empty does not hold the other back. */
static void merge_bursts(struct tap *t, const bool polled_empty[2])
{
	struct port *a = &t->ports[0], *b = &t->ports[1];

	for (;;) {
		bool ha = a->i < a->n, hb = b->i < b->n;
		struct port *pq;
		struct rte_mbuf *m;
		struct pkt_info pi;
		enum parse_result pr;
		int64_t ts, err, eb;

		if (ha && hb)
			pq = pkt_ts(a, t->src, a->buf[a->i], &err) <=
			     pkt_ts(b, t->src, b->buf[b->i], &eb) ? a : b;
		else if (ha && (b->eof || polled_empty[1]))
			pq = a;
		else if (hb && (a->eof || polled_empty[0]))
			pq = b;
		else
			break;
		m = pq->buf[pq->i++];
		ts = pkt_ts(pq, t->src, m, &err);
		pr = parse_frame(&t->pcfg, rte_pktmbuf_mtod(m, const uint8_t *),
				 rte_pktmbuf_data_len(m), &pi);
		if (pr == PARSE_OK)
			tracker_packet(t->tr, pq->role, ts, err, &pi);
		else
			t->unparsed[pr]++;
		rte_pktmbuf_free(m);
	}
}

/* Poll until both ports are at EOF, or a stop signal. On a signal, drain
 * what the ports hold already so packets captured before it are counted:
 * until both ports stay empty for TAP_DRAIN_MS (libpcap's TPACKET_V3 ring
 * hands out a block of packets only when it is full or its timeout
 * expires). */
static void poll_loop(struct tap *t)
{
	struct port *a = &t->ports[0], *b = &t->ports[1];
	uint64_t empty = 0, drain_until = 0;

	for (;;) {
		bool polled_empty[2] = { false, false };

		poll_ports(t, polled_empty);
		if (a->i < a->n || b->i < b->n) {
			empty = 0;
			drain_until = 0;
			merge_bursts(t, polled_empty);
			continue;
		}
		if (a->eof && b->eof)
			break;
		if (fs_stop) {
			if (!drain_until)
				drain_until = mono_ns() + TAP_DRAIN_MS * 1000000ULL;
			else if (mono_ns() >= drain_until)
				break;
		}
		if (t->src == TS_TSC)
			tracker_advance(t->tr, tsc_ns());
		else if (t->src == TS_KERNEL)
			tracker_advance(t->tr, real_ns());
		if (++empty >= t->o.idle_polls && t->o.idle_sleep_ns) {
			struct timespec ts = {
				(time_t)(t->o.idle_sleep_ns / 1000000000),
				(long)(t->o.idle_sleep_ns % 1000000000),
			};

			nanosleep(&ts, NULL);
		}
	}
}

/* ---- the end: records, summary, verdict -------------------------------- */

/* the run's figures for summary.json; port counters read now, as the loop
 * left them: what arrives while the records are written is not measured */
static void run_report_fill(const struct tap *t, struct run_report *r)
{
	const struct track_counters *c = tracker_counters(t->tr);

	memset(r, 0, sizeof(*r));
	r->ts_source = ts_names[t->src];
	r->resolution_ns = ts_resolution_ns(t);
	r->tsc_hz = tsc_hz;
	r->idle_sleep_us = (uint32_t)(t->o.idle_sleep_ns / 1000);
	r->idle_polls = t->o.idle_polls;
	r->lcore = rte_lcore_id();
	r->rt_priority = t->o.rt_prio;
	for (int i = 0; i < 2; i++) {
		const struct port *p = &t->ports[i];
		struct port_report *pr = &r->ports[i];
		struct rte_eth_stats st;

		memset(&st, 0, sizeof(st));
		rte_eth_stats_get(p->id, &st);
		*pr = (struct port_report){
			.role = i ? "B" : "A", .port = p->id, .name = p->name,
			.driver = p->driver, .ipackets = st.ipackets,
			.ibytes = st.ibytes, .imissed = st.imissed,
			.ierrors = st.ierrors, .rx_nombuf = st.rx_nombuf,
		};
		r->port_drops += st.imissed + st.ierrors + st.rx_nombuf;
	}
	r->end = t->end;
	r->not_ip = t->unparsed[PARSE_NOT_IP];
	r->truncated = t->unparsed[PARSE_TRUNCATED];
	r->fragment = t->unparsed[PARSE_FRAGMENT];
	r->frames = c->pkts_a + c->pkts_b + r->not_ip + r->truncated + r->fragment;
	r->seconds = t->t_first < 0 ? 0 : (double)(t->t_end - t->t_first) / 1e9;
	r->pps = r->seconds > 0 ? (uint64_t)((double)r->frames / r->seconds + 0.5) : 0;
	r->wall_seconds = (double)(t->t_end - t->t_start) / 1e9;
}

/* B before A for most matched packets: the capture points are swapped (or
 * the clocks of A and B disagree) and every delay is negative. Returns the
 * number of negative samples when they are the majority, else 0. */
static uint64_t swapped_ab(const struct tracker *tr)
{
	const uint64_t *hs = tracker_owd_hist(tr, 0), *hl = tracker_owd_hist(tr, 1);
	uint64_t neg = tracker_counters(tr)->owd_negative, n = 0;

	for (int b = 0; b < HIST_BINS; b++)
		n += hs[b] + hl[b];
	return neg * 2 > n ? neg : 0;
}

/* what makes the measurement incomplete or doubtful: warnings, exit 1 */
static int verdict(const struct tap *t, const struct run_report *r)
{
	const struct track_counters *c = tracker_counters(t->tr);
	uint64_t neg = swapped_ab(t->tr);
	int rc = FS_EXIT_OK;

	if (r->port_drops) {
		pr_warn("WARNING: the ports dropped %" PRIu64 " packets (imissed + "
			"ierrors + rx_nombuf): the measurement is incomplete",
			r->port_drops);
		rc = FS_EXIT_RUNTIME;
	}
	if (c->flow_overflow_pkts || c->inflight_overflow) {
		pr_warn("WARNING: tables overflowed (%" PRIu64 " packets of untracked "
			"flows, %" PRIu64 " unresolved in-flight evictions): raise "
			"--flows / --inflight", c->flow_overflow_pkts, c->inflight_overflow);
		rc = FS_EXIT_RUNTIME;
	}
	if (neg) {
		pr_warn("WARNING: %" PRIu64 " of the delay samples have the packet at "
			"B before A (more than half): are --port-a and --port-b "
			"swapped? (A = leaving the source router)", neg);
		rc = FS_EXIT_RUNTIME;
	}
	return rc;
}

/* resolve everything, write the records and the summary: the exit code */
static int tap_finish(struct tap *t)
{
	struct run_report r;
	int rc = FS_EXIT_OK, err;

	t->t_end = (int64_t)mono_ns();
	t->end = fs_stop ? "stop" : "eof";
	if (fs_stop)
		printf("fct-tap: SIGINT or SIGTERM received, writing the final summary\n");
	run_report_fill(t, &r);
	tracker_set_unparsed(t->tr, r.not_ip + r.truncated + r.fragment);
	err = tracker_finish(t->tr, t->end);
	if (err) {
		pr_err("cannot write the flow records in %s: %s", t->o.out,
		       strerror(-err));
		rc = FS_EXIT_RUNTIME;
	}
	if (tap_out_commit(&t->csv) || tap_out_commit(&t->jsonl) ||
	    report_write(t->o.out, t->tr, &r))
		rc = FS_EXIT_RUNTIME;
	{
		const struct track_counters *c = tracker_counters(t->tr);

		printf("fct-tap: %" PRIu64 " frames (A %" PRIu64 ", B %" PRIu64
		       ", unparsed %" PRIu64 ") in %.3f s, %" PRIu64 " frames/s; %"
		       PRIu64 " flows, %" PRIu64 " lost; results in %s\n", r.frames,
		       c->pkts_a, c->pkts_b, c->unparsed, r.seconds, r.pps,
		       c->flows_ended, c->lost, t->o.out);
		fflush(stdout);
	}
	if (verdict(t, &r))
		rc = FS_EXIT_RUNTIME;
	return rc;
}

static void tap_stop(struct tap *t)
{
	out_file_abort(&t->csv);
	out_file_abort(&t->jsonl);
	tracker_free(t->tr);
	for (int i = 0; i < 2; i++) {
		rte_eth_dev_stop(t->ports[i].id);
		rte_eth_dev_close(t->ports[i].id);
	}
}

int main(int argc, char **argv)
{
	static struct tap t;	/* static: the mbuf pointers of two bursts */
	int orig_argc = argc, n, rc;
	char **orig_argv = argv;

	fs_log_init("fct-tap", FS_LOG_INFO);
	/* before anything slow: a signal during start-up must end the run
	 * cleanly (empty summary), not kill it */
	fs_signals_install(false);
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return FS_EXIT_OK;
	}
	rc = pcap_args_check(argc, argv);
	if (rc)
		return rc;
	n = eal_start(argc, argv);
	if (n < 0)
		return FS_EXIT_RUNTIME;
	rc = opts_parse(argc - n, argv + n, &t.o);
	if (rc == 1) {
		usage(stdout);
		rc = FS_EXIT_OK;
		goto out;
	}
	if (!rc)
		rc = opts_check(&t.o);
	if (!rc && t.o.rt_prio && set_rt_priority(t.o.rt_prio))
		rc = FS_EXIT_RUNTIME;
	if (!rc && mkdir_p(t.o.out)) {
		pr_err("cannot create output directory '%s': %s", t.o.out, strerror(errno));
		rc = FS_EXIT_RUNTIME;
	}
	if (rc)
		goto out;
	t.t_first = -1;
	if (ports_start(&t, orig_argc, orig_argv) || tracker_start(&t)) {
		rc = FS_EXIT_RUNTIME;
		goto out;
	}
	print_start(&t);
	t.t_start = (int64_t)mono_ns();
	poll_loop(&t);
	rc = tap_finish(&t);
	tap_stop(&t);
out:
	rte_eal_cleanup();
	return rc;
}
