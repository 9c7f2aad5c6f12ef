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
 *         (eth_pcap_rx: tv_sec * US_PER_S + tv_usec), so offline results
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
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "flowsplit.h"
#include "tap.h"

#define BURST		32
#define NB_MBUF		8191
#define MBUF_CACHE	256
#define NB_RXD		1024
#define HW_CAL_MS	100	/* NIC clock frequency measurement */
#define EXIT_USAGE	2
#define TAP_DRAIN_MS	200	/* see the main loop */

enum ts_source { TS_PCAP, TS_KERNEL, TS_HW, TS_TSC };
static const char *const ts_names[] = { "pcap", "kernel", "hw", "tsc" };

struct port {
	uint16_t id;
	enum port_role role;
	bool pcap_file;		/* net_pcap with rx_pcap=: EOF detectable */
	bool eof;
	bool live_sw;		/* software port on a live interface */
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[64];
	struct rte_mbuf *buf[BURST];
	uint16_t n, i;
	int64_t burst_ts;	/* TSC source: time of this burst (ns) */
	uint64_t nombuf;
	/* hw: ns = (clock - clk0) * 1e9 / hz + ns0 */
	uint64_t clk0, hz;
	int64_t ns0;
};

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

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

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void usage(FILE *o)
{
	fprintf(o,
		"usage: fct-tap <EAL args> -- --port-a N --port-b N --out DIR [options]\n"
		"  --port-a N            DPDK port id of capture point A (leaving the source router)\n"
		"  --port-b N            DPDK port id of capture point B (arriving at the destination router)\n"
		"  --out DIR             output directory (created): flows.csv flows.jsonl summary.* hist_*.csv\n"
		"  --idle-timeout-ms M   end a flow after M ms without packets (default %u, >= loss timeout)\n"
		"  --loss-timeout-ms M   a packet at A not seen at B within M ms is lost (default %u)\n"
		"  --flows N             flow table size (default %u)\n"
		"  --inflight N          in-flight packet table size (default %u)\n"
		"  --owd-samples N       delay samples kept for percentiles, all flows (default %u)\n"
		"  --summary-flows N     flows kept for the summary percentiles (default %u)\n"
		"  --dscp-long V         inner DSCP of the long class, 0..63 (default %u)\n"
		"  --vxlan-port P        UDP port parsed as VXLAN (default %u)\n"
		"  --timestamp SRC       auto|tsc (default auto: pcap, else hw, else tsc)\n"
		"  --idle-polls N        empty polls before the idle back-off (default %u)\n"
		"  --idle-sleep-us U     back-off sleep; 0 = busy poll (default on live ports: %u with\n"
		"                        TSC stamps, %u with kernel stamps; 0 on pcap files and NICs)\n"
		"  --busy-poll           same as --idle-sleep-us 0\n"
		"  --rt-priority N       poll at SCHED_FIFO priority N, 1..99 (default: normal\n"
		"                        scheduling); with TSC stamps on live ports a preempted\n"
		"                        tap stamps late: give it a core of its own (EAL -l) too\n"
		"  -h, --help\n"
		"EAL for veth taps: --no-huge -m 256 --no-pci --in-memory -l 0 "
		"--vdev=net_af_packet0,iface=X --vdev=net_af_packet1,iface=Y\n"
		"EAL for pcaps:     --no-huge -m 256 --no-pci --in-memory -l 0 "
		"--vdev=net_pcap0,rx_pcap=a.pcap --vdev=net_pcap1,rx_pcap=b.pcap\n",
		TAP_DEF_IDLE_MS, TAP_DEF_LOSS_MS, TAP_DEF_FLOWS, TAP_DEF_INFLIGHT,
		TAP_DEF_OWD_SAMPLES, TAP_DEF_SUMMARY_FLOWS, FS_DEFAULT_DSCP_LONG,
		TAP_VXLAN_PORT, TAP_DEF_IDLE_POLLS, TAP_DEF_IDLE_SLEEP_US,
		TAP_DEF_IDLE_SLEEP_KERNEL_US);
}

static int parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi,
		     uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "fct-tap: %s '%s' is invalid: accepted %u..%u\n",
			opt, s, lo, hi);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* Find the rx_pcap= file of each net_pcap --vdev before EAL init so a
 * missing file is reported by name (the PMD's own error is generic). */
static int check_pcap_args(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i], *p;

		if (!strcmp(a, "--vdev") && i + 1 < argc)
			a = argv[++i];
		else if (!strncmp(a, "--vdev=", 7))
			a += 7;
		else
			continue;
		for (p = strstr(a, "rx_pcap="); p; p = strstr(p + 1, "rx_pcap=")) {
			char file[4096];
			size_t n = strcspn(p + 8, ",");
			FILE *f;

			if (n >= sizeof(file))
				n = sizeof(file) - 1;
			memcpy(file, p + 8, n);
			file[n] = 0;
			uint32_t magic = 0;

			f = fopen(file, "r");
			if (!f || fread(&magic, 4, 1, f) != 1) {
				fprintf(stderr, "fct-tap: cannot read pcap file '%s': %s\n",
					file, f ? "empty or unreadable" : strerror(errno));
				if (f)
					fclose(f);
				return -1;
			}
			fclose(f);
			/* pcap (us or ns, either byte order) or pcapng */
			if (magic != 0xa1b2c3d4 && magic != 0xd4c3b2a1 &&
			    magic != 0xa1b23c4d && magic != 0x4d3cb2a1 &&
			    magic != 0x0a0d0d0a) {
				fprintf(stderr, "fct-tap: '%s' is not a pcap file "
					"(magic 0x%08x)\n", file, magic);
				return -1;
			}
		}
	}
	return 0;
}

static bool vdev_is_rx_pcap(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--vdev") && i + 1 < argc)
			a = argv[++i];
		else if (!strncmp(a, "--vdev=", 7))
			a += 7;
		else
			continue;
		if (!strncmp(a, name, n) && a[n] == ',' && strstr(a, "rx_pcap="))
			return true;
	}
	return false;
}

static int port_setup(struct port *p, struct rte_mempool *mp, bool want_ts,
		      uint64_t *capa)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(p->id, &info);
	if (rc) {
		fprintf(stderr, "fct-tap: port %u: cannot get device info: %s\n",
			p->id, strerror(-rc));
		return -1;
	}
	snprintf(p->driver, sizeof(p->driver), "%s", info.driver_name);
	p->live_sw = !strcmp(info.driver_name, "net_af_packet") ||
		     !strcmp(info.driver_name, "net_af_xdp") ||
		     (!strcmp(info.driver_name, "net_pcap") && !p->pcap_file);
	*capa = info.rx_offload_capa;
	if (want_ts)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
	rc = rte_eth_dev_configure(p->id, 1, 1, &conf);
	if (!rc)
		rc = rte_eth_rx_queue_setup(p->id, 0, NB_RXD,
					    rte_eth_dev_socket_id(p->id), NULL, mp);
	if (!rc)
		rc = rte_eth_tx_queue_setup(p->id, 0, NB_RXD,
					    rte_eth_dev_socket_id(p->id), NULL);
	if (!rc)
		rc = rte_eth_dev_start(p->id);
	if (rc) {
		fprintf(stderr, "fct-tap: port %u (%s): cannot start: %s\n", p->id,
			p->name, strerror(rc < 0 ? -rc : rc));
		return -1;
	}
	rte_eth_promiscuous_enable(p->id);	/* not all PMDs can: ignore */
	return 0;
}

/* NIC clock -> ns: measure the clock frequency against CLOCK_MONOTONIC and
 * anchor it to the TSC time base so A and B share one base */
static int hw_calibrate(struct port *p)
{
	uint64_t c0, c1;
	int64_t m0, m1;

	if (rte_eth_read_clock(p->id, &c0))
		return -1;
	m0 = mono_ns();
	rte_delay_ms(HW_CAL_MS);
	if (rte_eth_read_clock(p->id, &c1))
		return -1;
	m1 = mono_ns();
	if (c1 <= c0 || m1 <= m0)
		return -1;
	p->hz = (uint64_t)((__uint128_t)(c1 - c0) * 1000000000u / (uint64_t)(m1 - m0));
	p->clk0 = c1;
	p->ns0 = tsc_ns();
	return p->hz ? 0 : -1;
}

static int64_t pkt_ts(const struct port *p, enum ts_source src, struct rte_mbuf *m)
{
	uint64_t v;

	if (src == TS_TSC || !(m->ol_flags & ts_flag))
		return p->burst_ts;
	v = *RTE_MBUF_DYNFIELD(m, ts_off, rte_mbuf_timestamp_t *);
	if (src == TS_PCAP || src == TS_KERNEL)
		return (int64_t)v * 1000;	/* us -> ns */
	return p->ns0 + (int64_t)((__int128)((int64_t)(v - p->clk0)) * 1000000000 /
				  (int64_t)p->hz);
}

static uint64_t ports_json(char *buf, size_t sz, struct port *ports)
{
	uint64_t drops = 0;
	size_t off = 0;

	off += (size_t)snprintf(buf + off, sz - off, "[");
	for (int i = 0; i < 2; i++) {
		struct rte_eth_stats st;

		memset(&st, 0, sizeof(st));
		rte_eth_stats_get(ports[i].id, &st);
		drops += st.imissed + st.ierrors + st.rx_nombuf;
		off += (size_t)snprintf(buf + off, sz - off,
			"%s{\"role\":\"%s\",\"port\":%u,\"name\":\"%s\",\"driver\":\"%s\","
			"\"ipackets\":%" PRIu64 ",\"ibytes\":%" PRIu64 ",\"imissed\":%" PRIu64
			",\"ierrors\":%" PRIu64 ",\"rx_nombuf\":%" PRIu64 "}",
			i ? "," : "", i ? "B" : "A", ports[i].id, ports[i].name,
			ports[i].driver, st.ipackets, st.ibytes, st.imissed,
			st.ierrors, st.rx_nombuf);
		if (off >= sz)
			off = sz - 1;
	}
	snprintf(buf + off, sz - off, "]");
	return drops;
}

/* on the calling thread only: the EAL main lcore, i.e. the poll loop (the
 * EAL's control threads keep normal scheduling) */
static int set_rt_priority(uint32_t prio)
{
	struct sched_param sp = { .sched_priority = (int)prio };

	if (!sched_setscheduler(0, SCHED_FIFO, &sp))
		return 0;
	fprintf(stderr, "fct-tap: --rt-priority %u: SCHED_FIFO refused: %s (needs "
		"root or CAP_SYS_NICE, or RLIMIT_RTPRIO >= %u)\n", prio,
		strerror(errno), prio);
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

static FILE *open_in(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "fct-tap: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "port-a", required_argument, NULL, 'a' },
		{ "port-b", required_argument, NULL, 'b' },
		{ "out", required_argument, NULL, 'o' },
		{ "idle-timeout-ms", required_argument, NULL, 'I' },
		{ "loss-timeout-ms", required_argument, NULL, 'L' },
		{ "flows", required_argument, NULL, 'F' },
		{ "inflight", required_argument, NULL, 'N' },
		{ "owd-samples", required_argument, NULL, 'S' },
		{ "summary-flows", required_argument, NULL, 'R' },
		{ "dscp-long", required_argument, NULL, 'D' },
		{ "vxlan-port", required_argument, NULL, 'X' },
		{ "timestamp", required_argument, NULL, 'T' },
		{ "idle-polls", required_argument, NULL, 'P' },
		{ "idle-sleep-us", required_argument, NULL, 'U' },
		{ "busy-poll", no_argument, NULL, 'B' },
		{ "rt-priority", required_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t pa = UINT32_MAX, pb = UINT32_MAX, idle_ms = TAP_DEF_IDLE_MS;
	uint32_t loss_ms = TAP_DEF_LOSS_MS, nflows = TAP_DEF_FLOWS;
	uint32_t ninfl = TAP_DEF_INFLIGHT, nsamp = TAP_DEF_OWD_SAMPLES;
	uint32_t nsum = TAP_DEF_SUMMARY_FLOWS, dscp_long = FS_DEFAULT_DSCP_LONG;
	uint32_t vxport = TAP_VXLAN_PORT, idle_polls = TAP_DEF_IDLE_POLLS;
	uint32_t idle_us = UINT32_MAX, rt_prio = 0;
	const char *out = NULL;
	bool force_tsc = false;
	struct port ports[2];
	struct parse_cfg pcfg;
	struct track_cfg tcfg;
	struct tracker *tr;
	struct rte_mempool *mp;
	enum ts_source src;
	FILE *csv, *jsonl;
	uint64_t capa[2], unparsed_kind[PARSE__MAX] = { 0 }, drops, empty = 0;
	int64_t t_start, t_end, t_first = -1, drain_until = 0;
	char tsj[256], pj[2048], extra[512], info_drv[2][64];
	const char *reason;
	int eal_argc, opt, rc = 0;
	int orig_argc = argc;
	char **orig_argv = argv;

	/* before anything slow: a signal during start-up must end the run
	 * cleanly (empty summary), not kill it */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (check_pcap_args(argc, argv))
		return 1;
	/* DPDK 22.11 refuses --in-memory with --no-huge (which implies legacy
	 * memory); the contract's veth/pcap EAL line has both. --no-shconf
	 * gives what --in-memory is there for: no shared files, so several
	 * taps can run at once. */
	{
		bool nohuge = false;

		for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
			nohuge |= !strcmp(argv[i], "--no-huge");
		for (int i = 1; i < argc && strcmp(argv[i], "--") && nohuge; i++)
			if (!strcmp(argv[i], "--in-memory"))
				argv[i] = no_shconf;
	}
	eal_argc = rte_eal_init(argc, argv);
	if (eal_argc < 0) {
		fprintf(stderr, "fct-tap: EAL initialisation failed: %s (check the "
			"EAL arguments, e.g. an unknown PMD in --vdev; see --help)\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= eal_argc;
	argv += eal_argc;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'a': bad = parse_u32("--port-a", optarg, 0, RTE_MAX_ETHPORTS - 1, &pa); break;
		case 'b': bad = parse_u32("--port-b", optarg, 0, RTE_MAX_ETHPORTS - 1, &pb); break;
		case 'o': out = optarg; break;
		case 'I': bad = parse_u32("--idle-timeout-ms", optarg, 1, TAP_MAX_TIMEOUT_MS, &idle_ms); break;
		case 'L': bad = parse_u32("--loss-timeout-ms", optarg, 1, TAP_MAX_TIMEOUT_MS, &loss_ms); break;
		case 'F': bad = parse_u32("--flows", optarg, TAP_MIN_TABLE, TAP_MAX_TABLE, &nflows); break;
		case 'N': bad = parse_u32("--inflight", optarg, TAP_MIN_TABLE, TAP_MAX_TABLE, &ninfl); break;
		case 'S': bad = parse_u32("--owd-samples", optarg, 0, UINT32_MAX, &nsamp); break;
		case 'R': bad = parse_u32("--summary-flows", optarg, 0, UINT32_MAX, &nsum); break;
		case 'D': bad = parse_u32("--dscp-long", optarg, 0, FS_DSCP_MAX, &dscp_long); break;
		case 'X': bad = parse_u32("--vxlan-port", optarg, 1, 65535, &vxport); break;
		case 'P': bad = parse_u32("--idle-polls", optarg, 1, UINT32_MAX, &idle_polls); break;
		case 'U': bad = parse_u32("--idle-sleep-us", optarg, 0, 1000000, &idle_us); break;
		case 'B': idle_us = 0; break;
		case 'Y': bad = parse_u32("--rt-priority", optarg, 1, 99, &rt_prio); break;
		case 'T':
			if (!strcmp(optarg, "tsc")) {
				force_tsc = true;
			} else if (strcmp(optarg, "auto")) {
				fprintf(stderr, "fct-tap: --timestamp '%s' is invalid: accepted auto, tsc\n", optarg);
				bad = 1;
			}
			break;
		case 'h': usage(stdout); rte_eal_cleanup(); return 0;
		default: bad = 1; break;
		}
		if (bad) {
			rte_eal_cleanup();
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fct-tap: unexpected argument '%s'\n", argv[optind]);
		rc = EXIT_USAGE;
	} else if (rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, "fct-tap: no DPDK ports: give two with --vdev= "
			"(net_af_packet, net_pcap, ...) or bind NICs to DPDK\n");
		rc = EXIT_USAGE;
	} else if (pa == UINT32_MAX || pb == UINT32_MAX || !out) {
		fprintf(stderr, "fct-tap: --port-a, --port-b and --out are required\n");
		rc = EXIT_USAGE;
	} else if (pa == pb) {
		fprintf(stderr, "fct-tap: --port-a and --port-b are both %u: A and B "
			"must be two different ports\n", pa);
		rc = EXIT_USAGE;
	} else if (!rte_eth_dev_is_valid_port((uint16_t)pa) ||
		   !rte_eth_dev_is_valid_port((uint16_t)pb)) {
		fprintf(stderr, "fct-tap: port %u does not exist: %u ports available "
			"(0..%u)\n", rte_eth_dev_is_valid_port((uint16_t)pa) ? pb : pa,
			rte_eth_dev_count_avail(), rte_eth_dev_count_avail() - 1);
		rc = EXIT_USAGE;
	} else if (idle_ms < loss_ms) {
		fprintf(stderr, "fct-tap: --idle-timeout-ms %u is below --loss-timeout-ms "
			"%u: accepted idle >= loss timeout\n", idle_ms, loss_ms);
		rc = EXIT_USAGE;
	} else if (rt_prio && set_rt_priority(rt_prio)) {
		rc = 1;
	} else if (mkdir_p(out)) {
		fprintf(stderr, "fct-tap: cannot create output directory '%s': %s\n",
			out, strerror(errno));
		rc = 1;
	}
	if (rc) {
		rte_eal_cleanup();
		return rc;
	}

	tsc_hz = rte_get_tsc_hz();
	tsc0 = rte_rdtsc();
	memset(ports, 0, sizeof(ports));
	ports[0].id = (uint16_t)pa;
	ports[1].id = (uint16_t)pb;
	ports[1].role = ROLE_B;
	mp = rte_pktmbuf_pool_create("fct_tap_pool", NB_MBUF, MBUF_CACHE, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (!mp) {
		fprintf(stderr, "fct-tap: cannot create the mbuf pool: %s (raise EAL -m)\n",
			rte_strerror(rte_errno));
		rte_eal_cleanup();
		return 1;
	}
	if (rte_mbuf_dyn_rx_timestamp_register(&ts_off, &ts_flag))
		ts_off = -1;

	/* first pass: what the ports can do */
	for (int i = 0; i < 2; i++) {
		struct rte_eth_dev_info info;

		rte_eth_dev_get_name_by_port(ports[i].id, ports[i].name);
		ports[i].pcap_file = vdev_is_rx_pcap(orig_argc, orig_argv, ports[i].name);
		rte_eth_dev_info_get(ports[i].id, &info);
		capa[i] = info.rx_offload_capa;
		snprintf(info_drv[i], sizeof(info_drv[i]), "%s", info.driver_name);
	}
	if (ts_off >= 0 && !force_tsc && ports[0].pcap_file && ports[1].pcap_file)
		src = TS_PCAP;
	else if (ts_off >= 0 && !force_tsc && !ports[0].pcap_file &&
		 !ports[1].pcap_file && !strcmp(info_drv[0], "net_pcap") &&
		 !strcmp(info_drv[1], "net_pcap"))
		src = TS_KERNEL;	/* rx_iface=: libpcap's kernel capture time */
	else if (ts_off >= 0 && !force_tsc &&
		 (capa[0] & capa[1] & RTE_ETH_RX_OFFLOAD_TIMESTAMP))
		src = TS_HW;
	else
		src = TS_TSC;
	if (src != TS_TSC && ports[0].pcap_file != ports[1].pcap_file)
		src = TS_TSC;	/* one pcap and one live port share no clock */
	for (int i = 0; i < 2; i++) {
		if (port_setup(&ports[i], mp, src == TS_HW, &capa[i])) {
			rte_eal_cleanup();
			return 1;
		}
	}
	if (src == TS_HW && (hw_calibrate(&ports[0]) || hw_calibrate(&ports[1]))) {
		fprintf(stderr, "fct-tap: NIC clock unreadable (rte_eth_read_clock): "
			"using the TSC\n");
		src = TS_TSC;
	}
	/* back-off default: TSC stamps are late by the sleep, so keep it
	 * short; kernel stamps do not depend on when we poll, so sleep
	 * longer (the kernel ring only has to hold that long) */
	if (idle_us == UINT32_MAX)
		idle_us = !(ports[0].live_sw || ports[1].live_sw) ? 0 :
			  src == TS_KERNEL ? TAP_DEF_IDLE_SLEEP_KERNEL_US :
			  TAP_DEF_IDLE_SLEEP_US;
	/* the default 50 us timer slack would more than triple a 20 us
	 * back-off sleep, and with it the stamp error after a pause */
	if (idle_us)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	{
		double res_ns = src == TS_PCAP || src == TS_KERNEL ? 1000.0 :
				src == TS_HW ? 1e9 / (double)ports[0].hz : 1e9 / (double)tsc_hz;

		printf("fct-tap: A = port %u (%s, %s), B = port %u (%s, %s)\n",
		       ports[0].id, ports[0].name, ports[0].driver, ports[1].id,
		       ports[1].name, ports[1].driver);
		printf("fct-tap: timestamp source %s, resolution %.3f ns%s; idle back-off %u us after %u empty polls\n",
		       ts_names[src], res_ns,
		       src == TS_TSC ? " (one TSC read per rx burst)" : "",
		       idle_us, idle_polls);
		if (rt_prio)
			printf("fct-tap: polling on lcore %u at SCHED_FIFO priority %u\n",
			       rte_lcore_id(), rt_prio);
		else
			printf("fct-tap: polling on lcore %u, normal scheduling\n",
			       rte_lcore_id());
		snprintf(tsj, sizeof(tsj),
			 "\"timestamp\":{\"source\":\"%s\",\"resolution_ns\":%.3f,"
			 "\"tsc_hz\":%" PRIu64 "},\"idle_sleep_us\":%u,\"idle_polls\":%u,"
			 "\"lcore\":%u,\"rt_priority\":%u",
			 ts_names[src], res_ns, tsc_hz, idle_us, idle_polls,
			 rte_lcore_id(), rt_prio);
		fflush(stdout);
	}

	csv = open_in(out, "flows.csv");
	jsonl = open_in(out, "flows.jsonl");
	pcfg.vxlan_port = (uint16_t)vxport;
	tcfg.max_flows = nflows;
	tcfg.max_inflight = ninfl;
	tcfg.loss_timeout_ns = (int64_t)loss_ms * 1000000;
	tcfg.idle_timeout_ns = (int64_t)idle_ms * 1000000;
	tcfg.owd_samples = nsamp;
	tcfg.summary_flows = nsum;
	tcfg.dscp_long = (uint8_t)dscp_long;
	tr = csv && jsonl ? tracker_new(&tcfg, csv, jsonl) : NULL;
	if (!tr) {
		if (csv && jsonl)
			fprintf(stderr, "fct-tap: out of memory for %u flows / %u in-flight "
				"entries (lower --flows/--inflight)\n", nflows, ninfl);
		rte_eal_cleanup();
		return 1;
	}
	t_start = mono_ns();
	/* on a signal, drain what the ports hold already so packets captured
	 * before the signal are counted: until both ports stay empty for
	 * TAP_DRAIN_MS (libpcap's TPACKET_V3 ring hands out a block of
	 * packets only when it is full or its timeout expires) */
	for (;;) {
		bool polled_empty[2] = { false, false };
		struct port *pq;

		for (int i = 0; i < 2; i++) {
			struct port *p = &ports[i];

			if (p->i < p->n || p->eof)
				continue;
			p->n = rte_eth_rx_burst(p->id, 0, p->buf, BURST);
			p->i = 0;
			if (p->n) {
				if (src == TS_TSC)
					p->burst_ts = tsc_ns();
				if (t_first < 0)
					t_first = mono_ns();
				continue;
			}
			polled_empty[i] = true;
			if (p->pcap_file) {
				struct rte_eth_stats st;

				rte_eth_stats_get(p->id, &st);
				if (st.rx_nombuf == p->nombuf)
					p->eof = true;
				p->nombuf = st.rx_nombuf;
			}
		}
		if (ports[0].i == ports[0].n && ports[1].i == ports[1].n) {
			if (ports[0].eof && ports[1].eof)
				break;
			if (stop_sig) {
				if (!drain_until)
					drain_until = mono_ns() + TAP_DRAIN_MS * 1000000LL;
				else if (mono_ns() >= drain_until)
					break;
			}
			if (src == TS_TSC)
				tracker_advance(tr, tsc_ns());
			else if (src == TS_KERNEL)
				tracker_advance(tr, real_ns());
			if (++empty >= idle_polls && idle_us) {
				struct timespec ts = { 0, (long)idle_us * 1000 };

				nanosleep(&ts, NULL);
			}
			continue;
		}
		empty = 0;
		drain_until = 0;
		/* merge the two streams in timestamp order while both have
		 * packets; a port that is at EOF or just polled empty does not
		 * hold the other back */
		for (;;) {
			struct port *a = &ports[0], *b = &ports[1];
			bool ha = a->i < a->n, hb = b->i < b->n;
			struct rte_mbuf *m;
			struct pkt_info pi;
			enum parse_result pr;

			if (ha && hb)
				pq = pkt_ts(a, src, a->buf[a->i]) <= pkt_ts(b, src, b->buf[b->i]) ? a : b;
			else if (ha && (b->eof || polled_empty[1]))
				pq = a;
			else if (hb && (a->eof || polled_empty[0]))
				pq = b;
			else
				break;
			m = pq->buf[pq->i++];
			pr = parse_frame(&pcfg, rte_pktmbuf_mtod(m, const uint8_t *),
					 rte_pktmbuf_data_len(m), &pi);
			if (pr == PARSE_OK)
				tracker_packet(tr, pq->role, pkt_ts(pq, src, m), &pi);
			else
				unparsed_kind[pr]++;
			rte_pktmbuf_free(m);
		}
	}
	t_end = mono_ns();
	reason = stop_sig ? "stop" : "eof";
	if (stop_sig)
		printf("fct-tap: %s received, writing the final summary\n",
		       strsignal(stop_sig));
	/* port counters as the loop left them: what arrives while the final
	 * records are written is not part of the measurement */
	drops = ports_json(pj, sizeof(pj), ports);
	tracker_finish(tr, reason);
	{
		const struct track_counters *c = tracker_counters(tr);
		uint64_t unp = unparsed_kind[PARSE_NOT_IP] + unparsed_kind[PARSE_TRUNCATED] +
			       unparsed_kind[PARSE_FRAGMENT];
		uint64_t tot = c->pkts_a + c->pkts_b + unp;
		double secs = t_first < 0 ? 0 : (double)(t_end - t_first) / 1e9;

		tracker_set_unparsed(tr, unp);
		snprintf(extra, sizeof(extra),
			 "\"end\":\"%s\",\"unparsed\":{\"not_ip\":%" PRIu64 ",\"truncated\":%" PRIu64
			 ",\"fragment\":%" PRIu64 "},\"run\":{\"frames\":%" PRIu64
			 ",\"seconds\":%.6f,\"pps\":%.0f,\"wall_seconds\":%.6f}",
			 reason, unparsed_kind[PARSE_NOT_IP], unparsed_kind[PARSE_TRUNCATED],
			 unparsed_kind[PARSE_FRAGMENT], tot, secs,
			 secs > 0 ? (double)tot / secs : 0.0, (double)(t_end - t_start) / 1e9);
		if (report_write(out, tr, tsj, pj, drops, extra))
			rc = 1;
		printf("fct-tap: %" PRIu64 " frames (A %" PRIu64 ", B %" PRIu64 ", unparsed %"
		       PRIu64 ") in %.3f s, %.0f frames/s; %" PRIu64 " flows, %" PRIu64
		       " lost; results in %s\n", tot, c->pkts_a, c->pkts_b, unp, secs,
		       secs > 0 ? (double)tot / secs : 0.0, c->flows_ended, c->lost, out);
		if (drops) {
			fprintf(stderr, "fct-tap: WARNING: the ports dropped %" PRIu64
				" packets (imissed + ierrors + rx_nombuf): the measurement "
				"is incomplete\n", drops);
			rc = 1;
		}
		if (c->flow_overflow_pkts || c->inflight_overflow) {
			fprintf(stderr, "fct-tap: WARNING: tables overflowed (%" PRIu64
				" packets of untracked flows, %" PRIu64 " unresolved in-flight "
				"evictions): raise --flows / --inflight\n",
				c->flow_overflow_pkts, c->inflight_overflow);
			rc = 1;
		}
	}
	fclose(csv);
	fclose(jsonl);
	tracker_free(tr);
	for (int i = 0; i < 2; i++) {
		rte_eth_dev_stop(ports[i].id);
		rte_eth_dev_close(ports[i].id);
	}
	rte_eal_cleanup();
	return rc;
}
