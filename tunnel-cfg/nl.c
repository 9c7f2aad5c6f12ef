// SPDX-License-Identifier: GPL-2.0
/* nl.c - see nl.h; and tcfg_fail(), the error text of tunnel-cfg's functions */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <linux/netlink.h>

#include "nl.h"
#include "tcfg.h"

int nl_open(struct nl *nl)
{
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->sock = mnl_socket_open(NETLINK_ROUTE);
	if (!nl->sock)
		return -1;
	/* extended ACKs carry the kernel's reason; capped ACKs keep them short */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID)) {
		mnl_socket_close(nl->sock);
		nl->sock = NULL;
		return -1;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = time(NULL);
	return 0;
}

void nl_close(struct nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	nl->sock = NULL;
}

/* mnl_cb_run2 hands the same pointer to data and control callbacks */
struct talk {
	struct nl *nl;
	mnl_cb_t cb;
	void *data;
};

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk *t = data;

	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

static int err_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl *nl = ((struct talk *)data)->nl;
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	unsigned int off = sizeof(*e);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!e->error)
		return MNL_CB_STOP;	/* the ACK */
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
		mnl_attr_for_each(a, nlh, off)
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
			    !mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
				snprintf(nl->extack, sizeof(nl->extack), "%s",
					 mnl_attr_get_str(a));
	}
	errno = -e->error;
	return MNL_CB_ERROR;
}

static int stop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_STOP;
}

static int noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

int nl_talk(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_NOOP] = noop_cb, [NLMSG_ERROR] = err_cb,
		[NLMSG_DONE] = stop_cb, [NLMSG_OVERRUN] = noop_cb,
	};
	struct talk t = { nl, cb, data };
	unsigned int seq = ++nl->seq;
	ssize_t n;
	int ret;

	nlh->nlmsg_seq = seq;
	nl->extack[0] = '\0';
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -1;
	do {
		n = mnl_socket_recvfrom(nl->sock, nl->buf, sizeof(nl->buf));
		if (n < 0)
			return -1;
		ret = mnl_cb_run2(nl->buf, n, seq, nl->portid, data_cb, &t, ctl,
				  NLMSG_MIN_TYPE);
	} while (ret > MNL_CB_STOP);
	return ret < 0 ? -1 : 0;
}

const char *nl_err(struct nl *nl)
{
	static char msg[400];

	if (nl->extack[0])
		snprintf(msg, sizeof(msg), "%s: %s", strerror(errno), nl->extack);
	else
		snprintf(msg, sizeof(msg), "%s", strerror(errno));
	return msg;
}

int tcfg_fail(struct tcfg_err *e, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return err > 0 ? -err : -EIO;
}
