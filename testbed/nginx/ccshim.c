// SPDX-License-Identifier: GPL-2.0
/*
 * ccshim.so - LD_PRELOAD shim for nginx in the testbed: sets the congestion
 * control named by $FS_TCP_CC (e.g. cubic) on every listening TCP socket;
 * accepted sockets inherit it. Needed because a non-initial network
 * namespace cannot change its default congestion control away from the
 * ones the initial namespace allows (net.ipv4.tcp_allowed_congestion_control
 * there), while root may still choose one per socket.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int listen(int fd, int backlog)
{
	static int (*real_listen)(int, int);
	const char *cc = getenv("FS_TCP_CC");

	if (!real_listen)
		real_listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
	if (cc && *cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc)))
		perror("ccshim: TCP_CONGESTION");
	return real_listen(fd, backlog);
}
