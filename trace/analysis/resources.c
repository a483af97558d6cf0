/*
 * The resources of a trace (see resources.h): the samples of each resource sorted by
 * cycle with prefix sums of their bytes, rebuilt from the model when it changed.
 */
#include "trace/analysis/resources.h"

#include "sim/data/value.h"
#include "sim/util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rindex {
    uint64_t *start, *end; /* owned: each sample's window */
    double *pre_r, *pre_w; /* owned: bytes of samples [0, i) */
    size_t n;
    double most; /* no window's utilization comes out above it (INFINITY: not known) */
};

struct trace_resources {
    const struct trace_model *m; /* borrowed */
    uint64_t gen;                /* the model generation it was built for */
    size_t nsamples;
    struct trace_resource *v; /* owned */
    struct rindex *ix;        /* owned, per resource */
    size_t n;
};

/* ---- peaks from the config ------------------------------------------------------------- */

static double config_gbps(const struct sim_value *config, const char *a, const char *b)
{
    const struct sim_value *x = sim_value_map_get(config, a);
    return sim_value_get_float(sim_value_map_get(x, b), "gbps", 0);
}

/* The last dotted part of s up to len bytes ("noc" of "sip0.cube0.noc"). */
static const char *kind_of(const char *s, size_t len, size_t *klen)
{
    const char *k = s;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '.')
            k = s + i + 1;
    *klen = (size_t)(s + len - k);
    return k;
}

static bool is(const char *k, size_t n, const char *word)
{
    return n == strlen(word) && memcmp(k, word, n) == 0;
}

double trace_resources_peak_for(const struct sim_value *config, const char *name,
                                enum trace_res_kind *kind)
{
    double ghz = sim_value_get_float(config, "clock_ghz", 0);
    const char *sep = strstr(name, "<->");
    double gbps = 0;
    if (!sep) {
        size_t kl;
        const char *k = kind_of(name, strlen(name), &kl);
        *kind = is(k, kl, "hbm") ? TRACE_RES_HBM : TRACE_RES_OTHER;
        if (*kind == TRACE_RES_HBM) {
            gbps = config_gbps(config, "memory", "hbm");
            if (!(gbps > 0)) { /* a spec trace's own figure, already per cycle */
                double p = sim_value_get_float(sim_value_map_get(config, "memory"),
                                               "dram_peak_bw_bytes_per_cycle", 0);
                return p > 0 ? p : 0;
            }
        }
    } else {
        size_t la, lb;
        const char *ka = kind_of(name, (size_t)(sep - name), &la);
        const char *bn = sep + 3;
        const char *kb = kind_of(bn, strlen(bn), &lb);
        const char *cls;
        if (is(ka, la, "host") || is(ka, la, "io_cpu") || is(kb, lb, "io_cpu")) {
            *kind = TRACE_RES_HOST_LINK;
            cls = "host";
        } else if (is(ka, la, "noc") && is(kb, lb, "noc")) {
            *kind = TRACE_RES_LINK;
            /* the same sip: neighbouring cubes; else neighbouring sips */
            const char *da = strchr(name, '.'), *db = strchr(bn, '.');
            bool same =
                da && db && da - name == db - bn && memcmp(name, bn, (size_t)(da - name)) == 0;
            cls = same ? "cube_cube" : "sip_sip";
        } else {
            *kind = TRACE_RES_LINK;
            cls = is(ka, la, "noc") || is(kb, lb, "noc") ? "cube" : "pe";
        }
        gbps = config_gbps(config, "noc", cls);
    }
    return gbps > 0 && ghz > 0 ? gbps / ghz : 0;
}

/* ---- building -------------------------------------------------------------------------- */

static _Thread_local const struct trace_resources *sort_rs;
static _Thread_local const struct trace_resource *sort_v;

/* HBMs first, then by name. */
static int cmp_res_index(const void *a, const void *b)
{
    const struct trace_resource *x = &sort_v[*(const size_t *)a];
    const struct trace_resource *y = &sort_v[*(const size_t *)b];
    int ka = x->kind == TRACE_RES_HBM ? 0 : 1, kb = y->kind == TRACE_RES_HBM ? 0 : 1;
    if (ka != kb)
        return ka - kb;
    return strcmp(trace_model_str(sort_rs->m, x->name), trace_model_str(sort_rs->m, y->name));
}

struct sref {
    uint64_t cycle;
    size_t i;
};

static int cmp_sref(const void *a, const void *b)
{
    const struct sref *x = a, *y = b;
    return x->cycle < y->cycle ? -1 : x->cycle > y->cycle;
}

static void clear(struct trace_resources *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        free(rs->ix[i].start), free(rs->ix[i].end);
        free(rs->ix[i].pre_r), free(rs->ix[i].pre_w);
    }
    free(rs->ix);
    free(rs->v);
    rs->ix = NULL;
    rs->v = NULL;
    rs->n = 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * A bound on the utilization of r over any window as util_max computes it (x: its samples):
 * the bytes a window takes of each sample are its rate times the part of its window inside,
 * so when the samples' windows do not overlap, a window's bytes are at most the highest rate
 * times its length. Exact sums of bytes (below 2^53) and a few roundings of those parts keep
 * the computed value within a relative 1e-15 of that; INFINITY when the samples overlap.
 */
static double most_util(const struct trace_resource *r, const struct rindex *x)
{
    double peak = r->peak > 0 ? r->peak : r->max_rate;
    if (!(peak > 0) || !x->n || !(x->pre_r[x->n] + x->pre_w[x->n] < 0x1p53))
        return INFINITY;
    for (size_t q = 1; q < x->n; q++)
        if (x->start[q] < x->end[q - 1])
            return INFINITY;
    return r->max_rate / peak * (1 + 1e-9);
}

static void build(struct trace_resources *rs)
{
    const struct trace_model *m = rs->m;
    clear(rs);
    size_t ns = trace_model_bw_sample_count(m);
    /* the distinct names, sorted by id to find each sample's resource */
    uint32_t *names = sim_xreallocarray(NULL, ns ? ns : 1, sizeof(*names));
    size_t nn = 0;
    for (size_t i = 0; i < ns; i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
        if (!trace_bw_sample_is_dram(s) && (!nn || names[nn - 1] != s->resource))
            names[nn++] = s->resource;
    }
    qsort(names, nn, sizeof(*names), cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < nn; i++)
        if (!u || names[u - 1] != names[i])
            names[u++] = names[i];
    nn = u;
    /* each sample under its resource (by name id), then sorted by cycle */
    size_t *off = sim_xcalloc(nn + 1, sizeof(*off));
    for (size_t i = 0; i < ns; i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
        if (trace_bw_sample_is_dram(s) || !(s->read_bytes || s->write_bytes))
            continue;
        uint32_t *hit = bsearch(&s->resource, names, nn, sizeof(*names), cmp_u32);
        off[hit - names + 1]++;
    }
    for (size_t k = 0; k < nn; k++)
        off[k + 1] += off[k];
    struct sref *sr = sim_xreallocarray(NULL, off[nn] ? off[nn] : 1, sizeof(*sr));
    size_t *pos = sim_xcalloc(nn ? nn : 1, sizeof(*pos));
    memcpy(pos, off, nn * sizeof(*pos));
    for (size_t i = 0; i < ns; i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
        if (trace_bw_sample_is_dram(s) || !(s->read_bytes || s->write_bytes))
            continue;
        uint32_t *hit = bsearch(&s->resource, names, nn, sizeof(*names), cmp_u32);
        sr[pos[hit - names]++] = (struct sref){s->cycle, i};
    }
    free(pos);
    /* the resources in their order (HBMs, then links, by name) */
    struct trace_resource *v = sim_xcalloc(nn ? nn : 1, sizeof(*v));
    for (size_t k = 0; k < nn; k++) {
        v[k].name = names[k];
        v[k].peak = trace_resources_peak_for(trace_model_config(m), trace_model_str(m, names[k]),
                                             &v[k].kind);
    }
    size_t *order = sim_xreallocarray(NULL, nn ? nn : 1, sizeof(*order));
    for (size_t k = 0; k < nn; k++)
        order[k] = k;
    sort_rs = rs;
    sort_v = v;
    qsort(order, nn, sizeof(*order), cmp_res_index);
    sort_rs = NULL;
    sort_v = NULL;
    rs->v = sim_xcalloc(nn ? nn : 1, sizeof(*rs->v));
    rs->ix = sim_xcalloc(nn ? nn : 1, sizeof(*rs->ix));
    rs->n = nn;
    for (size_t j = 0; j < nn; j++) {
        size_t k = order[j];
        struct trace_resource *r = &rs->v[j];
        *r = v[k];
        size_t n = off[k + 1] - off[k];
        struct sref *x_sr = sr + off[k];
        qsort(x_sr, n, sizeof(*x_sr), cmp_sref);
        struct rindex *x = &rs->ix[j];
        x->start = sim_xreallocarray(NULL, n + 1, sizeof(*x->start));
        x->end = sim_xreallocarray(NULL, n + 1, sizeof(*x->end));
        x->pre_r = sim_xcalloc(n + 1, sizeof(*x->pre_r));
        x->pre_w = sim_xcalloc(n + 1, sizeof(*x->pre_w));
        x->n = n;
        for (size_t q = 0; q < n; q++) {
            const struct trace_bw_sample *s = trace_model_bw_sample(m, x_sr[q].i);
            uint64_t w = s->window ? s->window : 1;
            x->start[q] = s->cycle;
            x->end[q] = s->cycle + w;
            x->pre_r[q + 1] = x->pre_r[q] + (double)s->read_bytes;
            x->pre_w[q + 1] = x->pre_w[q] + (double)s->write_bytes;
            r->read += s->read_bytes;
            r->write += s->write_bytes;
            double rate =
                r->kind == TRACE_RES_HBM
                    ? (double)(s->read_bytes + s->write_bytes) / (double)w
                    : (double)(s->read_bytes > s->write_bytes ? s->read_bytes : s->write_bytes) /
                          (double)w;
            if (rate > r->max_rate)
                r->max_rate = rate;
        }
        r->first = n ? x->start[0] : 0;
        r->last = n ? x->end[n - 1] : 0;
        x->most = most_util(r, x);
    }
    free(order);
    free(v);
    free(sr);
    free(off);
    free(names);
    rs->gen = trace_model_generation(m);
    rs->nsamples = ns;
}

struct trace_resources *trace_resources_new(const struct trace_model *m)
{
    struct trace_resources *rs = sim_xcalloc(1, sizeof(*rs));
    rs->m = m;
    build(rs);
    return rs;
}

void trace_resources_free(struct trace_resources *rs)
{
    if (!rs)
        return;
    clear(rs);
    free(rs);
}

bool trace_resources_sync(struct trace_resources *rs)
{
    if (trace_model_generation(rs->m) == rs->gen)
        return false;
    bool any = trace_model_bw_sample_count(rs->m) != trace_model_dram_sample_count(rs->m);
    if (!any && !rs->n) {
        rs->gen = trace_model_generation(rs->m);
        return false;
    }
    build(rs);
    return true;
}

size_t trace_resources_count(const struct trace_resources *rs)
{
    return rs->n;
}

const struct trace_resource *trace_resources_get(const struct trace_resources *rs, size_t i)
{
    return i < rs->n ? &rs->v[i] : NULL;
}

size_t trace_resources_find(const struct trace_resources *rs, uint32_t name)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].name == name)
            return i;
    return SIZE_MAX;
}

/* First sample of x whose start is >= t. */
static size_t first_at(const struct rindex *x, uint64_t t)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->start[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The part of sample k inside [a, e), as a fraction of its window. */
static double frac(const struct rindex *x, size_t k, uint64_t a, uint64_t e)
{
    uint64_t s = x->start[k] > a ? x->start[k] : a, f = x->end[k] < e ? x->end[k] : e;
    return f > s ? (double)(f - s) / (double)(x->end[k] - x->start[k]) : 0;
}

/* first_at, searched from position from on (galloping) when the answer lies there, else
 * before it. */
static size_t first_from(const struct rindex *x, uint64_t t, size_t from)
{
    if (from > x->n || (from > 0 && x->start[from - 1] >= t))
        return first_at(x, t);
    size_t lo = from, step = 1; /* every sample before lo starts before t */
    while (lo < x->n) {
        size_t probe = lo + step - 1 < x->n ? lo + step - 1 : x->n - 1;
        if (x->start[probe] >= t) {
            size_t hi = probe;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (x->start[mid] < t)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            return lo;
        }
        lo = probe + 1;
        step *= 2;
    }
    return x->n;
}

/* The bytes of x's samples within [a, b), given lo and hi, the first samples starting at a
 * and at b or later. */
static inline __attribute__((always_inline)) void bytes_within(const struct rindex *x, size_t lo,
                                                               size_t hi, uint64_t a, uint64_t b,
                                                               double *read, double *write)
{
    *read = *write = 0;
    /* a sample starting before a may reach into the window (windows do not overlap) */
    if (lo > 0) {
        double f = frac(x, lo - 1, a, b);
        *read += (x->pre_r[lo] - x->pre_r[lo - 1]) * f;
        *write += (x->pre_w[lo] - x->pre_w[lo - 1]) * f;
    }
    if (hi > lo) {
        /* those starting inside: all but the last whole, the last in part */
        *read += x->pre_r[hi - 1] - x->pre_r[lo];
        *write += x->pre_w[hi - 1] - x->pre_w[lo];
        double f = frac(x, hi - 1, a, b);
        *read += (x->pre_r[hi] - x->pre_r[hi - 1]) * f;
        *write += (x->pre_w[hi] - x->pre_w[hi - 1]) * f;
    }
}

/* trace_resources_bytes with its first search from *hint (updated), or from 0. */
static void bytes_from(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b,
                       double *read, double *write, size_t *hint)
{
    *read = *write = 0;
    if (i >= rs->n || b <= a)
        return;
    const struct rindex *x = &rs->ix[i];
    size_t lo = hint ? first_from(x, a, *hint) : first_at(x, a);
    size_t hi = hint ? first_from(x, b, lo) : first_at(x, b);
    if (hint)
        *hint = lo;
    bytes_within(x, lo, hi, a, b, read, write);
}

void trace_resources_bytes(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b,
                           double *read, double *write)
{
    bytes_from(rs, i, a, b, read, write, NULL);
}

/* Utilization of each direction of r from its bytes rd and wr within [a, b) (b > a). */
static inline void util2_of(const struct trace_resource *r, double rd, double wr, uint64_t a,
                            uint64_t b, double *read, double *write)
{
    double peak = r->peak > 0 ? r->peak : r->max_rate;
    *read = rd / (peak * (double)(b - a));
    *write = wr / (peak * (double)(b - a));
}

/* The utilization of r from those of its directions. */
static inline double util_of(const struct trace_resource *r, double rd, double wr)
{
    if (r->kind == TRACE_RES_HBM)
        return rd + wr;
    return rd > wr ? rd : wr;
}

static void util2_from(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b,
                       double *read, double *write, size_t *hint)
{
    *read = *write = 0;
    if (i >= rs->n || b <= a)
        return;
    const struct trace_resource *r = &rs->v[i];
    double peak = r->peak > 0 ? r->peak : r->max_rate;
    if (!(peak > 0))
        return;
    double rd, wr;
    bytes_from(rs, i, a, b, &rd, &wr, hint);
    util2_of(r, rd, wr, a, b, read, write);
}

void trace_resources_util2(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b,
                           double *read, double *write)
{
    util2_from(rs, i, a, b, read, write, NULL);
}

double trace_resources_util_from(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b,
                                 size_t *hint)
{
    double rd, wr;
    util2_from(rs, i, a, b, &rd, &wr, hint);
    if (i >= rs->n)
        return rd > wr ? rd : wr;
    return util_of(&rs->v[i], rd, wr);
}

/* The first of windows w[from..n) (in time order) ending after t: galloping from from. */
static size_t windows_ending_after(const uint64_t (*w)[2], size_t from, size_t n, uint64_t t)
{
    size_t lo = from, step = 1; /* every window before lo ends by t */
    while (lo < n && w[lo][1] <= t) {
        size_t probe = lo + step < n ? lo + step : n;
        if (probe < n && w[probe][1] <= t) {
            lo = probe + 1;
            step *= 2;
            continue;
        }
        size_t hi = probe; /* the answer is in (lo, hi] */
        for (lo++; lo < hi;) {
            size_t mid = lo + (hi - lo) / 2;
            if (w[mid][1] <= t)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }
    return lo;
}

/* Raise *most to u when u is larger. */
static inline void raise_to(double *most, double u)
{
    *most = u > *most ? u : *most;
}

void trace_resources_util_max(const struct trace_resources *rs, size_t i, const uint64_t (*w)[2],
                              size_t n, bool in_order, double *most, size_t stride, size_t *hint)
{
    if (i >= rs->n)
        return;
    const struct trace_resource *r = &rs->v[i];
    double peak = r->peak > 0 ? r->peak : r->max_rate;
    if (!(peak > 0))
        return;
    const struct rindex *x = &rs->ix[i];
    size_t lo = hint ? *hint : 0, hi = lo; /* the cursors: first samples at a and at b */
    if (lo > x->n)
        lo = hi = 0;
    for (size_t j = 0; j < n; j++) {
        uint64_t a = w[j][0], b = w[j][1];
        if (b <= a || most[j * stride] >= x->most)
            continue; /* (it cannot raise that) */
        /* forwards a step at a time while it pays, else by first_from (which also goes back) */
        if (lo < x->n && x->start[lo] < a && (lo + 1 >= x->n || x->start[lo + 1] >= a))
            lo++;
        else if (!(lo <= x->n && (lo == x->n || x->start[lo] >= a) &&
                   (lo == 0 || x->start[lo - 1] < a)))
            lo = first_from(x, a, lo);
        if (hi < lo)
            hi = lo;
        if (hi < x->n && x->start[hi] < b && (hi + 1 >= x->n || x->start[hi + 1] >= b))
            hi++;
        else if (!((hi == x->n || x->start[hi] >= b) && (hi == lo || x->start[hi - 1] < b)))
            hi = first_from(x, b, lo);
        /* nothing reaches into it: no samples start inside and the one before ended; in
         * time order, neither into the windows after it that end by the next sample's start */
        if (hi == lo && (lo == 0 || x->end[lo - 1] <= a)) {
            if (in_order)
                j = windows_ending_after(w, j + 1, n, lo < x->n ? x->start[lo] : UINT64_MAX) - 1;
            continue;
        }
        double rd, wr;
        bytes_within(x, lo, hi, a, b, &rd, &wr);
        if (r->kind != TRACE_RES_HBM) {
            /* the busier direction's: as the division rounds monotonically, the larger
             * quotient is the larger dividend's, one division rather than two */
            raise_to(&most[j * stride], (rd > wr ? rd : wr) / (peak * (double)(b - a)));
            continue;
        }
        double ur, uw;
        util2_of(r, rd, wr, a, b, &ur, &uw);
        raise_to(&most[j * stride], util_of(r, ur, uw));
    }
    if (hint)
        *hint = lo;
}

double trace_resources_most(const struct trace_resources *rs, size_t i)
{
    return i < rs->n ? rs->ix[i].most : INFINITY;
}

double trace_resources_util(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b)
{
    return trace_resources_util_from(rs, i, a, b, NULL);
}
