/*
 * A chip instance (see chip.h): construction from a config, routing with a route cache,
 * the hop-by-hop carrying of messages, and byte-addressable phase-1 memory data on top of
 * the memory store.
 */
#include "sim/chip/chip.h"

#include "sim/chip/models.h"
#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct route_slot {
    uint64_t key; /* (from + 1) << 32 | (to + 1); 0 = empty */
    struct sim_topo_route route;
};

struct binding {
    uint64_t addr, n;
    char *op; /* owned */
};

struct span {
    uint64_t addr, n; /* a stored tensor's bytes */
};

struct space_index {
    char name[SIM_SPACE_MAX];
    struct span *v; /* sorted by addr */
    size_t n, cap;
    uint64_t max_n;    /* the longest span ever */
    struct binding *b; /* pending bindings, sorted by addr, not overlapping */
    size_t nb, capb;
};

struct deferred {
    void (*fn)(void *);
    void *ptr;
};

struct sim_chip {
    const struct sim_config *cfg; /* borrowed */
    struct sim_engine *engine;    /* owned */
    struct sim_topo *topo;        /* owned */
    struct sim_memstore *store;   /* owned */
    struct sim_oplog *oplog;      /* owned */

    struct sim_component *comps; /* owned, one per node */
    size_t n_comps;

    /* engine links: 2 per topology link, then 2 per sip (host -> io_cpu, io_cpu -> host) */
    struct sim_link **links;
    char **link_names;    /* owned */
    uint64_t *data_bytes; /* DMA data accounted on each link (sim_chip_data_path) */
    size_t n_links, n_topo_links;

    struct route_slot *routes; /* open addressing */
    size_t routes_cap, routes_len;

    struct sim_chip_marker *markers;
    size_t n_markers, cap_markers;
    struct sim_chip_token *tokens;
    size_t n_tokens, cap_tokens;

    struct deferred *deferred;
    size_t n_deferred;

    struct space_index *spaces; /* the byte ranges of the stored tensors, per space */
    size_t n_spaces;

    int sips, cubes, pes; /* shape of the chip */
    bool no_logging;

    char **interned; /* owned: open addressing, a power of two slots (sim_chip_intern) */
    size_t n_interned, cap_interned;
};

/* ---- hop logs ------------------------------------------------------------------------------ */

void sim_hop_log_push(struct sim_hop_log *l, const struct sim_hop_rec *r)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = sim_xreallocarray(l->v, l->cap, sizeof(*l->v));
    }
    l->v[l->n++] = *r;
}

void sim_hop_log_fini(struct sim_hop_log *l)
{
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* ---- construction ------------------------------------------------------------------------- */

static sim_time_t ns_ticks(double ns)
{
    return sim_ns_to_ticks(ns);
}

static void make_link(struct sim_chip *c, size_t i, const char *name, double latency_ns,
                      double gbps)
{
    /* latency > 0 by the config's validation; gbps bytes/ns = gbps / 1000 bytes/tick */
    sim_time_t lat = ns_ticks(latency_ns);
    c->links[i] = sim_link_new(c->engine, name, lat ? lat : 1, gbps / SIM_TICKS_PER_NS);
    c->link_names[i] = sim_xstrdup(name);
}

struct sim_chip *sim_chip_new(const struct sim_config *cfg, size_t stack_size)
{
    struct sim_chip *c = sim_xcalloc(1, sizeof(*c));
    c->cfg = cfg;
    c->engine = sim_engine_new(&(struct sim_engine_opts){.stack_size = stack_size});
    c->topo = sim_topo_new(cfg);
    c->store = sim_memstore_new();
    c->oplog = sim_oplog_new(c->store);
    c->sips = (int)cfg->sips;
    c->cubes = (int)cfg->cubes_per_sip;
    c->pes = (int)cfg->pes_per_cube;

    c->n_comps = sim_topo_node_count(c->topo);
    c->comps = sim_xcalloc(c->n_comps, sizeof(*c->comps));
    for (size_t i = 0; i < c->n_comps; i++) {
        const struct sim_topo_node *n = sim_topo_node(c->topo, (int)i);
        struct sim_component *k = &c->comps[i];
        k->ops = sim_models_for(n->kind);
        k->chip = c;
        k->engine = c->engine;
        k->oplog = c->oplog;
        k->node = (int)i;
        k->id = n->id;
        k->kind = n->kind;
        k->sip = n->sip;
        k->cube = n->cube;
        k->pe = n->pe;
        switch (n->kind) {
        case SIM_NODE_IO_CPU:
        case SIM_NODE_M_CPU:
        case SIM_NODE_PE_CPU:
        case SIM_NODE_PE_GEMM:
        case SIM_NODE_PE_MATH: k->units = sim_resource_new(c->engine, n->id, 1); break;
        case SIM_NODE_PE_DMA:
            k->units = sim_resource_new(c->engine, n->id, cfg->pe_dma.channels);
            break;
        case SIM_NODE_HBM:
        case SIM_NODE_SRAM:
        case SIM_NODE_TCM: {
            const struct sim_config_mem *m = n->kind == SIM_NODE_HBM    ? &cfg->hbm
                                             : n->kind == SIM_NODE_SRAM ? &cfg->sram
                                                                        : &cfg->tcm;
            /* a port with latency 0 is a valid memory; the engine's links need >= 1 tick */
            sim_time_t lat = ns_ticks(m->latency_ns);
            k->port = sim_link_new(c->engine, n->id, lat ? lat : 1, m->gbps / SIM_TICKS_PER_NS);
            break;
        }
        default: break;
        }
    }

    c->n_topo_links = sim_topo_link_count(c->topo);
    c->n_links = 2 * c->n_topo_links + 2 * (size_t)c->sips;
    c->links = sim_xcalloc(c->n_links, sizeof(struct sim_link *));
    c->link_names = sim_xcalloc(c->n_links, sizeof(*c->link_names));
    c->data_bytes = sim_xcalloc(c->n_links, sizeof(*c->data_bytes));
    for (size_t i = 0; i < c->n_topo_links; i++) {
        const struct sim_topo_link *l = sim_topo_link(c->topo, (int)i);
        const char *a = sim_topo_node(c->topo, l->a)->id, *b = sim_topo_node(c->topo, l->b)->id;
        char *n1 = sim_xasprintf("%s->%s", a, b), *n2 = sim_xasprintf("%s->%s", b, a);
        make_link(c, 2 * i, n1, l->latency_ns, l->gbps);
        make_link(c, 2 * i + 1, n2, l->latency_ns, l->gbps);
        free(n1);
        free(n2);
    }
    for (int s = 0; s < c->sips; s++) {
        /* the host's link into a sip's IO_CPU has the host class's latency and bandwidth */
        const char *io =
            sim_topo_node(c->topo, sim_topo_node_at(c->topo, s, 0, 0, SIM_NODE_IO_CPU))->id;
        char *n1 = sim_xasprintf("host->%s", io), *n2 = sim_xasprintf("%s->host", io);
        size_t base = 2 * c->n_topo_links + 2 * (size_t)s;
        make_link(c, base, n1, cfg->noc.host.latency_ns, cfg->noc.host.gbps);
        make_link(c, base + 1, n2, cfg->noc.host.latency_ns, cfg->noc.host.gbps);
        free(n1);
        free(n2);
    }
    return c;
}

void sim_chip_defer_free(struct sim_chip *c, void (*fn)(void *), void *ptr)
{
    c->deferred = sim_xreallocarray(c->deferred, c->n_deferred + 1, sizeof(*c->deferred));
    c->deferred[c->n_deferred++] = (struct deferred){fn, ptr};
}

/* ---- interned strings ------------------------------------------------------------------------ */

static size_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

static void intern_put(char **slots, size_t cap, char *s)
{
    size_t i = str_hash(s) & (cap - 1);
    while (slots[i])
        i = (i + 1) & (cap - 1);
    slots[i] = s;
}

const char *sim_chip_intern(struct sim_chip *c, const char *s)
{
    if (!s)
        return NULL;
    if (c->cap_interned) {
        for (size_t i = str_hash(s) & (c->cap_interned - 1); c->interned[i];
             i = (i + 1) & (c->cap_interned - 1))
            if (strcmp(c->interned[i], s) == 0)
                return c->interned[i];
    }
    if (2 * (c->n_interned + 1) > c->cap_interned) {
        size_t cap = c->cap_interned ? 2 * c->cap_interned : 64;
        char **slots = sim_xcalloc(cap, sizeof(*slots));
        for (size_t i = 0; i < c->cap_interned; i++)
            if (c->interned[i])
                intern_put(slots, cap, c->interned[i]);
        free(c->interned);
        c->interned = slots;
        c->cap_interned = cap;
    }
    char *k = sim_xstrdup(s);
    intern_put(c->interned, c->cap_interned, k);
    c->n_interned++;
    return k;
}

void sim_chip_free(struct sim_chip *c)
{
    if (!c)
        return;
    /* processes go first: their stacks may hold pointers into what follows */
    sim_engine_free(c->engine);
    for (size_t i = c->n_deferred; i-- > 0;)
        c->deferred[i].fn(c->deferred[i].ptr);
    free(c->deferred);
    sim_oplog_free(c->oplog);
    sim_memstore_free(c->store);
    for (size_t i = 0; i < c->cap_interned; i++)
        free(c->interned[i]);
    free(c->interned);
    for (size_t i = 0; i < c->routes_cap; i++)
        if (c->routes[i].key)
            sim_topo_route_fini(&c->routes[i].route);
    free(c->routes);
    for (size_t i = 0; i < c->n_links; i++)
        free(c->link_names[i]);
    free(c->link_names);
    free(c->links);
    free(c->data_bytes);
    for (size_t i = 0; i < c->n_markers; i++) {
        free(c->markers[i].name);
        free(c->markers[i].component);
        free(c->markers[i].kernel);
    }
    free(c->markers);
    for (size_t i = 0; i < c->n_tokens; i++) {
        free(c->tokens[i].component);
        free(c->tokens[i].kernel);
    }
    free(c->tokens);
    for (size_t i = 0; i < c->n_spaces; i++) {
        free(c->spaces[i].v);
        for (size_t j = 0; j < c->spaces[i].nb; j++)
            free(c->spaces[i].b[j].op);
        free(c->spaces[i].b);
    }
    free(c->spaces);
    free(c->comps);
    sim_topo_free(c->topo);
    free(c);
}

struct sim_engine *sim_chip_engine(const struct sim_chip *c)
{
    return c->engine;
}

const struct sim_config *sim_chip_config(const struct sim_chip *c)
{
    return c->cfg;
}

const struct sim_topo *sim_chip_topo(const struct sim_chip *c)
{
    return c->topo;
}

struct sim_memstore *sim_chip_store(const struct sim_chip *c)
{
    return c->store;
}

struct sim_oplog *sim_chip_oplog(const struct sim_chip *c)
{
    return c->oplog;
}

void sim_chip_set_logging(struct sim_chip *c, bool on)
{
    c->no_logging = !on;
    for (size_t i = 0; i < c->n_comps; i++)
        c->comps[i].oplog = sim_chip_active_oplog(c);
}

struct sim_oplog *sim_chip_active_oplog(const struct sim_chip *c)
{
    return c->no_logging ? NULL : c->oplog;
}

size_t sim_chip_component_count(const struct sim_chip *c)
{
    return c->n_comps;
}

struct sim_component *sim_chip_component(const struct sim_chip *c, int node)
{
    assert(node >= 0 && (size_t)node < c->n_comps);
    return &c->comps[node];
}

size_t sim_chip_link_count(const struct sim_chip *c)
{
    return c->n_links;
}

void sim_chip_link_stats(const struct sim_chip *c, size_t i, struct sim_chip_link_stats *out)
{
    assert(i < c->n_links);
    out->name = c->link_names[i];
    out->cls = i < 2 * c->n_topo_links ? sim_topo_link(c->topo, (int)(i / 2))->cls : SIM_LINK_HOST;
    out->bytes = sim_link_bytes(c->links[i]) + c->data_bytes[i];
    out->busy = sim_link_busy(c->links[i]);
    out->max_concurrent = sim_link_max_concurrent(c->links[i]);
}

/* ---- markers and tokens ------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? sim_xstrdup(s) : NULL;
}

size_t sim_chip_marker_count(const struct sim_chip *c)
{
    return c->n_markers;
}

const struct sim_chip_marker *sim_chip_marker(const struct sim_chip *c, size_t i)
{
    assert(i < c->n_markers);
    return &c->markers[i];
}

size_t sim_chip_token_count(const struct sim_chip *c)
{
    return c->n_tokens;
}

const struct sim_chip_token *sim_chip_token(const struct sim_chip *c, size_t i)
{
    assert(i < c->n_tokens);
    return &c->tokens[i];
}

void sim_chip_add_marker(struct sim_chip *c, const char *name, const char *component,
                         const char *kernel, int64_t cmdq_id)
{
    if (c->n_markers == c->cap_markers) {
        c->cap_markers = c->cap_markers ? 2 * c->cap_markers : 16;
        c->markers = sim_xreallocarray(c->markers, c->cap_markers, sizeof(*c->markers));
    }
    c->markers[c->n_markers++] = (struct sim_chip_marker){
        .t_ns = sim_ticks_to_ns(sim_engine_now(c->engine)),
        .name = sim_xstrdup(name),
        .component = dup_or_null(component),
        .kernel = dup_or_null(kernel),
        .cmdq_id = cmdq_id,
    };
}

size_t sim_chip_token_begin(struct sim_chip *c, int64_t index, bool decode, const char *component,
                            const char *kernel, int64_t cmdq_id)
{
    if (c->n_tokens == c->cap_tokens) {
        c->cap_tokens = c->cap_tokens ? 2 * c->cap_tokens : 16;
        c->tokens = sim_xreallocarray(c->tokens, c->cap_tokens, sizeof(*c->tokens));
    }
    double now = sim_ticks_to_ns(sim_engine_now(c->engine));
    c->tokens[c->n_tokens] = (struct sim_chip_token){
        .t_start_ns = now,
        .t_end_ns = now,
        .index = index,
        .decode = decode,
        .open = true,
        .component = dup_or_null(component),
        .kernel = dup_or_null(kernel),
        .cmdq_id = cmdq_id,
    };
    return c->n_tokens++;
}

void sim_chip_token_end(struct sim_chip *c, size_t token)
{
    assert(token < c->n_tokens);
    c->tokens[token].t_end_ns = sim_ticks_to_ns(sim_engine_now(c->engine));
    c->tokens[token].open = false;
}

/* ---- addresses ------------------------------------------------------------------------- */

int sim_chip_pe_index(const struct sim_chip *c, int64_t sip, int64_t cube, int64_t pe)
{
    if (sip < 0 || cube < 0 || pe < 0 || sip >= c->sips || cube >= c->cubes || pe >= c->pes)
        return -1;
    return (int)((sip * c->cubes + cube) * c->pes + pe);
}

void sim_chip_pe_coords(const struct sim_chip *c, int g, int *sip, int *cube, int *pe)
{
    assert(g >= 0 && g < c->sips * c->cubes * c->pes);
    *pe = g % c->pes;
    *cube = (g / c->pes) % c->cubes;
    *sip = g / (c->pes * c->cubes);
}

uint64_t sim_chip_dev_addr(int g, uint64_t pa)
{
    assert(g >= 0 && pa <= SIM_CHIP_PA_MAX);
    return ((uint64_t)g << SIM_CHIP_PE_WINDOW_BITS) | pa;
}

int sim_chip_addr_pe(uint64_t a)
{
    return (int)(a >> SIM_CHIP_PE_WINDOW_BITS);
}

uint64_t sim_chip_addr_pa(uint64_t a)
{
    return a & SIM_CHIP_PA_MAX;
}

int sim_chip_mem_node(const struct sim_chip *c, const char *space, uint64_t addr)
{
    int g = sim_chip_addr_pe(addr);
    if (g >= c->sips * c->cubes * c->pes)
        return -1;
    int s, k, p;
    sim_chip_pe_coords(c, g, &s, &k, &p);
    enum sim_node_kind kind = strcmp(space, "hbm") == 0    ? SIM_NODE_HBM
                              : strcmp(space, "sram") == 0 ? SIM_NODE_SRAM
                                                           : SIM_NODE_TCM;
    return sim_topo_node_at(c->topo, s, k, p, kind);
}

/* ---- routes ----------------------------------------------------------------------------- */

static uint64_t route_key(int from, int to)
{
    return ((uint64_t)(from + 1) << 32) | (uint64_t)(to + 1);
}

static size_t route_hash(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= UINT64_C(0xff51afd7ed558ccd);
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

static void routes_grow(struct sim_chip *c)
{
    size_t cap = c->routes_cap ? 2 * c->routes_cap : 256;
    struct route_slot *old = c->routes;
    size_t old_cap = c->routes_cap;
    c->routes = sim_xcalloc(cap, sizeof(*c->routes));
    c->routes_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].key)
            continue;
        size_t j = route_hash(old[i].key, cap);
        while (c->routes[j].key)
            j = (j + 1) & (cap - 1);
        c->routes[j] = old[i];
    }
    free(old);
}

const struct sim_topo_route *sim_chip_route(struct sim_chip *c, int from, int to)
{
    uint64_t key = route_key(from, to);
    if ((c->routes_len + 1) * 2 > c->routes_cap)
        routes_grow(c);
    size_t j = route_hash(key, c->routes_cap);
    while (c->routes[j].key) {
        if (c->routes[j].key == key)
            return &c->routes[j].route;
        j = (j + 1) & (c->routes_cap - 1);
    }
    struct diag d;
    int rc = sim_topo_route(c->topo, from, to, &c->routes[j].route, &d);
    assert(rc == 0 && "route between nodes of the chip");
    (void)rc;
    c->routes[j].key = key;
    c->routes_len++;
    return &c->routes[j].route;
}

void sim_chip_route_msg(struct sim_chip *c, struct sim_msg *msg, int from, int to)
{
    const struct sim_topo_route *r = sim_chip_route(c, from, to);
    msg->hops = r->hops;
    msg->n_hops = r->len;
    msg->hop = 0;
}

/* The engine link carrying a LINK hop in its direction. */
static size_t dir_link(const struct sim_chip *c, const struct sim_topo_hop *h)
{
    const struct sim_topo_link *l = sim_topo_link(c->topo, h->link);
    return 2 * (size_t)h->link + (h->node == l->a ? 0 : 1);
}

void sim_chip_send(struct sim_proc *p, struct sim_chip *c, struct sim_msg *msg)
{
    while (msg->hop < msg->n_hops) {
        const struct sim_topo_hop *h = &msg->hops[msg->hop];
        sim_time_t t_in = sim_engine_now(c->engine);
        struct sim_hop_rec rec = {.kind = h->kind, .node = h->node, .to = h->to, .link = h->link};
        if (h->kind == SIM_HOP_LINK) {
            sim_link_transfer(p, c->links[dir_link(c, h)], msg->wire_bytes);
            msg->hop++;
        } else if (msg->hop + 1 < msg->n_hops) {
            /* the sender (hop 0) or a node on the way: crossed, not serviced */
            rec.transit = true;
            msg->hop++;
        } else {
            msg->hop++;
            sim_component_handle(p, &c->comps[h->node], msg);
            if (msg->hop < msg->n_hops) {
                /* the service gave the message a new route: record this hop, go on */
                rec.t_in = t_in;
                rec.t_out = sim_engine_now(c->engine);
                if (msg->hop_log)
                    sim_hop_log_push(msg->hop_log, &rec);
                continue;
            }
        }
        rec.t_in = t_in;
        rec.t_out = sim_engine_now(c->engine);
        if (msg->hop_log)
            sim_hop_log_push(msg->hop_log, &rec);
    }
}

void sim_chip_host_hop(struct sim_proc *p, struct sim_chip *c, int sip, bool to_device,
                       uint64_t nbytes, struct sim_hop_log *log)
{
    assert(sip >= 0 && sip < c->sips);
    size_t i = 2 * c->n_topo_links + 2 * (size_t)sip + (to_device ? 0 : 1);
    int io = sim_topo_node_at(c->topo, sip, 0, 0, SIM_NODE_IO_CPU);
    struct sim_hop_rec rec = {.kind = SIM_HOP_LINK,
                              .node = to_device ? -1 : io,
                              .to = to_device ? io : -1,
                              .link = -1,
                              .t_in = sim_engine_now(c->engine)};
    sim_link_transfer(p, c->links[i], nbytes);
    rec.t_out = sim_engine_now(c->engine);
    if (log)
        sim_hop_log_push(log, &rec);
}

sim_time_t sim_chip_data_path(struct sim_chip *c, int from, int to, uint64_t nbytes)
{
    const struct sim_topo_route *r = sim_chip_route(c, from, to);
    sim_time_t lat = 0;
    for (size_t i = 0; i < r->len; i++) {
        if (r->hops[i].kind != SIM_HOP_LINK)
            continue;
        size_t l = dir_link(c, &r->hops[i]);
        c->data_bytes[l] += nbytes;
        lat += ns_ticks(sim_topo_link(c->topo, r->hops[i].link)->latency_ns);
    }
    return lat;
}

/* ---- phase-1 memory data ---------------------------------------------------------------- */

/*
 * The memory store keeps whole tensors at their start addresses; the chip keeps, per
 * space, the byte ranges of those tensors sorted by address, so that reads and writes of
 * any range find the tensors holding it. Every write keeps overlapping tensors byte-wise
 * consistent, so a range reads the same whichever tensor it is read from.
 */

static struct space_index *space_index(struct sim_chip *c, const char *space, bool create)
{
    for (size_t i = 0; i < c->n_spaces; i++)
        if (strcmp(c->spaces[i].name, space) == 0)
            return &c->spaces[i];
    if (!create)
        return NULL;
    c->spaces = sim_xreallocarray(c->spaces, c->n_spaces + 1, sizeof(*c->spaces));
    struct space_index *x = &c->spaces[c->n_spaces++];
    memset(x, 0, sizeof(*x));
    snprintf(x->name, sizeof(x->name), "%s", space);
    return x;
}

/* Index of the first span with addr > a (so the one before, if any, starts at or below). */
static size_t upper(const struct space_index *x, uint64_t a)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->v[mid].addr <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Index of the first span that may overlap [a, a + n): spans are sorted by start, so
 * the earliest one reaching past a starts at most max_n bytes below it. */
static size_t first_overlap(const struct space_index *x, uint64_t a)
{
    size_t i = upper(x, a);
    while (i > 0 && x->v[i - 1].addr + x->max_n > a)
        i--;
    return i;
}

static void span_set(struct space_index *x, uint64_t a, uint64_t n)
{
    size_t i = upper(x, a);
    if (n > x->max_n)
        x->max_n = n;
    if (i > 0 && x->v[i - 1].addr == a) {
        x->v[i - 1].n = n;
        return;
    }
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 64;
        x->v = sim_xreallocarray(x->v, x->cap, sizeof(*x->v));
    }
    memmove(&x->v[i + 1], &x->v[i], (x->n - i) * sizeof(*x->v));
    x->v[i] = (struct span){a, n};
    x->n++;
    if (n > x->max_n)
        x->max_n = n;
}

static uint64_t shape_nbytes(enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    uint64_t n = sim_dtype_size(dtype);
    for (unsigned i = 0; i < ndim; i++)
        n *= (uint64_t)shape[i];
    return n;
}

int sim_chip_mem_read(struct sim_chip *c, const char *space, uint64_t addr, enum sim_dtype dtype,
                      unsigned ndim, const int64_t *shape, struct sim_tensor **out, struct diag *d)
{
    uint64_t n = shape_nbytes(dtype, ndim, shape);
    const struct space_index *x = space_index(c, space, false);
    size_t i = x ? upper(x, addr) : 0;
    if (i > 0 && x->v[i - 1].addr == addr && x->v[i - 1].n == n) /* the tensor, reinterpreted */
        return sim_memstore_read(c->store, space, addr, dtype, ndim, shape, out, d);
    struct sim_tensor *t = sim_tensor_new(dtype, ndim, shape);
    if (sim_chip_mem_read_bytes(c, space, addr, n, sim_tensor_data(t)) < n) {
        sim_tensor_unref(t);
        return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                        "%s 0x%llx: no tensor holds all of these %llu bytes (never written)", space,
                        (unsigned long long)addr, (unsigned long long)n);
    }
    *out = t;
    return 0;
}

/* Index of the first binding that ends after a (bindings do not overlap, so their ends
 * are sorted too). */
static size_t first_binding(const struct space_index *x, uint64_t a)
{
    size_t lo = 0, hi = x->nb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->b[mid].addr + x->b[mid].n <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Remove [addr, addr + n) from the bindings: new data (or a new binding) replaces it;
 * what a binding holds outside the range stays bound. */
static void unbind(struct space_index *x, uint64_t addr, uint64_t n)
{
    size_t i = first_binding(x, addr), j = i;
    if (i >= x->nb || x->b[i].addr >= addr + n)
        return;
    struct binding left = {0}, right = {0};
    if (x->b[i].addr < addr)
        left = (struct binding){x->b[i].addr, addr - x->b[i].addr, sim_xstrdup(x->b[i].op)};
    while (j < x->nb && x->b[j].addr < addr + n)
        j++;
    struct binding *last = &x->b[j - 1];
    if (last->addr + last->n > addr + n)
        right =
            (struct binding){addr + n, last->addr + last->n - (addr + n), sim_xstrdup(last->op)};
    for (size_t k = i; k < j; k++)
        free(x->b[k].op);
    size_t keep = (left.op != NULL) + (right.op != NULL);
    if (x->nb - (j - i) + keep > x->capb) {
        x->capb = x->nb + keep;
        x->b = sim_xreallocarray(x->b, x->capb, sizeof(*x->b));
    }
    memmove(&x->b[i + keep], &x->b[j], (x->nb - j) * sizeof(*x->b));
    x->nb = x->nb - (j - i) + keep;
    if (left.op)
        x->b[i++] = left;
    if (right.op)
        x->b[i] = right;
}

/* Copy the bytes of [a, a + n) from src (holding them from address a) into the stored
 * tensor of span sp where they overlap. */
static void copy_overlap(struct sim_chip *c, const char *space, const struct span *sp, uint64_t a,
                         uint64_t n, const void *src, const struct sim_memstore_writer *w)
{
    uint64_t lo = sp->addr > a ? sp->addr : a;
    uint64_t hi = sp->addr + sp->n < a + n ? sp->addr + sp->n : a + n;
    if (lo >= hi)
        return;
    struct sim_tensor *t = sim_memstore_get(c->store, space, sp->addr);
    memcpy((char *)sim_tensor_data(t) + (lo - sp->addr), (const char *)src + (lo - a), hi - lo);
    /* rewritten in place: the store's generation and last writer follow */
    sim_memstore_write(c->store, space, sp->addr, t, w);
}

void sim_chip_mem_write(struct sim_chip *c, const char *space, uint64_t addr, struct sim_tensor *t,
                        const char *op)
{
    struct sim_memstore_writer w = {op, sim_ticks_to_ns(sim_engine_now(c->engine))};
    struct space_index *x = space_index(c, space, true);
    uint64_t n = t->nbytes;
    bool inside = false; /* some other tensor holds the whole range */
    for (size_t j = first_overlap(x, addr); j < x->n && x->v[j].addr <= addr && !inside; j++)
        inside = addr + n <= x->v[j].addr + x->v[j].n && !(x->v[j].addr == addr && x->v[j].n == n);
    if (!inside) {
        /* a tensor of its own (replacing one of the same range) */
        sim_memstore_write(c->store, space, addr, t, &w);
        span_set(x, addr, n);
    }
    /* every other tensor holding some of these bytes gets them */
    for (size_t j = first_overlap(x, addr); j < x->n && x->v[j].addr < addr + n; j++) {
        if (!inside && x->v[j].addr == addr)
            continue;
        copy_overlap(c, space, &x->v[j], addr, n, sim_tensor_cdata(t), &w);
    }
    unbind(x, addr, n);
}

uint64_t sim_chip_mem_read_bytes(struct sim_chip *c, const char *space, uint64_t addr, uint64_t n,
                                 void *buf)
{
    memset(buf, 0, n);
    const struct space_index *x = space_index(c, space, false);
    if (!x)
        return 0;
    uint64_t held = 0, covered_to = addr;
    for (size_t j = first_overlap(x, addr); j < x->n && x->v[j].addr < addr + n; j++) {
        const struct span *sp = &x->v[j];
        uint64_t lo = sp->addr > addr ? sp->addr : addr;
        uint64_t hi = sp->addr + sp->n < addr + n ? sp->addr + sp->n : addr + n;
        if (lo >= hi)
            continue;
        const struct sim_tensor *t = sim_memstore_get(c->store, space, sp->addr);
        sim_tensor_read_bytes(t, lo - sp->addr, hi - lo, (char *)buf + (lo - addr));
        uint64_t from = lo > covered_to ? lo : covered_to; /* count each byte once */
        if (hi > from) {
            held += hi - from;
            covered_to = hi;
        }
    }
    return held;
}

void sim_chip_bind_pending(struct sim_chip *c, const char *space, uint64_t addr, uint64_t n,
                           const char *op)
{
    struct space_index *x = space_index(c, space, true);
    unbind(x, addr, n);
    if (x->nb == x->capb) {
        x->capb = x->capb ? 2 * x->capb : 16;
        x->b = sim_xreallocarray(x->b, x->capb, sizeof(*x->b));
    }
    size_t i = first_binding(x, addr);
    memmove(&x->b[i + 1], &x->b[i], (x->nb - i) * sizeof(*x->b));
    x->b[i] = (struct binding){addr, n ? n : 1, sim_xstrdup(op)};
    x->nb++;
}

const char *sim_chip_pending(const struct sim_chip *c, const char *space, uint64_t addr, uint64_t n)
{
    const struct space_index *x = space_index((struct sim_chip *)c, space, false);
    if (!x)
        return NULL;
    size_t i = first_binding(x, addr);
    return i < x->nb && x->b[i].addr < addr + (n ? n : 1) ? x->b[i].op : NULL;
}
