/*
 * One busy figure per component: the union of its ops' intervals, in cycles. The run's own
 * summary (what `npuscope run --headless` prints), the trace model of the same run, the
 * summary metrics (`npuscope summary`, the summary pane), the verdict and `npuscope diff`
 * give the same number for a component and for an engine kind.
 */
#include "sim/chip/chip.h"
#include "sim/host/run.h"
#include "trace/analysis/metrics.h"
#include "trace/diff/diff.h"
#include "trace/live/live.h"
#include "trace/verdict/verdict.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

struct ran {
    struct sim_run *r;
    struct trace_live *live;
    struct sim_run_summary s;
};

static void run(struct ran *x, const char *kernel)
{
    struct sim_run_opts o = {.kernel_spec = kernel};
    struct diag d;
    cr_assert_eq(sim_run_new(&o, &x->r, &d), 0, "%s", d.msg);
    sim_run_timing_only(x->r);
    struct trace_live_opts lo = {.prefill_tokens = -1, .decode_tokens = -1};
    cr_assert_eq(trace_live_new(sim_run_chip(x->r), &lo, &x->live, &d), 0, "%s", d.msg);
    sim_run_advance(x->r, SIM_RUN_END, 0);
    trace_live_sync(x->live);
    cr_assert_eq(trace_live_finish(x->live, true, &d), 0, "%s", d.msg);
    sim_run_summarize(x->r, &x->s);
}

static void ran_free(struct ran *x)
{
    sim_run_summary_fini(&x->s);
    trace_live_free(x->live);
    sim_run_free(x->r);
}

static uint32_t track_of(const struct trace_model *m, const char *id)
{
    for (uint32_t t = 0; t < trace_model_track_count(m); t++)
        if (strcmp(trace_model_str(m, trace_model_track_get(m, t)->name), id) == 0)
            return t;
    cr_assert_fail("no track %s", id);
    return 0;
}

static const struct trace_diff_item *diff_track(const struct trace_diff *d, const char *id)
{
    for (size_t i = 0; i < d->run.ntracks; i++)
        if (strcmp(d->run.tracks[i].name, id) == 0)
            return &d->run.tracks[i];
    cr_assert_fail("no track %s in the comparison", id);
    return NULL;
}

Test(busy, a_component_has_one_busy_figure_everywhere)
{
    /* the demo: its GEMM engines run composite ops (tiles run elsewhere while the op
     * lasts), where a unit's working time and the op's interval differ */
    struct ran x;
    run(&x, NULL);
    const struct trace_model *m = trace_live_model(x.live);
    struct trace_metrics mx;
    trace_metrics_compute(m, &mx);
    struct trace_diff *d = trace_diff_new(m, m, NULL);
    cr_assert_eq(x.s.cycles, mx.cycles_total, "the run's span is the trace's cycles_total");
    size_t checked = 0;
    for (size_t i = 0; i < x.s.n_components; i++) {
        const struct sim_run_component *c = &x.s.components[i];
        if (c->kind != SIM_NODE_PE_GEMM && c->kind != SIM_NODE_PE_DMA &&
            c->kind != SIM_NODE_PE_MATH && c->kind != SIM_NODE_IO_CPU)
            continue;
        if (!c->busy_cycles)
            continue;
        uint32_t t = track_of(m, c->id);
        uint64_t model = trace_model_track_busy(m, t, 0, UINT64_MAX);
        cr_expect_eq(c->busy_cycles, model, "%s: run %llu, trace %llu", c->id,
                     (unsigned long long)c->busy_cycles, (unsigned long long)model);
        cr_expect_eq(diff_track(d, c->id)->a.busy, model, "%s in diff", c->id);
        cr_expect_float_eq(c->utilization, (double)model / (double)mx.cycles_total, 1e-12,
                           "%s: utilization over the same span", c->id);
        const struct trace_track *tr = trace_model_track_get(m, t);
        const struct trace_engine_use *u = tr->engine == TRACE_ENGINE_TE   ? mx.te
                                           : tr->engine == TRACE_ENGINE_VE ? mx.ve
                                                                           : NULL;
        size_t n = tr->engine == TRACE_ENGINE_TE   ? mx.nte
                   : tr->engine == TRACE_ENGINE_VE ? mx.nve
                                                   : 0;
        for (size_t k = 0; u && k < n; k++)
            if (u[k].id == tr->engine_id)
                cr_expect_eq(u[k].active, model, "%s in the summary metrics", c->id);
        checked++;
    }
    cr_assert_geq(checked, 10);
    const struct sim_run_component *gemm = NULL;
    for (size_t i = 0; i < x.s.n_components; i++)
        if (strcmp(x.s.components[i].id, "sip0.cube1.pe0.pe_gemm") == 0)
            gemm = &x.s.components[i];
    cr_assert(gemm && gemm->busy_cycles > 0);
    trace_diff_free(d);
    trace_metrics_fini(&mx);
    ran_free(&x);
}

Test(busy, an_engine_kind_has_one_busy_figure_everywhere)
{
    /* one PE's GEMM engine: the TE kind is that component alone */
    struct ran x;
    run(&x, "gemm:m=256,n=256,k=256,pes=1,data=zero");
    const struct trace_model *m = trace_live_model(x.live);
    struct trace_metrics mx;
    trace_metrics_compute(m, &mx);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    struct trace_diff *d = trace_diff_new(m, m, NULL);
    const struct sim_run_component *gemm = NULL;
    for (size_t i = 0; i < x.s.n_components; i++)
        if (x.s.components[i].kind == SIM_NODE_PE_GEMM && x.s.components[i].busy_cycles)
            gemm = &x.s.components[i];
    cr_assert(gemm);
    uint64_t busy = gemm->busy_cycles;
    cr_assert_eq(mx.nte, 1);
    cr_expect_eq(mx.te[0].active, busy, "the engine in the summary metrics");
    cr_expect_eq(mx.te_active, busy, "the kind in the summary metrics");
    cr_expect_eq(d->run.engines[TRACE_ENGINE_TE].a.busy, busy, "the kind in diff");
    cr_expect_eq(v->run.length, mx.cycles_total, "the verdict's span is cycles_total");
    cr_expect_float_eq(v->run.busy[TRACE_ENGINE_TE], (double)busy / (double)v->run.length, 1e-12,
                       "the verdict's busy share");
    cr_expect_float_eq(mx.te_util, gemm->utilization, 1e-12, "the same utilization");
    trace_diff_free(d);
    trace_verdict_free(v);
    trace_metrics_fini(&mx);
    ran_free(&x);
}
