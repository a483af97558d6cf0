/*
 * Conditions on metrics of a live run (see watch.h): an op log observer keeps, per engine
 * kind, the ops running and when the last one ended, and queues the ops whose length
 * satisfies an op.duration condition; each check looks at the idle times and at the
 * resource windows closed since the last check.
 */
#include "trace/live/watch.h"

#include "sim/chip/msg.h"
#include "sim/chip/oplog.h"
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/model/format.h"
#include "trace/live/resacc.h"
#include "trace/analysis/resources.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing ---------------------------------------------------------------------------- */

bool trace_watch_is_condition(const char *text)
{
    return strchr(text, '<') || strchr(text, '>');
}

static const char *skip(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

int trace_watch_parse(const char *text, double clock_ghz, struct trace_watch_cond *out,
                      struct diag *d)
{
    memset(out, 0, sizeof(*out));
    const char *p = skip(text);
    static const struct {
        const char *name;
        enum trace_watch_metric m;
    } metrics[] = {{"hbm.util", TRACE_WATCH_HBM_UTIL},
                   {"link.util", TRACE_WATCH_LINK_UTIL},
                   {"host.util", TRACE_WATCH_HOST_UTIL},
                   {"op.duration", TRACE_WATCH_OP_DURATION}};
    bool found = false;
    for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]) && !found; i++) {
        size_t n = strlen(metrics[i].name);
        if (strncmp(p, metrics[i].name, n) == 0) {
            out->metric = metrics[i].m;
            p += n;
            found = true;
        }
    }
    if (!found && strncmp(p, "idle(", 5) == 0) {
        const char *close = strchr(p, ')');
        char kind[16];
        size_t n = close ? (size_t)(close - p - 5) : 0;
        if (!close || n == 0 || n >= sizeof(kind))
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "idle(KIND): KIND is dma, te, ve, host or other");
        for (size_t i = 0; i < n; i++)
            kind[i] = (char)toupper((unsigned char)p[5 + i]);
        kind[n] = '\0';
        if (trace_engine_parse(kind, &out->engine) < 0)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "idle(KIND): KIND is dma, te, ve, host or other");
        out->metric = TRACE_WATCH_IDLE;
        p = close + 1;
        found = true;
    }
    if (!found)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "a condition is METRIC CMP VALUE: hbm.util, link.util, host.util, "
                        "idle(KIND) or op.duration");
    p = skip(p);
    if (p[0] == '>' || p[0] == '<') {
        bool eq = p[1] == '=';
        out->cmp =
            p[0] == '>' ? (eq ? TRACE_CMP_GE : TRACE_CMP_GT) : (eq ? TRACE_CMP_LE : TRACE_CMP_LT);
        p += eq ? 2 : 1;
    } else {
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "a comparison is >, >=, < or <=");
    }
    p = skip(p);
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno || !isfinite(v) || v < 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "not a value: '%s'", p);
    p = skip(end);
    bool time = out->metric == TRACE_WATCH_IDLE || out->metric == TRACE_WATCH_OP_DURATION;
    if (!time) {
        if (*p == '%')
            v /= 100, p = skip(p + 1);
    } else if (*p) {
        static const struct {
            const char *unit;
            double ns;
        } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
        size_t k = 0;
        while (k < 4 && strncmp(p, units[k].unit, strlen(units[k].unit)) != 0)
            k++;
        if (k == 4)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "a time is cycles, or a number with ns, us, ms or s");
        if (!(clock_ghz > 0))
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "no clock to turn %s into cycles: give cycles", units[k].unit);
        v *= units[k].ns * clock_ghz;
        p = skip(p + strlen(units[k].unit));
    }
    if (*p)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "unexpected '%s' after the value", p);
    out->value = v;
    /* the text, spaces normalized */
    size_t n = 0;
    bool space = false;
    for (const char *s = skip(text); *s && n + 1 < sizeof(out->text); s++) {
        if (*s == ' ' || *s == '\t') {
            space = true;
            continue;
        }
        if (space && n)
            out->text[n++] = ' ';
        space = false;
        if (n + 1 < sizeof(out->text))
            out->text[n++] = *s;
    }
    out->text[n] = '\0';
    return 0;
}

static bool holds(enum trace_watch_cmp c, double x, double v)
{
    switch (c) {
    case TRACE_CMP_GT: return x > v;
    case TRACE_CMP_GE: return x >= v;
    case TRACE_CMP_LT: return x < v;
    default: return x <= v;
    }
}

/* ---- watching --------------------------------------------------------------------------- */

struct watched {
    int id;
    struct trace_watch_cond c;
    bool armed;         /* idle: may fire */
    uint8_t *res_armed; /* owned: per resource, may fire */
};

struct pending {
    int id;
    uint64_t record; /* the op record that ended */
    char text[320];
};

struct trace_watch {
    struct trace_live *l; /* borrowed */
    struct sim_oplog *log;
    int observer;
    double ghz;
    struct watched *v; /* owned */
    size_t n;
    int running[TRACE_ENGINE_COUNT];
    uint64_t last_end[TRACE_ENGINE_COUNT]; /* cycles */
    struct pending *pend;                  /* owned: op.duration fires to report */
    size_t npend, cappend;
    uint64_t window; /* the resource window the next one is of */
    uint64_t next_k; /* the next resource window to look at */
    size_t nres;
    double *peak;              /* owned: bytes per cycle per resource */
    enum trace_res_kind *kind; /* owned */
};

static uint64_t cycles_of(const struct trace_watch *w, double ns, bool end)
{
    return trace_cycles_from_ns(ns, w->ghz, end);
}

static void on_start(void *ctx, const struct sim_op_record *rec)
{
    struct trace_watch *w = ctx;
    enum trace_engine e = trace_engine_for_component(rec->component_id);
    w->running[e]++;
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i].c.metric == TRACE_WATCH_IDLE && w->v[i].c.engine == e)
            w->v[i].armed = true;
}

static void on_end(void *ctx, const struct sim_op_record *rec)
{
    struct trace_watch *w = ctx;
    enum trace_engine e = trace_engine_for_component(rec->component_id);
    if (w->running[e] > 0)
        w->running[e]--;
    uint64_t end = cycles_of(w, rec->t_end, true);
    w->last_end[e] = end > w->last_end[e] ? end : w->last_end[e];
    uint64_t start = cycles_of(w, rec->t_start, false);
    double dur = (double)(end > start ? end - start : 0);
    for (size_t i = 0; i < w->n; i++) {
        const struct watched *x = &w->v[i];
        if (x->c.metric != TRACE_WATCH_OP_DURATION || !holds(x->c.cmp, dur, x->c.value))
            continue;
        if (w->npend == w->cappend) {
            w->cappend = w->cappend ? 2 * w->cappend : 8;
            w->pend = sim_xreallocarray(w->pend, w->cappend, sizeof(*w->pend));
        }
        struct pending *p = &w->pend[w->npend++];
        p->id = x->id;
        p->record = rec->note.id;
        char op[64], comp[96];
        sim_escape(rec->op_name, strlen(rec->op_name), op, sizeof(op));
        sim_escape(rec->component_id, strlen(rec->component_id), comp, sizeof(comp));
        snprintf(p->text, sizeof(p->text), "%s: %s on %s lasted %.0f cycles", x->c.text, op, comp,
                 dur);
        break; /* one report per op */
    }
}

struct trace_watch *trace_watch_new(struct trace_live *l)
{
    struct trace_watch *w = sim_xcalloc(1, sizeof(*w));
    w->l = l;
    struct sim_chip *chip = trace_live_chip(l);
    w->log = sim_chip_oplog(chip);
    w->ghz = sim_chip_config(chip)->clock_ghz;
    struct sim_oplog_observer o = {.on_start = on_start, .on_end = on_end, .ctx = w};
    w->observer = sim_oplog_observe(w->log, &o);
    const struct trace_resacc *ra = trace_live_resources(l);
    const struct trace_model *m = trace_live_model(l);
    w->nres = trace_resacc_count(ra);
    w->peak = sim_xcalloc(w->nres ? w->nres : 1, sizeof(*w->peak));
    w->kind = sim_xcalloc(w->nres ? w->nres : 1, sizeof(*w->kind));
    for (size_t i = 0; i < w->nres; i++)
        w->peak[i] = trace_resources_peak_for(
            trace_model_config(m), trace_model_str(m, trace_resacc_name(ra, (uint32_t)i)),
            &w->kind[i]);
    w->window = trace_resacc_window(ra);
    w->next_k = trace_model_now(m) / w->window;
    return w;
}

void trace_watch_free(struct trace_watch *w)
{
    if (!w)
        return;
    sim_oplog_unobserve(w->log, w->observer);
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i].res_armed);
    free(w->v);
    free(w->pend);
    free(w->peak);
    free(w->kind);
    free(w);
}

void trace_watch_add(struct trace_watch *w, int id, const struct trace_watch_cond *c)
{
    w->v = sim_xreallocarray(w->v, w->n + 1, sizeof(*w->v));
    struct watched *x = &w->v[w->n++];
    *x = (struct watched){.id = id, .c = *c, .armed = true};
    x->res_armed = sim_xcalloc(w->nres ? w->nres : 1, 1);
    memset(x->res_armed, 1, w->nres);
    if (c->metric == TRACE_WATCH_IDLE) /* from now: a run already idle counts from its last op */
        x->armed = true;
}

void trace_watch_remove(struct trace_watch *w, int id)
{
    for (size_t i = 0; i < w->n; i++) {
        if (w->v[i].id != id)
            continue;
        free(w->v[i].res_armed);
        memmove(&w->v[i], &w->v[i + 1], (w->n - i - 1) * sizeof(*w->v));
        w->n--;
        return;
    }
}

size_t trace_watch_count(const struct trace_watch *w)
{
    return w->n;
}

static bool res_matches(enum trace_watch_metric m, enum trace_res_kind k)
{
    return (m == TRACE_WATCH_HBM_UTIL && k == TRACE_RES_HBM) ||
           (m == TRACE_WATCH_LINK_UTIL && k == TRACE_RES_LINK) ||
           (m == TRACE_WATCH_HOST_UTIL && k == TRACE_RES_HOST_LINK);
}

/* The resource windows closed since the last look: a utilization condition that comes to
 * hold. */
static bool check_windows(struct trace_watch *w, uint64_t now, int *id, char *text, size_t size)
{
    const struct trace_resacc *ra = trace_live_resources(w->l);
    uint64_t W = trace_resacc_window(ra);
    if (W != w->window) { /* the windows widened: the same time in the new ones */
        w->next_k = w->next_k * w->window / W;
        w->window = W;
    }
    const struct trace_model *m = trace_live_model(w->l);
    /* a window is looked at once the next one has ended too: the bytes of a transfer are
     * reported when it ends, and one that began in the window may end in the next */
    for (; w->next_k + 1 < now / W; w->next_k++) {
        uint64_t k = w->next_k;
        for (size_t i = 0; i < w->n; i++) {
            struct watched *x = &w->v[i];
            if (x->c.metric > TRACE_WATCH_HOST_UTIL)
                continue;
            for (size_t r = 0; r < w->nres; r++) {
                if (!res_matches(x->c.metric, w->kind[r]) || !(w->peak[r] > 0))
                    continue;
                uint64_t rd, wr;
                trace_resacc_get(ra, (uint32_t)r, k, &rd, &wr);
                double bytes =
                    w->kind[r] == TRACE_RES_HBM ? (double)(rd + wr) : (double)(rd > wr ? rd : wr);
                double u = bytes / (w->peak[r] * (double)W);
                if (!holds(x->c.cmp, u, x->c.value)) {
                    x->res_armed[r] = 1;
                    continue;
                }
                if (!x->res_armed[r])
                    continue;
                x->res_armed[r] = 0;
                *id = x->id;
                char q[128];
                uint32_t name = trace_resacc_name(ra, (uint32_t)r);
                sim_escape(trace_model_str(m, name), trace_model_str_len(m, name), q, sizeof(q));
                uint64_t a = k * W, b = a + W;
                snprintf(text, size, "%s: %s at %.0f%% in cycles [%llu, %llu)", x->c.text, q,
                         100 * u, (unsigned long long)a, (unsigned long long)b);
                w->next_k++; /* the rest of this window's checks are not needed */
                return true;
            }
        }
    }
    return false;
}

bool trace_watch_check(struct trace_watch *w, int *id, uint64_t *ev, char *text, size_t size)
{
    *ev = UINT64_MAX;
    if (w->npend) {
        struct pending p = w->pend[0];
        memmove(&w->pend[0], &w->pend[1], (w->npend - 1) * sizeof(*w->pend));
        w->npend--;
        *id = p.id;
        *ev = trace_live_event_of_record(w->l, p.record);
        snprintf(text, size, "%s", p.text);
        return true;
    }
    struct sim_chip *chip = trace_live_chip(w->l);
    uint64_t now = cycles_of(w, sim_ticks_to_ns(sim_engine_now(sim_chip_engine(chip))), false);
    for (size_t i = 0; i < w->n; i++) {
        struct watched *x = &w->v[i];
        if (x->c.metric != TRACE_WATCH_IDLE || !x->armed || w->running[x->c.engine])
            continue;
        uint64_t idle = now > w->last_end[x->c.engine] ? now - w->last_end[x->c.engine] : 0;
        if (!holds(x->c.cmp, (double)idle, x->c.value))
            continue;
        x->armed = false;
        *id = x->id;
        snprintf(text, size, "%s: no %s op for %llu cycles", x->c.text,
                 trace_engine_name(x->c.engine), (unsigned long long)idle);
        return true;
    }
    return check_windows(w, now, id, text, size);
}
