// SPDX-License-Identifier: GPL-2.0
/*
 * tap-mkpcap - write a pair of pcap files (capture point A and B) with
 * chosen timestamps, for fct-tap's tests and benchmark.
 *
 *   tap-mkpcap [--raw] A.pcap B.pcap < SPEC
 *   tap-mkpcap --bench NPKTS NFLOWS A.pcap B.pcap
 *
 * SPEC: one packet per line ('#' comments):
 *   T_A T_B PROTO SRC SPORT DST DPORT [key=value | word]...
 *   T_A, T_B  microseconds (integer) at A and at B, '-' = not seen there
 *   PROTO     tcp | udp;  SRC/DST IPv4 or IPv6 (family of the inner packet)
 *   flags=S|SA|A|PA|FA|R...  seq=N ack=N len=N (payload bytes) ipid=N
 *   dscp=N vlan=N vxlan gre
 * Each file is sorted by time (stable). The B copy has TTL/hop limit one
 * lower (and a recomputed IPv4 checksum), as after a router; with vxlan/gre
 * the outer header differs too (outer TTL, outer UDP source port).
 * --raw writes LINKTYPE_RAW files (IP packets, no Ethernet header), which
 * fct-tap must refuse. Files are written with libpcap, headers built on
 * DPDK's structs with its checksum helpers (rte_ip.h).
 * Bench mode: NPKTS TCP packets over NFLOWS IPv4 flows, A at 1 us spacing,
 * B = A + 50 us, 100-byte payloads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pcap/pcap.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_gre.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>
#include <rte_vxlan.h>

#define MAXF 1600

struct rec {
	uint64_t t;
	uint32_t len, order;
	uint32_t l3;		/* offset of the (outer) IP header */
	uint8_t *data;
};

struct spec {
	int v6, tcp, vxlan, gre, vlan;
	uint8_t src[16], dst[16];
	uint16_t sport, dport, ipid;
	uint32_t seq, ack, plen;
	uint8_t flags, dscp;
};

/* Ethernet header (+ one VLAN tag) at p; returns its length */
static uint32_t eth(uint8_t *p, uint16_t etype, int vlan)
{
	static const struct rte_ether_addr dst = {{ 2, 0, 0, 0, 0, 2 }};
	static const struct rte_ether_addr src = {{ 2, 0, 0, 0, 0, 1 }};
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)p;
	struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eh + 1);

	eh->dst_addr = dst;
	eh->src_addr = src;
	if (!vlan) {
		eh->ether_type = rte_cpu_to_be_16(etype);
		return sizeof(*eh);
	}
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
	vh->vlan_tci = rte_cpu_to_be_16((uint16_t)vlan);
	vh->eth_proto = rte_cpu_to_be_16(etype);
	return sizeof(*eh) + sizeof(*vh);
}

/* IPv4 or IPv6 header with the addresses, protocol, DSCP and length of s
 * at p; returns its length (the L4 checksum needs it filled in first) */
static uint32_t ip_hdr(uint8_t *p, const struct spec *s, int ttl_dec, uint32_t l4len)
{
	uint8_t proto = s->tcp ? IPPROTO_TCP : IPPROTO_UDP;

	if (s->v6) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)p;

		memset(ip, 0, sizeof(*ip));
		ip->vtc_flow = rte_cpu_to_be_32(6U << 28 | (uint32_t)s->dscp << 22);
		ip->payload_len = rte_cpu_to_be_16((uint16_t)l4len);
		ip->proto = proto;
		ip->hop_limits = (uint8_t)(64 - ttl_dec);
		memcpy(ip->src_addr, s->src, 16);
		memcpy(ip->dst_addr, s->dst, 16);
		return sizeof(*ip);
	}
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;

	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = (uint8_t)(s->dscp << 2);
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + l4len));
	ip->packet_id = rte_cpu_to_be_16(s->ipid);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = (uint8_t)(64 - ttl_dec);
	ip->next_proto_id = proto;
	memcpy(&ip->src_addr, s->src, 4);
	memcpy(&ip->dst_addr, s->dst, 4);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	return sizeof(*ip);
}

/* IP header + L4 + payload at p; returns the IP packet length */
static uint32_t ip_pkt(uint8_t *p, const struct spec *s, int ttl_dec)
{
	uint32_t l4 = s->tcp ? sizeof(struct rte_tcp_hdr) : sizeof(struct rte_udp_hdr);
	uint32_t hl = ip_hdr(p, s, ttl_dec, l4 + s->plen);
	uint8_t *q = p + hl;
	uint16_t cksum;

	if (s->tcp) {
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)q;

		memset(th, 0, sizeof(*th));
		th->src_port = rte_cpu_to_be_16(s->sport);
		th->dst_port = rte_cpu_to_be_16(s->dport);
		th->sent_seq = rte_cpu_to_be_32(s->seq);
		th->recv_ack = rte_cpu_to_be_32(s->ack);
		th->data_off = 5 << 4;
		th->tcp_flags = s->flags;
		th->rx_win = rte_cpu_to_be_16(65535);
	} else {
		struct rte_udp_hdr *uh = (struct rte_udp_hdr *)q;

		uh->src_port = rte_cpu_to_be_16(s->sport);
		uh->dst_port = rte_cpu_to_be_16(s->dport);
		uh->dgram_len = rte_cpu_to_be_16((uint16_t)(l4 + s->plen));
		uh->dgram_cksum = 0;
	}
	for (uint32_t i = 0; i < s->plen; i++)
		q[l4 + i] = (uint8_t)(s->seq + i);
	cksum = s->v6 ? rte_ipv6_udptcp_cksum((struct rte_ipv6_hdr *)p, q) :
		rte_ipv4_udptcp_cksum((struct rte_ipv4_hdr *)p, q);
	if (s->tcp)
		((struct rte_tcp_hdr *)q)->cksum = cksum;
	else
		((struct rte_udp_hdr *)q)->dgram_cksum = cksum;
	return hl + l4 + s->plen;
}

/* outer IPv4 10.255.0.1 -> 10.255.0.2 and UDP/VXLAN or GRE (with a key)
 * around the inner packet of s at p; returns the outer IP packet length */
static uint32_t tunnel_pkt(uint8_t *p, const struct spec *s, int at_b, uint16_t et)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;
	uint8_t *t = p + sizeof(*ip);
	uint32_t hl, inner;

	if (s->vxlan) {
		struct rte_udp_hdr *uh = (struct rte_udp_hdr *)t;
		struct rte_vxlan_hdr *vx = (struct rte_vxlan_hdr *)(uh + 1);
		uint8_t *in = (uint8_t *)(vx + 1);

		hl = sizeof(*uh) + sizeof(*vx);
		inner = eth(in, et, 0);
		inner += ip_pkt(in + inner, s, 0);
		uh->src_port = rte_cpu_to_be_16((uint16_t)(49152 + s->sport % 1000 + at_b));
		uh->dst_port = rte_cpu_to_be_16(RTE_VXLAN_DEFAULT_PORT);
		uh->dgram_len = rte_cpu_to_be_16((uint16_t)(hl + inner));
		uh->dgram_cksum = 0;
		vx->vx_flags = rte_cpu_to_be_32(0x08000000);	/* I flag */
		vx->vx_vni = rte_cpu_to_be_32(100U << 8);	/* VNI 100 */
	} else {
		struct rte_gre_hdr *g = (struct rte_gre_hdr *)t;
		struct rte_gre_hdr_opt_key *key = (struct rte_gre_hdr_opt_key *)(g + 1);

		hl = sizeof(*g) + sizeof(*key);
		memset(g, 0, sizeof(*g));
		g->k = 1;
		g->proto = rte_cpu_to_be_16(et);
		key->key = rte_cpu_to_be_32(7);
		inner = ip_pkt((uint8_t *)(key + 1), s, 0);
	}
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + hl + inner));
	ip->time_to_live = (uint8_t)(64 - at_b);
	ip->next_proto_id = s->vxlan ? IPPROTO_UDP : IPPROTO_GRE;
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 255, 0, 1));
	ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 255, 0, 2));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	return sizeof(*ip) + hl + inner;
}

/* the frame of s as seen at A (at_b 0) or B (1); *l3 = offset of the IP
 * header (where a LINKTYPE_RAW record starts) */
static uint32_t frame(uint8_t *p, const struct spec *s, int at_b, uint32_t *l3)
{
	uint16_t et = s->v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4;

	if (!s->vxlan && !s->gre) {
		*l3 = eth(p, et, s->vlan);
		return *l3 + ip_pkt(p + *l3, s, at_b);
	}
	*l3 = eth(p, RTE_ETHER_TYPE_IPV4, s->vlan);
	return *l3 + tunnel_pkt(p + *l3, s, at_b, et);
}

static int parse_addr(const char *a, struct spec *s, uint8_t *out)
{
	if (strchr(a, ':')) {
		s->v6 = 1;
		return inet_pton(AF_INET6, a, out) == 1 ? 0 : -1;
	}
	return inet_pton(AF_INET, a, out) == 1 ? 0 : -1;
}

static uint8_t parse_flags(const char *f)
{
	uint8_t v = 0;

	for (; *f; f++) {
		switch (*f) {
		case 'F': v |= RTE_TCP_FIN_FLAG; break;
		case 'S': v |= RTE_TCP_SYN_FLAG; break;
		case 'R': v |= RTE_TCP_RST_FLAG; break;
		case 'P': v |= RTE_TCP_PSH_FLAG; break;
		case 'A': v |= RTE_TCP_ACK_FLAG; break;
		}
	}
	return v;
}

struct file {
	struct rec *r;
	size_t n, cap;
};

static int add(struct file *f, uint64_t t, const uint8_t *d, uint32_t len, uint32_t l3)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 1024;
		f->r = realloc(f->r, f->cap * sizeof(*f->r));
		if (!f->r)
			return -1;
	}
	f->r[f->n] = (struct rec){ .t = t, .len = len, .order = (uint32_t)f->n,
				   .l3 = l3, .data = malloc(len) };
	if (!f->r[f->n].data)
		return -1;
	memcpy(f->r[f->n].data, d, len);
	f->n++;
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->order < y->order ? -1 : 1;
}

/* a pcap writer (microsecond records) of link type Ethernet, or raw IP */
struct writer {
	pcap_t *p;
	pcap_dumper_t *d;
	int raw;
};

static int writer_open(struct writer *w, const char *path, int raw)
{
	w->raw = raw;
	w->p = pcap_open_dead_with_tstamp_precision(raw ? DLT_RAW : DLT_EN10MB,
						    65535, PCAP_TSTAMP_PRECISION_MICRO);
	w->d = w->p ? pcap_dump_open(w->p, path) : NULL;
	if (!w->d) {
		fprintf(stderr, "tap-mkpcap: cannot write %s: %s\n", path,
			w->p ? pcap_geterr(w->p) : "out of memory");
		if (w->p)
			pcap_close(w->p);
		return -1;
	}
	return 0;
}

/* t in microseconds; a raw record leaves the Ethernet header (l3 bytes) out */
static void writer_add(struct writer *w, uint64_t t, const uint8_t *d,
		       uint32_t len, uint32_t l3)
{
	struct pcap_pkthdr h = {
		.ts = { .tv_sec = (time_t)(t / 1000000), .tv_usec = (suseconds_t)(t % 1000000) },
	};

	if (w->raw) {
		d += l3;
		len -= l3;
	}
	h.caplen = h.len = len;
	pcap_dump((u_char *)w->d, &h, d);
}

static int writer_close(struct writer *w, const char *path)
{
	int err = pcap_dump_flush(w->d);

	pcap_dump_close(w->d);
	pcap_close(w->p);
	if (err)
		fprintf(stderr, "tap-mkpcap: cannot write %s\n", path);
	return err ? -1 : 0;
}

static int write_pcap(const char *path, struct file *f, int raw)
{
	struct writer w;

	if (writer_open(&w, path, raw))
		return -1;
	qsort(f->r, f->n, sizeof(*f->r), cmp_rec);
	for (size_t i = 0; i < f->n; i++)
		writer_add(&w, f->r[i].t, f->r[i].data, f->r[i].len, f->r[i].l3);
	return writer_close(&w, path);
}

static int bench(long npk, long nfl, const char *path[2])
{
	uint8_t buf[MAXF];
	struct spec s;
	uint64_t t0 = 1700000000ULL * 1000000;

	memset(&s, 0, sizeof(s));
	s.tcp = 1;
	s.plen = 100;
	s.flags = RTE_TCP_ACK_FLAG;
	for (int k = 0; k < 2; k++) {
		struct writer w;

		if (writer_open(&w, path[k], 0))
			return 1;
		for (long i = 0; i < npk; i++) {
			long fl = i % nfl;
			uint32_t len, l3, a;

			a = rte_cpu_to_be_32(0x0a000000U | (uint32_t)(fl >> 16));
			memcpy(s.src, &a, 4);
			a = rte_cpu_to_be_32(0x0a800000U | (uint32_t)(fl & 0xffff));
			memcpy(s.dst, &a, 4);
			s.sport = (uint16_t)(1024 + fl % 60000);
			s.dport = 80;
			s.seq = (uint32_t)(i / nfl) * 100;
			s.ipid = (uint16_t)(i / nfl);
			len = frame(buf, &s, k, &l3);
			writer_add(&w, t0 + (uint64_t)i + (k ? 50 : 0), buf, len, l3);
		}
		if (writer_close(&w, path[k]))
			return 1;
	}
	return 0;
}

/* one SPEC line's fields after the 5-tuple into s; -1 on an unknown one */
static int spec_fields(struct spec *s, char **tok, int nt, int ln)
{
	for (int i = 7; i < nt; i++) {
		char *v = strchr(tok[i], '=');

		if (v)
			*v++ = 0;
		if (!strcmp(tok[i], "flags") && v) s->flags = parse_flags(v);
		else if (!strcmp(tok[i], "seq") && v) s->seq = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(tok[i], "ack") && v) s->ack = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(tok[i], "len") && v) s->plen = (uint32_t)atoi(v);
		else if (!strcmp(tok[i], "ipid") && v) s->ipid = (uint16_t)atoi(v);
		else if (!strcmp(tok[i], "dscp") && v) s->dscp = (uint8_t)atoi(v);
		else if (!strcmp(tok[i], "vlan") && v) s->vlan = atoi(v);
		else if (!strcmp(tok[i], "vxlan")) s->vxlan = 1;
		else if (!strcmp(tok[i], "gre")) s->gre = 1;
		else {
			fprintf(stderr, "tap-mkpcap: line %d: unknown field '%s'\n", ln, tok[i]);
			return -1;
		}
	}
	if (s->plen > 1400) {
		fprintf(stderr, "tap-mkpcap: line %d: len above 1400\n", ln);
		return -1;
	}
	return 0;
}

/* one SPEC line into the A and B files: 0, 1 (runtime) or 2 (bad line) */
static int spec_line(char *line, int ln, struct file *fa, struct file *fb)
{
	char *tok[32], *sv = NULL, *w;
	int nt = 0;
	struct spec s;
	uint8_t buf[MAXF];
	uint32_t len, l3;

	if (line[0] == '#' || line[0] == '\n')
		return 0;
	for (w = strtok_r(line, " \t\n", &sv); w && nt < 32; w = strtok_r(NULL, " \t\n", &sv))
		tok[nt++] = w;
	if (nt == 0)
		return 0;
	memset(&s, 0, sizeof(s));
	s.flags = RTE_TCP_ACK_FLAG;
	if (nt < 7 || (strcmp(tok[2], "tcp") && strcmp(tok[2], "udp")) ||
	    parse_addr(tok[3], &s, s.src) || parse_addr(tok[5], &s, s.dst)) {
		fprintf(stderr, "tap-mkpcap: line %d: bad packet line\n", ln);
		return 2;
	}
	s.tcp = !strcmp(tok[2], "tcp");
	s.sport = (uint16_t)atoi(tok[4]);
	s.dport = (uint16_t)atoi(tok[6]);
	if (spec_fields(&s, tok, nt, ln))
		return 2;
	if (strcmp(tok[0], "-")) {
		len = frame(buf, &s, 0, &l3);
		if (add(fa, strtoull(tok[0], NULL, 10), buf, len, l3))
			return 1;
	}
	if (strcmp(tok[1], "-")) {
		len = frame(buf, &s, 1, &l3);
		if (add(fb, strtoull(tok[1], NULL, 10), buf, len, l3))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct file fa = { 0 }, fb = { 0 };
	char line[1024];
	int ln = 0, raw = 0, rc;

	if (argc == 6 && !strcmp(argv[1], "--bench"))
		return bench(atol(argv[2]), atol(argv[3]) > 0 ? atol(argv[3]) : 1,
			     (const char *[2]){ argv[4], argv[5] });
	if (argc == 4 && !strcmp(argv[1], "--raw")) {
		raw = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: tap-mkpcap [--raw] A.pcap B.pcap < SPEC | "
			"tap-mkpcap --bench NPKTS NFLOWS A.pcap B.pcap\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		rc = spec_line(line, ++ln, &fa, &fb);
		if (rc)
			return rc;
	}
	return write_pcap(argv[1], &fa, raw) || write_pcap(argv[2], &fb, raw) ? 1 : 0;
}
