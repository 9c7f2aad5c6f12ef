/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * flowsplit.h - the ONE definition of everything that crosses the
 * kernel/user boundary: map names, map key/value layouts, the config
 * struct, stat indices and names, defaults and limits.
 *
 * Included by the XDP program (bpf/), splitctl (loader/), the tests and the
 * tap. Only __u* types, explicit padding, and a size assertion per struct, so
 * the BPF and user-space views can never drift apart.
 *
 * Byte order: fields named *addr / *port hold network data and are in
 * NETWORK byte order exactly as on the wire. Everything else is host order.
 */
#ifndef FLOWSPLIT_H
#define FLOWSPLIT_H

#include <linux/types.h>

/* ---- pinning ----------------------------------------------------------- */
#define FS_PIN_DIR_DEFAULT	"/sys/fs/bpf/flowsplit"
#define FS_PIN_DIR_ENV		"FLOWSPLIT_PIN_DIR"

/* Map names as they appear in the object, in bpftool and as pin file names. */
#define FS_MAP_FLOWS4		"fs_flows4"
#define FS_MAP_FLOWS6		"fs_flows6"
#define FS_MAP_CONFIG		"fs_config"
#define FS_MAP_STATS		"fs_stats"
#define FS_MAP_RULES4		"fs_rules4"
#define FS_MAP_RULES6		"fs_rules6"
#define FS_MAP_SPILL		"fs_spill"
#define FS_PROG_SPLITTER	"fs_splitter"	/* XDP program (function name) */
#define FS_PROG_SPLITTER_TC	"fs_splitter_tc" /* TC (clsact ingress) program */
#define FS_PROG_CLOCK		"fs_clock"	/* reads bpf_jiffies64() for user space */
/* TC (tcx) egress of every interface the splitter runs on: records the
 * ACKs of the other direction in the flows' entries (message boundaries). */
#define FS_PROG_OBSERVER	"fs_observer"

/* ---- defaults and limits (validated by splitctl, assumed by the program) - */
#define FS_DEFAULT_THRESHOLD	20		/* packets; 0 = every TCP packet long */
#define FS_MAX_THRESHOLD	1000000000U
#define FS_MAX_THRESHOLD_BYTES	4000000000U	/* TCP payload bytes; 0 = none */
#define FS_MAX_RESHORT_MS	86400000U	/* one day; 0 = off (default) */
#define FS_DEFAULT_IDLE_MS	30000U		/* 30 s idle expiry */
#define FS_MIN_IDLE_MS		1U
#define FS_MAX_IDLE_MS		86400000U	/* one day */
#define FS_DEFAULT_DSCP_SHORT	0		/* CS0 */
#define FS_DEFAULT_DSCP_LONG	1		/* LE (RFC 8622): TOS byte 0x04 */
#define FS_DEFAULT_DSCP_SPILL	2		/* TOS byte 0x08: not LONG's, so
						 * it follows the SHORT table */
#define FS_DSCP_MAX		63
#define FS_DEFAULT_FLOWS	1048576U	/* entries per address family */
#define FS_MIN_FLOWS		64U
#define FS_MAX_FLOWS		(1U << 26)

#define FS_MAX_VLAN_TAGS	2		/* 802.1Q and 802.1ad (QinQ) */
#define FS_MAX_IPV6_EXT_HDRS	6		/* longer chains are not parsed */

/* ---- DSCP <-> TOS helpers (the two ECN bits are never part of DSCP) ---- */
#define FS_DSCP_SHIFT		2
#define FS_ECN_MASK		0x03
#define FS_DSCP_TO_TOS(d)	((__u8)((d) << FS_DSCP_SHIFT))
/* The bits of the TOS byte a classic (tos) policy routing rule matches
 * (the kernel's IPTOS_TOS_MASK): the DSCP's low 3 bits. */
#define FS_TOS_RULE_MASK	0x1c

/* ---- flow table ---------------------------------------------------------
 * Directional 5-tuple: the two directions of one TCP connection are two
 * flows. IPv4 and IPv6 use separate tables so the IPv4 fast path hashes a
 * 16-byte key instead of a 40-byte one.
 */
struct flow_key4 {
	__be32 saddr;		/* network byte order */
	__be32 daddr;		/* network byte order */
	__be16 sport;		/* network byte order */
	__be16 dport;		/* network byte order */
	__u8 proto;		/* IPPROTO_TCP */
	__u8 pad[3];		/* must be zero */
};
_Static_assert(sizeof(struct flow_key4) == 16, "flow_key4 layout");

struct flow_key6 {
	__u8 saddr[16];		/* network byte order */
	__u8 daddr[16];		/* network byte order */
	__be16 sport;		/* network byte order */
	__be16 dport;		/* network byte order */
	__u8 proto;
	__u8 pad[3];		/* must be zero */
};
_Static_assert(sizeof(struct flow_key6) == 40, "flow_key6 layout");

enum flow_class {
	FS_CLASS_SHORT = 0,
	FS_CLASS_LONG = 1,
};

/* How a flow is classified, decided once when it starts counting (first
 * packet, after idle expiry, after a reshort gap) from the rules.
 */
enum fs_mode {
	FS_MODE_GLOBAL = 0,	/* the live global thresholds (no rule, or a
				 * rule "auto" without thresholds of its own) */
	FS_MODE_AUTO = 1,	/* the policy's own thresholds */
	FS_MODE_SHORT = 2,	/* every packet short */
	FS_MODE_LONG = 3,	/* every packet long */
	FS_MODE_MAX
};

#define FS_POLICY_F_THRESHOLD	(1U << 0)	/* threshold is set */
/* In a flow entry: its current incarnation began with a packet other than
 * a SYN (midstream), so the table had lost its start. */
#define FS_POLICY_F_MIDSTREAM	(1U << 1)
/* In a flow entry: a CPU is taking a spill grant for the flow (between
 * claiming the flow and taking the grant); the others leave it alone. */
#define FS_POLICY_F_SPILL_CLAIM	(1U << 2)

/* A flow's policy (a rule's, copied into the flow at its start). */
struct flow_policy {
	union {
		struct {
			__u8 mode;	/* enum fs_mode */
			__u8 flags;	/* FS_POLICY_F_* */
			/* In a flow entry: the spill generation
			 * (fs_spill) in which the flow took a grant, so
			 * its long packets carry the spill code point
			 * while that generation lasts; 0: never. Cleared
			 * with the rest of the policy when the flow
			 * starts counting again (idle expiry, re-short).
			 * Zero in a rule. */
			__u16 spill;
		};
		/* The three as one word: the splitter sets spill with a
		 * compare-and-swap on it, so two CPUs never both spill one
		 * flow (the verifier's atomics are 32 or 64 bit). */
		__u32 head;
	};
	__u32 threshold;	/* FS_MODE_AUTO: packets, with FS_POLICY_F_THRESHOLD */
	__u32 threshold_bytes;	/* FS_MODE_AUTO: TCP payload bytes; 0 = none */
};
_Static_assert(sizeof(struct flow_policy) == 12, "flow_policy layout");

/* ack_flags of a flow entry: written by the observer (fs_observer). */
#define FS_ACK_F_SEEN		(1U << 0)	/* ack_hi holds an ACK number */
/* An ACK at or after ack_hi advertised a zero window: the next segment at
 * the boundary position is a window probe or the resume of a transfer
 * stalled by its receiver, not a new message. Cleared by the splitter when
 * the flow sends new data with data in flight again. */
#define FS_ACK_F_ZERO_WINDOW	(1U << 1)
/* seq_flags of a flow entry: written by the splitter. */
#define FS_SEQ_F_DATA		(1U << 0)	/* the connection sent payload */

/*
 * Per-flow state. Times are in jiffies (bpf_jiffies64(): ~1 ns, against
 * ~34 ns for bpf_ktime_get_ns on this platform); user space converts with the
 * kernel's HZ. packets/payload are updated with atomic adds while they still
 * decide the class, so concurrent CPUs never lose an increment then.
 */
struct flow_state {
	__u64 packets;		/* packets seen in this flow incarnation */
	__u64 bytes;		/* frame bytes (Ethernet header included) */
	__u64 payload;		/* TCP payload bytes, counted while a byte
				 * threshold applies to the flow */
	__u64 first_seen;	/* jiffies */
	__u64 last_seen;	/* jiffies */
	__u32 class;		/* enum flow_class of the last packet */
	struct flow_policy policy;	/* set when the flow starts counting */
	/* TCP sequence state of the connection (host byte order), kept
	 * across re-shorts and idle restarts, reset by a SYN; see
	 * tcpseq.h. Two writers, each its own fields: */
	__u32 snd_nxt;		/* splitter: highest end sequence sent
				 * (seq + payload, + 1 for SYN and FIN) */
	__u32 ack_hi;		/* observer: highest ACK number seen in the
				 * other direction (valid with FS_ACK_F_SEEN) */
	__u8 ack_flags;		/* observer: FS_ACK_F_* */
	__u8 seq_flags;		/* splitter: FS_SEQ_F_* */
	/* A reply (payload of the other direction) since the flow's last
	 * data segment when they differ: the observer sets reply_gen to
	 * data_gen + 1 at a reply, the splitter data_gen to reply_gen at
	 * its data. One writer each. */
	__u8 reply_gen;		/* observer */
	__u8 data_gen;		/* splitter */
	__u32 boundaries;	/* splitter: re-shorts at message boundaries */
};
_Static_assert(sizeof(struct flow_state) == 72, "flow_state layout");

/* ---- rules (LPM tries, one per family) -----------------------------------
 * A rule matches an endpoint of a flow (source or destination) whose
 * address lies in its prefix and, when the rule has a port, whose TCP port
 * is that port. The key is [port, address]: rules without a port are stored
 * with port 0 (never a valid TCP port), so each endpoint is looked up twice,
 * with its port and with 0. prefixlen counts the 16 port bits too.
 * Precedence: the longest address prefix, then a rule with a port; a tie
 * between the two endpoints goes to the destination's rule.
 */
#define FS_MAX_RULES		1024U		/* per family */
#define FS_RULE_NAME_LEN	32		/* with the NUL */
#define FS_RULE_PORT_BITS	16

/* Both families' keys have one body but for the address's length, so a
 * rule_key4 is laid out as the start of a rule_key6 (splitctl keys both
 * tables through a rule_key6). */
#define FS_RULE_KEY_FIELDS(addr_bytes)					\
	__u32 prefixlen;	/* FS_RULE_PORT_BITS + address bits */	\
	__be16 port;		/* network byte order; 0 = any port */	\
	__u8 addr[addr_bytes];	/* network byte order */		\
	__u8 pad[2]		/* must be zero (beyond every prefix) */

struct rule_key4 {
	FS_RULE_KEY_FIELDS(4);
};
_Static_assert(sizeof(struct rule_key4) == 12, "rule_key4 layout");

struct rule_key6 {
	FS_RULE_KEY_FIELDS(16);
};
_Static_assert(sizeof(struct rule_key6) == 24, "rule_key6 layout");

#define FS_RULE_F_PORT		(1U << 0)	/* the key's port is matched */

struct fs_rule {
	struct flow_policy policy;	/* copied into the flows it matches */
	__u8 prefixlen;		/* address bits (precedence) */
	__u8 flags;		/* FS_RULE_F_* */
	__u8 pad[2];		/* must be zero */
	char name[FS_RULE_NAME_LEN];	/* NUL-terminated; user space only */
};
_Static_assert(sizeof(struct fs_rule) == 48, "fs_rule layout");

/* ---- configuration (array map, one entry, key 0) ------------------------ */
#define FS_CFG_F_ENABLED	(1U << 0)	/* classify and mark; else pass untouched */
/* Pure ACKs (no payload; no SYN, FIN or RST) of a long flow keep the short
 * code point: a download's ACK stream then does not queue behind upload data
 * on the LONG tunnel. They are counted in their flow as usual.
 */
#define FS_CFG_F_ACK_SHORT	(1U << 1)
/* A flow that starts counting with a packet other than a SYN (its entry was
 * evicted, swept, lost in a restart, or expired while the connection
 * lived) starts long instead of short. Rules with mode short or long keep
 * their class. Off (short) by default: see classify.h.
 */
#define FS_CFG_F_MIDSTREAM_LONG	(1U << 2)
/* A data segment that starts a new message (all the flow sent before is
 * acknowledged, see tcpseq.h) counts again from packet 1 (short). */
#define FS_CFG_F_RESHORT_BOUNDARY (1U << 3)
/* Long flows that took a spill grant (fs_spill) are marked with
 * dscp_spill instead of dscp_long: they stay on, or move to, the SHORT
 * tunnel, behind short traffic (the router's scavenger class). Nothing
 * spills without an agent: it opens a generation and hands out grants. */
#define FS_CFG_F_SPILL		(1U << 4)
#define FS_DEFAULT_CFG_FLAGS	(FS_CFG_F_ENABLED | FS_CFG_F_ACK_SHORT | \
				 FS_CFG_F_RESHORT_BOUNDARY | FS_CFG_F_SPILL)

struct split_config {
	__u32 threshold;	/* packets 1..threshold short, threshold+1.. long */
	__u32 idle_timeout_ms;	/* operator-facing value */
	__u64 idle_jiffies;	/* the same timeout in jiffies, used per packet */
	__u8 dscp_short;	/* 0..63 */
	__u8 dscp_long;		/* 0..63 */
	__u8 dscp_spill;	/* 0..63, with FS_CFG_F_SPILL; differs
				 * from both others */
	__u8 pad;
	__u32 flags;		/* FS_CFG_F_* */
	__u32 threshold_bytes;	/* TCP payload bytes; 0 = no byte threshold */
	__u32 reshort_gap_ms;	/* operator-facing value; 0 = off */
	__u64 reshort_jiffies;	/* the same gap in jiffies; 0 = off */
	__u32 rules4;		/* entries in fs_rules4: 0 = no lookup at all */
	__u32 rules6;		/* entries in fs_rules6 */
	__u64 quiet_jiffies;	/* the shorter of idle and (when on) reshort:
				 * the one silence test of every packet */
};
_Static_assert(sizeof(struct split_config) == 56, "split_config layout");

/* ms -> jiffies, rounded up: a timeout or gap never ends early. */
static inline __u64 fs_ms_to_jiffies(__u32 ms, __u32 hz)
{
	return ((__u64)ms * hz + 999) / 1000;
}

/* quiet_jiffies from the idle and reshort fields. */
static inline void split_config_set_quiet(struct split_config *c)
{
	c->quiet_jiffies = c->reshort_jiffies &&
			   c->reshort_jiffies < c->idle_jiffies ?
			   c->reshort_jiffies : c->idle_jiffies;
}

/* Set the idle fields from one value so they can never disagree. */
static inline void split_config_set_idle(struct split_config *c, __u32 ms,
					 __u32 hz)
{
	c->idle_timeout_ms = ms;
	c->idle_jiffies = fs_ms_to_jiffies(ms, hz);
	split_config_set_quiet(c);
}

/* The same for the reshort gap (0 stays 0: off). */
static inline void split_config_set_reshort(struct split_config *c, __u32 ms,
					    __u32 hz)
{
	c->reshort_gap_ms = ms;
	c->reshort_jiffies = fs_ms_to_jiffies(ms, hz);
	split_config_set_quiet(c);
}

/* ---- spill grants (array, FS_SPILL_KEYS entries) -------------------------
 * The agent lets long flows onto the SHORT tunnel one at a time: it opens
 * a generation (gen != 0) and raises grants; the next long data packet of
 * a flow not yet spilled in this generation takes one (compare-and-swap on
 * taken: two CPUs never take one grant twice, and taken never passes
 * grants) and records gen in its entry (flow_policy.spill). Two
 * entries, one writer each, as fs_stats: a user-space update writes a
 * whole value and would lose the datapath's increments.
 *   key FS_SPILL_KEY_AGENT     gen, grants (the agent writes)
 *   key FS_SPILL_KEY_DATAPATH  taken, moved, taken_jiffies (the programs)
 * A new generation spills nothing until it grants: flows of an older one
 * are long again (gen 0 in the agent's entry: none spills).
 * The lease: the agent's entry holds only until lease_jiffies
 * (bpf_jiffies64()); the agent renews it while it runs. Past it the
 * datapath treats every flow as not spilled and takes no grant, so a
 * dead agent's spill ends by itself within FS_SPILL_LEASE_MS (plus a
 * jiffy), with nobody left to end it (docs/design.md, *Spill fails safe*).
 */
#define FS_SPILL_LEASE_MS	1500	/* the lease the agent writes */
enum fs_spill_key {
	FS_SPILL_KEY_AGENT = 0,
	FS_SPILL_KEY_DATAPATH = 1,
	FS_SPILL_KEYS
};

struct fs_spill {
	/* agent */
	__u64 grants;		/* grants handed out, cumulative; a flow may
				 * take one while taken < grants */
	__u16 gen;		/* the generation flows are spilled in;
				 * 0: none */
	__u8 pad[6];		/* must be zero */
	__u64 lease_jiffies;	/* the entry holds while bpf_jiffies64()
				 * <= this; after it, nothing spills */
	/* datapath */
	__u64 taken;		/* grants taken, cumulative (<= grants) */
	__u64 moved;		/* grants taken by a flow whose previous
				 * packet was long: its earlier packets may
				 * still be in LONG's queue */
	__u64 taken_jiffies;	/* bpf_jiffies64() of the last grant taken */
};
_Static_assert(sizeof(struct fs_spill) == 48, "fs_spill layout");

/* ---- statistics (per-CPU array, one __u64 per index) --------------------
 * X(enum suffix, json/prometheus name, help text)
 */
#define FS_STATS(X)                                                                                \
	X(PKTS_SHORT, "packets_short", "TCP packets marked short")                                 \
	X(BYTES_SHORT, "bytes_short", "bytes of packets marked short")                             \
	X(PKTS_LONG, "packets_long", "TCP packets marked long")                                    \
	X(BYTES_LONG, "bytes_long", "bytes of packets marked long")                                \
	X(FLOWS_NEW, "flows_new", "TCP flows seen (new or restarted after idle)")                  \
	X(FLOWS_PROMOTED, "flows_promoted", "flows promoted from short to long (both causes)")     \
	X(FLOWS_EXPIRED, "flows_expired", "flows restarted after idle timeout at packet time")     \
	X(FLOWS_SWEPT, "flows_swept", "idle flows removed by the user-space sweep")                \
	X(PASS_NON_TCP, "pass_non_tcp", "IP packets passed unclassified: not TCP")                 \
	X(PASS_FRAGMENT, "pass_fragment", "IP non-first fragments passed unclassified")            \
	X(PASS_NON_IP, "pass_non_ip", "frames passed unclassified: not IPv4/IPv6")                 \
	X(PASS_MALFORMED, "pass_malformed", "frames passed unclassified: truncated or malformed")  \
	X(PASS_EXTHDR, "pass_ext_hdr_limit",                                                       \
	  "IPv6 packets passed unclassified: extension chain too long")                            \
	X(PASS_DISABLED, "pass_disabled", "packets passed while classification is disabled")       \
	X(INSERT_FAIL, "insert_failures", "flow table insertions that failed")                     \
	X(ACKS_SHORT, "acks_short", "pure ACKs of long flows marked short (ack-short)")            \
	X(PROMOTED_PKTS, "flows_promoted_packets", "flows promoted by their packet threshold")     \
	X(PROMOTED_BYTES, "flows_promoted_bytes",                                                  \
	  "flows promoted by their byte threshold (and not the packet one)")                       \
	X(FLOWS_RESHORT, "flows_reshort", "flows counted as short again (both causes)")            \
	X(RULE_MATCHES, "rule_matches", "flow starts that matched a rule")                         \
	X(FLOWS_MIDSTREAM, "flows_midstream",                                                      \
	  "TCP flows not in the table whose packet was not a SYN (evicted, swept, restart, "       \
	  "asymmetric routing)")                                                                   \
	X(RESHORT_GAP, "flows_reshort_gap",                                                        \
	  "flows counted as short again after a silence longer than reshort-gap")                  \
	X(RESHORT_BOUNDARY, "flows_reshort_boundary",                                              \
	  "flows counted as short again at a message boundary (all data acknowledged)")            \
	X(PKTS_SPILL, "packets_spill",                                                             \
	  "long TCP packets marked with the spill code point (also counted as long)")              \
	X(BYTES_SPILL, "bytes_spill", "bytes of the packets marked with the spill code point")     \
	X(FLOWS_SPILLED, "spill_flows",                                                            \
	  "spill grants taken: long flows moved to the SHORT tunnel's scavenger class")

#define FS_STAT_ENUM(id, name, help) FS_STAT_##id,
enum fs_stat {
	FS_STATS(FS_STAT_ENUM)
	FS_STAT_MAX
};
#undef FS_STAT_ENUM

/*
 * fs_stats is a per-CPU array of struct fs_stats: the datapath finds all of
 * its counters with ONE lookup per packet. Two entries, one writer each, so
 * no writer ever overwrites another's increments: user space does
 * read-modify-write of a whole per-CPU value (bpf_map_update_elem), which
 * would lose the datapath's concurrent increments on that CPU.
 * A counter's value is the sum over both entries and every CPU.
 */
enum fs_stats_key {
	FS_STATS_KEY_DATAPATH = 0,	/* written only by the BPF programs */
	FS_STATS_KEY_USER = 1,		/* written only by splitctl (flows_swept) */
	FS_STATS_KEYS
};

struct fs_stats {
	__u64 v[FS_STAT_MAX];		/* indexed by enum fs_stat */
};
_Static_assert(sizeof(struct fs_stats) == 8 * FS_STAT_MAX, "fs_stats layout");

/* ---- duplicating the short class (bpf/dup.bpf.c, docs/design.md) --------
 * fs_dup (TC egress of the SHORT tunnel device) sends a copy of each
 * short-class TCP segment that consumes sequence space to the LONG tunnel
 * device; fs_dedup (TC ingress of both tunnel devices, at the peer) passes
 * the first copy of a segment and drops the second one, which arrives on
 * the other tunnel. Their own pins, next to the splitter's; fs_config (the
 * short code point) is the splitter's, shared.
 */
#define FS_MAP_DUP_CONFIG	"fs_dup_config"
#define FS_MAP_DUP_SEEN4	"fs_dup_seen4"
#define FS_MAP_DUP_SEEN6	"fs_dup_seen6"
#define FS_MAP_DUP_STATS	"fs_dup_stats"
#define FS_PROG_DUP		"fs_dup"	/* TC egress of SHORT */
#define FS_PROG_DEDUP		"fs_dedup"	/* TC ingress of SHORT and LONG */

/* Entries of each dedup table (LRU: a full table forgets its oldest
 * segments, so a late copy passes; it never drops a new segment). */
#define FS_DUP_DEFAULT_ENTRIES	65536U
#define FS_DUP_MIN_ENTRIES	64U
#define FS_DUP_MAX_ENTRIES	(1U << 24)
/* How long after the first copy the second one still counts as its copy:
 * more than the two tunnels' delay difference (queues included), less
 * than a retransmission timeout would matter for (see design.md). */
#define FS_DUP_DEFAULT_WINDOW_MS 1000U
#define FS_DUP_MIN_WINDOW_MS	1U
#define FS_DUP_MAX_WINDOW_MS	60000U

#define FS_DUP_F_DUP		(1U << 0)	/* fs_dup copies */
#define FS_DUP_F_DEDUP		(1U << 1)	/* fs_dedup drops second copies */

/* Array map, one entry (key 0), written by splitctl. */
struct dup_config {
	__u32 flags;		/* FS_DUP_F_* */
	__u32 long_ifindex;	/* fs_dup: where the copy goes (egress) */
	__u32 short_ifindex;	/* fs_dup runs at its egress (splitctl's
				 * record; the programs do not read it) */
	__u32 window_ms;	/* operator-facing value */
	__u8 long_dmac[6];	/* fs_dup: the copy's Ethernet destination,
				 * the LONG tunnel peer's address (wire order) */
	__u8 long_smac[6];	/* fs_dup: its source, the LONG device's own
				 * address (wire order) */
	__u8 pad[4];		/* must be zero */
	__u64 window_jiffies;	/* the window in jiffies, used per packet */
};
_Static_assert(sizeof(struct dup_config) == 40, "dup_config layout");

/* What makes two arrivals the same segment (docs/design.md, *Duplicating
 * the short class*): the directional flow, the TCP sequence and
 * acknowledgment numbers, the IP packet's length and, for IPv4, the IP ID
 * (a retransmission gets a new one), for IPv6 the TCP timestamp value (0
 * without the option). Addresses, ports, seq, ack, ip_id and tsval are in
 * NETWORK byte order as on the wire; len is host order.
 */
struct dup_key4 {
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
	__be32 seq;
	__be32 ack;
	__u32 len;		/* IP total length */
	__be16 ip_id;
	__u8 pad[2];		/* must be zero */
};
_Static_assert(sizeof(struct dup_key4) == 28, "dup_key4 layout");

struct dup_key6 {
	__u8 saddr[16];
	__u8 daddr[16];
	__be16 sport;
	__be16 dport;
	__be32 seq;
	__be32 ack;
	__be32 tsval;		/* TCP timestamp value; 0 without the option */
	__u32 len;		/* IPv6 payload length */
};
_Static_assert(sizeof(struct dup_key6) == 52, "dup_key6 layout");

/* The first copy of a segment: when and on which tunnel it arrived. */
struct dup_seen {
	__u64 jiffies;		/* bpf_jiffies64() at its arrival */
	__u32 ifindex;		/* the tunnel device it arrived on */
	__u32 pad;		/* must be zero */
};
_Static_assert(sizeof(struct dup_seen) == 16, "dup_seen layout");

/* X(enum suffix, json/prometheus name, help text); a per-CPU array of one
 * struct fs_dup_stats, written only by the two programs. */
#define FS_DUP_STATS(X)                                                                            \
	X(PKTS, "dup_packets", "short-class TCP packets copied to the LONG tunnel (wire packets)") \
	X(BYTES, "dup_bytes", "bytes of the copies (wire bytes, as bytes_short counts them)")      \
	X(FAIL, "dup_failures",                                                                    \
	  "copies bpf_clone_redirect could not send (LONG device gone or down)")                   \
	X(FIRST, "dedup_first", "short-class segments whose first copy passed and was remembered") \
	X(DROPS, "dedup_drops",                                                                    \
	  "second copies dropped (arrived on the other tunnel within the window)")                 \
	X(SAME_DEV, "dedup_same_tunnel",                                                           \
	  "repeats on the tunnel of the first copy, passed (not a copy of ours)")                  \
	X(LATE, "dedup_late", "repeats after the window, passed (and remembered anew)")            \
	X(INSERT_FAIL, "dedup_insert_failures",                                                    \
	  "first copies the table could not remember (their copy will pass)")

#define FS_DUP_STAT_ENUM(id, name, help) FS_DUP_STAT_##id,
enum fs_dup_stat {
	FS_DUP_STATS(FS_DUP_STAT_ENUM)
	FS_DUP_STAT_MAX
};
#undef FS_DUP_STAT_ENUM

struct fs_dup_stats {
	__u64 v[FS_DUP_STAT_MAX];	/* indexed by enum fs_dup_stat */
};
_Static_assert(sizeof(struct fs_dup_stats) == 8 * FS_DUP_STAT_MAX, "fs_dup_stats layout");

#endif /* FLOWSPLIT_H */
