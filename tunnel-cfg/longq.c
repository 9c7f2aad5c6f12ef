// SPDX-License-Identifier: GPL-2.0
/*
 * longq.c - the LONG shaper (tunnel_cfg.h; docs/design.md, *Short class
 * first on LONG*): "route up --long-rate" moves LONG's queue from the WAN
 * onto the router, where the short class (dup's copies, pure ACKs) goes
 * first, as the spill class on SHORT does (scavenger.c builds the
 * messages for both).
 *
 *   root  HTB TCFG_LONGQ_MAJOR:   unclassified traffic -> :20
 *     :1   rate = ceil = top = 0.95 x long-rate
 *       :10  short code point, prio 0, rate = ceil = top
 *              leaf bfifo TCFG_LONGQ_SHORT_LEAF: long-queue at the top
 *       :20  everything else, prio 1, rate top / 100, ceil top
 *              leaf bfifo TCFG_LONGQ_BULK_LEAF: long-queue at the top
 *   u32 filters on the root: an IPv4 ICMP timestamp request -> :20 (first:
 *   the agent's probes carry the short code point), IPv4 dsfield / IPv6
 *   traffic class & 0xfc == the short code point -> :10
 *
 * The probes go with the bulk, not first as on SHORT: on LONG the queue
 * spill must see is the bulk's (a grant is due when LONG is congested, a
 * hold waits until a moved flow's packets have left LONG's queue), and
 * that queue is now here. So LONG's probes measure what they measured
 * without the shaper.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "flowsplit.h"
#include "tcfg.h"
#include "util.h"

#define LONGQ_PRIO_PROBE 1	/* the filters' priorities: probes first */
#define LONGQ_PRIO_V4 2
#define LONGQ_PRIO_V6 3
#define LONGQ_BULK_MIN_DIV 100	/* the bulk class's own rate: top / 100 */
#define LONGQ_LIMIT_MAX 1000000000u

__u64 tcfg_longq_top(__u64 rate_bps)
{
	return rate_bps / 100 * TCFG_LONGQ_TOP_PCT + rate_bps % 100 * TCFG_LONGQ_TOP_PCT / 100;
}

static __u32 hh(unsigned int major, unsigned int minor)
{
	return TC_H_MAKE((__u32)major << 16, minor);
}

static __u32 leaf_limit(const struct tcfg_longq_cfg *c)
{
	return tcfg_scav_limit(tcfg_longq_top(c->rate_bps), c->queue_ms, LONGQ_LIMIT_MAX);
}

#define LONGQ_NEED "long-rate needs the root for the LONG shaper; remove it or leave long-rate out"

/* Step i of the install (0 ..): its message into buf and its name, NULL
 * past the last. */
static struct nlmsghdr *step_msg(void *buf, int ifindex, const struct tcfg_longq_cfg *c, int i,
				 const char **step)
{
	__u64 top = tcfg_longq_top(c->rate_bps);

	switch (i) {
	case 0:
		*step = "the HTB root";
		return tcfg_msg_htb_root(buf, ifindex, TCFG_LONGQ_MAJOR, TCFG_LONGQ_BULK_MINOR);
	case 1:
		*step = "class :1";
		return tcfg_msg_htb_class(buf, ifindex, TCFG_LONGQ_MAJOR, true, 0,
					  TCFG_LONGQ_TOP_MINOR, 0, top, top);
	case 2:
		*step = "the short class";
		return tcfg_msg_htb_class(buf, ifindex, TCFG_LONGQ_MAJOR, true,
					  TCFG_LONGQ_TOP_MINOR, TCFG_LONGQ_SHORT_MINOR, 0, top,
					  top);
	case 3:
		*step = "the bulk class";
		return tcfg_msg_htb_class(buf, ifindex, TCFG_LONGQ_MAJOR, true,
					  TCFG_LONGQ_TOP_MINOR, TCFG_LONGQ_BULK_MINOR, 1,
					  top / LONGQ_BULK_MIN_DIV ? top / LONGQ_BULK_MIN_DIV : 1,
					  top);
	case 4:
		*step = "the short class's queue";
		return tcfg_msg_bfifo(buf, ifindex, hh(TCFG_LONGQ_MAJOR, TCFG_LONGQ_SHORT_MINOR),
				      hh(TCFG_LONGQ_SHORT_LEAF, 0), leaf_limit(c));
	case 5:
		*step = "the bulk class's queue";
		return tcfg_msg_bfifo(buf, ifindex, hh(TCFG_LONGQ_MAJOR, TCFG_LONGQ_BULK_MINOR),
				      hh(TCFG_LONGQ_BULK_LEAF, 0), leaf_limit(c));
	case 6:
		*step = "the probe filter";
		return tcfg_msg_probe_filter(buf, ifindex, TCFG_LONGQ_MAJOR, LONGQ_PRIO_PROBE,
					     TCFG_LONGQ_BULK_MINOR);
	case 7:
		*step = "the IPv4 filter";
		return tcfg_msg_dscp_filter(buf, ifindex, TCFG_LONGQ_MAJOR, LONGQ_PRIO_V4, AF_INET,
					    c->dscp, TCFG_LONGQ_SHORT_MINOR);
	case 8:
		*step = "the IPv6 filter";
		return tcfg_msg_dscp_filter(buf, ifindex, TCFG_LONGQ_MAJOR, LONGQ_PRIO_V6,
					    AF_INET6, c->dscp, TCFG_LONGQ_SHORT_MINOR);
	}
	return NULL;
}

int tcfg_longq_install(const struct tcfg_longq_cfg *c, char *err, size_t errlen)
{
	struct tcfg_err e = { "" };
	char buf[TCFG_MSG_SIZE];
	struct nlmsghdr *nlh;
	const char *step = "";
	int ifindex, ret, i;
	struct nl nl;

	ret = tcfg_root_open(&nl, c->dev, &ifindex, TCFG_LONGQ_MAJOR, LONGQ_NEED, &e);
	if (!ifindex) {
		snprintf(err, errlen, "%s: no such interface", c->dev);
		return -ENODEV;
	}
	if (ret < 0)
		goto out;
	/* ours from an earlier "route up": made again, in this shape */
	if (ret == 1 && tcfg_qdisc_del_root(&nl, ifindex, TCFG_LONGQ_MAJOR)) {
		ret = tcfg_fail(&e, errno, "%s: removing the earlier LONG shaper: %s", c->dev,
				nl_err(&nl));
		goto out;
	}
	ret = 0;
	for (i = 0; !ret && (nlh = step_msg(buf, ifindex, c, i, &step)); i++)
		if (nl_talk(&nl, nlh, NULL, NULL))
			ret = tcfg_fail(&e, errno, "%s: %s: %s", c->dev, step, nl_err(&nl));
	/* nothing half-made stays */
	if (ret && i > 1)
		tcfg_qdisc_del_root(&nl, ifindex, TCFG_LONGQ_MAJOR);
out:
	nl_close(&nl);
	if (ret < 0)
		snprintf(err, errlen, "%s", e.msg);
	return ret < 0 ? ret : 0;
}

int tcfg_longq_read(const char *dev, struct tcfg_longq_state *st, char *err, size_t errlen)
{
	static const unsigned int minor[] = { TCFG_LONGQ_SHORT_MINOR, TCFG_LONGQ_BULK_MINOR };
	static const unsigned int leaf[] = { TCFG_LONGQ_SHORT_LEAF, TCFG_LONGQ_BULK_LEAF };
	struct tcfg_err e = { "" };
	struct tcfg_qdisc q;
	int ifindex, ret, k;
	struct nl nl;

	memset(st, 0, sizeof(*st));
	st->dscp = -1;
	ret = tcfg_root_open(&nl, dev, &ifindex, TCFG_LONGQ_MAJOR, LONGQ_NEED, &e);
	st->owner = ret == -EEXIST ? ret : ret == 1;
	if (ret == -EEXIST) {
		snprintf(err, errlen, "%s", e.msg);	/* names the qdisc */
		ret = 0;
	}
	if (ret == 1 && tcfg_htb_filter_dscp(&nl, ifindex, TCFG_LONGQ_MAJOR,
					     TCFG_LONGQ_SHORT_MINOR, &st->dscp))
		ret = tcfg_fail(&e, errno, "%s: the LONG shaper's filters: %s", dev,
				nl_err(&nl));
	for (k = 0; ret == 1 && k < TCFG_LONGQ_CLASSES; k++) {
		if (tcfg_qdisc_get(&nl, ifindex, hh(TCFG_LONGQ_MAJOR, minor[k]), hh(leaf[k], 0),
				   &q) && errno != ENOENT)
			ret = tcfg_fail(&e, errno, "%s: the LONG shaper's queues: %s", dev,
					nl_err(&nl));
		else if (q.found) {
			st->cls[k] = q.st;
			st->limit_bytes[k] = q.limit;
		}
	}
	nl_close(&nl);
	if (ret < 0)
		snprintf(err, errlen, "%s", e.msg);
	return ret < 0 ? ret : 0;
}

int tcfg_longq_remove(const char *dev, char *err, size_t errlen)
{
	struct tcfg_err e = { "" };
	int ifindex, ret;
	struct nl nl;

	ret = tcfg_root_open(&nl, dev, &ifindex, TCFG_LONGQ_MAJOR, LONGQ_NEED, &e);
	if (ret == 1 && tcfg_qdisc_del_root(&nl, ifindex, TCFG_LONGQ_MAJOR) && errno != ENOENT)
		ret = tcfg_fail(&e, errno, "%s: removing the LONG shaper: %s", dev, nl_err(&nl));
	else if (ret == -EEXIST)
		ret = 0;	/* not ours: not ours to remove */
	nl_close(&nl);
	if (ret < 0)
		snprintf(err, errlen, "%s", e.msg);
	return ret;
}

/* Add "text" to what (", " between). */
static void said(char *what, size_t len, const char *verb, const char *dev)
{
	size_t n = strlen(what);

	snprintf(what + n, len - n, "%s%s %s", n ? ", " : "", verb, dev);
}

int tcfg_longq_reconcile(const struct tcfg_spec *old, const struct tcfg_spec *rec, int dscp,
			 char *what, size_t whatlen, char *err, size_t errlen)
{
	const char *devs[4] = { rec->short_dev, rec->long_dev, old ? old->short_dev : "",
				old ? old->long_dev : "" };
	struct tcfg_longq_cfg c = { .rate_bps = rec->long_rate_bps };
	struct tcfg_longq_state st;
	int i, ret;

	what[0] = '\0';
	for (i = 0; i < 4; i++) {
		if (!devs[i][0] || (rec->long_rate_bps && !strcmp(devs[i], rec->long_dev)))
			continue;
		ret = tcfg_longq_remove(devs[i], err, errlen);
		if (ret < 0)
			return ret;
		if (ret == 1)
			said(what, whatlen, "removed from", devs[i]);
	}
	if (!rec->long_rate_bps)
		return 0;
	snprintf(c.dev, sizeof(c.dev), "%s", rec->long_dev);
	c.queue_ms = (__u32)(rec->long_queue_ns / FS_NS_PER_MS);
	ret = tcfg_longq_read(c.dev, &st, err, errlen);
	if (ret)
		return ret;
	c.dscp = dscp >= 0 ? dscp : st.owner == 1 && st.dscp >= 0 ? st.dscp :
	         FS_DEFAULT_DSCP_SHORT;
	/* the one there is what rec asks: kept (its queues too) */
	if (st.owner == 1 && st.dscp == c.dscp && st.limit_bytes[0] == leaf_limit(&c) &&
	    st.limit_bytes[1] == leaf_limit(&c))
		return 0;
	ret = tcfg_longq_install(&c, err, errlen);
	if (!ret)
		said(what, whatlen, st.owner == 1 ? "made again on" : "installed on", c.dev);
	return ret;
}

int tcfg_longq_recorded(char dev[IF_NAMESIZE], struct tcfg_longq_state *st)
{
	static struct tcfg_spec rec;
	struct tcfg_err e;
	char err[256];

	if (tcfg_record_read(&rec, &e) || !rec.long_rate_bps ||
	    tcfg_longq_read(rec.long_dev, st, err, sizeof(err)) || st->owner != 1)
		return 0;
	snprintf(dev, IF_NAMESIZE, "%s", rec.long_dev);
	return 1;
}
