/*
 * The chip graph (see topology.h): nodes laid out in a fixed order so an id or a
 * coordinate maps to an index by arithmetic, links created in a fixed order, and routes by
 * Dijkstra over integer picoseconds (exact ties, so the tie-break rule always applies).
 */
#include "sim/chip/topology.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    CUBE_NODES = 4, /* m_cpu, hbm, sram, noc */
    PE_NODES = 5,   /* pe_cpu, pe_dma, pe_gemm, pe_math, tcm */
};

struct sim_topo {
    int sips, cubes, pes; /* per chip, per sip, per cube */
    int cube_size;        /* nodes per cube, its PEs included */
    int sip_size;         /* nodes per sip */
    struct sim_topo_node *nodes;
    size_t n_nodes;
    struct sim_topo_link *links;
    size_t n_links, cap_links;
};

static const char *const kind_names[SIM_NODE_KIND_COUNT] = {
    "io_cpu", "m_cpu", "hbm", "sram", "noc", "pe_cpu", "pe_dma", "pe_gemm", "pe_math", "tcm",
};

static const char *const class_names[SIM_LINK_CLASS_COUNT] = {
    "pe", "cube", "cube_cube", "host", "sip_sip",
};

const char *sim_topo_kind_name(enum sim_node_kind k)
{
    return (unsigned)k < SIM_NODE_KIND_COUNT ? kind_names[k] : "?";
}

const char *sim_topo_link_class_name(enum sim_link_class c)
{
    return (unsigned)c < SIM_LINK_CLASS_COUNT ? class_names[c] : "?";
}

int sim_topo_kind_parse(const char *name, enum sim_node_kind *out)
{
    for (int k = 0; k < SIM_NODE_KIND_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0) {
            *out = (enum sim_node_kind)k;
            return 0;
        }
    return -1;
}

static bool is_cube_kind(enum sim_node_kind k)
{
    return k >= SIM_NODE_M_CPU && k <= SIM_NODE_NOC;
}

static bool is_pe_kind(enum sim_node_kind k)
{
    return k >= SIM_NODE_PE_CPU && k <= SIM_NODE_TCM;
}

static bool is_memory(enum sim_node_kind k)
{
    return k == SIM_NODE_HBM || k == SIM_NODE_SRAM || k == SIM_NODE_TCM;
}

int sim_topo_node_at(const struct sim_topo *t, int sip, int cube, int pe, enum sim_node_kind kind)
{
    if (sip < 0 || sip >= t->sips || (unsigned)kind >= SIM_NODE_KIND_COUNT)
        return -1;
    int i = sip * t->sip_size;
    if (kind == SIM_NODE_IO_CPU)
        return i;
    if (cube < 0 || cube >= t->cubes)
        return -1;
    i += 1 + cube * t->cube_size;
    if (is_cube_kind(kind))
        return i + (kind - SIM_NODE_M_CPU);
    if (pe < 0 || pe >= t->pes)
        return -1;
    return i + CUBE_NODES + pe * PE_NODES + (kind - SIM_NODE_PE_CPU);
}

static void add_node(struct sim_topo *t, int sip, int cube, int pe, enum sim_node_kind k)
{
    struct sim_topo_node *n = &t->nodes[t->n_nodes++];
    n->kind = k;
    n->sip = sip;
    n->cube = is_cube_kind(k) || is_pe_kind(k) ? cube : -1;
    n->pe = is_pe_kind(k) ? pe : -1;
    if (k == SIM_NODE_IO_CPU)
        n->id = sim_xasprintf("sip%d.%s", sip, kind_names[k]);
    else if (is_cube_kind(k))
        n->id = sim_xasprintf("sip%d.cube%d.%s", sip, cube, kind_names[k]);
    else
        n->id = sim_xasprintf("sip%d.cube%d.pe%d.%s", sip, cube, pe, kind_names[k]);
    assert(sim_topo_node_at(t, sip, cube, pe, k) == (int)t->n_nodes - 1);
}

static void node_add_link(struct sim_topo_node *n, int link)
{
    n->links = sim_xreallocarray(n->links, n->n_links + 1, sizeof(int));
    n->links[n->n_links++] = link;
}

static void add_link(struct sim_topo *t, int a, int b, enum sim_link_class cls,
                     const struct sim_config_link *p)
{
    if (t->n_links == t->cap_links) {
        t->cap_links = t->cap_links ? 2 * t->cap_links : 64;
        t->links = sim_xreallocarray(t->links, t->cap_links, sizeof(*t->links));
    }
    int i = (int)t->n_links++;
    struct sim_topo_link *l = &t->links[i];
    l->a = a;
    l->b = b;
    l->cls = cls;
    l->latency_ns = p->latency_ns;
    l->gbps = p->gbps;
    l->name = sim_xasprintf("%s<->%s", t->nodes[a].id, t->nodes[b].id);
    assert(p->latency_ns > 0 && p->gbps > 0);
    node_add_link(&t->nodes[a], i);
    node_add_link(&t->nodes[b], i);
}

/* Links between neighbours of a ring of n members: none for 1, one for 2, n for more. */
static void add_ring(struct sim_topo *t, const int *members, int n, enum sim_link_class cls,
                     const struct sim_config_link *p)
{
    for (int i = 0; i + 1 < n; i++)
        add_link(t, members[i], members[i + 1], cls, p);
    if (n > 2)
        add_link(t, members[n - 1], members[0], cls, p);
}

struct sim_topo *sim_topo_new(const struct sim_config *cfg)
{
    assert(cfg->sips >= 1 && cfg->cubes_per_sip >= 1 && cfg->pes_per_cube >= 1);
    assert(sim_config_total_pes(cfg) <= SIM_CONFIG_MAX_PES);
    struct sim_topo *t = sim_xcalloc(1, sizeof(*t));
    t->sips = (int)cfg->sips;
    t->cubes = (int)cfg->cubes_per_sip;
    t->pes = (int)cfg->pes_per_cube;
    t->cube_size = CUBE_NODES + t->pes * PE_NODES;
    t->sip_size = 1 + t->cubes * t->cube_size;
    t->nodes = sim_xcalloc((size_t)t->sips * (size_t)t->sip_size, sizeof(*t->nodes));

    for (int s = 0; s < t->sips; s++) {
        add_node(t, s, -1, -1, SIM_NODE_IO_CPU);
        for (int c = 0; c < t->cubes; c++) {
            for (int k = SIM_NODE_M_CPU; k <= SIM_NODE_NOC; k++)
                add_node(t, s, c, -1, (enum sim_node_kind)k);
            for (int p = 0; p < t->pes; p++)
                for (int k = SIM_NODE_PE_CPU; k <= SIM_NODE_TCM; k++)
                    add_node(t, s, c, p, (enum sim_node_kind)k);
        }
    }

    const struct sim_config_noc *noc = &cfg->noc;
    int *ring = sim_xcalloc((size_t)(t->cubes > t->sips ? t->cubes : t->sips), sizeof(int));
    for (int s = 0; s < t->sips; s++) {
        int io = sim_topo_node_at(t, s, 0, 0, SIM_NODE_IO_CPU);
        for (int c = 0; c < t->cubes; c++) {
            int r = sim_topo_node_at(t, s, c, 0, SIM_NODE_NOC);
            add_link(t, io, r, SIM_LINK_HOST, &noc->host);
            add_link(t, r, sim_topo_node_at(t, s, c, 0, SIM_NODE_M_CPU), SIM_LINK_CUBE, &noc->cube);
            add_link(t, r, sim_topo_node_at(t, s, c, 0, SIM_NODE_HBM), SIM_LINK_CUBE, &noc->cube);
            add_link(t, r, sim_topo_node_at(t, s, c, 0, SIM_NODE_SRAM), SIM_LINK_CUBE, &noc->cube);
            for (int p = 0; p < t->pes; p++) {
                int cpu = sim_topo_node_at(t, s, c, p, SIM_NODE_PE_CPU);
                int dma = cpu + 1, gemm = cpu + 2, math = cpu + 3, tcm = cpu + 4;
                add_link(t, r, cpu, SIM_LINK_CUBE, &noc->cube);
                add_link(t, r, dma, SIM_LINK_CUBE, &noc->cube);
                add_link(t, cpu, dma, SIM_LINK_PE, &noc->pe);
                add_link(t, cpu, gemm, SIM_LINK_PE, &noc->pe);
                add_link(t, cpu, math, SIM_LINK_PE, &noc->pe);
                add_link(t, dma, tcm, SIM_LINK_PE, &noc->pe);
                add_link(t, gemm, tcm, SIM_LINK_PE, &noc->pe);
                add_link(t, math, tcm, SIM_LINK_PE, &noc->pe);
            }
            ring[c] = r;
        }
        add_ring(t, ring, t->cubes, SIM_LINK_CUBE_CUBE, &noc->cube_cube);
    }
    for (int s = 0; s < t->sips; s++)
        ring[s] = sim_topo_node_at(t, s, 0, 0, SIM_NODE_NOC);
    add_ring(t, ring, t->sips, SIM_LINK_SIP_SIP, &noc->sip_sip);
    free(ring);
    return t;
}

void sim_topo_free(struct sim_topo *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_nodes; i++) {
        free(t->nodes[i].id);
        free(t->nodes[i].links);
    }
    for (size_t i = 0; i < t->n_links; i++)
        free(t->links[i].name);
    free(t->nodes);
    free(t->links);
    free(t);
}

size_t sim_topo_node_count(const struct sim_topo *t)
{
    return t->n_nodes;
}

size_t sim_topo_link_count(const struct sim_topo *t)
{
    return t->n_links;
}

const struct sim_topo_node *sim_topo_node(const struct sim_topo *t, int i)
{
    assert(i >= 0 && (size_t)i < t->n_nodes);
    return &t->nodes[i];
}

const struct sim_topo_link *sim_topo_link(const struct sim_topo *t, int i)
{
    assert(i >= 0 && (size_t)i < t->n_links);
    return &t->links[i];
}

/* Parse "<prefix><n>." at *s: a decimal without leading zeros, at most 6 digits. */
static bool parse_part(const char **s, const char *prefix, int *n)
{
    size_t pl = strlen(prefix);
    if (strncmp(*s, prefix, pl) != 0)
        return false;
    const char *p = *s + pl;
    int v = 0, digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 7) {
        v = v * 10 + (*p - '0');
        p++, digits++;
    }
    if (digits == 0 || digits > 6 || (digits > 1 && (*s)[pl] == '0') || *p != '.')
        return false;
    *n = v;
    *s = p + 1;
    return true;
}

int sim_topo_find(const struct sim_topo *t, const char *id)
{
    const char *s = id;
    int sip, cube = 0, pe = 0;
    enum sim_node_kind k;
    if (!parse_part(&s, "sip", &sip))
        return -1;
    if (parse_part(&s, "cube", &cube))
        parse_part(&s, "pe", &pe);
    if (sim_topo_kind_parse(s, &k))
        return -1;
    int i = sim_topo_node_at(t, sip, cube, pe, k);
    /* the arithmetic ignores parts a kind does not have: compare the whole id */
    return i >= 0 && strcmp(t->nodes[i].id, id) == 0 ? i : -1;
}

int sim_topo_link_between(const struct sim_topo *t, int a, int b)
{
    if (a < 0 || (size_t)a >= t->n_nodes || b < 0 || (size_t)b >= t->n_nodes)
        return -1;
    const struct sim_topo_node *n = &t->nodes[a];
    for (size_t i = 0; i < n->n_links; i++) {
        const struct sim_topo_link *l = &t->links[n->links[i]];
        if ((l->a == a && l->b == b) || (l->a == b && l->b == a))
            return n->links[i];
    }
    return -1;
}

/* ---- routing --------------------------------------------------------------------------- */

struct qent {
    uint64_t dist; /* picoseconds */
    int hops;
    int node;
};

static bool qless(const struct qent *x, const struct qent *y)
{
    if (x->dist != y->dist)
        return x->dist < y->dist;
    if (x->hops != y->hops)
        return x->hops < y->hops;
    return x->node < y->node;
}

struct heap {
    struct qent *v;
    size_t len, cap;
};

static void heap_push(struct heap *h, struct qent e)
{
    if (h->len == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->v = sim_xreallocarray(h->v, h->cap, sizeof(*h->v));
    }
    size_t i = h->len++;
    while (i > 0 && qless(&e, &h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = e;
}

static struct qent heap_pop(struct heap *h)
{
    struct qent top = h->v[0], last = h->v[--h->len];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->len)
            break;
        if (c + 1 < h->len && qless(&h->v[c + 1], &h->v[c]))
            c++;
        if (!qless(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->len)
        h->v[i] = last;
    return top;
}

static uint64_t link_ps(const struct sim_topo_link *l)
{
    return (uint64_t)llround(l->latency_ns * 1000.0);
}

int sim_topo_route(const struct sim_topo *t, int from, int to, struct sim_topo_route *out,
                   struct diag *d)
{
    memset(out, 0, sizeof(*out));
    if (from < 0 || (size_t)from >= t->n_nodes || to < 0 || (size_t)to >= t->n_nodes)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "route between nodes %d and %d: no such node (the chip has %zu)", from, to,
                        t->n_nodes);
    size_t n = t->n_nodes;
    uint64_t *dist = sim_xmalloc(n * sizeof(*dist));
    int *hops = sim_xmalloc(n * sizeof(*hops));
    int *pred_link = sim_xmalloc(n * sizeof(*pred_link));
    unsigned char *done = sim_xcalloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        dist[i] = UINT64_MAX;
        hops[i] = 0;
        pred_link[i] = -1;
    }
    struct heap h = {0};
    dist[from] = 0;
    heap_push(&h, (struct qent){0, 0, from});
    while (h.len) {
        struct qent e = heap_pop(&h);
        if (done[e.node])
            continue;
        done[e.node] = 1;
        if (e.node == to)
            break;
        if (e.node != from && is_memory(t->nodes[e.node].kind))
            continue; /* memories are endpoints only */
        const struct sim_topo_node *u = &t->nodes[e.node];
        for (size_t i = 0; i < u->n_links; i++) {
            const struct sim_topo_link *l = &t->links[u->links[i]];
            int v = l->a == e.node ? l->b : l->a;
            if (done[v])
                continue;
            struct qent cand = {e.dist + link_ps(l), e.hops + 1, v};
            if (cand.dist < dist[v] || (cand.dist == dist[v] && cand.hops < hops[v])) {
                dist[v] = cand.dist;
                hops[v] = cand.hops;
                pred_link[v] = u->links[i];
                heap_push(&h, cand);
            }
        }
    }
    free(h.v);
    assert(done[to]); /* the graph is connected and memories are never needed in transit */

    int links = hops[to];
    out->len = 2 * (size_t)links + 1;
    out->hops = sim_xcalloc(out->len, sizeof(*out->hops));
    int v = to;
    size_t k = out->len;
    out->hops[--k] = (struct sim_topo_hop){SIM_HOP_SERVICE, v, -1, -1};
    while (v != from) {
        const struct sim_topo_link *l = &t->links[pred_link[v]];
        int u = l->a == v ? l->b : l->a;
        out->hops[--k] = (struct sim_topo_hop){SIM_HOP_LINK, u, v, pred_link[v]};
        out->hops[--k] = (struct sim_topo_hop){SIM_HOP_SERVICE, u, -1, -1};
        v = u;
    }
    assert(k == 0);
    for (size_t i = 0; i < out->len; i++)
        if (out->hops[i].kind == SIM_HOP_LINK)
            out->latency_ns += t->links[out->hops[i].link].latency_ns;
    free(dist);
    free(hops);
    free(pred_link);
    free(done);
    return 0;
}

void sim_topo_route_fini(struct sim_topo_route *r)
{
    free(r->hops);
    memset(r, 0, sizeof(*r));
}
