/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - fct-tap internals shared by its files (parse.c, track.c,
 * report.c, main.c). Nothing here crosses the kernel boundary, so it is not
 * in bpf/flowsplit.h; the DSCP default is taken from there.
 *
 * Units: every time inside fct-tap is int64 nanoseconds in the timestamp
 * source's own time base (pcap epoch, TSC since start, or NIC clock); the
 * output converts to microseconds with three decimals.
 */
#ifndef FCT_TAP_H
#define FCT_TAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TAP_VXLAN_PORT		4789	/* IANA VXLAN UDP port (RTE_VXLAN_DEFAULT_PORT) */
#define TAP_MAX_VLAN		2
#define TAP_MAX_IPV6_EXT	6
#define TAP_SIG_PAYLOAD		8	/* payload bytes folded into the signature */

/* option defaults and limits (one place: used by main.c and the README) */
#define TAP_DEF_FLOWS		65536U
#define TAP_DEF_INFLIGHT	262144U
#define TAP_MIN_TABLE		16U
#define TAP_MAX_TABLE		(1U << 26)
#define TAP_DEF_LOSS_MS		1000U
#define TAP_DEF_IDLE_MS		5000U
#define TAP_MAX_TIMEOUT_MS	3600000U
#define TAP_DEF_OWD_SAMPLES	(8U << 20)	/* int64 each: 64 MiB */
#define TAP_DEF_SUMMARY_FLOWS	(4U << 20)
#define TAP_DEF_IDLE_POLLS	64U
#define TAP_DEF_IDLE_SLEEP_US	20U	/* TSC stamps: adds to their error */
#define TAP_DEF_IDLE_SLEEP_KERNEL_US 200U /* kernel stamps: CPU only */

enum port_role { ROLE_A = 0, ROLE_B = 1 };

/* directional inner 5-tuple; addresses and ports in NETWORK byte order,
 * IPv4 addresses in the first 4 bytes of addr (rest zero) */
struct flow_key {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
	uint8_t proto;
	uint8_t family;		/* 4 or 6 */
	uint8_t pad[2];
};
_Static_assert(sizeof(struct flow_key) == 40, "flow_key layout");

/* what the parser extracts from one frame (host byte order unless noted) */
struct pkt_info {
	struct flow_key key;
	uint64_t sig;		/* invariant-field signature, see parse.c */
	uint32_t ip_len;	/* inner IP packet length (header + payload) */
	uint8_t dscp;		/* inner DSCP */
	uint8_t tcp_flags;
};

enum parse_result {
	PARSE_OK = 0,
	PARSE_NOT_IP,		/* ARP, LLDP, ... */
	PARSE_TRUNCATED,	/* too short or malformed header */
	PARSE_FRAGMENT,		/* IPv4 non-first fragment / IPv6 fragment */
	PARSE__MAX,
};

struct parse_cfg {
	uint16_t vxlan_port;	/* host order */
};

enum parse_result parse_frame(const struct parse_cfg *cfg, const uint8_t *p,
			      uint32_t len, struct pkt_info *out);

/* ---- tracking (track.c) ---- */
struct track_cfg {
	uint32_t max_flows;
	uint32_t max_inflight;
	int64_t loss_timeout_ns;
	int64_t idle_timeout_ns;
	uint64_t owd_samples;		/* global budget of stored OWD samples */
	uint32_t summary_flows;		/* flows kept for summary percentiles */
	uint8_t dscp_long;
};

/* global counters, all reported in summary.json */
#define TRACK_COUNTERS(X)						\
	X(pkts_a, "packets processed at A")				\
	X(pkts_b, "packets processed at B")				\
	X(unparsed, "frames not counted: not IP, truncated or fragment") \
	X(flows_started, "flows created")				\
	X(flows_ended, "flow records written")				\
	X(flow_overflow_pkts, "packets of flows not tracked: flow table full") \
	X(inflight_overflow, "unresolved packets evicted: in-flight table full") \
	X(lost, "packets seen at A and never at B within the loss timeout") \
	X(retrans_a, "extra copies at A of a pending packet (retransmissions)") \
	X(dup_b, "extra copies at B (duplicates)")			\
	X(unmatched_b, "packets seen at B and never at A")		\
	X(ambiguous, "matched packets left out of delay stats (several copies)") \
	X(owd_samples_dropped, "delay samples not stored: --owd-samples budget") \
	X(summary_dropped, "flows left out of summary percentiles: budget") \
	X(owd_negative, "delay samples with the packet at B before A: A and B swapped?")

struct track_counters {
#define TC_FIELD(n, h) uint64_t n;
	TRACK_COUNTERS(TC_FIELD)
#undef TC_FIELD
};

struct tracker;

struct tracker *tracker_new(const struct track_cfg *cfg, FILE *csv, FILE *jsonl);
/* ts: the packet's stamp (ns); ts_err: how late that stamp may be (ns, 0
 * for a per-packet capture time), carried into the record's fct_err_us */
void tracker_packet(struct tracker *t, enum port_role role, int64_t ts,
		    int64_t ts_err, const struct pkt_info *pi);
/* advance time without a packet (live capture idle); expires and ends flows */
void tracker_advance(struct tracker *t, int64_t now);
/* resolve everything still open; reason for flows not ended by FIN/RST.
 * 0, or -errno of the first failed record write */
int tracker_finish(struct tracker *t, const char *reason);
const struct track_counters *tracker_counters(const struct tracker *t);
void tracker_set_unparsed(struct tracker *t, uint64_t n);
void tracker_free(struct tracker *t);

/* per-flow result kept for the summary (report.c) */
struct flow_result {
	double fct_us;		/* < 0: undefined (no packet at A or at B) */
	double jitter_us;	/* < 0: undefined (fewer than 2 samples) */
	uint64_t pkts_a;
	uint8_t is_long;
};

/* OWD histogram bins shared by track.c (filling) and report.c (writing):
 * bin 0 = below 1 us (incl. negative), then HIST_PER_DECADE bins per decade
 * from 1 us to 10^HIST_DECADES us, last bin = everything above */
#define HIST_PER_DECADE		20
#define HIST_DECADES		8
#define HIST_BINS		(HIST_PER_DECADE * HIST_DECADES + 2)
int hist_bin(double us);
double hist_lo(int bin);
double hist_hi(int bin);

const struct flow_result *tracker_results(const struct tracker *t, size_t *n);
const uint64_t *tracker_owd_hist(const struct tracker *t, int is_long);

/* ---- report.c ---- */
/* one port's counters as the poll loop left them (rte_eth_stats) */
struct port_report {
	const char *role;	/* "A" or "B" */
	uint16_t port;
	const char *name, *driver;
	uint64_t ipackets, ibytes, imissed, ierrors, rx_nombuf;
};

/* what summary.json holds besides the tracker's results */
struct run_report {
	const char *ts_source;		/* pcap, kernel, hw, tsc */
	double resolution_ns;
	uint64_t tsc_hz;
	uint32_t idle_sleep_us, idle_polls, lcore, rt_priority;
	struct port_report ports[2];
	uint64_t port_drops;		/* imissed + ierrors + rx_nombuf, both */
	const char *end;		/* "eof" or "stop" */
	uint64_t not_ip, truncated, fragment;	/* frames not parsed, by kind */
	uint64_t frames;		/* all frames read */
	double seconds;			/* first frame to the end of the loop */
	uint64_t pps;			/* frames / seconds, rounded */
	double wall_seconds;		/* whole poll loop */
};

/* summary.txt, summary.json and hist_*.csv in dir. 0 or -errno (the file
 * that failed is named on stderr). */
int report_write(const char *dir, const struct tracker *t, const struct run_report *run);


struct out_file;
/* out_file_open() of dir/name, mode 0644; 0 or -errno, named on stderr */
int tap_out_open(struct out_file *o, const char *dir, const char *name);
/* out_file_commit(); 0 or -errno, named on stderr */
int tap_out_commit(struct out_file *o);

#endif
