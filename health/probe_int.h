/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probe_int.h - the prober's own state (probe.c), out of probe.h: the
 * agent needs none of it; the probe harness of the tests
 * (tests/tools/health-probe-test.c) reads its counters and socket kinds.
 */
#ifndef HEALTH_PROBE_INT_H
#define HEALTH_PROBE_INT_H

#include <net/if.h>
#include <sys/socket.h>

#include "probe.h"

/* Counters of one tunnel's prober. */
struct health_probe_stats {
	uint64_t sent;		/* probes handed to the kernel (or tried) */
	uint64_t send_errors;	/* refused by the kernel: counted as misses */
	uint64_t answers;	/* matched in time */
	uint64_t late;		/* after their probe was counted as a miss */
	uint64_t foreign;	/* datagrams on the socket that were not ours */
	uint64_t last_answer_sent_ns;	/* send time of the newest answered
					 * probe: the path was alive then */
};

#define PROBE_MAX_TUNNELS 8
#define PROBE_RING 64		/* > the most probes a timeout keeps pending */
#define PROBE_EVENTS 64		/* unread state changes kept */
#define PROBE_MAGIC 0x66736831u	/* "fsh1" */
#define PROBE_TIMER_TAG UINT32_MAX
#define PROBE_DRAIN_MAX 256	/* datagrams read per socket per call */

/* Sent after the ICMP header (or alone, over UDP) and echoed back. Host
 * byte order: only this process reads it; the far end just copies it. */
struct probe_payload {
	uint32_t magic;
	uint32_t nonce;
	uint64_t seq;
	uint64_t sent_ns;
};

struct probe_slot {
	uint64_t seq;
	uint64_t sent_ns;
	uint64_t deadline_ns;
	uint64_t rtt_ns;
	bool answered;
};

struct probe_tunnel {
	struct health health;
	struct health_probe_stats stats;
	char dev[IF_NAMESIZE];
	int fd;
	int family;
	enum health_probe_kind kind;
	bool raw;		/* raw ICMP: we fill identifier and checksum */
	bool rebind;		/* the device vanished: bind again before sending */
	uint16_t ident;		/* raw ICMP identifier (ping sockets: kernel's) */
	uint32_t nonce;
	struct sockaddr_storage target;
	socklen_t target_len;
	uint64_t next_seq;	/* the next probe to send */
	uint64_t oldest_seq;	/* the oldest probe not yet fed to health */
	uint64_t next_send_ns;
	struct probe_slot ring[PROBE_RING];
};

struct health_prober {
	struct health_params params;
	enum health_icmp_socket icmp_socket;
	int epfd, timerfd;
	unsigned int n;
	struct probe_tunnel t[PROBE_MAX_TUNNELS];
	struct health_event pending[PROBE_EVENTS];
	unsigned int pending_head, pending_len;
};

#endif /* HEALTH_PROBE_INT_H */
