// SPDX-License-Identifier: GPL-2.0
/*
 * probe.c - the tunnel prober. Per tunnel one non-blocking socket bound to
 * the tunnel device (SO_BINDTODEVICE), so a probe can only leave, and an
 * answer only count, through that tunnel: an ICMP/ICMPv6 echo socket (ping
 * socket when net.ipv4.ping_group_range allows the caller, raw otherwise) or
 * a connected UDP socket towards an echo service.
 *
 * Every probe carries a payload (magic, per-tunnel nonce, 64-bit sequence,
 * send time) that the far end sends back unchanged; the answer must match
 * it, the target address and, for raw ICMP, our identifier. Outcomes are
 * fed to the state machine in send order: probe k's answer is counted only
 * once probe k-1 is answered or timed out, so "N consecutive misses" means
 * N consecutive probes, whatever order the answers arrive in. A probe's
 * deadline is fixed when it is sent (health_probe_timeout_ns(): adaptive,
 * from the RTT of the answers so far, late ones included).
 *
 * One epoll set holds the sockets and a timerfd (CLOCK_MONOTONIC, absolute)
 * armed for the next thing due: a send, a timeout, or the end of a
 * hold-down. health_poll() does what is due and waits at most as long as
 * asked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <linux/icmp.h>

#include "params.h"
#include "probe.h"
#include "probe_int.h"
#include "util.h"


struct health_prober *health_prober_new(const struct health_params *params,
					enum health_icmp_socket icmp_socket)
{
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.u32 = PROBE_TIMER_TAG };
	struct health_prober *p;
	int err;

	if (health_params_check(params, NULL)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->params = *params;
	p->icmp_socket = icmp_socket;
	p->timerfd = -1;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0)
		goto fail;
	p->timerfd = timerfd_create(CLOCK_MONOTONIC,
				    TFD_NONBLOCK | TFD_CLOEXEC);
	if (p->timerfd < 0 ||
	    epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->timerfd, &ev))
		goto fail;
	return p;
fail:
	err = errno;
	health_prober_free(p);
	errno = err;
	return NULL;
}

void health_prober_free(struct health_prober *p)
{
	unsigned int i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		close(p->t[i].fd);
	if (p->timerfd >= 0)
		close(p->timerfd);
	if (p->epfd >= 0)
		close(p->epfd);
	free(p);
}

/* A unicast IPv4/IPv6 address (sc_parse_prefix()); link-local IPv6 gets
 * the device's scope. */
static int parse_target(struct probe_tunnel *t, const char *s,
			unsigned int ifindex, uint16_t port)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)&t->target;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&t->target;
	struct sc_prefix p;
	uint32_t a;

	memset(&t->target, 0, sizeof(t->target));
	if (sc_parse_prefix(s, 0, SC_PFX_ADDR, &p))
		return -EINVAL;
	if (p.family == AF_INET) {
		memcpy(&v4->sin_addr, p.addr, sizeof(v4->sin_addr));
		a = ntohl(v4->sin_addr.s_addr);
		if (a == 0 || a == UINT32_MAX || IN_MULTICAST(a))
			return -EINVAL;
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		t->target_len = sizeof(*v4);
	} else {
		memcpy(&v6->sin6_addr, p.addr, sizeof(v6->sin6_addr));
		if (IN6_IS_ADDR_UNSPECIFIED(&v6->sin6_addr) ||
		    IN6_IS_ADDR_MULTICAST(&v6->sin6_addr))
			return -EINVAL;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		if (IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr))
			v6->sin6_scope_id = ifindex;
		t->target_len = sizeof(*v6);
	}
	t->family = t->target.ss_family;
	return 0;
}

/* Raw ICMP sockets see every echo reply on the device: let only echo
 * replies through the kernel's type filter. */
static int set_icmp_filter(struct probe_tunnel *t)
{
	struct icmp6_filter f6;
	struct icmp_filter f4;

	if (t->family == AF_INET) {
		f4.data = ~(1u << ICMP_ECHOREPLY);
		return setsockopt(t->fd, SOL_RAW, ICMP_FILTER, &f4,
				  sizeof(f4));
	}
	ICMP6_FILTER_SETBLOCKALL(&f6);
	ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f6);
	return setsockopt(t->fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f6, sizeof(f6));
}

static int open_socket(struct health_prober *p, struct probe_tunnel *t)
{
	int proto = t->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	int flags = SOCK_NONBLOCK | SOCK_CLOEXEC;

	if (t->kind == HEALTH_PROBE_UDP) {
		t->fd = socket(t->family, SOCK_DGRAM | flags, IPPROTO_UDP);
	} else {
		t->fd = -1;
		if (p->icmp_socket != HEALTH_ICMP_RAW)
			t->fd = socket(t->family, SOCK_DGRAM | flags, proto);
		if (t->fd < 0 && p->icmp_socket == HEALTH_ICMP_AUTO &&
		    (errno == EACCES || errno == EPERM))
			t->fd = socket(t->family, SOCK_RAW | flags, proto);
		else if (t->fd < 0 && p->icmp_socket == HEALTH_ICMP_RAW)
			t->fd = socket(t->family, SOCK_RAW | flags, proto);
	}
	if (t->fd < 0)
		return -errno;
	if (t->kind == HEALTH_PROBE_ICMP) {
		int type = 0;
		socklen_t len = sizeof(type);

		if (getsockopt(t->fd, SOL_SOCKET, SO_TYPE, &type, &len))
			return -errno;
		t->raw = type == SOCK_RAW;
		if (t->raw && set_icmp_filter(t))
			return -errno;
	}
	if (setsockopt(t->fd, SOL_SOCKET, SO_BINDTODEVICE, t->dev,
		       strlen(t->dev) + 1))
		return -errno;
	/* UDP: connected, so only the target's datagrams reach us */
	if (t->kind == HEALTH_PROBE_UDP &&
	    connect(t->fd, (struct sockaddr *)&t->target, t->target_len))
		return -errno;
	return 0;
}

int health_prober_add(struct health_prober *p,
		      const struct health_probe_cfg *cfg)
{
	struct probe_tunnel *t;
	struct epoll_event ev = { .events = EPOLLIN };
	unsigned int ifindex;
	uint32_t rnd[2];
	int err;

	if (p->n == PROBE_MAX_TUNNELS)
		return -ENOSPC;
	if (!cfg->dev || !cfg->target || strlen(cfg->dev) >= IF_NAMESIZE ||
	    (cfg->kind == HEALTH_PROBE_UDP && !cfg->udp_port))
		return -EINVAL;
	ifindex = if_nametoindex(cfg->dev);
	if (!ifindex)
		return -ENODEV;
	t = &p->t[p->n];
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	strcpy(t->dev, cfg->dev);
	t->kind = cfg->kind;
	err = parse_target(t, cfg->target, ifindex,
			   cfg->kind == HEALTH_PROBE_UDP ? cfg->udp_port : 0);
	if (err)
		return err;
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
		/* no entropy yet: time and slot still tell our probes apart */
		rnd[0] = (uint32_t)mono_ns() ^ (p->n << 16);
		rnd[1] = rnd[0] * 2654435761u;
	}
	t->ident = (uint16_t)rnd[0];
	t->nonce = rnd[1];
	err = open_socket(p, t);
	ev.data.u32 = p->n;
	if (!err && epoll_ctl(p->epfd, EPOLL_CTL_ADD, t->fd, &ev))
		err = -errno;
	if (err) {
		if (t->fd >= 0)
			close(t->fd);
		return err;
	}
	health_init(&t->health, &p->params, mono_ns());
	t->next_send_ns = mono_ns();
	return p->n++;
}

int health_prober_fd(const struct health_prober *p)
{
	return p->epfd;
}

const struct health *health_prober_tunnel(const struct health_prober *p,
					  unsigned int idx)
{
	return idx < p->n ? &p->t[idx].health : NULL;
}

int health_prober_seed(struct health_prober *p, unsigned int idx,
		       const struct health *from)
{
	struct health *h;

	if (idx >= p->n)
		return -ENOENT;
	h = &p->t[idx].health;
	*h = *from;
	h->params = p->params;
	if (from->params.loss_window != p->params.loss_window) {
		memset(h->window, 0, sizeof(h->window));
		h->window_len = h->window_pos = h->window_lost = 0;
	}
	return 0;
}

int health_prober_link_down(struct health_prober *p, unsigned int idx,
			    struct health_event *ev)
{
	struct probe_tunnel *t;
	enum health_state from;
	uint64_t now = mono_ns();

	if (idx >= p->n)
		return -ENOENT;
	t = &p->t[idx];
	/* in flight: neither answers nor misses any more */
	t->oldest_seq = t->next_seq;
	from = t->health.state;
	if (!health_link_down(&t->health, now))
		return 0;
	*ev = (struct health_event){ .tunnel = idx, .from = from,
				     .to = t->health.state, .at_ns = now };
	return 1;
}

static void probe_send(struct probe_tunnel *t, uint64_t timeout_ns)
{
	struct probe_slot *slot = &t->ring[t->next_seq % PROBE_RING];
	struct probe_payload pl = {
		.magic = PROBE_MAGIC, .nonce = t->nonce, .seq = t->next_seq,
	};
	uint8_t buf[sizeof(struct icmphdr) + sizeof(pl)];
	struct icmphdr *icmp = (struct icmphdr *)buf;
	size_t off = 0;
	ssize_t r;

	if (t->rebind && !setsockopt(t->fd, SOL_SOCKET, SO_BINDTODEVICE,
				     t->dev, strlen(t->dev) + 1))
		t->rebind = false;
	pl.sent_ns = mono_ns();
	if (t->kind == HEALTH_PROBE_ICMP) {
		/* ICMPv6 echo has the same layout; the kernel sums ICMPv6 */
		memset(icmp, 0, sizeof(*icmp));
		icmp->type = t->family == AF_INET ? ICMP_ECHO
						  : ICMP6_ECHO_REQUEST;
		icmp->un.echo.id = htons(t->ident);
		icmp->un.echo.sequence = htons((uint16_t)t->next_seq);
		off = sizeof(*icmp);
	}
	memcpy(buf + off, &pl, sizeof(pl));
	if (t->kind == HEALTH_PROBE_ICMP && t->raw && t->family == AF_INET)
		icmp->checksum = inet_csum(buf, off + sizeof(pl));
	if (t->kind == HEALTH_PROBE_UDP)
		r = send(t->fd, buf, off + sizeof(pl), 0);
	else
		r = sendto(t->fd, buf, off + sizeof(pl), 0,
			   (struct sockaddr *)&t->target, t->target_len);
	t->stats.sent++;
	if (r < 0) {
		/* counted as a miss at its deadline, like a lost probe */
		t->stats.send_errors++;
		if (errno == ENODEV || errno == ENXIO)
			t->rebind = true;
	}
	*slot = (struct probe_slot){
		.seq = t->next_seq,
		.sent_ns = pl.sent_ns,
		.deadline_ns = pl.sent_ns + timeout_ns,
	};
	t->next_seq++;
}

static bool same_addr(const struct probe_tunnel *t,
		      const struct sockaddr_storage *from)
{
	const struct sockaddr_in *a4 = (const void *)&t->target;
	const struct sockaddr_in *b4 = (const void *)from;
	const struct sockaddr_in6 *a6 = (const void *)&t->target;
	const struct sockaddr_in6 *b6 = (const void *)from;

	if (from->ss_family != t->family)
		return false;
	if (t->family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return !memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr));
}

/* Is this datagram an answer of ours? Its payload is copied to *pl (it may
 * sit unaligned behind the IP and ICMP headers). */
static bool match_answer(const struct probe_tunnel *t, const uint8_t *buf,
			 size_t len, struct probe_payload *pl)
{
	const struct icmphdr *icmp = NULL;
	size_t ihl;

	if (t->kind == HEALTH_PROBE_ICMP) {
		/* raw IPv4 sockets get the IP header too */
		if (t->raw && t->family == AF_INET) {
			if (len < sizeof(struct iphdr))
				return false;
			ihl = (size_t)(buf[0] & 0x0f) * 4;
			if (ihl < sizeof(struct iphdr) || ihl > len)
				return false;
			buf += ihl;
			len -= ihl;
		}
		if (len < sizeof(*icmp))
			return false;
		icmp = (const struct icmphdr *)buf;	/* 4-byte aligned */
		if (icmp->type != (t->family == AF_INET ? ICMP_ECHOREPLY
							: ICMP6_ECHO_REPLY) ||
		    icmp->code != 0)
			return false;
		/* ping sockets: the kernel already matched its identifier */
		if (t->raw && ntohs(icmp->un.echo.id) != t->ident)
			return false;
		buf += sizeof(*icmp);
		len -= sizeof(*icmp);
	}
	if (len < sizeof(*pl))
		return false;
	memcpy(pl, buf, sizeof(*pl));
	if (icmp && ntohs(icmp->un.echo.sequence) != (uint16_t)pl->seq)
		return false;
	return pl->magic == PROBE_MAGIC && pl->nonce == t->nonce;
}

/* Read every datagram waiting: mark the probes they answer. */
static void probe_drain(struct probe_tunnel *t)
{
	uint64_t buf64[(sizeof(struct iphdr) + 60 + sizeof(struct icmphdr) +
			sizeof(struct probe_payload) + 64) / 8];
	struct probe_payload pl;
	struct sockaddr_storage from;
	struct probe_slot *slot;
	socklen_t fromlen;
	ssize_t len;
	int i;

	for (i = 0; i < PROBE_DRAIN_MAX; i++) {
		fromlen = sizeof(from);
		len = recvfrom(t->fd, buf64, sizeof(buf64), MSG_DONTWAIT,
			       (struct sockaddr *)&from, &fromlen);
		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* a queued ICMP error (e.g. UDP port unreachable):
			 * no answer, the probe times out */
			continue;
		}
		if (!match_answer(t, (const uint8_t *)buf64, len, &pl) ||
		    (t->kind == HEALTH_PROBE_ICMP && !same_addr(t, &from)) ||
		    pl.seq >= t->next_seq) {
			t->stats.foreign++;
			continue;
		}
		slot = &t->ring[pl.seq % PROBE_RING];
		if (slot->seq != pl.seq || slot->answered) {
			/* a duplicate, or too old to know its send time */
			t->stats.late++;
			continue;
		}
		slot->answered = true;
		slot->rtt_ns = mono_ns() - slot->sent_ns;
		if (pl.seq < t->oldest_seq) {
			/* after its probe was counted as a miss: still a
			 * miss, but its RTT lets the timeout grow */
			t->stats.late++;
			health_late_answer(&t->health, slot->rtt_ns);
			continue;
		}
		t->stats.answers++;
		if (slot->sent_ns > t->stats.last_answer_sent_ns)
			t->stats.last_answer_sent_ns = slot->sent_ns;
	}
}

static void push_event(struct health_prober *p, unsigned int idx,
		       enum health_state from, uint64_t at_ns)
{
	struct health_event *ev;

	if (p->pending_len == PROBE_EVENTS) {
		/* nobody reads them: drop the oldest (the state is current) */
		p->pending_head = (p->pending_head + 1) % PROBE_EVENTS;
		p->pending_len--;
	}
	ev = &p->pending[(p->pending_head + p->pending_len) % PROBE_EVENTS];
	*ev = (struct health_event){ .tunnel = idx, .from = from,
				     .to = p->t[idx].health.state,
				     .at_ns = at_ns };
	p->pending_len++;
}

/* The largest queue the other probes through t's device see: a tunnel's
 * families share one path, and a full FIFO may drop one family's probes
 * before any of its answers has shown the queue. */
static uint64_t path_queue_ns(const struct health_prober *p, unsigned int idx)
{
	uint64_t q = 0;
	unsigned int i;

	for (i = 0; i < p->n; i++)
		if (i != idx && !strcmp(p->t[i].dev, p->t[idx].dev) &&
		    p->t[i].health.rtt_samples && p->t[i].health.queue_ns > q)
			q = p->t[i].health.queue_ns;
	return q;
}

/* Feed answered and timed-out probes to the state machine, in send order. */
static void probe_resolve(struct health_prober *p, unsigned int idx,
			  uint64_t now)
{
	struct probe_tunnel *t = &p->t[idx];
	struct probe_slot *slot;
	enum health_state from;
	bool changed;

	t->health.path_queue_ns = path_queue_ns(p, idx);
	while (t->oldest_seq < t->next_seq) {
		slot = &t->ring[t->oldest_seq % PROBE_RING];
		from = t->health.state;
		if (slot->answered)
			changed = health_reply(&t->health, now, slot->rtt_ns);
		else if (now >= slot->deadline_ns)
			changed = health_miss(&t->health, now);
		else
			break;
		if (changed)
			push_event(p, idx, from, now);
		t->oldest_seq++;
	}
	from = t->health.state;
	if (now >= health_deadline(&t->health) &&
	    health_tick(&t->health, now))
		push_event(p, idx, from, now);
}

/* The earliest time something is due for tunnel t. */
static uint64_t probe_next_due(const struct probe_tunnel *t)
{
	uint64_t due = t->next_send_ns, d;

	if (t->oldest_seq < t->next_seq) {
		d = t->ring[t->oldest_seq % PROBE_RING].deadline_ns;
		due = d < due ? d : due;
	}
	d = health_deadline(&t->health);
	return d < due ? d : due;
}

/* Everything due now, then the timer armed for what comes next. */
static int probe_run(struct health_prober *p)
{
	struct itimerspec its = { 0 };
	uint64_t now, due, next = UINT64_MAX, expirations, probe_timeout;
	struct probe_tunnel *t;
	unsigned int i;

	/* clear the timer's readiness, or the caller's poll spins */
	if (read(p->timerfd, &expirations, sizeof(expirations)) < 0 &&
	    errno != EAGAIN)
		return -errno;
	for (i = 0; i < p->n; i++) {
		t = &p->t[i];
		probe_drain(t);
		now = mono_ns();
		probe_resolve(p, i, now);
		if (now >= t->next_send_ns) {
			/* every RTT sample so far is in t->health now */
			probe_timeout = health_probe_timeout_ns(&t->health);
			/* a full ring would mean timeouts longer than allowed */
			if (t->next_seq - t->oldest_seq < PROBE_RING)
				probe_send(t, probe_timeout);
			t->next_send_ns += p->params.interval_ns;
			/* late by a whole interval (we were stalled): no
			 * burst of catch-up probes, restart the rhythm */
			if (t->next_send_ns <= now)
				t->next_send_ns = now + p->params.interval_ns;
		}
		due = probe_next_due(t);
		next = due < next ? due : next;
	}
	if (next == UINT64_MAX)
		return 0;
	its.it_value.tv_sec = next / FS_NS_PER_S;
	its.it_value.tv_nsec = next % FS_NS_PER_S;
	if (timerfd_settime(p->timerfd, TFD_TIMER_ABSTIME, &its, NULL))
		return -errno;
	return 0;
}

static int pop_events(struct health_prober *p, struct health_event *ev,
		      unsigned int max)
{
	unsigned int n = 0;

	while (n < max && p->pending_len) {
		ev[n++] = p->pending[p->pending_head];
		p->pending_head = (p->pending_head + 1) % PROBE_EVENTS;
		p->pending_len--;
	}
	return n;
}

int health_poll(struct health_prober *p, int timeout_ms,
		struct health_event *ev, unsigned int max)
{
	struct epoll_event ready[PROBE_MAX_TUNNELS + 1];
	int err, r;

	if (timeout_ms < 0)
		return -EINVAL;
	err = probe_run(p);
	if (err)
		return err;
	if (p->pending_len || !timeout_ms)
		return pop_events(p, ev, max);
	r = epoll_wait(p->epfd, ready, PROBE_MAX_TUNNELS + 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r > 0) {
		err = probe_run(p);
		if (err)
			return err;
	}
	return pop_events(p, ev, max);
}
