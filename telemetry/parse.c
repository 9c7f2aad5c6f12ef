// SPDX-License-Identifier: GPL-2.0
/*
 * parse.c - frame parser of fct-tap: Ethernet, up to two VLAN tags, IPv4 /
 * IPv6 (extension headers up to a bound), then either the inner packet of a
 * VXLAN (UDP to the VXLAN port) or GRE tunnel, or TCP/UDP. The key is the
 * innermost IP packet's directional 5-tuple.
 *
 * Signature: a 64-bit hash of fields that do not change between the two
 * capture points: the 5-tuple, the IPv4 ID, the inner IP length, the whole L4
 * header (TCP: seq, ack, flags, window, options and the end-to-end checksum,
 * which covers the payload) and the first TAP_SIG_PAYLOAD payload bytes. TTL,
 * the IPv4 header checksum and the outer (tunnel) headers change on the path
 * and are left out. Two copies of one packet (duplicate, or an identical TCP
 * retransmission) therefore have the same signature; track.c handles that.
 */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "tap.h"

#define ETH_HLEN_	14
#define ETHERTYPE_IPV4	0x0800
#define ETHERTYPE_IPV6	0x86DD
#define ETHERTYPE_VLAN	0x8100
#define ETHERTYPE_QINQ	0x88A8
#define ETHERTYPE_TEB	0x6558	/* GRE: transparent Ethernet bridging */
#define VXLAN_HLEN	8
#define GRE_F_CSUM	0x8000
#define GRE_F_KEY	0x2000
#define GRE_F_SEQ	0x1000
#define IPPROTO_GRE_	47

static uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= 0x9E3779B97F4A7C15ULL;
	return h ^ (h >> 29);
}

static uint64_t hash_bytes(uint64_t h, const uint8_t *p, uint32_t n)
{
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, p, 8);
		h = mix(h, w);
		p += 8;
		n -= 8;
	}
	if (n) {
		w = 0;
		memcpy(&w, p, n);
		h = mix(h, w ^ ((uint64_t)n << 56));
	}
	return h;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);	/* network -> host */
}

/* parse_l4: p points at the L4 header of the innermost packet, len = bytes
 * of L4 header + payload available in the frame */
static enum parse_result parse_l4(const struct parse_cfg *cfg,
				  const uint8_t *p, uint32_t len, int depth,
				  uint64_t h, struct pkt_info *pi);

static enum parse_result parse_eth(const struct parse_cfg *cfg, const uint8_t *p,
				   uint32_t len, int depth, struct pkt_info *pi);

static enum parse_result parse_ip(const struct parse_cfg *cfg, uint16_t etype,
				  const uint8_t *p, uint32_t len, int depth,
				  struct pkt_info *pi)
{
	struct flow_key *k = &pi->key;
	uint64_t h = 0;
	uint32_t hl, tot;
	uint8_t proto;

	if (etype == ETHERTYPE_IPV4) {
		if (len < 20 || (p[0] >> 4) != 4)
			return PARSE_TRUNCATED;
		hl = (uint32_t)(p[0] & 0x0f) * 4;
		tot = rd16(p + 2);
		if (hl < 20 || len < hl || tot < hl)
			return PARSE_TRUNCATED;
		if (rd16(p + 6) & 0x1fff)
			return PARSE_FRAGMENT;
		if (tot < len)
			len = tot;	/* drop Ethernet padding */
		proto = p[9];
		memset(k, 0, sizeof(*k));
		memcpy(k->src, p + 12, 4);
		memcpy(k->dst, p + 16, 4);
		k->family = 4;
		pi->dscp = p[1] >> 2;
		pi->ip_len = tot;
		h = mix(h, rd16(p + 4));	/* IP ID */
	} else {
		uint32_t n = 0;

		if (len < 40 || (p[0] >> 4) != 6)
			return PARSE_TRUNCATED;
		hl = 40;
		tot = 40 + (uint32_t)rd16(p + 4);
		if (tot < len)
			len = tot;
		proto = p[6];
		memset(k, 0, sizeof(*k));
		memcpy(k->src, p + 8, 16);
		memcpy(k->dst, p + 24, 16);
		k->family = 6;
		pi->dscp = (uint8_t)((rd16(p) >> 6) & 0x3f);
		pi->ip_len = tot;
		/* skip hop-by-hop, routing, destination options */
		while ((proto == 0 || proto == 43 || proto == 60) &&
		       n++ < TAP_MAX_IPV6_EXT) {
			if (len < hl + 8 || len < hl + (p[hl + 1] + 1U) * 8)
				return PARSE_TRUNCATED;
			proto = p[hl];
			hl += (p[hl + 1] + 1U) * 8;
		}
		if (proto == 44)
			return PARSE_FRAGMENT;
	}
	k->proto = proto;
	p += hl;
	len -= hl;

	if (proto == IPPROTO_GRE_ && depth == 0) {
		uint16_t fl, gproto;
		uint32_t gl = 4;

		if (len < 4)
			return PARSE_TRUNCATED;
		fl = rd16(p);
		gproto = rd16(p + 2);
		gl += (fl & GRE_F_CSUM) ? 4 : 0;
		gl += (fl & GRE_F_KEY) ? 4 : 0;
		gl += (fl & GRE_F_SEQ) ? 4 : 0;
		if (len < gl)
			return PARSE_TRUNCATED;
		if (gproto == ETHERTYPE_TEB)
			return parse_eth(cfg, p + gl, len - gl, depth + 1, pi);
		if (gproto == ETHERTYPE_IPV4 || gproto == ETHERTYPE_IPV6)
			return parse_ip(cfg, gproto, p + gl, len - gl, depth + 1,
					pi);
		/* other GRE payloads: the tunnel itself is the flow */
	}
	return parse_l4(cfg, p, len, depth, h ^ pi->ip_len, pi);
}

static enum parse_result parse_l4(const struct parse_cfg *cfg,
				  const uint8_t *p, uint32_t len, int depth,
				  uint64_t h, struct pkt_info *pi)
{
	struct flow_key *k = &pi->key;
	uint32_t l4h = 0;

	pi->tcp_flags = 0;
	if (k->proto == IPPROTO_TCP) {
		if (len < 20)
			return PARSE_TRUNCATED;
		l4h = (uint32_t)(p[12] >> 4) * 4;
		if (l4h < 20 || len < l4h)
			return PARSE_TRUNCATED;
		pi->tcp_flags = p[13];
	} else if (k->proto == IPPROTO_UDP) {
		if (len < 8)
			return PARSE_TRUNCATED;
		l4h = 8;
		if (depth == 0 && rd16(p + 2) == cfg->vxlan_port &&
		    len >= 8 + VXLAN_HLEN + ETH_HLEN_)
			return parse_eth(cfg, p + 8 + VXLAN_HLEN,
					 len - 8 - VXLAN_HLEN, depth + 1, pi);
	}
	if (l4h) {
		memcpy(&k->sport, p, 2);	/* network order */
		memcpy(&k->dport, p + 2, 2);
	}
	h = hash_bytes(h, (const uint8_t *)k, sizeof(*k));
	/* L4 header (or, for other protocols, its first bytes) + payload head */
	l4h += TAP_SIG_PAYLOAD;
	h = hash_bytes(h, p, len < l4h ? len : l4h);
	pi->sig = h;
	return PARSE_OK;
}

static enum parse_result parse_eth(const struct parse_cfg *cfg, const uint8_t *p,
				   uint32_t len, int depth, struct pkt_info *pi)
{
	uint16_t etype;
	uint32_t off = ETH_HLEN_;
	int vlans = 0;

	if (len < ETH_HLEN_)
		return PARSE_TRUNCATED;
	etype = rd16(p + 12);
	while ((etype == ETHERTYPE_VLAN || etype == ETHERTYPE_QINQ) &&
	       vlans++ < TAP_MAX_VLAN) {
		if (len < off + 4)
			return PARSE_TRUNCATED;
		etype = rd16(p + off + 2);
		off += 4;
	}
	if (etype != ETHERTYPE_IPV4 && etype != ETHERTYPE_IPV6)
		return depth ? PARSE_TRUNCATED : PARSE_NOT_IP;
	return parse_ip(cfg, etype, p + off, len - off, depth, pi);
}

enum parse_result parse_frame(const struct parse_cfg *cfg, const uint8_t *p,
			      uint32_t len, struct pkt_info *out)
{
	return parse_eth(cfg, p, len, 0, out);
}
