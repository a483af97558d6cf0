/*
 * The bottleneck verdict (see verdict.h): per launch, its ops' details decoded once (the
 * arithmetic and the memory ranges), its critical path, the path's time split by what
 * bounded each step, the evidence; the run from its launches (or, without launches, from a
 * path over every op).
 */
#include "trace/verdict/verdict.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/hostspan.h"
#include "trace/analysis/resources.h"
#include "trace/model/mapped.h"
#include "trace/model/radix.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DECODE_DEFAULT = 2000000 };

/* Events of a pass between two give-backs of the pages of the model's mapped arrays it read
 * (trace_model_lent_giveback). */
enum { GIVEBACK_EVERY = 1 << 20 };
/* The same for a pass over a path's steps: one every few ops of the set, whose events and
 * op columns a million steps would touch all of. */
enum { PATH_GIVEBACK_EVERY = 1 << 16 };

/* The peaks and fixed costs of config_snapshot, in cycles. */
struct peaks {
    double ghz;
    double dma_setup, dma_rate; /* cycles; bytes per cycle of one channel */
    double hbm_rate;            /* bytes per cycle of one HBM */
    double gemm_setup, math_setup;
    double lanes;
    double host_rate;             /* bytes per cycle of a host link */
    const struct sim_value *macs; /* pe.gemm.macs_per_cycle */
};

struct ctx {
    const struct trace_model *m;
    struct trace_resources *res; /* owned */
    struct peaks pk;
    size_t *hbm_of_track;            /* owned: per track, its cube's HBM resource (SIZE_MAX: none),
                                        SIZE_MAX - 1 until looked up */
    size_t budget;                   /* ops whose details may still be read */
    struct trace_progress *progress; /* the path of a run without launches reports to it */
    uint8_t *composite; /* owned: per op name (string id), 0 not looked at, else 1 + whether
                           it names a composite op */
    size_t nnames;
    /* owned, per resource: where the last search of its samples ended, for the waits and
       for the DMA ops of the path (each asked in time order) */
    size_t *hint_wait, *hint_dma;
};

/* ---- names ------------------------------------------------------------------------------ */

const char *trace_bound_name(enum trace_bound b)
{
    static const char *const names[TRACE_BOUND_COUNT] = {
        "nothing ran", "compute (TE)",  "vector (VE)",        "DMA / HBM bandwidth",
        "NoC link",    "host transfer", "dependency latency", "DMA per-transfer cost"};
    return b < TRACE_BOUND_COUNT ? names[b] : "?";
}

const char *trace_bound_key(enum trace_bound b)
{
    static const char *const keys[TRACE_BOUND_COUNT] = {"none", "compute", "vector",  "memory",
                                                        "link", "host",    "latency", "dma_fixed"};
    return b < TRACE_BOUND_COUNT ? keys[b] : "?";
}

static const char *const pcat_names[TRACE_PCAT_COUNT] = {"compute", "vector",  "memory",
                                                         "host",    "latency", "dma_fixed"};

char *trace_verdict_bound_text(const struct trace_verdict *v, const struct trace_verdict_item *it,
                               char *buf, size_t size)
{
    if (it->checked && it->resource &&
        (it->bound == TRACE_BOUND_MEMORY || it->bound == TRACE_BOUND_LINK)) {
        snprintf(buf, size, "%s%s", it->bound == TRACE_BOUND_LINK ? "NoC link: " : "",
                 it->resource);
    } else if (it->bound == TRACE_BOUND_LINK && it->link != TRACE_NO_STR) {
        char q[160];
        sim_escape(trace_model_str(v->m, it->link), trace_model_str_len(v->m, it->link), q,
                   sizeof(q));
        snprintf(buf, size, "NoC link %s", q);
    } else {
        snprintf(buf, size, "%s", trace_bound_name(it->bound));
    }
    return buf;
}

/* ---- the config ------------------------------------------------------------------------- */

static double cfg2(const struct sim_value *c, const char *a, const char *b, const char *k)
{
    return sim_value_get_float(sim_value_map_get(sim_value_map_get(c, a), b), k, 0);
}

static void read_peaks(const struct trace_model *m, struct peaks *p)
{
    const struct sim_value *c = trace_model_config(m);
    memset(p, 0, sizeof(*p));
    p->ghz = trace_model_clock_ghz(m);
    if (!(p->ghz > 0))
        return;
    p->dma_setup = cfg2(c, "pe", "dma", "setup_ns") * p->ghz;
    p->dma_rate = cfg2(c, "pe", "dma", "gbps") / p->ghz;
    p->hbm_rate = cfg2(c, "memory", "hbm", "gbps") / p->ghz;
    if (!(p->hbm_rate > 0))
        p->hbm_rate =
            sim_value_get_float(sim_value_map_get(c, "memory"), "dram_peak_bw_bytes_per_cycle", 0);
    p->gemm_setup = cfg2(c, "pe", "gemm", "setup_ns") * p->ghz;
    p->math_setup = cfg2(c, "pe", "math", "setup_ns") * p->ghz;
    p->lanes = cfg2(c, "pe", "math", "lanes");
    p->host_rate = cfg2(c, "noc", "host", "gbps") / p->ghz;
    p->macs =
        sim_value_map_get(sim_value_map_get(sim_value_map_get(c, "pe"), "gemm"), "macs_per_cycle");
}

static bool peaks_known(const struct peaks *p)
{
    return p->ghz > 0 && (p->hbm_rate > 0 || p->macs);
}

/* ---- attributing the path's time -------------------------------------------------------- */

/* The resource of the HBM of track t's cube ("sip0.cube1.pe0.pe_dma" -> "sip0.cube1.hbm"). */
static size_t hbm_of(struct ctx *c, uint32_t t)
{
    if (c->hbm_of_track[t] != SIZE_MAX - 1)
        return c->hbm_of_track[t];
    const char *name = trace_model_str(c->m, trace_model_track_get(c->m, t)->name);
    const char *pe = strstr(name, ".pe");
    size_t found = SIZE_MAX;
    if (pe) {
        size_t n = (size_t)(pe - name);
        for (size_t i = 0; i < trace_resources_count(c->res) && found == SIZE_MAX; i++) {
            const char *r = trace_model_str(c->m, trace_resources_get(c->res, i)->name);
            if (strncmp(r, name, n) == 0 && strcmp(r + n, ".hbm") == 0)
                found = i;
        }
    }
    return c->hbm_of_track[t] = found;
}

/*
 * The busiest HBM or link (mh[j][0]) and host link (mh[j][1]) during each wait of path p
 * (its j-th step with a wait, [its start - wait, its start)), 0 when none. Resource by
 * resource: the waits come in time order, so each resource's samples are read once from
 * where the last window ended, rather than every resource's at each step.
 */
static void wait_utils(struct ctx *c, const struct trace_critpath *p, double (*mh)[2])
{
    size_t nw = 0;
    for (size_t s = 0; s < p->n; s++)
        nw += p->steps[s].wait != 0;
    if (!nw)
        return;
    uint64_t(*w)[2] = sim_xreallocarray(NULL, nw, sizeof(*w)); /* the windows */
    for (size_t s = 0, j = 0; s < p->n; s++) {
        const struct trace_path_step *st = &p->steps[s];
        if (s % PATH_GIVEBACK_EVERY == PATH_GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(c->m);
        if (!st->wait)
            continue;
        uint64_t start = trace_model_event(c->m, st->ev)->start;
        w[j][0] = start - st->wait, w[j][1] = start;
        mh[j][0] = mh[j][1] = 0;
        j++;
    }
    for (size_t i = 0; i < trace_resources_count(c->res); i++) {
        int host = trace_resources_get(c->res, i)->kind == TRACE_RES_HOST_LINK;
        size_t hint = c->hint_wait[i];
        for (size_t j = 0; j < nw; j++) {
            double u = trace_resources_util_from(c->res, i, w[j][0], w[j][1], &hint);
            mh[j][host] = u > mh[j][host] ? u : mh[j][host];
        }
        c->hint_wait[i] = hint;
    }
    free(w);
}

/*
 * The wait before step s: time an HBM or a link was busy during it is that resource's (a
 * host message's data reaching HBM, a read coming back over the host link: work no op
 * records), the rest latency. The busiest kind of resource counts (mh: wait_utils's for
 * the step).
 */
static void attribute_wait(const struct trace_path_step *s, const double *mh, double *path)
{
    if (!s->wait)
        return;
    double mem = mh[0], host = mh[1];
    double u = mem > host ? mem : host;
    u = u > 1 ? 1 : u;
    double busy = (double)s->wait * u;
    path[mem > host ? TRACE_PCAT_MEMORY : TRACE_PCAT_HOST] += busy;
    path[TRACE_PCAT_LATENCY] += (double)s->wait - busy;
}

/* Split the duration of the op of step s (info oi: a DMA op's, NULL when unknown or another
 * engine's) into the path's categories; its wait as attribute_wait says (mh). */
static void attribute(struct ctx *c, const struct trace_path_step *s, const struct trace_opinfo *oi,
                      const double *mh, double *path)
{
    const struct trace_model *m = c->m;
    const struct trace_event *e = trace_model_event(m, s->ev);
    const struct trace_track *t = trace_model_track_get(m, e->track);
    uint64_t now = trace_model_now(m);
    uint64_t end = e->flags & TRACE_EV_INFLIGHT ? (now > e->start ? now : e->start) : e->end;
    double dur = (double)(end - e->start);
    const struct peaks *p = &c->pk;
    attribute_wait(s, mh, path);
    double fixed = 0;
    int cat = TRACE_PCAT_LATENCY;
    switch (t->engine) {
    case TRACE_ENGINE_TE:
        cat = TRACE_PCAT_COMPUTE;
        fixed = p->gemm_setup;
        break;
    case TRACE_ENGINE_VE:
        cat = TRACE_PCAT_VECTOR;
        fixed = p->math_setup;
        break;
    case TRACE_ENGINE_DMA: {
        cat = TRACE_PCAT_MEMORY;
        fixed = p->dma_setup < dur ? p->dma_setup : dur;
        double rate = p->dma_rate > 0 && p->hbm_rate > 0
                          ? (p->dma_rate < p->hbm_rate ? p->dma_rate : p->hbm_rate)
                      : p->dma_rate > 0 ? p->dma_rate
                                        : p->hbm_rate;
        if (rate > 0 && oi && oi->bytes) {
            double data = (double)oi->bytes / rate;
            double rest = dur - fixed - data;
            if (rest > 0) {
                /* beyond the transfer at full rate: contention when its HBM was busy */
                size_t h = hbm_of(c, e->track);
                bool busy =
                    h != SIZE_MAX && trace_resources_util_from(c->res, h, e->start,
                                                               end > e->start ? end : e->start + 1,
                                                               &c->hint_dma[h]) >= 0.5;
                if (!busy) {
                    /* the rest is what every transfer pays whatever its size */
                    path[TRACE_PCAT_MEMORY] += data;
                    path[TRACE_PCAT_DMA_FIXED] += dur - data;
                    return;
                }
            }
        }
        break;
    }
    case TRACE_ENGINE_HOST: {
        const char *name = trace_model_str(m, t->name);
        if (strcmp(name, "host") != 0)
            break; /* an io_cpu or m_cpu: control work */
        cat = TRACE_PCAT_HOST;
        struct sim_value *d = trace_model_event_details(m, s->ev);
        int64_t bytes = sim_value_get_int(d, "bytes", -1);
        sim_value_free(d);
        if (p->host_rate > 0 && bytes >= 0) {
            double data = (double)bytes / p->host_rate;
            data = data < dur ? data : dur;
            path[TRACE_PCAT_HOST] += data;
            path[TRACE_PCAT_LATENCY] += dur - data;
            return;
        }
        break;
    }
    default: break;
    }
    fixed = fixed < dur ? fixed : dur;
    path[cat] += dur - fixed;
    path[t->engine == TRACE_ENGINE_DMA ? TRACE_PCAT_DMA_FIXED : TRACE_PCAT_LATENCY] += fixed;
}

/* ---- one region ------------------------------------------------------------------------- */

static const char *const dtypes[] = {"f32", "f16", "bf16", "i8"};

/* Whether op name op (a string id) is a composite op's, looked at once per name. */
static bool is_composite(struct ctx *c, uint32_t op)
{
    if (op >= c->nnames)
        return strncmp(trace_model_str(c->m, op), "composite_", 10) == 0;
    if (!c->composite[op])
        c->composite[op] = 1 + (strncmp(trace_model_str(c->m, op), "composite_", 10) == 0);
    return c->composite[op] == 2;
}

/* A composite op's span on its engine. */
struct span {
    uint32_t track;
    uint64_t start, end;
};

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Whether event e lies within one of the composite ops spans[0..n) (sorted by cmp_span),
 * on its own engine: a stage of that op, whose arithmetic the op counts. */
static bool within_composite(const struct span *spans, size_t n, const struct trace_event *e)
{
    size_t lo = 0, hi = n; /* the first span after (track, start) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct span *x = &spans[mid];
        if (x->track < e->track || (x->track == e->track && x->start <= e->start))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && spans[lo - 1].track == e->track && spans[lo - 1].end >= e->end;
}

/* The arithmetic and the DMA transfers of a region's ops, counted op by op in their order
 * from their info (read once: the critical path reads it and hands it on). */
struct arith {
    struct ctx *c;
    const uint64_t *evs;
    struct trace_verdict_item *it;
    struct trace_spaces *spaces; /* for the ops the path does not read */
    struct span *comp;           /* owned: the composite ops, sorted */
    size_t ncomp;
    double te_flops[5]; /* by dtype; [4] others */
    size_t next;        /* the ops before it are counted */
};

/* Count op k (evs[k], its info oi). */
static void arith_count(struct arith *a, size_t k, const struct trace_opinfo *oi)
{
    const struct trace_model *m = a->c->m;
    const struct trace_event *e = trace_model_event(m, a->evs[k]);
    enum trace_engine eng = trace_model_track_get(m, e->track)->engine;
    if (eng == TRACE_ENGINE_DMA && oi->bytes) {
        a->it->dma_ops++;
        a->it->dma_bytes += oi->bytes;
    }
    if (!(oi->flops > 0))
        return;
    if (oi->stage && within_composite(a->comp, a->ncomp, e))
        return; /* counted by its composite op */
    a->it->flops += oi->flops;
    if (eng == TRACE_ENGINE_TE) {
        size_t d = 0;
        while (d < 4 && strcmp(oi->dtype, dtypes[d]) != 0)
            d++;
        a->te_flops[d] += oi->flops;
    }
}

/* Count the ops before k the path did not read, reading them here. */
static void arith_upto(struct arith *a, size_t k)
{
    for (; a->next < k; a->next++) {
        struct trace_opinfo oi;
        trace_opinfo_of_event(a->c->m, a->evs[a->next], a->spaces, &oi);
        arith_count(a, a->next, &oi);
    }
}

/* trace_critpath_input.each_info: op i read by the path. */
static void arith_each(void *ctx, size_t i, const struct trace_opinfo *oi)
{
    struct arith *a = ctx;
    arith_upto(a, i);
    arith_count(a, i, oi);
    a->next = i + 1;
}

/* What one pass over a region's events finds. */
struct scan {
    size_t uncached;   /* ops without op columns (their details must be read) */
    struct span *comp; /* owned: the composite ops, sorted (cmp_span); NULL when none */
    size_t ncomp;
    size_t ute, uve; /* TE and VE engines used */
    bool any_arith;  /* some op is a GEMM or a math op */
    /* still running: an op in flight, or, in a live model, a request the host sent whose
     * Completion has not crossed back yet (between two of its ops no op is in flight) */
    bool running;
};

/* Pass over evs (n of them) once for what struct scan says, giving back the model's mapped
 * pages as it goes (millions of events would otherwise stay resident). */
static void scan_ops(struct ctx *c, const uint64_t *evs, size_t n, struct scan *sc)
{
    const struct trace_model *m = c->m;
    memset(sc, 0, sizeof(*sc));
    size_t nt = trace_model_track_count(m);
    /* per track: 0 not looked at, else 1 + whether it is used; 4 + that when it is the
     * host component */
    uint8_t *track = sim_xcalloc(nt ? nt : 1, 1);
    bool live = trace_model_now(m) > 0, inflight = false, request = false, completed = false;
    for (size_t k = 0; k < n; k++) {
        if (k % GIVEBACK_EVERY == GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(m);
        const struct trace_event *e = trace_model_event(m, evs[k]);
        sc->uncached += !trace_opinfo_cached(m, evs[k]);
        if (is_composite(c, e->op)) {
            if (!sc->comp)
                sc->comp = sim_xreallocarray(NULL, n, sizeof(*sc->comp));
            sc->comp[sc->ncomp++] = (struct span){e->track, e->start, e->end};
        }
        uint8_t *t = &track[e->track];
        if (!*t) {
            const struct trace_track *tr = trace_model_track_get(m, e->track);
            if (tr->engine == TRACE_ENGINE_TE || tr->engine == TRACE_ENGINE_VE)
                *(tr->engine == TRACE_ENGINE_TE ? &sc->ute : &sc->uve) += 1;
            bool host = tr->engine == TRACE_ENGINE_HOST &&
                        strcmp(trace_model_str(m, tr->name), TRACE_HOST_COMPONENT) == 0;
            *t = (uint8_t)(1 + (host ? 4 : 0));
        }
        if (e->op_kind == TRACE_KIND_GEMM || e->op_kind == TRACE_KIND_MATH)
            sc->any_arith = true;
        if (e->flags & TRACE_EV_INFLIGHT)
            inflight = true;
        if (live && *t >= 4) {
            if (strcmp(trace_model_str(m, e->op), "Completion") == 0)
                completed = true;
            else
                request = true;
        }
    }
    trace_model_lent_giveback(m);
    free(track);
    if (sc->ncomp)
        qsort(sc->comp, sc->ncomp, sizeof(*sc->comp), cmp_span);
    sc->running = inflight || (request && !completed);
}

/* The usage, path, arithmetic and resources of one region over its events evs (n of them,
 * sorted by index), and whether it is still running. */
static void judge(struct ctx *c, const struct trace_region *r, uint64_t *evs, size_t n,
                  struct trace_verdict_item *it)
{
    const struct trace_model *m = c->m;
    memset(it, 0, sizeof(*it));
    it->region = r;
    it->longest_wait_ev = UINT64_MAX;
    it->length = trace_region_length(r);
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
        it->busy[e] = trace_region_util(r, r->engine[e].busy);
    it->dram_bytes = r->all.read_bytes + r->all.write_bytes;
    if (!peaks_known(&c->pk))
        it->missing |= TRACE_MISSING_PEAKS;

    /* the details: the arithmetic op by op, from the info the critical path reads (keeping
     * the ranges alone: an opinfo of every op of a launch of millions would hold
     * gigabytes) */
    bool details = false;
    struct trace_spaces spaces;
    trace_spaces_init(&spaces);
    struct scan sc;
    scan_ops(c, evs, n, &sc);
    it->running = sc.running;
    if (sc.uncached <= c->budget) {
        c->budget -= sc.uncached;
        details = true;
    } else if (n) {
        it->missing |= TRACE_MISSING_DETAILS;
    }
    struct arith ar = {.c = c, .evs = evs, .it = it, .spaces = &spaces};
    if (details)
        ar.comp = sc.comp, ar.ncomp = sc.ncomp;
    else
        free(sc.comp);
    size_t ute = sc.ute, uve = sc.uve;
    bool any_arith = sc.any_arith;

    /* the critical path, reading the details (and counting the arithmetic) as it goes */
    struct trace_critpath_input in = {.m = m,
                                      .events = evs,
                                      .n = n,
                                      .start = r->start,
                                      .max_decode = details ? 0 : 1, /* 1: no details: order,
                                                                        tiles and engines only */
                                      .progress = c->progress,
                                      .each_info = details ? arith_each : NULL,
                                      .each_ctx = &ar};
    trace_critpath_compute(&in, &it->path);
    if (details && !trace_progress_cancelled(c->progress)) /* (cancelled: left unread) */
        arith_upto(&ar, n);
    free(ar.comp);
    double *te_flops = ar.te_flops;
    if (any_arith && !(it->flops > 0))
        it->missing |= TRACE_MISSING_FLOPS;

    /* the peaks of the engines and HBMs it used */
    const struct peaks *p = &c->pk;
    if (ute && p->macs) {
        size_t best = 0;
        for (size_t d = 1; d < 4; d++)
            if (te_flops[d] > te_flops[best])
                best = d;
        double macs = sim_value_get_float(p->macs, dtypes[best], 0);
        it->peak_flops = (double)ute * 2 * macs;
    } else if (uve && p->lanes > 0) {
        it->peak_flops = (double)uve * p->lanes;
    }

    /* resources over its span */
    it->hbm_util = it->link_util = it->host_util = -1;
    uint64_t a = r->start, b = r->end > r->start ? r->end : r->start + 1;
    size_t nres = trace_resources_count(c->res), nhbm = 0;
    double hbm_bytes = 0;
    if (!nres)
        it->missing |= TRACE_MISSING_RESOURCES;
    for (size_t i = 0; i < nres; i++) {
        const struct trace_resource *x = trace_resources_get(c->res, i);
        double u = trace_resources_util(c->res, i, a, b);
        double *slot = x->kind == TRACE_RES_HBM         ? &it->hbm_util
                       : x->kind == TRACE_RES_HOST_LINK ? &it->host_util
                                                        : &it->link_util;
        uint32_t *name = x->kind == TRACE_RES_HBM         ? &it->hbm
                         : x->kind == TRACE_RES_HOST_LINK ? &it->host_link
                                                          : &it->busiest_link;
        if (x->kind == TRACE_RES_HBM) {
            double rd, wr;
            trace_resources_bytes(c->res, i, a, b, &rd, &wr);
            nhbm += rd + wr > 0;
            hbm_bytes += rd + wr;
        }
        if (u > *slot)
            *slot = u, *name = x->name;
    }
    /* ops whose DRAM traffic the trace does not record (a composite op's stages): the
     * bytes the HBMs' samples saw */
    if (!it->dram_bytes && hbm_bytes >= 1)
        it->dram_bytes = (uint64_t)hbm_bytes;
    if (p->hbm_rate > 0)
        it->peak_bw = (double)(nhbm ? nhbm : 1) * p->hbm_rate;

    /* what the path's time went to */
    if (!it->path.with_addresses && !it->path.with_tiles && !it->path.with_explicit && n)
        it->missing |= TRACE_MISSING_DEPS;
    double(*mh)[2] = sim_xreallocarray(NULL, it->path.n ? it->path.n : 1, sizeof(*mh));
    wait_utils(c, &it->path, mh);
    for (size_t s = 0, j = 0; s < it->path.n; s++) {
        const struct trace_path_step *st = &it->path.steps[s];
        if (s % PATH_GIVEBACK_EVERY == PATH_GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(m);
        /* a DMA op's bytes alone are of use */
        struct trace_opinfo oi;
        const struct trace_event *e = trace_model_event(m, st->ev);
        bool dma = details && trace_model_track_get(m, e->track)->engine == TRACE_ENGINE_DMA;
        if (dma)
            trace_opinfo_of_event(m, st->ev, &spaces, &oi);
        attribute(c, st, dma ? &oi : NULL, mh[j], it->time);
        j += st->wait != 0;
        it->waits += st->wait;
        it->wait_by[st->why] += st->wait;
        if (st->wait > it->longest_wait || it->longest_wait_ev == UINT64_MAX)
            it->longest_wait = st->wait, it->longest_wait_ev = st->ev;
    }
    free(mh);
    trace_model_lent_giveback(m); /* the path's events and op columns */
}

/* The bound: the category with the most of the path's time (compute, vector, memory, host,
 * latency on a tie); memory is a link's when a link was busier than 90% and than every
 * HBM. */
static void decide(struct trace_verdict_item *it)
{
    double total = 0;
    int best = -1;
    for (int k = 0; k < TRACE_PCAT_COUNT; k++) {
        total += it->time[k];
        if (it->time[k] > 0 && (best < 0 || it->time[k] > it->time[best]))
            best = k;
    }
    if (best < 0 || !(total > 0)) {
        it->bound = it->heuristic = TRACE_BOUND_NONE;
        return;
    }
    static const enum trace_bound of[TRACE_PCAT_COUNT] = {
        TRACE_BOUND_COMPUTE, TRACE_BOUND_VECTOR,  TRACE_BOUND_MEMORY,
        TRACE_BOUND_HOST,    TRACE_BOUND_LATENCY, TRACE_BOUND_DMA_FIXED};
    it->bound = of[best];
    it->share = it->time[best] / total;
    if (it->bound == TRACE_BOUND_MEMORY && it->link_util >= 0.9 && it->link_util > it->hbm_util &&
        it->busiest_link != TRACE_NO_STR) {
        it->bound = TRACE_BOUND_LINK;
        it->link = it->busiest_link;
    }
    it->heuristic = it->bound;
}

/* ---- the run's usage -------------------------------------------------------------------- */

/* An op's span and engine kind, for the union of the run's busy cycles. */
struct bspan {
    uint64_t s, e;
    uint8_t kind;
};

/* The part of [s, e) past *reach that lies before we (the reach still moves to e): one op of
 * a sweep in start order uniting the ops' spans within the window [0, we). */
static uint64_t gain_before(uint64_t s, uint64_t e, uint64_t *reach, uint64_t we)
{
    uint64_t r = *reach;
    if (e <= r)
        return 0;
    *reach = e;
    uint64_t a = s > r ? s : r, b = e < we ? e : we;
    return b > a ? b - a : 0;
}

/* Add span x to the run r's busy cycles (reach: per engine kind, then every engine). */
static void run_unite(struct trace_region *r, uint64_t *reach, const struct bspan *x)
{
    r->engine[x->kind].busy += gain_before(x->s, x->e, &reach[x->kind], r->end);
    r->all.busy += gain_before(x->s, x->e, &reach[TRACE_ENGINE_COUNT], r->end);
}

/*
 * The run of m as trace_regions_new_light(m, TRACE_REGION_RUN) accounts it, as far as a
 * verdict reads it (its span; its ops, op cycles and busy cycles, in all and per engine kind;
 * its DRAM bytes in all), into r: one pass over the events in their order, uniting their spans
 * as it goes when their starts come in order (a loaded trace's); the few that come late (a
 * live host's) are put aside and sorted, and a second pass merges them in by start. Run
 * right after the launch split, whose passes left the events' pages resident.
 */
static void run_region(const struct trace_model *m, struct trace_region *r)
{
    *r = (struct trace_region){.kind = TRACE_REGION_RUN,
                               .name = "run",
                               .cmdq_id = TRACE_NO_CMDQ,
                               .end = trace_model_t_max(m)};
    uint64_t nev = trace_model_event_count(m), now = trace_model_now(m);
    size_t nt = trace_model_track_count(m);
    uint8_t *kind_of = sim_xreallocarray(NULL, nt ? nt : 1, 1);
    for (size_t t = 0; t < nt; t++) {
        enum trace_engine k = trace_model_track_get(m, (uint32_t)t)->engine;
        kind_of[t] = (uint8_t)(k < TRACE_ENGINE_COUNT ? k : TRACE_ENGINE_OTHER);
    }
    uint64_t reach[TRACE_ENGINE_COUNT + 1] = {0}, last = 0;
    struct bspan *late = NULL; /* the ops out of start order, then sorted */
    uint64_t *late_ev = NULL;  /* their events, in event order */
    size_t nlate = 0, cap = 0;
    const struct trace_event *ev = nev ? trace_model_event(m, 0) : NULL;
    for (uint64_t i = 0; i < nev; i++) {
        const struct trace_event *e = &ev[i];
        uint64_t end = e->flags & TRACE_EV_INFLIGHT ? (now > e->start ? now : e->start) : e->end;
        uint8_t k = kind_of[e->track];
        r->all.ops++;
        r->all.op_cycles += end - e->start;
        r->engine[k].ops++;
        r->engine[k].op_cycles += end - e->start;
        if (end <= e->start)
            continue;
        struct bspan x = {e->start, end, k};
        if (e->start >= last) {
            last = e->start;
            if (!nlate)
                run_unite(r, reach, &x);
            continue;
        }
        if (nlate == cap) {
            cap = cap ? 2 * cap : 1024;
            late = sim_xreallocarray(late, cap, sizeof(*late));
            late_ev = sim_xreallocarray(late_ev, cap, sizeof(*late_ev));
        }
        late[nlate] = x;
        late_ev[nlate++] = i;
    }
    if (nlate) { /* again, the ops in order merged with those put aside, by start */
        trace_radix_sort(late, nlate, sizeof(*late), offsetof(struct bspan, s));
        memset(reach, 0, sizeof(reach));
        r->all.busy = 0;
        for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
            r->engine[k].busy = 0;
        size_t a = 0, b = 0; /* late[a]: the next put aside by start; late_ev[b]: by event */
        for (uint64_t i = 0; i < nev; i++) {
            if (b < nlate && late_ev[b] == i) {
                b++;
                continue;
            }
            const struct trace_event *e = &ev[i];
            uint64_t end =
                e->flags & TRACE_EV_INFLIGHT ? (now > e->start ? now : e->start) : e->end;
            if (end <= e->start)
                continue;
            for (; a < nlate && late[a].s <= e->start; a++)
                run_unite(r, reach, &late[a]);
            run_unite(r, reach, &(struct bspan){e->start, end, kind_of[e->track]});
        }
        for (; a < nlate; a++)
            run_unite(r, reach, &late[a]);
    }
    free(late);
    free(late_ev);
    free(kind_of);
    size_t nx = trace_model_transfer_count(m);
    for (size_t j = 0; j < nx; j++) {
        const struct trace_transfer *x = trace_model_transfer(m, j);
        if (x->event < nev)
            *(x->flags & TRACE_XFER_WRITE ? &r->all.write_bytes : &r->all.read_bytes) += x->bytes;
    }
}

/* ---- the verdict ------------------------------------------------------------------------ */

struct trace_verdict *trace_verdict_new(const struct trace_model *m,
                                        const struct trace_verdict_opts *o)
{
    struct trace_verdict *v = sim_xcalloc(1, sizeof(*v));
    v->m = m;
    v->clock_ghz = trace_model_clock_ghz(m);
    v->own = strncmp(sim_value_get_str(trace_model_metadata(m), "notes", ""), "npuscope ", 9) == 0;
    trace_energy_held(m, &v->energy);
    struct ctx c = {.m = m, .res = trace_resources_new(m)};
    size_t nres = trace_resources_count(c.res);
    c.hint_wait = sim_xcalloc(nres ? nres : 1, sizeof(*c.hint_wait));
    c.hint_dma = sim_xcalloc(nres ? nres : 1, sizeof(*c.hint_dma));
    read_peaks(m, &c.pk);
    c.nnames = trace_model_str_count(m);
    c.composite = sim_xcalloc(c.nnames ? c.nnames : 1, sizeof(*c.composite));
    c.budget = o && o->max_decode ? o->max_decode : MAX_DECODE_DEFAULT;
    size_t nt = trace_model_track_count(m);
    c.hbm_of_track = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(*c.hbm_of_track));
    for (size_t t = 0; t < nt; t++)
        c.hbm_of_track[t] = SIZE_MAX - 1;

    struct trace_progress *pg = o ? o->progress : NULL;
    v->rs_launch = trace_regions_new_light(m, TRACE_REGION_LAUNCH, pg);
    trace_progress_step(pg, "verdict: the run", 0);
    run_region(m, &v->run_region); /* over the events the split left resident */
    size_t nl = trace_regions_count(v->rs_launch);
    uint64_t nev = trace_model_event_count(m);
    /* the events of each launch, by index */
    size_t *off = sim_xcalloc(nl + 1, sizeof(*off));
    for (uint64_t i = 0; i < nev; i++) {
        size_t r = trace_regions_of_event(v->rs_launch, i);
        if (r != SIZE_MAX)
            off[r + 1]++;
    }
    for (size_t r = 0; r < nl; r++)
        off[r + 1] += off[r];
    uint64_t *evs = sim_xreallocarray(NULL, off[nl] ? off[nl] : 1, sizeof(*evs));
    size_t *pos = sim_xcalloc(nl ? nl : 1, sizeof(*pos));
    for (size_t r = 0; r < nl; r++)
        pos[r] = off[r];
    for (uint64_t i = 0; i < nev; i++) {
        size_t r = trace_regions_of_event(v->rs_launch, i);
        if (r != SIZE_MAX)
            evs[pos[r]++] = i;
    }
    trace_model_lent_giveback(m); /* the events the splits read */
    v->nlaunches = nl;
    v->launches = sim_xcalloc(nl ? nl : 1, sizeof(*v->launches));
    trace_progress_step(pg, "verdict: each launch's critical path", off[nl]);
    for (size_t r = 0; r < nl; r++) {
        if (trace_progress_at(pg, off[r])) {
            v->nlaunches = r; /* cancelled: those judged so far */
            break;
        }
        struct trace_verdict_item *it = &v->launches[r];
        judge(&c, trace_regions_get(v->rs_launch, r), evs + off[r], off[r + 1] - off[r], it);
        decide(it);
    }
    free(pos);
    free(evs);
    free(off);

    /* the run: from its launches, or from all its ops */
    struct trace_verdict_item *run = &v->run;
    const struct trace_region *rr = &v->run_region;
    if (rr && nl) {
        uint64_t *none = NULL;
        judge(&c, rr, none, 0, run); /* usage and resources; the path comes from the launches */
        uint64_t covered = 0;
        for (size_t r = 0; r < nl; r++) {
            const struct trace_verdict_item *it = &v->launches[r];
            for (int k = 0; k < TRACE_PCAT_COUNT; k++)
                run->time[k] += it->time[k];
            run->flops += it->flops;
            run->dma_ops += it->dma_ops;
            run->dma_bytes += it->dma_bytes;
            run->waits += it->waits;
            for (int d = 0; d < TRACE_DEP_COUNT; d++)
                run->wait_by[d] += it->wait_by[d];
            run->running |= it->running;
            run->missing |= it->missing;
            covered += it->length;
            if (it->peak_flops > run->peak_flops)
                run->peak_flops = it->peak_flops;
            if (it->longest_wait_ev != UINT64_MAX &&
                (run->longest_wait_ev == UINT64_MAX || it->longest_wait > run->longest_wait))
                run->longest_wait = it->longest_wait, run->longest_wait_ev = it->longest_wait_ev;
        }
        /* time outside every launch: the host between messages */
        if (run->length > covered)
            run->time[TRACE_PCAT_LATENCY] += (double)(run->length - covered);
        run->missing &= ~(unsigned)TRACE_MISSING_DEPS;
        decide(run);
    } else if (rr) {
        uint64_t *all = sim_xreallocarray(NULL, nev ? nev : 1, sizeof(*all));
        for (uint64_t i = 0; i < nev; i++)
            all[i] = i;
        c.progress = pg;
        judge(&c, rr, all, (size_t)nev, run);
        free(all);
        if (nev)
            run->missing |= TRACE_MISSING_LAUNCHES;
        decide(run);
    }
    free(c.hbm_of_track);
    free(c.composite);
    free(c.hint_wait);
    free(c.hint_dma);
    trace_resources_free(c.res);
    return v;
}

static void item_fini(struct trace_verdict_item *it)
{
    trace_critpath_fini(&it->path);
}

void trace_verdict_free(struct trace_verdict *v)
{
    if (!v)
        return;
    item_fini(&v->run);
    for (size_t i = 0; i < v->nlaunches; i++)
        item_fini(&v->launches[i]);
    free(v->launches);
    trace_regions_free(v->rs_launch);
    free(v);
}

/* ---- the experiment --------------------------------------------------------------------- */

static void check_item(struct trace_verdict_item *it, const struct trace_verdict_check *c)
{
    it->checked = true;
    it->resource = c->resource;
    it->factor = c->factor;
    it->change = c->change;
    if (!c->resource || c->bound == TRACE_BOUND_NONE)
        return;
    it->bound = c->bound;
    /* the share of the path that category had (a link's bytes are memory time) */
    static const int cat[TRACE_BOUND_COUNT] = {
        [TRACE_BOUND_COMPUTE] = TRACE_PCAT_COMPUTE,    [TRACE_BOUND_VECTOR] = TRACE_PCAT_VECTOR,
        [TRACE_BOUND_MEMORY] = TRACE_PCAT_MEMORY,      [TRACE_BOUND_LINK] = TRACE_PCAT_MEMORY,
        [TRACE_BOUND_HOST] = TRACE_PCAT_HOST,          [TRACE_BOUND_LATENCY] = TRACE_PCAT_LATENCY,
        [TRACE_BOUND_DMA_FIXED] = TRACE_PCAT_DMA_FIXED};
    double total = 0;
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        total += it->time[k];
    it->share = total > 0 ? it->time[cat[c->bound]] / total : 0;
    if (c->bound == TRACE_BOUND_LINK && it->heuristic != TRACE_BOUND_LINK)
        it->link = TRACE_NO_STR;
}

void trace_verdict_check(struct trace_verdict *v, const struct trace_verdict_check *c, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (c[k].cmdq_id == TRACE_NO_CMDQ) {
            check_item(&v->run, &c[k]);
            continue;
        }
        for (size_t i = 0; i < v->nlaunches; i++)
            if (v->launches[i].region && v->launches[i].region->cmdq_id == c[k].cmdq_id)
                check_item(&v->launches[i], &c[k]);
    }
}

char *trace_verdict_basis_text(const struct trace_verdict *v, const struct trace_verdict_item *it,
                               char *buf, size_t size)
{
    if (!it->checked) {
        snprintf(buf, size, "%s",
                 v->own ? "heuristic (npuscope whatif checks it by experiment)"
                        : "heuristic: another producer's trace, its workload cannot be run again");
        return buf;
    }
    if (!it->resource) {
        snprintf(buf, size, "checked by experiment: no resource x2 changes the time by 1%%");
        return buf;
    }
    char f[16];
    snprintf(f, sizeof(f), "x%g", it->factor);
    int k = snprintf(buf, size, "checked by experiment: %s %s %s it %.1f%%", it->resource, f,
                     it->change < 0 ? "shortens" : "lengthens", 100 * fabs(it->change));
    if (it->heuristic != it->bound && k > 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, " (the heuristic said %s)",
                 trace_bound_name(it->heuristic));
    return buf;
}

/* ---- evidence --------------------------------------------------------------------------- */

/* A time: "12.3 us (12300 cycles)" with a clock, else "12300 cycles". */
static char *fmt_time(const struct trace_verdict *v, double cycles, char *buf, size_t size)
{
    if (!(v->clock_ghz > 0)) {
        snprintf(buf, size, "%.0f cycles", cycles);
        return buf;
    }
    double ns = cycles / v->clock_ghz;
    if (ns < 1e3)
        snprintf(buf, size, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, size, "%.2f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, size, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, size, "%.2f s", ns / 1e9);
    return buf;
}

/* A rate per cycle as per second at the clock: "12.3 G" + unit. */
static char *fmt_rate(const struct trace_verdict *v, double per_cycle, const char *unit, char *buf,
                      size_t size)
{
    double x = per_cycle * (v->clock_ghz > 0 ? v->clock_ghz * 1e9 : 1);
    const char *pre = "";
    if (x >= 1e12)
        x /= 1e12, pre = "T";
    else if (x >= 1e9)
        x /= 1e9, pre = "G";
    else if (x >= 1e6)
        x /= 1e6, pre = "M";
    else if (x >= 1e3)
        x /= 1e3, pre = "k";
    snprintf(buf, size, "%.3g %s%s%s", x, pre, unit, v->clock_ghz > 0 ? "/s" : "/cycle");
    return buf;
}

static const char *ev_name(const struct trace_verdict *v, uint64_t ev, char *buf, size_t size)
{
    const struct trace_event *e = trace_model_event(v->m, ev);
    sim_escape(trace_model_str(v->m, e->op), trace_model_str_len(v->m, e->op), buf, size);
    return buf;
}

/* printf to the end of buf (size bytes), cut when it does not fit: evidence lines are
 * bounded on purpose. */
static void appendf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
    size_t k = strlen(buf);
    if (k + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + k, size - k, fmt, ap);
    va_end(ap);
}

#define LINE(...)                                                                                  \
    do {                                                                                           \
        if (n < max) {                                                                             \
            lines[n][0] = '\0';                                                                    \
            appendf(lines[n++], TRACE_VERDICT_LINE, __VA_ARGS__);                                  \
        }                                                                                          \
    } while (0)

size_t trace_verdict_evidence(const struct trace_verdict *v, const struct trace_verdict_item *it,
                              char (*lines)[TRACE_VERDICT_LINE], size_t max)
{
    size_t n = 0;
    char a[48], b[48], c[48], q[160];
    double total = 0;
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        total += it->time[k];
    if (it->path.n)
        LINE("time      %s, a critical path of %zu op%s",
             fmt_time(v, (double)it->length, a, sizeof(a)), it->path.n, it->path.n == 1 ? "" : "s");
    else
        LINE("time      %s", fmt_time(v, (double)it->length, a, sizeof(a)));
    if (total > 0)
        LINE(
            "path      compute %.0f%%  vector %.0f%%  DMA/HBM %.0f%%  host %.0f%%  latency %.0f%%  "
            "DMA per-transfer %.0f%%",
            100 * it->time[TRACE_PCAT_COMPUTE] / total, 100 * it->time[TRACE_PCAT_VECTOR] / total,
            100 * it->time[TRACE_PCAT_MEMORY] / total, 100 * it->time[TRACE_PCAT_HOST] / total,
            100 * it->time[TRACE_PCAT_LATENCY] / total,
            100 * it->time[TRACE_PCAT_DMA_FIXED] / total);
    char basis[TRACE_VERDICT_LINE - 16];
    LINE("verdict   %s", trace_verdict_basis_text(v, it, basis, sizeof(basis)));
    LINE("busy      TE %.0f%%  VE %.0f%%  DMA %.0f%%  HOST %.0f%%  OTHER %.0f%%",
         100 * it->busy[TRACE_ENGINE_TE], 100 * it->busy[TRACE_ENGINE_VE],
         100 * it->busy[TRACE_ENGINE_DMA], 100 * it->busy[TRACE_ENGINE_HOST],
         100 * it->busy[TRACE_ENGINE_OTHER]);
    double len = it->length ? (double)it->length : 1;
    if (it->flops > 0 || it->dram_bytes) {
        char f[96] = "", d[96] = "", ai[64] = "";
        if (it->flops > 0) {
            int k =
                snprintf(f, sizeof(f), "%s", fmt_rate(v, it->flops / len, "FLOP", a, sizeof(a)));
            if (it->peak_flops > 0)
                snprintf(f + k, sizeof(f) - (size_t)k, " of %s (%.1f%%)",
                         fmt_rate(v, it->peak_flops, "FLOP", b, sizeof(b)),
                         100 * it->flops / len / it->peak_flops);
        }
        if (it->dram_bytes) {
            int k = snprintf(d, sizeof(d), "HBM %s",
                             fmt_rate(v, (double)it->dram_bytes / len, "B", a, sizeof(a)));
            if (it->peak_bw > 0)
                snprintf(d + k, sizeof(d) - (size_t)k, " of %s (%.1f%%)",
                         fmt_rate(v, it->peak_bw, "B", b, sizeof(b)),
                         100 * (double)it->dram_bytes / len / it->peak_bw);
        }
        if (it->flops > 0 && it->dram_bytes) {
            int k = snprintf(ai, sizeof(ai), "intensity %.3g FLOP/B",
                             it->flops / (double)it->dram_bytes);
            if (it->peak_flops > 0 && it->peak_bw > 0)
                snprintf(ai + k, sizeof(ai) - (size_t)k, " (ridge %.3g)",
                         it->peak_flops / it->peak_bw);
        }
        LINE("roofline  %s%s%s%s%s", f, f[0] && d[0] ? "; " : "", d,
             (f[0] || d[0]) && ai[0] ? "; " : "", ai);
    }
    if (it->dma_ops) {
        double mean = (double)it->dma_bytes / (double)it->dma_ops;
        LINE("transfers %" PRIu64 " DMA transfer%s, mean %.*f B", it->dma_ops,
             it->dma_ops == 1 ? "" : "s", mean < 100 ? 1 : 0, mean);
    }
    if (it->hbm_util >= 0 || it->link_util >= 0 || it->host_util >= 0) {
        char h[TRACE_VERDICT_LINE] = "";
        if (it->hbm_util >= 0) {
            sim_escape(trace_model_str(v->m, it->hbm), trace_model_str_len(v->m, it->hbm), q,
                       sizeof(q));
            appendf(h, sizeof(h), "%s %.0f%%", q, 100 * it->hbm_util);
        }
        if (it->link_util >= 0) {
            sim_escape(trace_model_str(v->m, it->busiest_link),
                       trace_model_str_len(v->m, it->busiest_link), q, sizeof(q));
            appendf(h, sizeof(h), "%slink %s %.0f%%", h[0] ? ", " : "", q, 100 * it->link_util);
        }
        if (it->host_util >= 0)
            appendf(h, sizeof(h), "%shost link %.0f%%", h[0] ? ", " : "", 100 * it->host_util);
        LINE("busiest   %s", h);
    }
    if (it->waits) {
        char w[160] = "";
        size_t k = 0;
        for (int d = 0; d < TRACE_DEP_COUNT; d++)
            if (it->wait_by[d] && k < sizeof(w))
                k += (size_t)snprintf(w + k, sizeof(w) - k, "%s%s %s", k ? ", " : "",
                                      trace_dep_name((enum trace_dep)d),
                                      fmt_time(v, (double)it->wait_by[d], a, sizeof(a)));
        LINE("waits     %s between ops on the path: %s",
             fmt_time(v, (double)it->waits, b, sizeof(b)), w);
        if (it->longest_wait_ev != UINT64_MAX && it->longest_wait)
            LINE("longest   %s before %s", fmt_time(v, (double)it->longest_wait, c, sizeof(c)),
                 ev_name(v, it->longest_wait_ev, q, sizeof(q)));
    }
    static const struct {
        unsigned bit;
        const char *text;
    } missing[] = {
        {TRACE_MISSING_PEAKS,
         "no clock or peaks in config_snapshot: no roofline, fixed costs unknown"},
        {TRACE_MISSING_DEPS,
         "no dependency_ids, addresses or tile_ids: the path follows engine and launch order"},
        {TRACE_MISSING_RESOURCES, "no per-resource bandwidth samples: HBM and link use unknown"},
        {TRACE_MISSING_LAUNCHES, "no cmdq_ids: no launches, the run only"},
        {TRACE_MISSING_DETAILS, "too many ops to read their details: no arithmetic or addresses"},
        {TRACE_MISSING_FLOPS, "no sizes in the GEMM and math details: FLOP/s unknown"},
    };
    for (size_t k = 0; k < sizeof(missing) / sizeof(missing[0]); k++)
        if (it->missing & missing[k].bit)
            LINE("missing   %s", missing[k].text);
    if (it == &v->run && v->energy.known) /* where the energy goes */
        LINE("energy    %s, avg %s: %s", trace_energy_fmt(v->energy.total_j, "J", a, sizeof(a)),
             trace_energy_fmt(v->energy.avg_power_w, "W", b, sizeof(b)),
             trace_energy_where(&v->energy, q, sizeof(q)));
    return n;
}

/* ---- as a value ------------------------------------------------------------------------- */

static struct sim_value *util_value(const struct trace_model *m, uint32_t name, double util)
{
    if (util < 0)
        return sim_value_null();
    struct sim_value *x = sim_value_map();
    sim_value_map_set_str(x, "name", name == TRACE_NO_STR ? "" : trace_model_str(m, name));
    sim_value_map_set_float(x, "util", util);
    return x;
}

static struct sim_value *item_value(const struct trace_verdict *v,
                                    const struct trace_verdict_item *it)
{
    struct sim_value *x = sim_value_map();
    const struct trace_region *r = it->region;
    if (r && r->kind == TRACE_REGION_LAUNCH) {
        sim_value_map_set_str(x, "name", r->name);
        sim_value_map_set_int(x, "occurrence", r->occurrence);
        sim_value_map_set_int(x, "cmdq_id", r->cmdq_id);
    }
    sim_value_map_set_str(x, "bound", trace_bound_key(it->bound));
    sim_value_map_set_str(x, "basis", it->checked ? "experiment" : "heuristic");
    sim_value_map_set_str(x, "heuristic_bound", trace_bound_key(it->heuristic));
    if (it->checked && it->resource) {
        struct sim_value *ex = sim_value_map_set_take(x, "experiment", sim_value_map());
        sim_value_map_set_str(ex, "resource", it->resource);
        sim_value_map_set_float(ex, "factor", it->factor);
        sim_value_map_set_float(ex, "change", it->change);
    }
    sim_value_map_set_int(x, "dma_transfers", (int64_t)it->dma_ops);
    sim_value_map_set_int(x, "dma_transfer_bytes", (int64_t)it->dma_bytes);
    if (it->bound == TRACE_BOUND_LINK)
        sim_value_map_set_str(x, "link", trace_model_str(v->m, it->link));
    sim_value_map_set_float(x, "share", it->share);
    sim_value_map_set_bool(x, "running", it->running);
    sim_value_map_set_int(x, "start_cycle", r ? (int64_t)r->start : 0);
    sim_value_map_set_int(x, "cycles", (int64_t)it->length);
    struct sim_value *p = sim_value_map_set_take(x, "path", sim_value_map());
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        sim_value_map_set_float(p, pcat_names[k], it->time[k]);
    sim_value_map_set_int(x, "path_ops", (int64_t)it->path.n);
    struct sim_value *bz = sim_value_map_set_take(x, "busy", sim_value_map());
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
        sim_value_map_set_float(bz, trace_engine_name((enum trace_engine)e), it->busy[e]);
    sim_value_map_set_float(x, "flops", it->flops);
    sim_value_map_set_float(x, "peak_flops_per_cycle", it->peak_flops);
    sim_value_map_set_int(x, "dram_bytes", (int64_t)it->dram_bytes);
    sim_value_map_set_float(x, "peak_bytes_per_cycle", it->peak_bw);
    if (it->dram_bytes)
        sim_value_map_set_float(x, "intensity", it->flops / (double)it->dram_bytes);
    else
        sim_value_map_set_take(x, "intensity", sim_value_null());
    sim_value_map_set_take(x, "hbm", util_value(v->m, it->hbm, it->hbm_util));
    sim_value_map_set_take(x, "link", util_value(v->m, it->busiest_link, it->link_util));
    sim_value_map_set_take(x, "host_link", util_value(v->m, it->host_link, it->host_util));
    struct sim_value *w = sim_value_map_set_take(x, "waits", sim_value_map());
    sim_value_map_set_int(w, "cycles", (int64_t)it->waits);
    for (int d = 0; d < TRACE_DEP_COUNT; d++)
        if (it->wait_by[d])
            sim_value_map_set_int(w, trace_dep_name((enum trace_dep)d), (int64_t)it->wait_by[d]);
    struct sim_value *ms = sim_value_map_set_take(x, "missing", sim_value_list());
    static const char *const keys[] = {"peaks",    "dependencies", "resources",
                                       "launches", "details",      "flops"};
    for (unsigned k = 0; k < 6; k++)
        if (it->missing & (1u << k))
            sim_value_list_push_take(ms, sim_value_str(keys[k]));
    return x;
}

struct sim_value *trace_verdict_to_value(const struct trace_verdict *v)
{
    struct sim_value *x = sim_value_map();
    sim_value_map_set_take(x, "run", item_value(v, &v->run));
    if (v->energy.known) { /* where the energy goes: the dominant action, and static power */
        char w[160];
        double share;
        int top = trace_energy_top_action(&v->energy, &share);
        struct sim_value *e = sim_value_map_set_take(x, "energy", sim_value_map());
        sim_value_map_set_str(e, "where", trace_energy_where(&v->energy, w, sizeof(w)));
        if (top >= 0) {
            sim_value_map_set_str(e, "top_action",
                                  trace_energy_action_key((enum trace_energy_action)top));
            sim_value_map_set_float(e, "top_share", share);
        }
        sim_value_map_set_float(e, "static_share",
                                v->energy.total_j > 0 ? v->energy.static_j / v->energy.total_j : 0);
    }
    struct sim_value *l = sim_value_map_set_take(x, "launches", sim_value_list());
    for (size_t i = 0; i < v->nlaunches; i++)
        sim_value_list_push_take(l, item_value(v, &v->launches[i]));
    return x;
}
