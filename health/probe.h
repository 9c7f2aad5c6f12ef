/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probe.h - the tunnel prober: echo requests sent through each tunnel
 * device (SO_BINDTODEVICE) to a target on the far side, which needs nothing
 * but to answer (ICMP/ICMPv6 echo, or a UDP echo service). Answers and
 * timeouts feed one struct health per tunnel (health.h).
 *
 * Single-threaded and non-blocking: one epoll set (tunnel sockets and a
 * timerfd on CLOCK_MONOTONIC) that an agent drives from its own main loop
 * with health_poll(). Errors: 0 or a negative errno; nothing here prints.
 */
#ifndef HEALTH_PROBE_H
#define HEALTH_PROBE_H

#include "health.h"

enum health_probe_kind {
	HEALTH_PROBE_ICMP,	/* echo request, ICMP or ICMPv6 */
	HEALTH_PROBE_UDP,	/* a datagram the target echoes back */
};
/* ICMP socket flavour: "ping sockets" (SOCK_DGRAM, needs the caller's group
 * in net.ipv4.ping_group_range, which is empty by default, root included),
 * raw sockets (CAP_NET_RAW), or dgram falling back to raw. */
enum health_icmp_socket {
	HEALTH_ICMP_AUTO,
	HEALTH_ICMP_DGRAM,
	HEALTH_ICMP_RAW,
};

struct health_probe_cfg {
	const char *dev;		/* tunnel device (SO_BINDTODEVICE) */
	const char *target;		/* IPv4 or IPv6 literal on the far side */
	enum health_probe_kind kind;
	uint16_t udp_port;		/* UDP: the echo port (host order) */
};

/* A state change, as health_poll() reports it. */
struct health_event {
	unsigned int tunnel;		/* index from health_prober_add() */
	enum health_state from, to;
	uint64_t at_ns;			/* CLOCK_MONOTONIC */
};

struct health_prober;
/* NULL with errno set. params must pass health_params_check(). */
struct health_prober *health_prober_new(const struct health_params *params,
					enum health_icmp_socket icmp_socket);
void health_prober_free(struct health_prober *p);
/*
 * Start probing one tunnel. Returns its index (0, 1, ... in call order) or
 * -EINVAL (target not an address literal, UDP without a port), -ENODEV
 * (no such device), -EAFNOSUPPORT, -EPERM/-EACCES (no socket allowed),
 * -ENOSPC (too many tunnels).
 */
int health_prober_add(struct health_prober *p,
		      const struct health_probe_cfg *cfg);
/*
 * A file descriptor that becomes readable when health_poll() has work: an
 * agent puts it in its own poll/epoll set and calls health_poll(p, 0, ...)
 * when it is readable (or calls health_poll with its own sleep timeout).
 */
int health_prober_fd(const struct health_prober *p);
/*
 * Receive answers, count timeouts, send the probes that are due, and report
 * up to max state changes in ev. Waits at most timeout_ms (0: never blocks;
 * -1 is refused with -EINVAL: an agent must never block forever here).
 * Returns the number of events stored (state changes not fitting in ev are
 * kept for the next call) or a negative errno; EINTR returns 0.
 * Not thread-safe: one thread owns a prober.
 */
int health_poll(struct health_prober *p, int timeout_ms,
		struct health_event *ev, unsigned int max);
/*
 * The device of tunnel idx went down or away (a link event): its state
 * machine goes DOWN now (health_link_down(): a flap when it was up), and
 * the probes in flight stop counting: an answer to one sent before the
 * event proves nothing about the link now (it is counted as late). Returns
 * 1 with *ev filled when the state changed (not reported again by
 * health_poll()), 0 when the tunnel was down already, -ENOENT for an
 * unknown idx.
 */
int health_prober_link_down(struct health_prober *p, unsigned int idx,
			    struct health_event *ev);
/*
 * Tunnel idx continues the state machine of the same tunnel (device and
 * target) in another prober, e.g. the one a new "route up" replaced: its
 * state, flap penalty, hold-down, RTT and loss carry over, so a tunnel
 * known down stays down (and damped) and one known up needs no new
 * verdict. The parameters stay this prober's (a loss window of another
 * length starts empty). 0, or -ENOENT for an unknown idx.
 */
int health_prober_seed(struct health_prober *p, unsigned int idx,
		       const struct health *from);
/* The state machine of tunnel idx (read only; NULL when out of range). */
const struct health *health_prober_tunnel(const struct health_prober *p,
					  unsigned int idx);
#endif /* HEALTH_PROBE_H */
