/*
 * The per-line comparison (srcdiff.h): both line profiles flattened into (kernel, file,
 * line) keys, sorted, merged, then ordered by the change of their cycles.
 */
#include "trace/diff/srcdiff.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/srcprof.h"

#include <stdlib.h>
#include <string.h>

static int cmp_key(const struct trace_srcdiff_line *x, const struct trace_srcdiff_line *y)
{
    int c = strcmp(x->kernel, y->kernel);
    if (!c)
        c = strcmp(x->file, y->file);
    if (!c)
        c = (x->line > y->line) - (x->line < y->line);
    return c;
}

static int cmp_key_q(const void *a, const void *b)
{
    return cmp_key(a, b);
}

static uint64_t change(const struct trace_srcdiff_line *l)
{
    return l->cycles_a > l->cycles_b ? l->cycles_a - l->cycles_b : l->cycles_b - l->cycles_a;
}

static int cmp_change_q(const void *a, const void *b)
{
    uint64_t x = change(a), y = change(b);
    return x != y ? (x < y) - (x > y) : cmp_key(a, b);
}

/* The lines of profile p of model m, side (0: a, 1: b), sorted by key. */
static struct trace_srcdiff_line *flatten(const struct trace_model *m,
                                          const struct trace_srcprof *p, int side, size_t *n)
{
    size_t total = 0;
    for (size_t k = 0; k < p->nk; k++)
        total += p->k[k].nlines;
    struct trace_srcdiff_line *v = sim_xcalloc(total + 1, sizeof(*v));
    *n = 0;
    for (size_t k = 0; k < p->nk; k++)
        for (size_t i = 0; i < p->k[k].nlines; i++) {
            const struct trace_srcline *L = &p->k[k].lines[i];
            const struct trace_site *s = trace_model_site_get(m, L->site);
            struct trace_srcdiff_line *x = &v[(*n)++];
            x->kernel = sim_xstrdup(p->k[k].name);
            x->file = sim_xstrdup(s ? trace_model_str(m, s->file) : "");
            x->line = s ? s->line : 0;
            *(side ? &x->ops_b : &x->ops_a) = L->ops;
            *(side ? &x->cycles_b : &x->cycles_a) = L->cycles;
        }
    qsort(v, *n, sizeof(*v), cmp_key_q);
    /* two sites of one key (one line called from two functions): one line */
    size_t w = 0;
    for (size_t i = 0; i < *n; i++) {
        if (w && cmp_key(&v[w - 1], &v[i]) == 0) {
            v[w - 1].ops_a += v[i].ops_a;
            v[w - 1].ops_b += v[i].ops_b;
            v[w - 1].cycles_a += v[i].cycles_a;
            v[w - 1].cycles_b += v[i].cycles_b;
            free(v[i].kernel);
            free(v[i].file);
            continue;
        }
        v[w++] = v[i];
    }
    *n = w;
    return v;
}

struct trace_srcdiff *trace_srcdiff_new(const struct trace_model *a, const struct trace_model *b)
{
    struct trace_srcprof *pa = trace_srcprof_new(a), *pb = trace_srcprof_new(b);
    struct trace_srcdiff *d = NULL;
    if (pa->with_site && pb->with_site) {
        size_t na, nb;
        struct trace_srcdiff_line *va = flatten(a, pa, 0, &na), *vb = flatten(b, pb, 1, &nb);
        d = sim_xcalloc(1, sizeof(*d));
        d->v = sim_xcalloc(na + nb + 1, sizeof(*d->v));
        size_t i = 0, j = 0;
        while (i < na || j < nb) {
            int c = i == na ? 1 : j == nb ? -1 : cmp_key(&va[i], &vb[j]);
            if (c < 0) {
                d->v[d->n++] = va[i++];
            } else if (c > 0) {
                d->v[d->n++] = vb[j++];
            } else {
                struct trace_srcdiff_line *x = &d->v[d->n++];
                *x = va[i++];
                x->ops_b = vb[j].ops_b;
                x->cycles_b = vb[j].cycles_b;
                free(vb[j].kernel);
                free(vb[j].file);
                j++;
            }
        }
        free(va);
        free(vb);
        qsort(d->v, d->n, sizeof(*d->v), cmp_change_q);
    }
    trace_srcprof_free(pa);
    trace_srcprof_free(pb);
    return d;
}

void trace_srcdiff_free(struct trace_srcdiff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].kernel);
        free(d->v[i].file);
    }
    free(d->v);
    free(d);
}
