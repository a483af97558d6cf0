/* The metrics a stream-only run accumulates as it goes (trace/live/sumacc.h) against the
 * metrics of the same events in a finished model (trace/analysis/metrics.h): the same numbers, for
 * random runs with overlaps, ties, ops of length 0, ops still in flight at the end, engines
 * on two tracks, and windows that must widen. */
#include "trace/analysis/metrics.h"
#include "trace/model/model.h"
#include "trace/live/sumacc.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

struct op {
    uint32_t track;
    uint64_t s, e; /* e: UINT64_MAX while in flight at the end */
    struct trace_transfer x[2];
    int nx;
};

/* One start or end as a simulation reports it. */
struct report {
    uint64_t t;
    uint32_t op, tie; /* tie: a random order among reports of the same cycle */
    bool end;
};

static int cmp_report(const void *a, const void *b)
{
    const struct report *p = a, *q = b;
    if (p->t != q->t)
        return p->t < q->t ? -1 : 1;
    return p->tie < q->tie ? -1 : p->tie > q->tie;
}

static uint64_t rnd(uint64_t *st)
{
    *st ^= *st << 13, *st ^= *st >> 7, *st ^= *st << 17;
    return *st;
}

struct run {
    uint32_t tracks[7];
    enum trace_engine eng[7];
    int32_t id[7];
};

/* nops random ops over tracks of every kind, spans up to maxlen cycles, checked both ways. */
static void check(uint64_t seed, size_t nops, uint64_t maxlen, uint64_t window)
{
    struct trace_model *m = trace_model_new();
    struct run r = {.eng = {TRACE_ENGINE_DMA, TRACE_ENGINE_DMA, TRACE_ENGINE_DMA, TRACE_ENGINE_TE,
                            TRACE_ENGINE_TE, TRACE_ENGINE_VE, TRACE_ENGINE_HOST},
                    .id = {0, 1, 1, 0, 3, 2, 0}}; /* DMA 1 and 1: one engine on two tracks */
    const char *names[7] = {"d0", "d1a", "d1b", "t0", "t3", "v2", "host"};
    for (int k = 0; k < 7; k++)
        r.tracks[k] = trace_model_track(m, names[k], r.eng[k], r.id[k]);

    struct op *ops = calloc(nops, sizeof(*ops));
    struct report *rep = calloc(2 * nops, sizeof(*rep));
    size_t nrep = 0;
    uint64_t st = seed, now = 0;
    for (size_t i = 0; i < nops; i++) {
        struct op *o = &ops[i];
        o->track = (uint32_t)(rnd(&st) % 7);
        o->s = rnd(&st) % (maxlen * 4);
        uint64_t len = rnd(&st) % 5 == 0 ? 0 : rnd(&st) % maxlen;
        o->e = rnd(&st) % 50 == 0 ? UINT64_MAX : o->s + len;
        if (r.eng[o->track] == TRACE_ENGINE_DMA && rnd(&st) % 4) {
            o->nx = 1 + (int)(rnd(&st) % 2);
            for (int j = 0; j < o->nx; j++)
                o->x[j] = (struct trace_transfer){
                    .bytes = rnd(&st) % 100000,
                    .flags = (uint32_t)((j ? TRACE_XFER_WRITE : 0) |
                                        (rnd(&st) % 3 == 0 ? TRACE_XFER_KV : 0)),
                };
        }
        rep[nrep++] = (struct report){o->s, (uint32_t)i, (uint32_t)rnd(&st), false};
        if (o->e != UINT64_MAX) {
            rep[nrep++] = (struct report){o->e, (uint32_t)i, (uint32_t)rnd(&st), true};
            now = o->e > now ? o->e : now;
        }
        now = o->s > now ? o->s : now;
    }
    now += rnd(&st) % 3; /* the clock may stand past the last report */
    qsort(rep, nrep, sizeof(*rep), cmp_report);
    /* an op of length 0 reports its start before its end, whatever the tie said */
    bool *started = calloc(nops, sizeof(*started));
    for (size_t k = 0; k < nrep; k++) {
        if (!rep[k].end) {
            started[rep[k].op] = true;
        } else if (!started[rep[k].op]) {
            size_t j = k + 1;
            while (rep[j].op != rep[k].op || rep[j].end)
                j++;
            struct report tmp = rep[k];
            rep[k] = rep[j];
            rep[j] = tmp;
            started[rep[k].op] = true;
        }
    }
    free(started);

    /* the model: every op as an event, the transfers on it */
    for (size_t i = 0; i < nops; i++) {
        struct op *o = &ops[i];
        struct trace_event ev = {.start = o->s,
                                 .end = o->e == UINT64_MAX ? o->s : o->e,
                                 .track = r.tracks[o->track],
                                 .cmdq_id = TRACE_NO_CMDQ,
                                 .flags = o->e == UINT64_MAX ? TRACE_EV_INFLIGHT : 0};
        uint64_t e = trace_model_add_event(m, &ev);
        for (int j = 0; j < o->nx; j++) {
            struct trace_transfer x = o->x[j];
            x.event = (uint32_t)e;
            trace_model_add_transfer(m, &x);
        }
    }
    trace_model_set_now(m, now);
    trace_model_finish(m);

    /* the accumulator: the reports in time order, then what is in flight ends at now */
    struct trace_sumacc *a = trace_sumacc_new(window);
    for (size_t k = 0; k < nrep; k++) {
        struct op *o = &ops[rep[k].op];
        uint32_t t = r.tracks[o->track];
        if (!rep[k].end)
            trace_sumacc_start(a, t, r.eng[o->track], r.id[o->track], o->s);
        else
            trace_sumacc_end(a, t, o->s, o->e, o->x, o->nx);
    }
    for (size_t i = 0; i < nops; i++)
        if (ops[i].e == UINT64_MAX)
            trace_sumacc_end(a, r.tracks[ops[i].track], ops[i].s, now, ops[i].x, ops[i].nx);

    struct trace_metrics x, y;
    trace_metrics_compute(m, &x);
    trace_sumacc_metrics(a, m, &y);
    cr_assert_eq(y.cycles_total, x.cycles_total, "seed %llu", (unsigned long long)seed);
    cr_assert_eq(y.dram_read, x.dram_read);
    cr_assert_eq(y.dram_write, x.dram_write);
    cr_assert_eq(y.dram_source, x.dram_source);
    cr_assert_eq(y.has_kv, x.has_kv);
    cr_assert_eq(y.kv_read, x.kv_read);
    cr_assert_eq(y.kv_write, x.kv_write);
    cr_assert_eq(y.has_dma, x.has_dma);
    cr_assert_eq(y.dma_active, x.dma_active, "seed %llu: DMA busy %llu, the model's %llu",
                 (unsigned long long)seed, (unsigned long long)y.dma_active,
                 (unsigned long long)x.dma_active);
    cr_assert_eq(y.dma_max_concurrent, x.dma_max_concurrent, "seed %llu: peak %llu, model %llu",
                 (unsigned long long)seed, (unsigned long long)y.dma_max_concurrent,
                 (unsigned long long)x.dma_max_concurrent);
    cr_assert_eq(y.nte, x.nte);
    cr_assert_eq(y.nve, x.nve);
    for (size_t i = 0; i < x.nte; i++) {
        cr_assert_eq(y.te[i].id, x.te[i].id);
        cr_assert_eq(y.te[i].active, x.te[i].active, "seed %llu: te %zu", (unsigned long long)seed,
                     i);
    }
    for (size_t i = 0; i < x.nve; i++) {
        cr_assert_eq(y.ve[i].id, x.ve[i].id);
        cr_assert_eq(y.ve[i].active, x.ve[i].active);
    }
    trace_metrics_fini(&x);
    trace_metrics_fini(&y);

    struct trace_bw_sample *sx, *sy;
    size_t nx = trace_metrics_bandwidth(m, window, &sx);
    size_t ny = trace_sumacc_bandwidth(a, &sy);
    cr_assert_eq(ny, nx, "seed %llu: %zu samples, the model's %zu", (unsigned long long)seed, ny,
                 nx);
    for (size_t i = 0; i < nx; i++) {
        cr_assert_eq(sy[i].cycle, sx[i].cycle, "seed %llu sample %zu", (unsigned long long)seed, i);
        cr_assert_eq(sy[i].window, sx[i].window);
        cr_assert_eq(sy[i].read_bytes, sx[i].read_bytes);
        cr_assert_eq(sy[i].write_bytes, sx[i].write_bytes);
    }
    free(sx);
    free(sy);
    trace_sumacc_free(a);
    trace_model_free(m);
    free(ops);
    free(rep);
}

Test(sumacc, matches_the_model_on_random_runs)
{
    for (uint64_t seed = 1; seed <= 200; seed++)
        check(seed * 2654435761u, 1 + seed % 97, 1 + seed % 5000, 1 + seed % 300);
}

Test(sumacc, a_single_op_and_nothing_at_all)
{
    check(7, 1, 1, 1);
    check(11, 1, 100, 0);
    struct trace_model *m = trace_model_new();
    trace_model_finish(m);
    struct trace_sumacc *a = trace_sumacc_new(0);
    struct trace_metrics y;
    trace_sumacc_metrics(a, m, &y);
    cr_assert_eq(y.cycles_total, 0);
    cr_assert_not(y.has_dma);
    cr_assert_eq(y.nte + y.nve, 0);
    trace_metrics_fini(&y);
    struct trace_bw_sample *s;
    cr_assert_eq(trace_sumacc_bandwidth(a, &s), 0);
    cr_assert_null(s);
    trace_sumacc_free(a);
    trace_model_free(m);
}

Test(sumacc, windows_widen_as_the_run_grows_and_still_match)
{
    /* spans of up to 2^30 cycles at a window of 1: the window must double many times, and
     * reports of ops that started before the earliest so far extend the windows backwards */
    check(99, 3000, (uint64_t)1 << 30, 1);
    check(12345, 20000, 4000, 1);
}
