/*
 * The critical path's time split by what bounded it (see pathtime.h): each step's op by its
 * engine, its bytes at the rate its channel and HBM allow, its fixed costs; each wait by the
 * HBMs and links busy during it, resource by resource over the waits in time order.
 */
#include "trace/verdict/pathtime.h"

#include "sim/util/xalloc.h"
#include "trace/model/mapped.h"
#include "trace/verdict/verdict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A pass over a path's steps gives back the pages of the model's mapped arrays it read
 * (trace_model_lent_giveback) every so many steps: one every few ops of the set, whose
 * events and op columns a million steps would touch all of. */
enum { PATH_GIVEBACK_EVERY = 1 << 16 };
/* How many steps of a path ahead a pass over them asks for their events. */
enum { STEP_PREFETCH = 16 };

/* The resource of the HBM of track t's cube ("sip0.cube1.pe0.pe_dma" -> "sip0.cube1.hbm"). */
static size_t hbm_of(struct trace_pathtime *c, uint32_t t)
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

/* The first of windows w[0..n) (in time order) whose bound k (0: start, 1: end) is t or
 * later. */
static size_t windows_from(const uint64_t (*w)[2], size_t n, int k, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w[mid][k] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * The busiest HBM or link (mh[s][0]) and host link (mh[s][1]) during the wait of each step s
 * of path p from s0 to s1 with a wait ([its start - wait, its start)), 0 when none (hint:
 * where each resource's last search ended). Resource by resource: the waits come in time
 * order, so each resource's samples are read once from where the last window ended, rather
 * than every resource's at each step. (The busiest of a window is the same whatever the
 * steps asked with it: a path's steps may be asked in parts, on two threads.)
 */
void trace_pathtime_waits(const struct trace_pathtime *c, const struct trace_critpath *p, size_t s0,
                          size_t s1, size_t *hint, double (*mh)[2])
{
    size_t nw = 0;
    for (size_t s = s0; s < s1; s++)
        nw += p->steps[s].wait != 0;
    if (!nw)
        return;
    uint64_t(*w)[2] = sim_xreallocarray(NULL, nw, sizeof(*w)); /* the windows */
    size_t *step = sim_xreallocarray(NULL, nw, sizeof(*step)); /* their steps */
    for (size_t s = s0, j = 0; s < s1; s++) {
        const struct trace_path_step *st = &p->steps[s];
        if (s % PATH_GIVEBACK_EVERY == PATH_GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(c->m);
        if (s + STEP_PREFETCH < s1 && !c->spans)
            __builtin_prefetch(&c->ev[p->steps[s + STEP_PREFETCH].ev]);
        if (!st->wait)
            continue;
        uint64_t start = c->spans ? c->spans[st->op].start : c->ev[st->ev].start;
        w[j][0] = start - st->wait, w[j][1] = start;
        mh[s][0] = mh[s][1] = 0;
        step[j] = s;
        j++;
    }
    bool sorted = true; /* the windows in time order (a path's are) */
    for (size_t j = 1; j < nw && sorted; j++)
        sorted = w[j][0] >= w[j - 1][1];
    /* each kind's resources by the most they can be busy, the most first: a window already
     * that busy is left out of the sweeps of those after (the maximum is the same in any
     * order) */
    size_t nres = trace_resources_count(c->res);
    size_t *order = sim_xreallocarray(NULL, nres ? nres : 1, sizeof(*order));
    uint64_t(*cw)[2] = sim_xreallocarray(NULL, nw, sizeof(*cw)); /* the windows still open */
    double *cm = sim_xreallocarray(NULL, nw, sizeof(*cm));       /* their utilization so far */
    size_t *ci = sim_xreallocarray(NULL, nw, sizeof(*ci));       /* which they are */
    for (int host = 0; host < 2; host++) {
        size_t no = 0;
        for (size_t i = 0; i < nres; i++) {
            if ((trace_resources_get(c->res, i)->kind == TRACE_RES_HOST_LINK) != host)
                continue;
            double most = trace_resources_most(c->res, i);
            size_t k = no++; /* (by insertion: a few dozen resources) */
            for (; k > 0 && trace_resources_most(c->res, order[k - 1]) < most; k--)
                order[k] = order[k - 1];
            order[k] = i;
        }
        memcpy(cw, w, nw * sizeof(*cw));
        size_t nc = nw;
        for (size_t j = 0; j < nw; j++)
            cm[j] = 0, ci[j] = j;
        double level = INFINITY; /* the bound the windows were last left out at */
        for (size_t k = 0; k < no; k++) {
            size_t i = order[k];
            double most = trace_resources_most(c->res, i);
            /* by halves of the bound (util_max passes over those it cannot raise anyway) */
            size_t keep = most > level / 2 ? nc : 0;
            if (keep < nc)
                level = most;
            for (size_t q = keep; q < nc; q++) {
                if (cm[q] >= most) { /* final */
                    mh[step[ci[q]]][host] = cm[q];
                    continue;
                }
                if (keep != q) {
                    memmove(cw[keep], cw[q], sizeof(*cw));
                    cm[keep] = cm[q], ci[keep] = ci[q];
                }
                keep++;
            }
            nc = keep;
            const struct trace_resource *x = trace_resources_get(c->res, i);
            /* the windows that meet its samples, [first, last): outside, its use is 0 */
            size_t j0 = 0, j1 = nc;
            if (sorted) {
                j0 = windows_from(cw, nc, 1, x->first + 1);
                j1 = windows_from(cw, nc, 0, x->last);
            }
            if (j1 > j0)
                trace_resources_util_max(c->res, i, cw + j0, j1 - j0, sorted, cm + j0, 1, &hint[i]);
        }
        for (size_t q = 0; q < nc; q++)
            mh[step[ci[q]]][host] = cm[q];
    }
    free(step);
    free(ci);
    free(cm);
    free(cw);
    free(order);
    free(w);
}

/*
 * The wait before step s: time an HBM or a link was busy during it is that resource's (a
 * host message's data reaching HBM, a read coming back over the host link: work no op
 * records), the rest latency. The busiest kind of resource counts (mh:
 * trace_pathtime_waits's for the step).
 */
void trace_pathtime_wait(const struct trace_path_step *s, const double *mh, double *path)
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

void trace_pathtime_add(const struct trace_pathtime_part *o, double *path)
{
    path[o->cat[0]] += o->v[0];
    path[o->cat[1]] += o->v[1];
}

/* Split the duration of the op of step s (bytes: a DMA op's, 0 when unknown or another
 * engine's) into the path's categories, into *o (its wait is trace_pathtime_wait's). */
void trace_pathtime_op(struct trace_pathtime *c, const struct trace_path_step *s, uint64_t bytes,
                       struct trace_pathtime_part *o)
{
    const struct trace_model *m = c->m;
    uint64_t start, end;
    uint32_t track;
    if (c->spans) { /* (as the path saw it: an op in flight ending now, as below) */
        const struct trace_op_span *sp = &c->spans[s->op];
        start = sp->start, end = sp->end, track = sp->track;
    } else {
        const struct trace_event *e = &c->ev[s->ev];
        start = e->start, track = e->track;
        end = trace_event_end_at(e, trace_model_now(m));
    }
    enum trace_engine engine = c->engine_of[track];
    double dur = (double)(end - start);
    const struct trace_peaks *p = &c->pk;
    double fixed = 0;
    int cat = TRACE_PCAT_LATENCY;
    switch (engine) {
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
        if (rate > 0 && bytes) {
            double data = (double)bytes / rate;
            double rest = dur - fixed - data;
            if (rest > 0) {
                /* beyond the transfer at full rate: contention when its HBM was busy */
                size_t h = hbm_of(c, track);
                bool busy = h != SIZE_MAX && trace_resources_util_from(
                                                 c->res, h, start, end > start ? end : start + 1,
                                                 &c->hint_dma[h]) >= 0.5;
                if (!busy) {
                    /* the rest is what every transfer pays whatever its size */
                    *o = (struct trace_pathtime_part){{TRACE_PCAT_MEMORY, TRACE_PCAT_DMA_FIXED},
                                                      {data, dur - data}};
                    return;
                }
            }
        }
        break;
    }
    case TRACE_ENGINE_HOST: {
        const char *name = trace_model_str(m, trace_model_track_get(m, track)->name);
        if (strcmp(name, "host") != 0)
            break; /* an io_cpu or m_cpu: control work */
        cat = TRACE_PCAT_HOST;
        struct sim_value *d = trace_model_event_details(m, s->ev);
        int64_t sent = sim_value_get_int(d, "bytes", -1);
        sim_value_free(d);
        if (p->host_rate > 0 && sent >= 0) {
            double data = (double)sent / p->host_rate;
            data = data < dur ? data : dur;
            *o = (struct trace_pathtime_part){{TRACE_PCAT_HOST, TRACE_PCAT_LATENCY},
                                              {data, dur - data}};
            return;
        }
        break;
    }
    default: break;
    }
    fixed = fixed < dur ? fixed : dur;
    *o = (struct trace_pathtime_part){
        {(uint8_t)cat, engine == TRACE_ENGINE_DMA ? TRACE_PCAT_DMA_FIXED : TRACE_PCAT_LATENCY},
        {dur - fixed, fixed}};
}
