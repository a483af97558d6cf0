/*
 * A chip instance (see chip.h): construction from a config, routing with a route cache,
 * the hop-by-hop carrying of messages, and byte-addressable phase-1 memory data on top of
 * the memory store.
 */
#include "sim/chip/chip.h"

#include "sim/chip/bindings.h"

#include "sim/chip/models.h"
#include "sim/chip/roles.h"
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

struct span {
    uint64_t addr, n; /* a stored tensor's bytes */
    uint64_t seq;     /* the store's generation after its last write: later is larger */
    bool pattern;     /* a pattern region: later writes are laid over it, not into it */
};

struct space_index {
    char name[SIM_SPACE_MAX];
    struct span *v;   /* sorted by addr */
    uint64_t *maxend; /* maxend[i]: the furthest end of v[0..i] (non-decreasing) */
    size_t n, cap;
    struct sim_bindings *pending; /* owned: pending bindings (ADR-0020 D3) */
};

struct deferred {
    void (*fn)(void *);
    void *ptr;
};

/* A metered resource (see chip.h). */
struct res {
    char *name; /* owned */
    enum sim_res_kind kind;
    enum sim_link_class cls;
    int node, to;
    double gbps;
};

struct obs_slot {
    struct sim_chip_observer o;
    int id;
};

struct sim_chip {
    const struct sim_config *cfg; /* borrowed */
    struct sim_engine *engine;    /* owned */
    struct sim_topo *topo;        /* owned */
    struct sim_memstore *store;   /* owned */
    struct sim_oplog *oplog;      /* owned */
    struct sim_roles *roles;      /* owned: tensor roles of memory ranges, for the op log */
    struct sim_roles *names;      /* owned: kernel arguments' names of memory ranges */

    struct sim_component *comps; /* owned, one per node */
    size_t n_comps;

    /* engine links: 2 per topology link, then 2 per sip (host -> io_cpu, io_cpu -> host) */
    struct sim_link **links;
    char **link_names; /* owned */
    size_t n_links, n_topo_links;

    struct route_slot *routes; /* open addressing */
    size_t routes_cap, routes_len;

    struct sim_chip_marker *markers;
    size_t n_markers, cap_markers;
    struct sim_chip_token *tokens;
    size_t n_tokens, cap_tokens;

    struct deferred *deferred;
    size_t n_deferred;

    struct res *res; /* owned: the metered resources */
    size_t n_res;
    int32_t *link_res;    /* owned: per engine link, its resource or -1 */
    struct obs_slot *obs; /* owned: observers of spans and traffic */
    size_t n_obs;
    int obs_next;
    bool hooked; /* the components' hooks are set */

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

static void res_add(struct sim_chip *c, char *name, enum sim_res_kind kind, enum sim_link_class cls,
                    int node, int to, double gbps)
{
    c->res = sim_xreallocarray(c->res, c->n_res + 1, sizeof(*c->res));
    c->res[c->n_res++] = (struct res){name, kind, cls, node, to, gbps};
}

/* The metered resources: HBMs, then the links not inside a PE, then the host links. */
static void make_resources(struct sim_chip *c)
{
    c->link_res = sim_xreallocarray(NULL, c->n_links, sizeof(*c->link_res));
    for (size_t i = 0; i < c->n_links; i++)
        c->link_res[i] = -1;
    for (size_t i = 0; i < c->n_comps; i++) {
        c->comps[i].resource = -1;
        if (c->comps[i].kind != SIM_NODE_HBM)
            continue;
        c->comps[i].resource = (int32_t)c->n_res;
        res_add(c, sim_xstrdup(c->comps[i].id), SIM_RES_HBM, SIM_LINK_CUBE, (int)i, -1,
                c->cfg->hbm.gbps);
    }
    for (size_t i = 0; i < c->n_topo_links; i++) {
        const struct sim_topo_link *l = sim_topo_link(c->topo, (int)i);
        if (l->cls == SIM_LINK_PE)
            continue;
        c->link_res[2 * i] = c->link_res[2 * i + 1] = (int32_t)c->n_res;
        res_add(c, sim_xstrdup(l->name), SIM_RES_LINK, l->cls, l->a, l->b, l->gbps);
    }
    for (int s = 0; s < c->sips; s++) {
        size_t base = 2 * c->n_topo_links + 2 * (size_t)s;
        int io = sim_topo_node_at(c->topo, s, 0, 0, SIM_NODE_IO_CPU);
        c->link_res[base] = c->link_res[base + 1] = (int32_t)c->n_res;
        res_add(c, sim_xasprintf("host<->%s", sim_topo_node(c->topo, io)->id), SIM_RES_LINK,
                SIM_LINK_HOST, -1, io, c->cfg->noc.host.gbps);
    }
}

struct sim_chip *sim_chip_new(const struct sim_config *cfg, size_t stack_size)
{
    struct sim_chip *c = sim_xcalloc(1, sizeof(*c));
    c->cfg = cfg;
    c->engine = sim_engine_new(&(struct sim_engine_opts){.stack_size = stack_size});
    c->topo = sim_topo_new(cfg);
    c->store = sim_memstore_new();
    c->oplog = sim_oplog_new(c->store);
    c->roles = sim_roles_new();
    c->names = sim_roles_new();
    sim_oplog_set_roles(c->oplog, c->roles);
    c->sips = (int)cfg->sips;
    c->cubes = (int)cfg->cubes_per_sip;
    c->pes = (int)cfg->pes_per_cube;

    c->n_comps = sim_topo_node_count(c->topo);
    c->comps = sim_xcalloc(c->n_comps, sizeof(*c->comps));
    for (size_t i = 0; i < c->n_comps; i++) {
        const struct sim_topo_node *n = sim_topo_node(c->topo, (int)i);
        struct sim_component *k = &c->comps[i];
        k->ops = sim_models_find(n->kind, cfg->model[n->kind], NULL);
        assert(k->ops); /* the config was checked against the models loaded */
        k->chip = c;
        k->cfg = cfg;
        k->engine = c->engine;
        k->oplog = c->oplog;
        k->clock_ghz = cfg->clock_ghz;
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
    make_resources(c);
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
    sim_roles_free(c->roles);
    sim_roles_free(c->names);
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
    for (size_t i = 0; i < c->n_res; i++)
        free(c->res[i].name);
    free(c->res);
    free(c->link_res);
    free(c->obs);
    for (size_t i = 0; i < c->n_markers; i++) {
        free(c->markers[i].name);
        free(c->markers[i].component);
        free(c->markers[i].kernel);
        free(c->markers[i].error);
    }
    free(c->markers);
    for (size_t i = 0; i < c->n_tokens; i++) {
        free(c->tokens[i].component);
        free(c->tokens[i].kernel);
    }
    free(c->tokens);
    for (size_t i = 0; i < c->n_spaces; i++) {
        free(c->spaces[i].v);
        free(c->spaces[i].maxend);
        sim_bindings_free(c->spaces[i].pending);
    }
    free(c->spaces);
    for (size_t i = 0; i < c->n_comps; i++)
        free(c->comps[i].waits);
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

struct sim_roles *sim_chip_roles(const struct sim_chip *c)
{
    return c->roles;
}

struct sim_roles *sim_chip_names(const struct sim_chip *c)
{
    return c->names;
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
    out->bytes = sim_link_bytes(c->links[i]);
    out->gbps = i < 2 * c->n_topo_links ? sim_topo_link(c->topo, (int)(i / 2))->gbps
                                        : c->cfg->noc.host.gbps;
    out->busy = sim_link_busy(c->links[i]);
    out->max_concurrent = sim_link_max_concurrent(c->links[i]);
}

/* ---- spans and traffic ------------------------------------------------------------------- */

size_t sim_chip_resource_count(const struct sim_chip *c)
{
    return c->n_res;
}

void sim_chip_resource(const struct sim_chip *c, size_t i, struct sim_chip_resource *out)
{
    assert(i < c->n_res);
    const struct res *r = &c->res[i];
    *out = (struct sim_chip_resource){r->name, r->kind, r->cls, r->node, r->to, r->gbps};
}

static void emit_span(struct sim_chip *c, const struct sim_span *s)
{
    for (size_t i = 0; i < c->n_obs; i++)
        if (c->obs[i].o.on_span)
            c->obs[i].o.on_span(c->obs[i].o.ctx, s);
}

static void emit_traffic(struct sim_chip *c, int32_t res, bool write, uint64_t nbytes,
                         sim_time_t t0, sim_time_t t1)
{
    if (res < 0 || !nbytes)
        return;
    for (size_t i = 0; i < c->n_obs; i++)
        if (c->obs[i].o.on_traffic)
            c->obs[i].o.on_traffic(c->obs[i].o.ctx, (uint32_t)res, write, nbytes, t0, t1);
}

static void hook_serviced(struct sim_component *k, const struct sim_msg *msg, sim_time_t t_in,
                          sim_time_t t_out)
{
    if (!sim_component_spans(k))
        return; /* a memory's service is traffic (hook_accessed), not a span */
    struct sim_span s = {
        .kind = SIM_SPAN_SERVICE, .node = k->node, .msg = msg, .t_start = t_in, .t_end = t_out};
    emit_span(k->chip, &s);
}

static void hook_accessed(struct sim_component *k, uint64_t nbytes, bool write, sim_time_t t_in,
                          sim_time_t t_out)
{
    emit_traffic(k->chip, k->resource, write, nbytes, t_in, t_out);
}

static const struct sim_component_hooks chip_hooks = {.serviced = hook_serviced,
                                                      .accessed = hook_accessed};

int sim_chip_observe(struct sim_chip *c, const struct sim_chip_observer *o)
{
    c->obs = sim_xreallocarray(c->obs, c->n_obs + 1, sizeof(*c->obs));
    c->obs[c->n_obs++] = (struct obs_slot){*o, c->obs_next};
    if (!c->hooked) { /* the CPUs that handle host messages and the HBMs tell the chip */
        c->hooked = true;
        for (size_t i = 0; i < c->n_comps; i++) {
            enum sim_node_kind k = c->comps[i].kind;
            if (k == SIM_NODE_IO_CPU || k == SIM_NODE_M_CPU || c->comps[i].resource >= 0)
                c->comps[i].hooks = &chip_hooks;
        }
    }
    return c->obs_next++;
}

void sim_chip_unobserve(struct sim_chip *c, int id)
{
    for (size_t i = 0; i < c->n_obs; i++) {
        if (c->obs[i].id != id)
            continue;
        memmove(&c->obs[i], &c->obs[i + 1], (c->n_obs - i - 1) * sizeof(*c->obs));
        c->n_obs--;
        return;
    }
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

void sim_chip_add_failure(struct sim_chip *c, const char *error, const char *component,
                          const char *kernel, int64_t cmdq_id)
{
    sim_chip_add_marker(c, SIM_CHIP_INVALID_MARKER, component, kernel, cmdq_id);
    c->markers[c->n_markers - 1].error = sim_xstrdup(error ? error : "the run met a failure");
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

/* ---- paths ------------------------------------------------------------------------------ */

/*
 * A path: the engine links some bytes cross at once (sim_link_transfer_path), with the
 * metered resource of each and its direction, and the sum of their first-byte latencies.
 */
enum { PATH_INLINE = 16 };

struct path {
    struct sim_link **l;
    int32_t *res;
    bool *write;
    uint64_t *bytes; /* what each link carries */
    size_t n, cap;
    uint64_t cur;   /* the bytes of the stream being added */
    sim_time_t lat; /* the latency of the stream being added (path_stream: the longest) */
    struct sim_component *mem[2]; /* the memories whose ports it crosses */
    bool mem_write[2];
    uint64_t mem_bytes[2];
    size_t n_mem;
    struct sim_link *inline_l[PATH_INLINE];
    int32_t inline_res[PATH_INLINE];
    bool inline_write[PATH_INLINE];
    uint64_t inline_bytes[PATH_INLINE];
};

static void path_init(struct path *pa)
{
    pa->l = pa->inline_l;
    pa->res = pa->inline_res;
    pa->write = pa->inline_write;
    pa->bytes = pa->inline_bytes;
    pa->n = 0;
    pa->cur = 0;
    pa->n_mem = 0;
    pa->cap = PATH_INLINE;
    pa->lat = 0;
}

static void path_fini(struct path *pa)
{
    if (pa->l != pa->inline_l) {
        free(pa->l);
        free(pa->res);
        free(pa->write);
        free(pa->bytes);
    }
}

static void path_add(struct path *pa, struct sim_link *l, int32_t res, bool write, sim_time_t lat)
{
    for (size_t i = 0; i < pa->n; i++)
        if (pa->l[i] == l) { /* a link two streams share carries both */
            pa->bytes[i] += pa->cur;
            pa->lat += lat;
            return;
        }
    if (pa->n == pa->cap) {
        size_t cap = 2 * pa->cap;
        struct sim_link **nl = sim_xreallocarray(NULL, cap, sizeof(*nl));
        int32_t *nr = sim_xreallocarray(NULL, cap, sizeof(*nr));
        bool *nw = sim_xreallocarray(NULL, cap, sizeof(*nw));
        uint64_t *nb = sim_xreallocarray(NULL, cap, sizeof(*nb));
        memcpy(nl, pa->l, pa->n * sizeof(*nl));
        memcpy(nr, pa->res, pa->n * sizeof(*nr));
        memcpy(nw, pa->write, pa->n * sizeof(*nw));
        memcpy(nb, pa->bytes, pa->n * sizeof(*nb));
        path_fini(pa);
        pa->l = nl;
        pa->res = nr;
        pa->write = nw;
        pa->bytes = nb;
        pa->cap = cap;
    }
    pa->l[pa->n] = l;
    pa->res[pa->n] = res;
    pa->write[pa->n] = write;
    pa->bytes[pa->n] = pa->cur;
    pa->n++;
    pa->lat += lat;
}

/* The engine link carrying a LINK hop in its direction. */
static size_t dir_link(const struct sim_chip *c, const struct sim_topo_hop *h)
{
    const struct sim_topo_link *l = sim_topo_link(c->topo, h->link);
    return 2 * (size_t)h->link + (h->node == l->a ? 0 : 1);
}

/* Add engine link i (a topology link's direction or a host link's). */
static void path_link(struct sim_chip *c, struct path *pa, size_t i)
{
    /* even: a topology link from a to b, or a host link into the chip: "write" */
    path_add(pa, c->links[i], c->link_res[i], !(i & 1), sim_link_latency(c->links[i]));
}

/* Add the links of the route from -> to. */
static void path_route(struct sim_chip *c, struct path *pa, int from, int to)
{
    const struct sim_topo_route *r = sim_chip_route(c, from, to);
    for (size_t i = 0; i < r->len; i++)
        if (r->hops[i].kind == SIM_HOP_LINK)
            path_link(c, pa, dir_link(c, &r->hops[i]));
}

/* The engine link of sip's host link, into the chip or out of it. */
static size_t host_link(const struct sim_chip *c, int sip, bool to_device)
{
    return 2 * c->n_topo_links + 2 * (size_t)sip + (to_device ? 0 : 1);
}

/* Add the port of memory mem (its latency too) for the stream being added. */
static void path_mem(struct path *pa, struct sim_component *mem, bool write)
{
    assert(pa->n_mem < 2);
    path_add(pa, mem->port, -1, write, sim_link_latency(mem->port));
    pa->mem[pa->n_mem] = mem;
    pa->mem_write[pa->n_mem] = write;
    pa->mem_bytes[pa->n_mem++] = pa->cur;
}

/*
 * Move the path's streams over it, pipelined: the data phase at the rate of the most
 * contended link or port (at least min_ticks), then the path's latency once. Observers
 * hear of the bytes on each metered link and at each memory over the whole transfer.
 */
static void path_run(struct sim_proc *p, struct sim_chip *c, struct path *pa, sim_time_t min_ticks)
{
    sim_time_t t_in = sim_engine_now(c->engine);
    sim_link_transfer_paths(p, pa->l, pa->bytes, pa->n, 0, min_ticks, pa->lat);
    sim_time_t t_out = sim_engine_now(c->engine);
    if (c->n_obs)
        for (size_t i = 0; i < pa->n; i++)
            emit_traffic(c, pa->res[i], pa->write[i], pa->bytes[i], t_in, t_out);
    for (size_t i = 0; i < pa->n_mem; i++)
        sim_component_mem_accounted(pa->mem[i], pa->mem_bytes[i], pa->mem_write[i], t_in, t_out);
}

void sim_chip_send(struct sim_proc *p, struct sim_chip *c, struct sim_msg *msg)
{
    while (msg->hop < msg->n_hops) {
        const struct sim_topo_hop *h = &msg->hops[msg->hop];
        sim_time_t t_in = sim_engine_now(c->engine);
        struct sim_hop_rec rec = {.kind = h->kind, .node = h->node, .to = h->to, .link = h->link};
        if (h->kind == SIM_HOP_LINK) {
            /* every link up to the next serviced node at once, cut-through: routers on
             * the way forward the first bytes while the rest follow */
            struct path pa;
            path_init(&pa);
            pa.cur = msg->wire_bytes;
            size_t first = msg->hop, last = first;
            for (size_t k = first; k < msg->n_hops; k++) {
                if (msg->hops[k].kind == SIM_HOP_LINK)
                    path_link(c, &pa, dir_link(c, &msg->hops[k]));
                else if (k + 1 == msg->n_hops)
                    break;
                last = k;
            }
            path_run(p, c, &pa, 0);
            path_fini(&pa);
            sim_time_t t_out = sim_engine_now(c->engine);
            for (size_t k = first; k <= last; k++) {
                const struct sim_topo_hop *x = &msg->hops[k];
                struct sim_hop_rec r = {.kind = x->kind,
                                        .node = x->node,
                                        .to = x->to,
                                        .link = x->link,
                                        .transit = x->kind != SIM_HOP_LINK,
                                        .t_in = x->kind == SIM_HOP_LINK ? t_in : t_out,
                                        .t_out = t_out};
                if (msg->hop_log)
                    sim_hop_log_push(msg->hop_log, &r);
            }
            msg->hop = last + 1;
            continue;
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
                       uint64_t nbytes, const struct sim_msg *msg,
                       const struct sim_host_response *resp, struct sim_hop_log *log)
{
    assert(sip >= 0 && sip < c->sips);
    size_t i = host_link(c, sip, to_device);
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
    if (c->n_obs) {
        emit_traffic(c, c->link_res[i], to_device, nbytes, rec.t_in, rec.t_out);
        struct sim_span s = {.kind = SIM_SPAN_HOST_LINK,
                             .node = io,
                             .to_device = to_device,
                             .msg = msg,
                             .resp = resp,
                             .nbytes = nbytes,
                             .t_start = rec.t_in,
                             .t_end = rec.t_out};
        emit_span(c, &s);
    }
}

void sim_chip_dma_data(struct sim_proc *p, struct sim_chip *c, int dma, int mem, bool to_memory,
                       uint64_t nbytes, sim_time_t min_ticks)
{
    sim_chip_dma_read2(p, c, dma, mem, to_memory, nbytes, -1, 0, min_ticks);
}

void sim_chip_dma_read2(struct sim_proc *p, struct sim_chip *c, int dma, int mem, bool to_memory,
                        uint64_t nbytes, int mem_b, uint64_t nbytes_b, sim_time_t min_ticks)
{
    struct path pa;
    path_init(&pa);
    pa.cur = nbytes;
    if (to_memory)
        path_route(c, &pa, dma, mem);
    else
        path_route(c, &pa, mem, dma);
    path_mem(&pa, &c->comps[mem], to_memory);
    if (mem_b >= 0 && nbytes_b) { /* a second stream into the DMA, ending with the first */
        sim_time_t lat_a = pa.lat;
        pa.lat = 0;
        pa.cur = nbytes_b;
        if (mem_b == mem) {
            pa.mem_bytes[0] += nbytes_b;
            for (size_t i = 0; i < pa.n; i++)
                pa.bytes[i] += nbytes_b;
            pa.lat = lat_a;
        } else {
            path_route(c, &pa, mem_b, dma);
            path_mem(&pa, &c->comps[mem_b], false);
            /* the links both cross were counted in both sums */
            if (pa.lat < lat_a)
                pa.lat = lat_a;
        }
    }
    path_run(p, c, &pa, min_ticks);
    path_fini(&pa);
}

void sim_chip_host_stream(struct sim_proc *p, struct sim_chip *c, int mem, bool write,
                          uint64_t nbytes, bool host)
{
    struct sim_component *m = &c->comps[mem];
    int io = sim_topo_node_at(c->topo, m->sip, 0, 0, SIM_NODE_IO_CPU);
    struct path pa;
    path_init(&pa);
    pa.cur = nbytes;
    if (write) {
        if (host)
            path_link(c, &pa, host_link(c, m->sip, true));
        path_route(c, &pa, io, mem);
    } else {
        path_route(c, &pa, mem, io);
        if (host)
            path_link(c, &pa, host_link(c, m->sip, false));
    }
    /* the request's header paid the links' first-byte latencies: the memory's alone here */
    pa.lat = 0;
    path_mem(&pa, m, write);
    path_run(p, c, &pa, 0);
    path_fini(&pa);
}

/* ---- phase-1 memory data ---------------------------------------------------------------- */

/*
 * The memory store keeps whole tensors at their start addresses; the chip keeps, per
 * space, the byte ranges of those tensors sorted by address (spans), so that reads and
 * writes of any range find the tensors holding it.
 *
 * Plain (materialised) tensors are kept byte-wise consistent: a write copies its bytes into
 * every plain tensor it overlaps, so a plain tensor always holds the latest bytes of its
 * range. A pattern region (a tensor that was pattern-backed when written) is never written
 * into: a write over part of it is stored as a tensor of its own, laid on top (an overlay).
 * The bytes of a range are therefore those of the overlapping spans painted in the order of
 * their last write (span.seq), and a plain span holding the whole range, or a pattern span
 * holding it with nothing written over it since, gives them alone. So a tl_load of a tile of
 * a pattern region is a pattern tensor too, and costs no byte work.
 */

static struct space_index *space_index(struct sim_chip *c, const char *space, bool create)
{
    for (size_t i = 0; i < c->n_spaces; i++) /* the first letters tell most spaces apart */
        if (c->spaces[i].name[0] == space[0] && strcmp(c->spaces[i].name, space) == 0)
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

/* Index of the first span that may overlap [a, ...): the first whose prefix reaches past
 * a (spans before it all end at or below a). */
static size_t first_overlap(const struct space_index *x, uint64_t a)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->maxend[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t span_end(const struct span *sp)
{
    return sp->addr + sp->n;
}

/* Recompute maxend from index i on, after v[i] was inserted or grew. */
static void maxend_fix(struct space_index *x, size_t i)
{
    for (size_t k = i; k < x->n; k++) {
        uint64_t m = k ? x->maxend[k - 1] : 0;
        if (span_end(&x->v[k]) > m)
            m = span_end(&x->v[k]);
        /* once a prefix maximum is what it was, the later ones are too */
        bool same = k > i && x->maxend[k] == m;
        x->maxend[k] = m;
        if (same)
            break;
    }
}

/* The span at a gets n bytes (inserted if none starts at a), written at seq. */
static void span_set(struct space_index *x, uint64_t a, uint64_t n, uint64_t seq, bool pattern)
{
    size_t i = upper(x, a);
    struct span sp = {a, n, seq, pattern};
    if (i > 0 && x->v[i - 1].addr == a) {
        uint64_t old = span_end(&x->v[i - 1]);
        x->v[i - 1] = sp;
        if (old > span_end(&sp)) { /* shrunk: the prefix maxima may fall back */
            for (size_t k = i - 1; k < x->n; k++) {
                uint64_t m = k ? x->maxend[k - 1] : 0;
                x->maxend[k] = span_end(&x->v[k]) > m ? span_end(&x->v[k]) : m;
            }
        } else {
            maxend_fix(x, i - 1);
        }
        return;
    }
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 64;
        x->v = sim_xreallocarray(x->v, x->cap, sizeof(*x->v));
        x->maxend = sim_xreallocarray(x->maxend, x->cap, sizeof(*x->maxend));
    }
    memmove(&x->v[i + 1], &x->v[i], (x->n - i) * sizeof(*x->v));
    memmove(&x->maxend[i + 1], &x->maxend[i], (x->n - i) * sizeof(*x->maxend));
    x->v[i] = sp;
    x->n++;
    maxend_fix(x, i);
}

/* The spans overlapping a range, by index (a small inline array, else on the heap). */
struct hits {
    size_t *ix;
    size_t n, cap;
    size_t inline_ix[32];
};

static void hits_find(const struct space_index *x, uint64_t a, uint64_t n, struct hits *h)
{
    h->ix = h->inline_ix;
    h->cap = sizeof(h->inline_ix) / sizeof(h->inline_ix[0]);
    h->n = 0;
    for (size_t j = first_overlap(x, a); j < x->n && x->v[j].addr < a + n; j++) {
        if (span_end(&x->v[j]) <= a)
            continue;
        if (h->n == h->cap) {
            size_t cap = 2 * h->cap;
            size_t *ix = sim_xreallocarray(NULL, cap, sizeof(*ix));
            memcpy(ix, h->ix, h->n * sizeof(*ix));
            if (h->ix != h->inline_ix)
                free(h->ix);
            h->ix = ix;
            h->cap = cap;
        }
        h->ix[h->n++] = j;
    }
}

static void hits_fini(struct hits *h)
{
    if (h->ix != h->inline_ix)
        free(h->ix);
}

/* Sort the hits by the order of their last write (insertion sort: they are few). */
static void hits_by_seq(const struct space_index *x, struct hits *h)
{
    for (size_t i = 1; i < h->n; i++) {
        size_t k = h->ix[i], j = i;
        for (; j > 0 && x->v[h->ix[j - 1]].seq > x->v[k].seq; j--)
            h->ix[j] = h->ix[j - 1];
        h->ix[j] = k;
    }
}

/*
 * The bytes of [a, a + n) into buf (zero where no span holds them): the hits (sorted by
 * address) painted in write order. Returns the number of bytes some span held.
 */
static uint64_t paint(struct sim_chip *c, const struct space_index *x, struct hits *h, uint64_t a,
                      uint64_t n, unsigned char *buf)
{
    uint64_t held = 0, covered_to = a;
    for (size_t k = 0; k < h->n; k++) { /* in address order: count each byte once */
        const struct span *sp = &x->v[h->ix[k]];
        uint64_t lo = sp->addr > a ? sp->addr : a;
        uint64_t hi = span_end(sp) < a + n ? span_end(sp) : a + n;
        uint64_t from = lo > covered_to ? lo : covered_to;
        if (hi > from) {
            held += hi - from;
            covered_to = hi;
        }
    }
    if (held < n)
        memset(buf, 0, n);
    hits_by_seq(x, h);
    for (size_t k = 0; k < h->n; k++) {
        const struct span *sp = &x->v[h->ix[k]];
        uint64_t lo = sp->addr > a ? sp->addr : a;
        uint64_t hi = span_end(sp) < a + n ? span_end(sp) : a + n;
        const struct sim_tensor *t = sim_memstore_get(c->store, x->name, sp->addr);
        sim_tensor_read_bytes(t, lo - sp->addr, hi - lo, buf + (lo - a));
    }
    return held;
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
    const struct span *exact =
        i > 0 && x->v[i - 1].addr == addr && x->v[i - 1].n == n ? &x->v[i - 1] : NULL;
    if (exact && !exact->pattern) /* the tensor (always current), reinterpreted */
        return sim_memstore_read(c->store, space, addr, dtype, ndim, shape, out, d);
    if (n == 0) {
        *out = sim_tensor_new(dtype, ndim, shape);
        return 0;
    }
    if (!x)
        return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                        "%s 0x%llx: no tensor holds all of these %llu bytes (never written)", space,
                        (unsigned long long)addr, (unsigned long long)n);
    struct hits h;
    hits_find(x, addr, n, &h);
    /* one span that gives the whole range alone: a plain one holding it, else the last
     * written one when it holds it */
    const struct span *alone = NULL, *top = NULL;
    for (size_t k = 0; k < h.n; k++) {
        const struct span *sp = &x->v[h.ix[k]];
        bool holds = sp->addr <= addr && span_end(sp) >= addr + n;
        if (holds && !sp->pattern)
            alone = sp;
        if (!top || sp->seq > top->seq)
            top = sp;
    }
    if (!alone && top && top->addr <= addr && span_end(top) >= addr + n)
        alone = top;
    int rc = 0;
    if (alone == exact && exact) { /* a pattern region nothing was written over */
        rc = sim_memstore_read(c->store, space, addr, dtype, ndim, shape, out, d);
    } else if (alone) { /* a copy of its part (a pattern costs nothing) */
        const struct sim_tensor *t = sim_memstore_get(c->store, space, alone->addr);
        *out = sim_tensor_copy_range(t, addr - alone->addr, dtype, ndim, shape);
    } else {
        struct sim_tensor *t = sim_tensor_new_uninit(dtype, ndim, shape);
        if (paint(c, x, &h, addr, n, sim_tensor_data(t)) < n) {
            sim_tensor_unref(t);
            rc = diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                          "%s 0x%llx: no tensor holds all of these %llu bytes (never written)",
                          space, (unsigned long long)addr, (unsigned long long)n);
        } else {
            *out = t;
        }
    }
    hits_fini(&h);
    return rc;
}

/* Remove [addr, addr + n) from the bindings: new data (or a new binding) replaces it;
 * what a binding holds outside the range stays bound. */
static void unbind(struct space_index *x, uint64_t addr, uint64_t n)
{
    if (x->pending)
        sim_bindings_clear(x->pending, addr, n);
}

/* Copy the bytes of [a, a + n) from src (holding them from address a) into the plain
 * tensor of span sp where they overlap. */
static void copy_overlap(struct sim_chip *c, const char *space, struct span *sp, uint64_t a,
                         uint64_t n, const struct sim_tensor *src,
                         const struct sim_memstore_writer *w)
{
    uint64_t lo = sp->addr > a ? sp->addr : a;
    uint64_t hi = span_end(sp) < a + n ? span_end(sp) : a + n;
    if (lo >= hi)
        return;
    struct sim_tensor *t = sim_memstore_get(c->store, space, sp->addr);
    sim_tensor_read_bytes(src, lo - a, hi - lo,
                          (unsigned char *)sim_tensor_data(t) + (lo - sp->addr));
    /* rewritten in place: the store's generation and last writer follow */
    sim_memstore_write(c->store, space, sp->addr, t, w);
    sp->seq = sim_memstore_generation(c->store);
}

/* The index of the span starting at a, or x->n when none does. */
static size_t span_at(const struct space_index *x, uint64_t a)
{
    size_t i = upper(x, a);
    return i > 0 && x->v[i - 1].addr == a ? i - 1 : x->n;
}

/*
 * A write of n bytes takes the start of the pattern region of span i (longer than n): move
 * the rest of the region on to the first address from its start + n that no other tensor
 * starts at (the tensors starting on the way hold those bytes), keeping the region's place
 * in the write order. False when an empty tensor sits on the way (nothing to skip).
 */
static bool move_rest(struct sim_chip *c, struct space_index *x, size_t i, uint64_t n)
{
    struct span p = x->v[i];
    uint64_t k = p.addr + n, end = span_end(&p);
    for (size_t j; k < end && (j = span_at(x, k)) < x->n;) {
        if (x->v[j].n == 0)
            return false;
        k = span_end(&x->v[j]);
    }
    if (k >= end)
        return true;
    const struct sim_tensor *t = sim_memstore_get(c->store, x->name, p.addr);
    size_t ds = sim_dtype_size(t->dtype);
    int64_t len = (int64_t)(end - k);
    bool typed = (k - p.addr) % ds == 0 && (end - k) % ds == 0;
    int64_t elems = typed ? len / (int64_t)ds : len;
    struct sim_tensor *rest =
        sim_tensor_copy_range(t, k - p.addr, typed ? t->dtype : SIM_U8, 1, &elems);
    sim_memstore_split(c->store, x->name, p.addr, k, rest);
    sim_tensor_unref(rest);
    span_set(x, k, end - k, p.seq, true);
    return true;
}

/* Make the pattern region of span i a plain tensor holding the current bytes of its range
 * (a fallback that costs its size). */
static void flatten(struct sim_chip *c, struct space_index *x, size_t i,
                    const struct sim_memstore_writer *w)
{
    struct span p = x->v[i];
    const struct sim_tensor *t = sim_memstore_get(c->store, x->name, p.addr);
    struct sim_tensor *plain = sim_tensor_new_uninit(t->dtype, t->ndim, t->shape);
    struct hits h;
    hits_find(x, p.addr, p.n, &h);
    paint(c, x, &h, p.addr, p.n, sim_tensor_data(plain));
    hits_fini(&h);
    sim_memstore_write(c->store, x->name, p.addr, plain, w);
    sim_tensor_unref(plain);
    span_set(x, p.addr, p.n, sim_memstore_generation(c->store), false);
}

/* A write landed on [addr, addr + n) without replacing the tensors there (skip: the one
 * written at that address, or UINT64_MAX): each other tensor overlapping it that it did not
 * copy its bytes into (a pattern region, or any when all is set) gets w as its last
 * writer, for the memory inspector. */
static void touch_over(struct sim_chip *c, struct space_index *x, uint64_t addr, uint64_t n,
                       uint64_t skip, bool all, const struct sim_memstore_writer *w)
{
    for (size_t j = first_overlap(x, addr); j < x->n && x->v[j].addr < addr + (n ? n : 1); j++)
        if (x->v[j].addr != skip && (all || x->v[j].pattern) && span_end(&x->v[j]) > addr)
            sim_memstore_touch(c->store, x->name, x->v[j].addr, w);
}

void sim_chip_mem_write(struct sim_chip *c, const char *space, uint64_t addr, struct sim_tensor *t,
                        const char *op)
{
    struct sim_memstore_writer w = {op, sim_ticks_to_ns(sim_engine_now(c->engine))};
    struct space_index *x = space_index(c, space, true);
    uint64_t n = t->nbytes;
    bool inside = false; /* some other plain tensor holds the whole range */
    for (size_t j = first_overlap(x, addr); j < x->n && x->v[j].addr <= addr && !inside; j++)
        inside = !x->v[j].pattern && addr + n <= span_end(&x->v[j]) &&
                 !(x->v[j].addr == addr && x->v[j].n == n);
    if (!inside) {
        /* the store has one tensor per address: a pattern region starting here moves on */
        size_t at = span_at(x, addr);
        if (at < x->n && x->v[at].pattern && x->v[at].n > n && !move_rest(c, x, at, n)) {
            flatten(c, x, at, &w);
            inside = true;
        }
    }
    if (!inside) {
        /* a tensor of its own (replacing one of the same range) */
        sim_memstore_write(c->store, space, addr, t, &w);
        span_set(x, addr, n, sim_memstore_generation(c->store), sim_tensor_is_lazy(t));
    }
    /* every other plain tensor holding some of these bytes gets them */
    for (size_t j = first_overlap(x, addr); j < x->n && x->v[j].addr < addr + n; j++) {
        if ((!inside && x->v[j].addr == addr) || x->v[j].pattern)
            continue;
        copy_overlap(c, space, &x->v[j], addr, n, t, &w);
    }
    /* a pattern region it was laid over: written over, by this write last */
    touch_over(c, x, addr, n, inside ? UINT64_MAX : addr, false, &w);
    unbind(x, addr, n);
}

uint64_t sim_chip_mem_read_bytes(struct sim_chip *c, const char *space, uint64_t addr, uint64_t n,
                                 void *buf)
{
    const struct space_index *x = space_index(c, space, false);
    if (!x) {
        memset(buf, 0, n);
        return 0;
    }
    struct hits h;
    hits_find(x, addr, n, &h);
    uint64_t held = paint(c, x, &h, addr, n, buf);
    hits_fini(&h);
    return held;
}

void sim_chip_bind_pending(struct sim_chip *c, const char *space, uint64_t addr, uint64_t n,
                           const char *op)
{
    sim_chip_bind_pending_by(c, space, addr, n, op, op);
}

void sim_chip_bind_pending_by(struct sim_chip *c, const char *space, uint64_t addr, uint64_t n,
                              const char *op, const char *writer)
{
    struct space_index *x = space_index(c, space, true);
    if (!x->pending)
        x->pending = sim_bindings_new();
    sim_bindings_set(x->pending, addr, n, sim_chip_intern(c, op));
    struct sim_memstore_writer w = {writer, sim_ticks_to_ns(sim_engine_now(c->engine))};
    touch_over(c, x, addr, n, UINT64_MAX, true, &w);
}

const char *sim_chip_pending(const struct sim_chip *c, const char *space, uint64_t addr, uint64_t n)
{
    const struct space_index *x = space_index((struct sim_chip *)c, space, false);
    return x && x->pending ? sim_bindings_find(x->pending, addr, n) : NULL;
}
