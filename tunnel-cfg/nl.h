/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nl.h - rtnetlink over libmnl, the iproute2 way: NETLINK_EXT_ACK on, every
 * request with NLM_F_ACK, replies checked with mnl_cb_run2(seq, portid), and
 * the kernel's extack message kept for the error line.
 */
#ifndef TCFG_NL_H
#define TCFG_NL_H

#include <libmnl/libmnl.h>

/* Everything tunnel-cfg installs carries this originator, as route
 * protocol (rtm_protocol) and rule protocol (FRA_PROTOCOL), so "down"
 * removes exactly what "up" added. 245: unassigned in iproute2's rt_protos. */
#define TCFG_PROTO 245

struct nl {
	struct mnl_socket *sock;
	unsigned int portid;
	unsigned int seq;
	char extack[256];	/* kernel's message of the last error, or "" */
	char buf[32768];	/* MNL_SOCKET_BUFFER_SIZE is too small for dumps */
};

int nl_open(struct nl *nl);
void nl_close(struct nl *nl);
/*
 * Send a request (built by msg.c, which sets NLM_F_ACK; here it gets its
 * sequence number) and process the replies (cb for data messages, may be
 * NULL). Returns 0, or -1 with errno set and nl->extack filled.
 */
int nl_talk(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data);
/* "strerror(errno)[: extack]" for error lines */
const char *nl_err(struct nl *nl);

#endif /* TCFG_NL_H */
