// SPDX-License-Identifier: GPL-2.0
/*
 * tap-mkpcap - write a pair of pcap files (capture point A and B) with
 * chosen timestamps, for fct-tap's tests and benchmark.
 *
 *   tap-mkpcap A.pcap B.pcap < SPEC
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
 * Bench mode: NPKTS TCP packets over NFLOWS IPv4 flows, A at 1 us spacing,
 * B = A + 50 us, 100-byte payloads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXF 1600

struct rec {
	uint64_t t;
	uint32_t len, order;
	uint8_t *data;
};

struct spec {
	int v6, tcp, vxlan, gre, vlan;
	uint8_t src[16], dst[16];
	uint16_t sport, dport, ipid;
	uint32_t seq, ack, plen;
	uint8_t flags, dscp;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint32_t csum_add(uint32_t s, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t eth(uint8_t *p, uint16_t etype, int vlan)
{
	static const uint8_t mac[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };
	uint32_t o = 12;

	memcpy(p, mac, 12);
	if (vlan) {
		put16(p + o, 0x8100);
		put16(p + o + 2, (uint16_t)vlan);
		o += 4;
	}
	put16(p + o, etype);
	return o + 2;
}

/* IP header + L4 at p; returns IP packet length */
static uint32_t ip_pkt(uint8_t *p, const struct spec *s, int ttl_dec)
{
	uint32_t hl = s->v6 ? 40 : 20, l4 = s->tcp ? 20 : 8;
	uint32_t tot = hl + l4 + s->plen;
	uint8_t *q = p + hl;
	uint32_t sum;

	memset(p, 0, hl + l4);
	if (s->v6) {
		put32(p, 6U << 28 | (uint32_t)s->dscp << 22);
		put16(p + 4, (uint16_t)(l4 + s->plen));
		p[6] = s->tcp ? 6 : 17;
		p[7] = (uint8_t)(64 - ttl_dec);
		memcpy(p + 8, s->src, 16);
		memcpy(p + 24, s->dst, 16);
	} else {
		p[0] = 0x45;
		p[1] = (uint8_t)(s->dscp << 2);
		put16(p + 2, (uint16_t)tot);
		put16(p + 4, s->ipid);
		put16(p + 6, 0x4000);	/* DF */
		p[8] = (uint8_t)(64 - ttl_dec);
		p[9] = s->tcp ? 6 : 17;
		memcpy(p + 12, s->src, 4);
		memcpy(p + 16, s->dst, 4);
		put16(p + 10, csum_fold(csum_add(0, p, 20)));
	}
	put16(q, s->sport);
	put16(q + 2, s->dport);
	if (s->tcp) {
		put32(q + 4, s->seq);
		put32(q + 8, s->ack);
		q[12] = 5 << 4;
		q[13] = s->flags;
		put16(q + 14, 65535);
	} else {
		put16(q + 4, (uint16_t)(8 + s->plen));
	}
	for (uint32_t i = 0; i < s->plen; i++)
		q[l4 + i] = (uint8_t)(s->seq + i);
	/* L4 checksum over the pseudo header */
	sum = s->v6 ? csum_add(0, p + 8, 32) : csum_add(0, p + 12, 8);
	sum += (uint32_t)(s->tcp ? 6 : 17) + l4 + s->plen;
	sum = csum_add(sum, q, l4 + s->plen);
	put16(q + (s->tcp ? 16 : 6), csum_fold(sum));
	return tot;
}

static uint32_t frame(uint8_t *p, const struct spec *s, int at_b)
{
	uint16_t et = s->v6 ? 0x86DD : 0x0800;
	uint32_t o;

	if (!s->vxlan && !s->gre) {
		o = eth(p, et, s->vlan);
		return o + ip_pkt(p + o, s, at_b);
	}
	/* outer IPv4 10.255.0.1 -> 10.255.0.2 */
	o = eth(p, 0x0800, s->vlan);
	{
		uint8_t *ip = p + o, *in;
		uint32_t hl = s->vxlan ? 20 + 8 + 8 : 20 + 8;	/* GRE with key */
		uint32_t inner;

		memset(ip, 0, hl);
		in = ip + hl;
		if (s->vxlan)
			inner = eth(in, et, 0) + ip_pkt(in + 14, s, 0);
		else
			inner = ip_pkt(in, s, 0);
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(hl + inner));
		ip[8] = (uint8_t)(64 - at_b);
		ip[9] = s->vxlan ? 17 : 47;
		ip[12] = 10; ip[13] = 255; ip[14] = 0; ip[15] = 1;
		ip[16] = 10; ip[17] = 255; ip[18] = 0; ip[19] = 2;
		put16(ip + 10, csum_fold(csum_add(0, ip, 20)));
		if (s->vxlan) {
			put16(ip + 20, (uint16_t)(49152 + s->sport % 1000 + at_b));
			put16(ip + 22, 4789);
			put16(ip + 24, (uint16_t)(8 + 8 + inner));
			ip[28] = 0x08;	/* I flag */
			put32(ip + 32, 100U << 8);	/* VNI 100 */
		} else {
			put16(ip + 20, 0x2000);	/* K */
			put16(ip + 22, et);
			put32(ip + 24, 7);
		}
		return o + hl + inner;
	}
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
		case 'F': v |= 0x01; break;
		case 'S': v |= 0x02; break;
		case 'R': v |= 0x04; break;
		case 'P': v |= 0x08; break;
		case 'A': v |= 0x10; break;
		}
	}
	return v;
}

struct file {
	struct rec *r;
	size_t n, cap;
};

static int add(struct file *f, uint64_t t, const uint8_t *d, uint32_t len)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 1024;
		f->r = realloc(f->r, f->cap * sizeof(*f->r));
		if (!f->r)
			return -1;
	}
	f->r[f->n].t = t;
	f->r[f->n].len = len;
	f->r[f->n].order = (uint32_t)f->n;
	f->r[f->n].data = malloc(len);
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

static int write_pcap(const char *path, struct file *f, int sorted)
{
	FILE *o = fopen(path, "wb");
	uint32_t gh[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };

	if (!o) {
		fprintf(stderr, "tap-mkpcap: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!sorted)
		qsort(f->r, f->n, sizeof(*f->r), cmp_rec);
	fwrite(gh, 4, 6, o);
	for (size_t i = 0; i < f->n; i++) {
		uint32_t h[4] = { (uint32_t)(f->r[i].t / 1000000),
				  (uint32_t)(f->r[i].t % 1000000), f->r[i].len,
				  f->r[i].len };

		fwrite(h, 4, 4, o);
		fwrite(f->r[i].data, 1, f->r[i].len, o);
	}
	return fclose(o) ? -1 : 0;
}

static int bench(long npk, long nfl, const char *pa, const char *pb)
{
	FILE *o[2];
	uint32_t gh[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };
	uint8_t buf[MAXF];
	struct spec s;
	uint64_t t0 = 1700000000ULL * 1000000;

	o[0] = fopen(pa, "wb");
	o[1] = fopen(pb, "wb");
	if (!o[0] || !o[1]) {
		fprintf(stderr, "tap-mkpcap: cannot write %s/%s\n", pa, pb);
		return 1;
	}
	memset(&s, 0, sizeof(s));
	s.tcp = 1;
	s.plen = 100;
	s.flags = 0x10;
	for (int k = 0; k < 2; k++) {
		fwrite(gh, 4, 6, o[k]);
		for (long i = 0; i < npk; i++) {
			long fl = i % nfl;
			uint64_t t = t0 + (uint64_t)i + (k ? 50 : 0);
			uint32_t len, h[4];

			put32(s.src, 0x0a000000U | (uint32_t)(fl >> 16));
			put32(s.dst, 0x0a800000U | (uint32_t)(fl & 0xffff));
			s.sport = (uint16_t)(1024 + fl % 60000);
			s.dport = 80;
			s.seq = (uint32_t)(i / nfl) * 100;
			s.ipid = (uint16_t)(i / nfl);
			len = frame(buf, &s, k);
			h[0] = (uint32_t)(t / 1000000);
			h[1] = (uint32_t)(t % 1000000);
			h[2] = h[3] = len;
			fwrite(h, 4, 4, o[k]);
			fwrite(buf, 1, len, o[k]);
		}
		if (fclose(o[k]))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct file fa = { 0 }, fb = { 0 };
	char line[1024];
	int ln = 0;

	if (argc == 6 && !strcmp(argv[1], "--bench"))
		return bench(atol(argv[2]), atol(argv[3]) > 0 ? atol(argv[3]) : 1,
			     argv[4], argv[5]);
	if (argc != 3) {
		fprintf(stderr, "usage: tap-mkpcap A.pcap B.pcap < SPEC | "
			"tap-mkpcap --bench NPKTS NFLOWS A.pcap B.pcap\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *tok[32], *sv = NULL, *w;
		int nt = 0;
		struct spec s;
		uint8_t buf[MAXF];
		uint32_t len;

		ln++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		for (w = strtok_r(line, " \t\n", &sv); w && nt < 32;
		     w = strtok_r(NULL, " \t\n", &sv))
			tok[nt++] = w;
		if (nt == 0)
			continue;
		memset(&s, 0, sizeof(s));
		s.flags = 0x10;
		if (nt < 7 || (strcmp(tok[2], "tcp") && strcmp(tok[2], "udp")) ||
		    parse_addr(tok[3], &s, s.src) || parse_addr(tok[5], &s, s.dst)) {
			fprintf(stderr, "tap-mkpcap: line %d: bad packet line\n", ln);
			return 2;
		}
		s.tcp = !strcmp(tok[2], "tcp");
		s.sport = (uint16_t)atoi(tok[4]);
		s.dport = (uint16_t)atoi(tok[6]);
		for (int i = 7; i < nt; i++) {
			char *v = strchr(tok[i], '=');

			if (v)
				*v++ = 0;
			if (!strcmp(tok[i], "flags") && v) s.flags = parse_flags(v);
			else if (!strcmp(tok[i], "seq") && v) s.seq = (uint32_t)strtoul(v, NULL, 0);
			else if (!strcmp(tok[i], "ack") && v) s.ack = (uint32_t)strtoul(v, NULL, 0);
			else if (!strcmp(tok[i], "len") && v) s.plen = (uint32_t)atoi(v);
			else if (!strcmp(tok[i], "ipid") && v) s.ipid = (uint16_t)atoi(v);
			else if (!strcmp(tok[i], "dscp") && v) s.dscp = (uint8_t)atoi(v);
			else if (!strcmp(tok[i], "vlan") && v) s.vlan = atoi(v);
			else if (!strcmp(tok[i], "vxlan")) s.vxlan = 1;
			else if (!strcmp(tok[i], "gre")) s.gre = 1;
			else {
				fprintf(stderr, "tap-mkpcap: line %d: unknown field '%s'\n", ln, tok[i]);
				return 2;
			}
		}
		if (s.plen > 1400) {
			fprintf(stderr, "tap-mkpcap: line %d: len above 1400\n", ln);
			return 2;
		}
		if (strcmp(tok[0], "-")) {
			len = frame(buf, &s, 0);
			if (add(&fa, strtoull(tok[0], NULL, 10), buf, len))
				return 1;
		}
		if (strcmp(tok[1], "-")) {
			len = frame(buf, &s, 1);
			if (add(&fb, strtoull(tok[1], NULL, 10), buf, len))
				return 1;
		}
	}
	return write_pcap(argv[1], &fa, 0) || write_pcap(argv[2], &fb, 0) ? 1 : 0;
}
