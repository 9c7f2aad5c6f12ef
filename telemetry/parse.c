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
#include <netinet/in.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_gre.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>
#include <rte_vxlan.h>

#include "tap.h"

static enum parse_result parse_ip(const struct parse_cfg *cfg, uint16_t etype,
				  const uint8_t *p, uint32_t len, int depth,
				  struct pkt_info *pi);

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

/* parse_l4: p points at the L4 header of the innermost packet, len = bytes
 * of L4 header + payload available in the frame */
static enum parse_result parse_l4(const struct parse_cfg *cfg,
				  const uint8_t *p, uint32_t len, int depth,
				  uint64_t h, struct pkt_info *pi);

static enum parse_result parse_eth(const struct parse_cfg *cfg, const uint8_t *p,
				   uint32_t len, int depth, struct pkt_info *pi);

/* IPv4 header at p: key, DSCP, length; *hl = header length, *len trimmed to
 * the IP total length (drops Ethernet padding) */
static enum parse_result parse_ipv4(const uint8_t *p, uint32_t *len,
				    uint32_t *hl, uint64_t *h, struct pkt_info *pi)
{
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)p;
	struct flow_key *k = &pi->key;
	uint32_t tot;

	if (*len < sizeof(*ip) || (ip->version_ihl >> 4) != IPVERSION)
		return PARSE_TRUNCATED;
	*hl = rte_ipv4_hdr_len(ip);
	tot = rte_be_to_cpu_16(ip->total_length);
	if (*hl < sizeof(*ip) || *len < *hl || tot < *hl)
		return PARSE_TRUNCATED;
	if (rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK)
		return PARSE_FRAGMENT;
	if (tot < *len)
		*len = tot;
	memset(k, 0, sizeof(*k));
	memcpy(k->src, &ip->src_addr, 4);
	memcpy(k->dst, &ip->dst_addr, 4);
	k->family = 4;
	k->proto = ip->next_proto_id;
	pi->dscp = (ip->type_of_service & RTE_IPV4_HDR_DSCP_MASK) >> 2;
	pi->ip_len = tot;
	*h = mix(*h, rte_be_to_cpu_16(ip->packet_id));
	return PARSE_OK;
}

/* IPv6 header at p, then up to TAP_MAX_IPV6_EXT hop-by-hop, routing and
 * destination-options headers; same outputs as parse_ipv4 */
static enum parse_result parse_ipv6(const uint8_t *p, uint32_t *len,
				    uint32_t *hl, struct pkt_info *pi)
{
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)p;
	struct flow_key *k = &pi->key;
	uint32_t vtc, tot, n = 0;
	int proto;

	if (*len < sizeof(*ip) || (p[0] >> 4) != 6)
		return PARSE_TRUNCATED;
	*hl = sizeof(*ip);
	tot = sizeof(*ip) + rte_be_to_cpu_16(ip->payload_len);
	if (tot < *len)
		*len = tot;
	vtc = rte_be_to_cpu_32(ip->vtc_flow);
	memset(k, 0, sizeof(*k));
	memcpy(k->src, ip->src_addr, 16);
	memcpy(k->dst, ip->dst_addr, 16);
	k->family = 6;
	pi->dscp = (uint8_t)((vtc & RTE_IPV6_HDR_DSCP_MASK) >> (RTE_IPV6_HDR_TC_SHIFT + 2));
	pi->ip_len = tot;
	proto = ip->proto;
	while ((proto == IPPROTO_HOPOPTS || proto == IPPROTO_ROUTING ||
		proto == IPPROTO_DSTOPTS) && n++ < TAP_MAX_IPV6_EXT) {
		size_t ext;

		if (*len < *hl + 8)
			return PARSE_TRUNCATED;
		proto = rte_ipv6_get_next_ext(p + *hl, proto, &ext);
		if (*len < *hl + ext)
			return PARSE_TRUNCATED;
		*hl += (uint32_t)ext;
	}
	if (proto == IPPROTO_FRAGMENT)
		return PARSE_FRAGMENT;
	k->proto = (uint8_t)proto;
	return PARSE_OK;
}

/* GRE header at p (depth 0 only): the inner packet's result, or PARSE_OK
 * with *inner = 0 for payloads we do not look into */
static enum parse_result parse_gre(const struct parse_cfg *cfg, const uint8_t *p,
				   uint32_t len, int depth, struct pkt_info *pi,
				   bool *inner)
{
	const struct rte_gre_hdr *g = (const struct rte_gre_hdr *)p;
	uint32_t gl = sizeof(*g);
	uint16_t proto;

	*inner = true;
	if (len < sizeof(*g))
		return PARSE_TRUNCATED;
	gl += g->c ? sizeof(struct rte_gre_hdr_opt_checksum_rsvd) : 0;
	gl += g->k ? sizeof(struct rte_gre_hdr_opt_key) : 0;
	gl += g->s ? sizeof(struct rte_gre_hdr_opt_sequence) : 0;
	if (len < gl)
		return PARSE_TRUNCATED;
	proto = rte_be_to_cpu_16(g->proto);
	if (proto == RTE_ETHER_TYPE_TEB)
		return parse_eth(cfg, p + gl, len - gl, depth + 1, pi);
	if (proto == RTE_ETHER_TYPE_IPV4 || proto == RTE_ETHER_TYPE_IPV6)
		return parse_ip(cfg, proto, p + gl, len - gl, depth + 1, pi);
	*inner = false;		/* other GRE payloads: the tunnel itself is the flow */
	return PARSE_OK;
}

static enum parse_result parse_ip(const struct parse_cfg *cfg, uint16_t etype,
				  const uint8_t *p, uint32_t len, int depth,
				  struct pkt_info *pi)
{
	enum parse_result r;
	uint64_t h = 0;
	uint32_t hl;

	if (etype == RTE_ETHER_TYPE_IPV4)
		r = parse_ipv4(p, &len, &hl, &h, pi);
	else
		r = parse_ipv6(p, &len, &hl, pi);
	if (r != PARSE_OK)
		return r;
	p += hl;
	len -= hl;
	if (pi->key.proto == IPPROTO_GRE && depth == 0) {
		bool inner;

		r = parse_gre(cfg, p, len, depth, pi, &inner);
		if (inner)
			return r;
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
		const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)p;

		if (len < sizeof(*th))
			return PARSE_TRUNCATED;
		l4h = (uint32_t)(th->data_off >> 4) * 4;
		if (l4h < sizeof(*th) || len < l4h)
			return PARSE_TRUNCATED;
		pi->tcp_flags = th->tcp_flags;
	} else if (k->proto == IPPROTO_UDP) {
		const struct rte_udp_hdr *uh = (const struct rte_udp_hdr *)p;

		if (len < sizeof(*uh))
			return PARSE_TRUNCATED;
		l4h = sizeof(*uh);
		if (depth == 0 && rte_be_to_cpu_16(uh->dst_port) == cfg->vxlan_port &&
		    len >= sizeof(*uh) + sizeof(struct rte_vxlan_hdr) + RTE_ETHER_HDR_LEN)
			return parse_eth(cfg, p + sizeof(*uh) + sizeof(struct rte_vxlan_hdr),
					 len - sizeof(*uh) - sizeof(struct rte_vxlan_hdr),
					 depth + 1, pi);
	}
	if (l4h) {
		/* TCP and UDP both start with the two ports */
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
	const struct rte_ether_hdr *eh = (const struct rte_ether_hdr *)p;
	uint32_t off = sizeof(*eh);
	uint16_t etype;
	int vlans = 0;

	if (len < sizeof(*eh))
		return PARSE_TRUNCATED;
	etype = rte_be_to_cpu_16(eh->ether_type);
	while ((etype == RTE_ETHER_TYPE_VLAN || etype == RTE_ETHER_TYPE_QINQ) &&
	       vlans++ < TAP_MAX_VLAN) {
		const struct rte_vlan_hdr *vh = (const struct rte_vlan_hdr *)(p + off);

		if (len < off + sizeof(*vh))
			return PARSE_TRUNCATED;
		etype = rte_be_to_cpu_16(vh->eth_proto);
		off += sizeof(*vh);
	}
	if (etype != RTE_ETHER_TYPE_IPV4 && etype != RTE_ETHER_TYPE_IPV6)
		return depth ? PARSE_TRUNCATED : PARSE_NOT_IP;
	return parse_ip(cfg, etype, p + off, len - off, depth, pi);
}

enum parse_result parse_frame(const struct parse_cfg *cfg, const uint8_t *p,
			      uint32_t len, struct pkt_info *out)
{
	return parse_eth(cfg, p, len, 0, out);
}
