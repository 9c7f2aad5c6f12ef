// SPDX-License-Identifier: GPL-2.0
/*
 * scavenger.c - the spill class on the SHORT tunnel device, over rtnetlink
 * (docs/design.md, *Spill*):
 *
 *   root  HTB TCFG_SCAV_MAJOR:   unclassified traffic -> :10
 *     :5   the agent's timestamp probes, prio 0, rate = ceil = a line rate
 *     :1   HTB class, rate = ceil = top
 *       :10  short traffic, prio 1, rate = ceil = top
 *       :20  spilled traffic, prio 2, rate rate-min, ceil top
 *              leaf TBF TCFG_SCAV_TBF_MAJOR: at the rate the agent sets,
 *              its queue wait_ms at that rate (tcfg_scav_limit())
 *   u32 filters on the root: IPv4 dsfield / IPv6 traffic class & 0xfc ==
 *   the spill code point -> :20; an IPv4 ICMP timestamp request (header
 *   without options) -> :5
 *
 * The probes go first so that they see the WAN's queue and not the one
 * short traffic makes here when the top holds it (a job bound by SHORT's
 * rate keeps a few of its packets queued wherever the bottleneck is): the
 * controller must not take that queue for the WAN's. They are beside the
 * top, not under it: under it, a probe waits for the top's tokens after
 * every frame it let through (a frame's time, 0.7 ms at 18 Mbit/s, but
 * 120 ms at 0.1 Mbit/s), so a top cut too low would delay the probes, and
 * the controller would cut it again on that delay.
 *
 * top (tcfg_scav_top() changes it in place): while a flow is spilled,
 * 0.95 x the agent's estimate of SHORT's capacity (the queue then forms
 * here, short traffic first); otherwise 0.95 x SHORT's configured rate,
 * or a line rate the HTB never reaches.
 *
 * No rate tables: since 3.13 the kernel computes HTB's and TBF's rates
 * from the rate itself (psched_ratecfg_precompute) and reads a table only
 * to guess the link layer of an old tc that does not say; we say
 * (Ethernet). TBF's burst is given in bytes (TCA_TBF_BURST); HTB's buffer
 * in psched ticks of 64 ns. Rates above 32 bit of bytes/s go as *_RATE64.
 *
 * Ownership: the root qdisc's handle TCFG_SCAV_MAJOR (an HTB of that
 * handle is ours; anything else but the kernel's default root, handle 0,
 * is the operator's and refused). The agent installs it while it spills
 * and removes it when it stops; "route down" removes it too (from both
 * recorded tunnels), and an agent that starts removes one of ours from
 * every tunnel it or the record names, so no agent's death leaves it
 * behind. Until then, the bounded queue lets no packet wait in it longer
 * than wait_ms (docs/design.md, *Spill fails safe*).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/gen_stats.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "tcfg.h"
#include "util.h"

#define PSCHED_TICK_NS 64	/* PSCHED_SHIFT 6 */
#define SCAV_MTU 1600		/* one full frame with its headers */
#define SCAV_QUANTUM FS_FRAME_BYTES /* HTB's round-robin quantum: one frame */
#define SCAV_HTB_R2Q 10
#define SCAV_PRIO_V4 1		/* the filters' priorities */
#define SCAV_PRIO_V6 2
#define SCAV_PRIO_PROBE 3
#define SCAV_ICMP_TIMESTAMP 13	/* RFC 792 */
#define SCAV_PROBE_BPS 10000000000ULL /* the probe class: never holds one */

static __u32 h(unsigned int major, unsigned int minor)
{
	return TC_H_MAKE((__u32)major << 16, minor);
}

static struct nlmsghdr *tc_start(void *buf, int type, int flags, int ifindex,
				 __u32 parent, __u32 handle, __u32 info)
{
	struct nlmsghdr *nlh;
	struct tcmsg *t;

	memset(buf, 0, TCFG_MSG_SIZE);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	t = mnl_nlmsg_put_extra_header(nlh, sizeof(*t));
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = ifindex;
	t->tcm_parent = parent;
	t->tcm_handle = handle;
	t->tcm_info = info;
	return nlh;
}

/* bytes/s into a ratespec; true when it needs the 64-bit attribute */
static bool ratespec(struct tc_ratespec *r, __u64 bps)
{
	__u64 Bps = bps / 8 ? bps / 8 : 1;

	memset(r, 0, sizeof(*r));
	r->linklayer = TC_LINKLAYER_ETHERNET;
	r->rate = Bps >= ~0U ? ~0U : (__u32)Bps;
	return Bps >= ~0U;
}

/* psched ticks to send bytes at bps */
static __u32 ticks(__u64 bytes, __u64 bps)
{
	__u64 ns = bytes * 8 * FS_NS_PER_S / (bps ? bps : 1);
	__u64 t = ns / PSCHED_TICK_NS;

	return t > ~0U ? ~0U : (__u32)t;
}

struct nlmsghdr *tcfg_msg_htb_root(void *buf, int ifindex, unsigned int major,
				  unsigned int defminor)
{
	struct nlmsghdr *nlh = tc_start(buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex,
					TC_H_ROOT, h(major, 0), 0);
	struct tc_htb_glob g = {
		.version = 3, .rate2quantum = SCAV_HTB_R2Q, .defcls = defminor,
	};
	struct nlattr *opt;

	mnl_attr_put_strz(nlh, TCA_KIND, "htb");
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_HTB_INIT, sizeof(g), &g);
	mnl_attr_nest_end(nlh, opt);
	return nlh;
}

struct nlmsghdr *tcfg_msg_scav_root(void *buf, int ifindex)
{
	return tcfg_msg_htb_root(buf, ifindex, TCFG_SCAV_MAJOR, TCFG_SCAV_SHORT_MINOR);
}

struct nlmsghdr *tcfg_msg_htb_class(void *buf, int ifindex, unsigned int major, bool create,
				    unsigned int parent_minor, unsigned int minor,
				    unsigned int prio, __u64 rate_bps, __u64 ceil_bps)
{
	struct nlmsghdr *nlh = tc_start(buf, RTM_NEWTCLASS,
					create ? NLM_F_CREATE | NLM_F_EXCL : 0, ifindex,
					h(major, parent_minor), h(major, minor), 0);
	struct tc_htb_opt o = { .quantum = SCAV_QUANTUM, .prio = prio };
	bool r64 = ratespec(&o.rate, rate_bps), c64 = ratespec(&o.ceil, ceil_bps);
	struct nlattr *opt;

	/* a burst of one frame and a millisecond at the rate */
	o.buffer = ticks(SCAV_MTU + rate_bps / 8 / 1000, rate_bps);
	o.cbuffer = ticks(SCAV_MTU + ceil_bps / 8 / 1000, ceil_bps);
	mnl_attr_put_strz(nlh, TCA_KIND, "htb");
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_HTB_PARMS, sizeof(o), &o);
	if (r64)
		mnl_attr_put_u64(nlh, TCA_HTB_RATE64, rate_bps / 8);
	if (c64)
		mnl_attr_put_u64(nlh, TCA_HTB_CEIL64, ceil_bps / 8);
	mnl_attr_nest_end(nlh, opt);
	return nlh;
}

struct nlmsghdr *tcfg_msg_scav_class(void *buf, int ifindex, bool create,
				     unsigned int parent_minor, unsigned int minor,
				     unsigned int prio, __u64 rate_bps, __u64 ceil_bps)
{
	return tcfg_msg_htb_class(buf, ifindex, TCFG_SCAV_MAJOR, create, parent_minor, minor,
				  prio, rate_bps, ceil_bps);
}

struct nlmsghdr *tcfg_msg_scav_tbf(void *buf, int ifindex, bool create, __u64 rate_bps,
				   __u32 limit_bytes)
{
	struct nlmsghdr *nlh = tc_start(buf, RTM_NEWQDISC,
					create ? NLM_F_CREATE | NLM_F_EXCL : 0, ifindex,
					h(TCFG_SCAV_MAJOR, TCFG_SCAV_SPILL_MINOR),
					h(TCFG_SCAV_TBF_MAJOR, 0), 0);
	struct tc_tbf_qopt q = { .limit = limit_bytes };
	bool r64 = ratespec(&q.rate, rate_bps);
	struct nlattr *opt;

	/* the burst: one frame, so that a hold's two dummies spend it */
	q.buffer = ticks(SCAV_MTU, rate_bps);
	mnl_attr_put_strz(nlh, TCA_KIND, "tbf");
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_TBF_PARMS, sizeof(q), &q);
	mnl_attr_put_u32(nlh, TCA_TBF_BURST, SCAV_MTU);
	if (r64)
		mnl_attr_put_u64(nlh, TCA_TBF_RATE64, rate_bps / 8);
	mnl_attr_nest_end(nlh, opt);
	return nlh;
}

struct nlmsghdr *tcfg_msg_bfifo(void *buf, int ifindex, __u32 parent, __u32 handle,
				__u32 limit_bytes)
{
	struct nlmsghdr *nlh = tc_start(buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex,
					parent, handle, 0);
	struct tc_fifo_qopt q = { .limit = limit_bytes };

	mnl_attr_put_strz(nlh, TCA_KIND, "bfifo");
	mnl_attr_put(nlh, TCA_OPTIONS, sizeof(q), &q);
	return nlh;
}

/* A u32 filter on the root major:: nkeys (at most 3) keys on the network
 * header, all to match, -> class major:minor */
static struct nlmsghdr *u32_filter(void *buf, int ifindex, unsigned int major, unsigned int prio,
				   __u16 proto, unsigned int minor, const struct tc_u32_key *keys,
				   unsigned int nkeys)
{
	struct nlmsghdr *nlh = tc_start(buf, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex,
					h(major, 0), 0,
					TC_H_MAKE((__u32)prio << 16, htons(proto)));
	struct {
		struct tc_u32_sel sel;
		struct tc_u32_key key[3];
	} s = { 0 };
	struct nlattr *opt;

	s.sel.flags = TC_U32_TERMINAL;
	s.sel.nkeys = nkeys;
	memcpy(s.key, keys, nkeys * sizeof(*keys));
	mnl_attr_put_strz(nlh, TCA_KIND, "u32");
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u32(nlh, TCA_U32_CLASSID, h(major, minor));
	mnl_attr_put(nlh, TCA_U32_SEL, sizeof(s.sel) + nkeys * sizeof(*keys), &s);
	mnl_attr_nest_end(nlh, opt);
	return nlh;
}

struct nlmsghdr *tcfg_msg_dscp_filter(void *buf, int ifindex, unsigned int major,
				      unsigned int prio, int family, int dscp, unsigned int minor)
{
	bool v6 = family == AF_INET6;
	__u32 tos = (__u32)dscp << 2;
	/* the first word of the IP header: IPv4's TOS byte is bits 16..23,
	 * IPv6's traffic class bits 20..27; the DSCP is its upper 6 bits */
	struct tc_u32_key k = {
		.off = 0,
		.mask = htonl(v6 ? 0xfcu << 20 : 0xfcu << 16),
		.val = htonl(v6 ? tos << 20 : tos << 16),
	};

	return u32_filter(buf, ifindex, major, prio, v6 ? ETH_P_IPV6 : ETH_P_IP, minor, &k, 1);
}

struct nlmsghdr *tcfg_msg_scav_filter(void *buf, int ifindex, int family, int dscp)
{
	return tcfg_msg_dscp_filter(buf, ifindex, TCFG_SCAV_MAJOR,
				    family == AF_INET6 ? SCAV_PRIO_V6 : SCAV_PRIO_V4, family, dscp,
				    TCFG_SCAV_SPILL_MINOR);
}

struct nlmsghdr *tcfg_msg_probe_filter(void *buf, int ifindex, unsigned int major,
				       unsigned int prio, unsigned int minor)
{
	/* a header of 5 words (so the ICMP type is at byte 20), protocol
	 * ICMP, type timestamp request */
	const struct tc_u32_key k[] = {
		{ .off = 0, .mask = htonl(0x0f000000u), .val = htonl(0x05000000u) },
		{ .off = 8, .mask = htonl(0x00ff0000u), .val = htonl((__u32)IPPROTO_ICMP << 16) },
		{ .off = 20, .mask = htonl(0xff000000u),
		  .val = htonl((__u32)SCAV_ICMP_TIMESTAMP << 24) },
	};

	return u32_filter(buf, ifindex, major, prio, ETH_P_IP, minor, k, 3);
}

struct nlmsghdr *tcfg_msg_scav_probe_filter(void *buf, int ifindex)
{
	return tcfg_msg_probe_filter(buf, ifindex, TCFG_SCAV_MAJOR, SCAV_PRIO_PROBE,
				     TCFG_SCAV_PROBE_MINOR);
}

/* RTM_GETQDISC / RTM_DELQDISC of one qdisc (parent, handle) */
struct nlmsghdr *tcfg_msg_scav_qdisc(void *buf, int type, int ifindex, __u32 parent,
				     __u32 handle)
{
	/* a get answers as a notification: to us only with NLM_F_ECHO */
	return tc_start(buf, type, type == RTM_GETQDISC ? NLM_F_ECHO : 0, ifindex, parent,
			handle, 0);
}

/* ---- reading a qdisc back ------------------------------------------------------- */
static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	struct tcfg_qdisc *qi = data;
	const struct nlattr *a, *s;

	if (nlh->nlmsg_type != RTM_NEWQDISC)
		return MNL_CB_OK;
	qi->found = true;
	qi->handle = t->tcm_handle;
	mnl_attr_for_each(a, nlh, sizeof(*t)) {
		switch (mnl_attr_get_type(a)) {
		case TCA_KIND:
			snprintf(qi->kind, sizeof(qi->kind), "%.*s",
				 (int)mnl_attr_get_payload_len(a),
				 (const char *)mnl_attr_get_payload(a));
			break;
		case TCA_OPTIONS:
			/* a fifo's limit (bfifo: bytes) */
			if ((!strcmp(qi->kind, "bfifo") || !strcmp(qi->kind, "pfifo")) &&
			    mnl_attr_get_payload_len(a) >= sizeof(struct tc_fifo_qopt))
				memcpy(&qi->limit, mnl_attr_get_payload(a), sizeof(qi->limit));
			break;
		case TCA_STATS2:
			mnl_attr_for_each_nested(s, a) {
				if (mnl_attr_get_type(s) == TCA_STATS_BASIC &&
				    mnl_attr_get_payload_len(s) >= 12) {
					const __u8 *p = mnl_attr_get_payload(s);
					__u32 pk;

					memcpy(&qi->st.bytes, p, 8);
					memcpy(&pk, p + 8, 4);
					qi->st.packets = pk;
				} else if (mnl_attr_get_type(s) == TCA_STATS_QUEUE &&
					   mnl_attr_get_payload_len(s) >=
						   sizeof(struct gnet_stats_queue)) {
					struct gnet_stats_queue q;

					memcpy(&q, mnl_attr_get_payload(s), sizeof(q));
					qi->st.backlog = q.backlog;
					qi->st.drops = q.drops;
				}
			}
			break;
		}
	}
	return MNL_CB_OK;
}

int tcfg_qdisc_get(struct nl *nl, int ifindex, __u32 parent, __u32 handle, struct tcfg_qdisc *qi)
{
	char buf[TCFG_MSG_SIZE];

	memset(qi, 0, sizeof(*qi));
	return nl_talk(nl, tcfg_msg_scav_qdisc(buf, RTM_GETQDISC, ifindex, parent, handle),
		       qdisc_cb, qi);
}

/* ---- the handle ------------------------------------------------------------------ */
struct tcfg_scav {
	struct nl nl;
	char dev[IF_NAMESIZE];
	int ifindex;
	__u32 limit_bytes, wait_ms;
	__u64 min_bps;
};

__u32 tcfg_scav_limit(__u64 rate_bps, __u32 wait_ms, __u32 limit_bytes)
{
	__u64 b = rate_bps / 8 * wait_ms / 1000;

	if (b > limit_bytes)
		b = limit_bytes;
	return b < SCAV_MTU ? SCAV_MTU : (__u32)b;
}

/* "spill" for the messages of a root qdisc that is not ours */
#define SCAV_NEED "spill needs the root for its class; remove it or turn spill off"

int tcfg_root_owner(struct nl *nl, int ifindex, const char *dev, unsigned int major,
		    const char *need, struct tcfg_err *e)
{
	struct tcfg_qdisc qi;

	if (tcfg_qdisc_get(nl, ifindex, TC_H_ROOT, 0, &qi))
		return errno == ENOENT ? 0
				       : tcfg_fail(e, errno, "%s: reading its root qdisc: %s", dev,
						   nl_err(nl));
	if (!qi.found || TC_H_MAJ(qi.handle) == 0)
		return 0;
	if (qi.handle == h(major, 0) && !strcmp(qi.kind, "htb"))
		return 1;
	return tcfg_fail(e, EEXIST,
			 "%s: a root qdisc that splitctl did not make is there (%s %x:): %s", dev,
			 qi.kind, TC_H_MAJ(qi.handle) >> 16, need);
}

int tcfg_root_open(struct nl *nl, const char *dev, int *ifindex, unsigned int major,
		   const char *need, struct tcfg_err *e)
{
	nl->sock = NULL;
	*ifindex = if_nametoindex(dev);
	if (!*ifindex)
		return 0;
	if (nl_open(nl))
		return tcfg_fail(e, errno, "netlink: %s", strerror(errno));
	return tcfg_root_owner(nl, *ifindex, dev, major, need, e);
}

int tcfg_qdisc_del_root(struct nl *nl, int ifindex, unsigned int major)
{
	char buf[TCFG_MSG_SIZE];

	return nl_talk(nl, tcfg_msg_scav_qdisc(buf, RTM_DELQDISC, ifindex, TC_H_ROOT,
					       h(major, 0)), NULL, NULL);
}

static int del_root(struct nl *nl, int ifindex)
{
	return tcfg_qdisc_del_root(nl, ifindex, TCFG_SCAV_MAJOR);
}

/* The four HTB classes, @k: 0 the top :1 (rate = ceil = top), 1 the probe
 * class :5 beside it (prio 0, rate = ceil = SCAV_PROBE_BPS, whatever the
 * top), 2 the short class :10 (prio 1,
 * rate = ceil = top), 3 the spill class :20 (prio 2, its guaranteed
 * min_bps, ceil top). */
#define SCAV_CLASSES 4
static struct nlmsghdr *class_msg(void *buf, const struct tcfg_scav *s, bool create, int k,
				  __u64 top_bps, const char **step)
{
	__u64 min = s->min_bps < top_bps ? s->min_bps : top_bps;

	switch (k) {
	case 0:
		*step = "class :1";
		return tcfg_msg_scav_class(buf, s->ifindex, create, 0, TCFG_SCAV_TOP_MINOR, 0,
					   top_bps, top_bps);
	case 1:
		*step = "the probe class";
		return tcfg_msg_scav_class(buf, s->ifindex, create, 0, TCFG_SCAV_PROBE_MINOR, 0,
					   SCAV_PROBE_BPS, SCAV_PROBE_BPS);
	case 2:
		*step = "the short class";
		return tcfg_msg_scav_class(buf, s->ifindex, create, TCFG_SCAV_TOP_MINOR,
					   TCFG_SCAV_SHORT_MINOR, 1, top_bps, top_bps);
	default:
		*step = "the spill class";
		return tcfg_msg_scav_class(buf, s->ifindex, create, TCFG_SCAV_TOP_MINOR,
					   TCFG_SCAV_SPILL_MINOR, 2, min, top_bps);
	}
}

int tcfg_scav_open(struct tcfg_scav **out, const struct tcfg_scav_cfg *c, char *err,
		   size_t errlen)
{
	struct tcfg_err e = { "" };
	char buf[TCFG_MSG_SIZE];
	struct tcfg_scav *s;
	const char *step = "";
	int ret, i;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	snprintf(s->dev, sizeof(s->dev), "%s", c->dev);
	s->limit_bytes = c->limit_bytes;
	s->wait_ms = c->wait_ms;
	s->min_bps = c->min_bps;
	s->ifindex = if_nametoindex(c->dev);
	if (!s->ifindex) {
		snprintf(err, errlen, "%s: no such interface", c->dev);
		free(s);
		return -ENODEV;
	}
	if (nl_open(&s->nl)) {
		ret = -errno;
		snprintf(err, errlen, "netlink: %s", strerror(errno));
		free(s);
		return ret;
	}
	ret = tcfg_root_owner(&s->nl, s->ifindex, s->dev, TCFG_SCAV_MAJOR, SCAV_NEED, &e);
	if (ret < 0)
		goto fail;
	/* ours from an earlier agent: made again (HTB's qdisc cannot be
	 * changed in place), so its shape is exactly this one */
	if (ret == 1 && del_root(&s->nl, s->ifindex)) {
		ret = tcfg_fail(&e, errno, "%s: removing the earlier spill class: %s", s->dev,
				nl_err(&s->nl));
		goto fail;
	}
	ret = 0;
	for (i = 0; i < SCAV_CLASSES + 5 && !ret; i++) {
		struct nlmsghdr *nlh;

		switch (i) {
		case 0: step = "the HTB root"; nlh = tcfg_msg_scav_root(buf, s->ifindex); break;
		case 1 ... SCAV_CLASSES:
			nlh = class_msg(buf, s, true, i - 1, c->top_bps, &step);
			break;
		case SCAV_CLASSES + 1:
			step = "the spill TBF";
			nlh = tcfg_msg_scav_tbf(buf, s->ifindex, true, c->rate_bps,
						tcfg_scav_limit(c->rate_bps, s->wait_ms,
								s->limit_bytes));
			break;
		case SCAV_CLASSES + 2:
			step = "the IPv4 filter";
			nlh = tcfg_msg_scav_filter(buf, s->ifindex, AF_INET, c->dscp);
			break;
		case SCAV_CLASSES + 3:
			step = "the IPv6 filter";
			nlh = tcfg_msg_scav_filter(buf, s->ifindex, AF_INET6, c->dscp);
			break;
		default:
			step = "the probe filter";
			nlh = tcfg_msg_scav_probe_filter(buf, s->ifindex);
			break;
		}
		if (nl_talk(&s->nl, nlh, NULL, NULL))
			ret = tcfg_fail(&e, errno, "%s: %s: %s", s->dev, step, nl_err(&s->nl));
	}
	if (ret) {
		/* nothing half-made stays */
		if (i > 1)
			del_root(&s->nl, s->ifindex);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	snprintf(err, errlen, "%s", e.msg);
	nl_close(&s->nl);
	free(s);
	return ret;
}

int tcfg_scav_rate(struct tcfg_scav *s, __u64 rate_bps, char *err, size_t errlen)
{
	char buf[TCFG_MSG_SIZE];

	__u32 limit = tcfg_scav_limit(rate_bps, s->wait_ms, s->limit_bytes);

	if (nl_talk(&s->nl, tcfg_msg_scav_tbf(buf, s->ifindex, false, rate_bps, limit),
		    NULL, NULL)) {
		int ret = -errno;

		snprintf(err, errlen, "%s: spill rate %llu bit/s: %s", s->dev,
			 (unsigned long long)rate_bps, nl_err(&s->nl));
		return ret;
	}
	return 0;
}

int tcfg_scav_top(struct tcfg_scav *s, __u64 top_bps, char *err, size_t errlen)
{
	char buf[TCFG_MSG_SIZE];
	const char *step = "";
	int k, ret;

	for (k = 0; k < SCAV_CLASSES; k++) {
		if (k == 1)
			continue;	/* the probe class is not under the top */
		if (!nl_talk(&s->nl, class_msg(buf, s, false, k, top_bps, &step), NULL, NULL))
			continue;
		ret = -errno;
		snprintf(err, errlen, "%s: %s: top %llu bit/s: %s", s->dev, step,
			 (unsigned long long)top_bps, nl_err(&s->nl));
		return ret;
	}
	return 0;
}

int tcfg_scav_stats(struct tcfg_scav *s, struct tcfg_scav_stats *st, char *err, size_t errlen)
{
	struct tcfg_qdisc qi;
	int ret;

	if (tcfg_qdisc_get(&s->nl, s->ifindex, h(TCFG_SCAV_MAJOR, TCFG_SCAV_SPILL_MINOR),
		      h(TCFG_SCAV_TBF_MAJOR, 0), &qi) || !qi.found) {
		ret = qi.found ? -errno : -ENOENT;
		snprintf(err, errlen, "%s: the spill class: %s", s->dev,
			 qi.found ? nl_err(&s->nl) : "gone");
		return ret;
	}
	*st = qi.st;
	return 0;
}

void tcfg_scav_close(struct tcfg_scav *s, bool remove)
{
	struct tcfg_err e;

	if (!s)
		return;
	if (remove &&
	    tcfg_root_owner(&s->nl, s->ifindex, s->dev, TCFG_SCAV_MAJOR, SCAV_NEED, &e) == 1)
		del_root(&s->nl, s->ifindex);
	nl_close(&s->nl);
	free(s);
}

int tcfg_scav_owner(const char *dev, char *err, size_t errlen)
{
	struct tcfg_err e = { "" };
	int ifindex, ret;
	struct nl nl;

	ret = tcfg_root_open(&nl, dev, &ifindex, TCFG_SCAV_MAJOR, SCAV_NEED, &e);
	nl_close(&nl);
	if (ret < 0)
		snprintf(err, errlen, "%s", e.msg);
	return ret;
}

int tcfg_scav_remove(const char *dev, char *err, size_t errlen)
{
	struct tcfg_err e = { "" };
	int ifindex, ret;
	struct nl nl;

	ret = tcfg_root_open(&nl, dev, &ifindex, TCFG_SCAV_MAJOR, SCAV_NEED, &e);
	if (ret == 1) {
		ret = del_root(&nl, ifindex) && errno != ENOENT ?
		      tcfg_fail(&e, errno, "%s: removing the spill class: %s", dev, nl_err(&nl)) :
		      1;
	} else if (ret == -EEXIST) {
		ret = 0;	/* not ours: not ours to remove */
	}
	nl_close(&nl);
	if (ret < 0)
		snprintf(err, errlen, "%s", e.msg);
	return ret;
}

/* ---- the code point a class's IPv4 filter matches ("doctor") ------------------- */
struct filt {
	__u32 classid;		/* the class whose filter is read */
	int dscp;		/* -1: no filter to it */
};

static int filter_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	struct filt *f = data;
	const struct nlattr *a, *o;
	__u32 classid = 0;
	const struct tc_u32_sel *sel = NULL;
	bool u32 = false;

	if (nlh->nlmsg_type != RTM_NEWTFILTER ||
	    TC_H_MIN(t->tcm_info) != htons(ETH_P_IP))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*t)) {
		if (mnl_attr_get_type(a) == TCA_KIND)
			u32 = !strcmp(mnl_attr_get_str(a), "u32");
		if (mnl_attr_get_type(a) != TCA_OPTIONS)
			continue;
		mnl_attr_for_each_nested(o, a) {
			if (mnl_attr_get_type(o) == TCA_U32_CLASSID &&
			    mnl_attr_get_payload_len(o) >= 4)
				classid = mnl_attr_get_u32(o);
			else if (mnl_attr_get_type(o) == TCA_U32_SEL &&
				 mnl_attr_get_payload_len(o) >=
					 sizeof(*sel) + sizeof(struct tc_u32_key))
				sel = mnl_attr_get_payload(o);
		}
	}
	/* the class's IPv4 filter: one key on the TOS byte */
	if (u32 && sel && sel->nkeys == 1 && classid == f->classid)
		f->dscp = (int)(ntohl(sel->keys[0].val) >> 18) & 0x3f;
	return MNL_CB_OK;
}

int tcfg_htb_filter_dscp(struct nl *nl, int ifindex, unsigned int major, unsigned int minor,
			 int *dscp)
{
	char buf[TCFG_MSG_SIZE];
	struct filt f = { h(major, minor), -1 };
	struct nlmsghdr *nlh;

	nlh = tc_start(buf, RTM_GETTFILTER, NLM_F_DUMP, ifindex, h(major, 0), 0, 0);
	if (nl_talk(nl, nlh, filter_cb, &f))
		return -1;
	*dscp = f.dscp;
	return 0;
}

int tcfg_scav_dscp(const char *dev, int *dscp, char *err, size_t errlen)
{
	struct tcfg_err e = { "" };
	int ifindex, ret;
	struct nl nl;

	*dscp = -1;
	ret = tcfg_root_open(&nl, dev, &ifindex, TCFG_SCAV_MAJOR, SCAV_NEED, &e);
	if (ret == 1 &&
	    tcfg_htb_filter_dscp(&nl, ifindex, TCFG_SCAV_MAJOR, TCFG_SCAV_SPILL_MINOR, dscp))
		ret = tcfg_fail(&e, errno, "%s: the spill class's filters: %s", dev, nl_err(&nl));
	nl_close(&nl);
	if (ret < 0)
		snprintf(err, errlen, "%s", e.msg);
	return ret;
}
