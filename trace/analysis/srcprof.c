/*
 * The line profile (srcprof.h): launches named from their markers, tokens and KernelLaunch
 * events, then one pass over the events into a (kernel, site) table.
 */
#include "trace/analysis/srcprof.h"

#include "sim/data/value.h"
#include "sim/util/xalloc.h"
#include "trace/model/progress.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_KERNEL UINT32_MAX

struct launch {
    int32_t cmdq;
    uint32_t kernel; /* index into the profile's kernels, or NO_KERNEL before naming */
};

/* What the profile keeps to map an event to its kernel. */
struct prof_priv {
    struct trace_srcprof pub;
    struct launch *launch; /* sorted by cmdq */
    size_t nlaunch;
    uint32_t no_launch; /* kernel of ops with no cmdq_id, or NO_KERNEL */
};

static int cmp_launch(const void *a, const void *b)
{
    int32_t x = ((const struct launch *)a)->cmdq, y = ((const struct launch *)b)->cmdq;
    return (x > y) - (x < y);
}

static struct launch *find_launch(struct prof_priv *p, int32_t cmdq)
{
    struct launch key = {.cmdq = cmdq};
    return p->nlaunch ? bsearch(&key, p->launch, p->nlaunch, sizeof(key), cmp_launch) : NULL;
}

static uint32_t kernel_named(struct prof_priv *p, const char *name)
{
    for (size_t k = 0; k < p->pub.nk; k++)
        if (strcmp(p->pub.k[k].name, name) == 0)
            return (uint32_t)k;
    p->pub.k = sim_xreallocarray(p->pub.k, p->pub.nk + 1, sizeof(*p->pub.k));
    p->pub.k[p->pub.nk] = (struct trace_srckernel){.name = sim_xstrdup(name)};
    return (uint32_t)p->pub.nk++;
}

/* The launch's kernel named in details ({"kernel", "cmdq_id"}: a marker's or token's). */
static void name_from(struct prof_priv *p, const struct sim_value *details, char **names)
{
    const char *kernel = sim_value_get_str(details, "kernel", NULL);
    const struct sim_value *id = sim_value_map_get(details, "cmdq_id");
    if (!kernel || !kernel[0] || !id || id->type != SIM_V_INT || id->u.i < INT32_MIN ||
        id->u.i > INT32_MAX)
        return;
    struct launch *l = find_launch(p, (int32_t)id->u.i);
    if (l && !names[l - p->launch])
        names[l - p->launch] = sim_xstrdup(kernel);
}

/* Name every launch; a cancelled pg stops the pass early (the caller drops the result). */
static void name_launches(struct prof_priv *p, const struct trace_model *m,
                          struct trace_progress *pg)
{
    uint64_t n = trace_model_event_count(m);
    p->launch = sim_xreallocarray(NULL, 16, sizeof(*p->launch));
    size_t cap = 16;
    int32_t last = TRACE_NO_CMDQ;
    /* the HOST events of KernelLaunch messages, found on the same pass (one pass over
     * the events: they are what a large trace's time goes to) */
    uint64_t *kl = NULL;
    size_t nkl = 0, capkl = 0;
    size_t ntr = trace_model_track_count(m);
    bool *host = sim_xcalloc(ntr ? ntr : 1, sizeof(*host));
    for (size_t t = 0; t < ntr; t++)
        host[t] = trace_model_track_get(m, (uint32_t)t)->engine == TRACE_ENGINE_HOST;
    trace_progress_step(pg, "line profile: naming the launches", n);
    for (uint64_t i = 0; i < n; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(pg, i))
            break;
        const struct trace_event *ev = trace_model_event(m, i);
        int32_t c = ev->cmdq_id;
        if (c != TRACE_NO_CMDQ && host[ev->track] &&
            strcmp(trace_model_str(m, ev->op), "KernelLaunch") == 0) {
            if (nkl == capkl)
                kl = sim_xreallocarray(kl, capkl = capkl ? 2 * capkl : 16, sizeof(*kl));
            kl[nkl++] = i;
        }
        if (c == TRACE_NO_CMDQ || c == last)
            continue;
        last = c;
        if (find_launch(p, c))
            continue;
        if (p->nlaunch == cap)
            p->launch = sim_xreallocarray(p->launch, cap *= 2, sizeof(*p->launch));
        p->launch[p->nlaunch++] = (struct launch){c, NO_KERNEL};
        qsort(p->launch, p->nlaunch, sizeof(*p->launch), cmp_launch);
    }
    char **names = sim_xcalloc(p->nlaunch ? p->nlaunch : 1, sizeof(*names));
    for (size_t k = 0; k < trace_model_marker_count(m); k++)
        name_from(p, trace_model_marker(m, k)->details, names);
    for (size_t k = 0; k < trace_model_token_count(m); k++)
        name_from(p, trace_model_token(m, k)->details, names);
    for (size_t q = 0; q < nkl; q++) {
        uint64_t i = kl[q];
        const struct trace_event *ev = trace_model_event(m, i);
        struct launch *l = find_launch(p, ev->cmdq_id);
        if (!l || names[l - p->launch])
            continue;
        struct sim_value *d = trace_model_event_details(m, i);
        const char *k = sim_value_get_str(d, "kernel", NULL);
        if (k && k[0])
            names[l - p->launch] = sim_xstrdup(k);
        sim_value_free(d);
    }
    for (size_t k = 0; k < p->nlaunch; k++) {
        char fallback[32];
        snprintf(fallback, sizeof(fallback), "cmdq %d", (int)p->launch[k].cmdq);
        p->launch[k].kernel = kernel_named(p, names[k] ? names[k] : fallback);
        free(names[k]);
    }
    free(names);
    free(kl);
    free(host);
    p->no_launch = NO_KERNEL;
}

static uint32_t kernel_of_ev(struct prof_priv *p, const struct trace_event *ev)
{
    if (ev->cmdq_id == TRACE_NO_CMDQ) {
        if (p->no_launch == NO_KERNEL)
            p->no_launch = kernel_named(p, "(no launch)");
        return p->no_launch;
    }
    struct launch *l = find_launch(p, ev->cmdq_id);
    return l ? l->kernel : NO_KERNEL;
}

static int cmp_line(const struct trace_model *m, const struct trace_srcline *a,
                    const struct trace_srcline *b)
{
    const struct trace_site *x = trace_model_site_get(m, a->site);
    const struct trace_site *y = trace_model_site_get(m, b->site);
    if (!x || !y)
        return (x != NULL) - (y != NULL); /* "(no call site)" first */
    int c =
        x->file == y->file ? 0 : strcmp(trace_model_str(m, x->file), trace_model_str(m, y->file));
    if (c)
        return c;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return (a->site > b->site) - (a->site < b->site);
}

static _Thread_local const struct trace_model *sort_model; /* for qsort (one per thread) */

static int cmp_line_q(const void *a, const void *b)
{
    return cmp_line(sort_model, a, b);
}

static int cmp_hot_q(const void *a, const void *b)
{
    const struct trace_srcline *x = a, *y = b;
    if (x->cycles != y->cycles)
        return x->cycles > y->cycles ? -1 : 1;
    if (x->ops != y->ops)
        return x->ops > y->ops ? -1 : 1;
    return cmp_line(sort_model, x, y);
}

struct trace_srcprof *trace_srcprof_new(const struct trace_model *m)
{
    return trace_srcprof_new_progress(m, NULL);
}

struct trace_srcprof *trace_srcprof_new_progress(const struct trace_model *m,
                                                 struct trace_progress *pg)
{
    struct prof_priv *p = sim_xcalloc(1, sizeof(*p));
    name_launches(p, m, pg);
    if (trace_progress_cancelled(pg)) {
        trace_srcprof_free(&p->pub);
        return NULL;
    }
    uint32_t nsites = trace_model_site_count(m);
    /* per kernel, the line of each site (index + 1), grown as kernels appear */
    uint32_t **slot = NULL;
    size_t nslot = 0;
    uint64_t n = trace_model_event_count(m), now = trace_model_now(m);
    /* each track's engine, and the last launch's kernel: what every event asks */
    size_t ntr = trace_model_track_count(m);
    uint8_t *engine = sim_xcalloc(ntr ? ntr : 1, 1);
    for (size_t t = 0; t < ntr; t++)
        engine[t] = (uint8_t)trace_model_track_get(m, (uint32_t)t)->engine;
    int32_t last_cmdq = TRACE_NO_CMDQ;
    uint32_t last_k = NO_KERNEL;
    const struct trace_event *evs = n ? trace_model_event(m, 0) : NULL;
    trace_progress_step(pg, "line profile: ops by line", n);
    for (uint64_t i = 0; i < n; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(pg, i)) {
            free(engine);
            for (size_t k = 0; k < nslot; k++)
                free(slot[k]);
            free(slot);
            trace_srcprof_free(&p->pub);
            return NULL;
        }
        const struct trace_event *ev = &evs[i];
        uint8_t eng = engine[ev->track];
        if (eng == TRACE_ENGINE_HOST)
            continue;
        uint32_t k = ev->cmdq_id == last_cmdq && last_k != NO_KERNEL ? last_k : kernel_of_ev(p, ev);
        last_cmdq = ev->cmdq_id;
        last_k = k;
        if (k == NO_KERNEL)
            continue;
        if (k >= nslot) {
            slot = sim_xreallocarray(slot, k + 1, sizeof(*slot));
            for (; nslot <= k; nslot++)
                slot[nslot] = sim_xcalloc(nsites, sizeof(**slot));
        }
        struct trace_srckernel *K = &p->pub.k[k];
        uint16_t site = ev->site < nsites ? ev->site : TRACE_NO_SITE;
        if (!slot[k][site]) {
            K->lines = sim_xreallocarray(K->lines, K->nlines + 1, sizeof(*K->lines));
            K->lines[K->nlines] = (struct trace_srcline){.site = site};
            slot[k][site] = (uint32_t)++K->nlines;
        }
        assert(slot[k][site] >= 1 && slot[k][site] <= K->nlines); /* one of K's lines */
        struct trace_srcline *L = &K->lines[slot[k][site] - 1];
        uint64_t d = trace_event_end_at(ev, now) - ev->start;
        L->ops++;
        L->cycles += d;
        L->engine[eng] += d;
        K->ops++;
        K->cycles += d;
        K->engine[eng] += d;
        if (site != TRACE_NO_SITE)
            p->pub.with_site++;
    }
    free(engine);
    sort_model = m;
    for (size_t k = 0; k < p->pub.nk; k++) {
        struct trace_srckernel *K = &p->pub.k[k];
        /* the kernel's file: the one most of its ops come from */
        uint64_t best = 0;
        for (size_t a = 0; a < K->nlines; a++) {
            const struct trace_site *s = trace_model_site_get(m, K->lines[a].site);
            K->lines[a].share = K->cycles ? (double)K->lines[a].cycles / (double)K->cycles : 0;
            if (!s || !s->line)
                continue;
            uint64_t ops = 0;
            for (size_t b = 0; b < K->nlines; b++) {
                const struct trace_site *u = trace_model_site_get(m, K->lines[b].site);
                if (u && u->line && u->file == s->file)
                    ops += K->lines[b].ops;
            }
            /* the file named after the kernel wins over its helpers' */
            const char *f = trace_model_str(m, s->file);
            size_t nl = strlen(K->name);
            if (strncmp(f, K->name, nl) == 0 && strcmp(f + nl, ".c") == 0)
                ops = UINT64_MAX;
            if (ops > best) {
                best = ops;
                K->file = s->file;
            }
        }
        if (K->nlines > 1) /* qsort of no lines would get a null array */
            qsort(K->lines, K->nlines, sizeof(*K->lines), cmp_line_q);
    }
    for (size_t k = 0; k < nslot; k++)
        free(slot[k]);
    free(slot);
    /* kernels that issued no op (a launch seen only through host messages) are dropped */
    uint32_t *remap = sim_xcalloc(p->pub.nk ? p->pub.nk : 1, sizeof(*remap));
    size_t w = 0;
    for (size_t k = 0; k < p->pub.nk; k++) {
        remap[k] = p->pub.k[k].nlines ? (uint32_t)w : NO_KERNEL;
        if (p->pub.k[k].nlines)
            p->pub.k[w++] = p->pub.k[k];
        else
            free(p->pub.k[k].name);
    }
    for (size_t l = 0; l < p->nlaunch; l++)
        p->launch[l].kernel = remap[p->launch[l].kernel];
    if (p->no_launch != NO_KERNEL)
        p->no_launch = remap[p->no_launch];
    free(remap);
    p->pub.nk = w;
    return &p->pub;
}

void trace_srcprof_free(struct trace_srcprof *pub)
{
    if (!pub)
        return;
    struct prof_priv *p = (struct prof_priv *)pub;
    for (size_t k = 0; k < pub->nk; k++) {
        free(pub->k[k].name);
        free(pub->k[k].lines);
    }
    free(pub->k);
    free(p->launch);
    free(p);
}

const struct trace_srckernel *trace_srcprof_find(const struct trace_srcprof *p, const char *name)
{
    for (size_t k = 0; k < p->nk; k++)
        if (strcmp(p->k[k].name, name) == 0)
            return &p->k[k];
    return NULL;
}

void trace_srcprof_sort_hot(const struct trace_model *m, struct trace_srckernel *k)
{
    sort_model = m;
    if (k->nlines > 1)
        qsort(k->lines, k->nlines, sizeof(*k->lines), cmp_hot_q);
}

size_t trace_srcprof_kernel_of(const struct trace_srcprof *pub, const struct trace_model *m,
                               uint64_t i)
{
    struct prof_priv *p = (struct prof_priv *)pub;
    if (i >= trace_model_event_count(m))
        return SIZE_MAX;
    const struct trace_event *ev = trace_model_event(m, i);
    if (trace_model_track_get(m, ev->track)->engine == TRACE_ENGINE_HOST)
        return SIZE_MAX;
    uint32_t k = NO_KERNEL;
    if (ev->cmdq_id == TRACE_NO_CMDQ) {
        k = p->no_launch;
    } else {
        struct launch *l = find_launch(p, ev->cmdq_id);
        k = l ? l->kernel : NO_KERNEL;
    }
    return k == NO_KERNEL || k >= pub->nk ? SIZE_MAX : k;
}
