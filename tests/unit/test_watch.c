/*
 * Conditions on metrics of a live run (trace/live/watch.h): parsing, and each kind firing at the
 * event the definition says, checked against the run's own record afterwards: the first
 * HBM window over the threshold (looked at once the window after it has ended), the first
 * op longer than the limit, the first moment the TE engines have been idle that long.
 */
#include "sim/chip/chip.h"
#include "sim/host/run.h"
#include "trace/live/live.h"
#include "trace/model/model.h"
#include "trace/analysis/resources.h"
#include "trace/live/watch.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

Test(watch, conditions_parse_with_units_and_say_what_is_wrong)
{
    struct trace_watch_cond c;
    struct diag d;
    cr_assert_eq(trace_watch_parse("hbm.util > 0.9", 1.5, &c, &d), 0, "%s", d.msg);
    cr_assert_eq(c.metric, TRACE_WATCH_HBM_UTIL);
    cr_assert_eq(c.cmp, TRACE_CMP_GT);
    cr_assert_float_eq(c.value, 0.9, 1e-12);
    cr_assert_str_eq(c.text, "hbm.util > 0.9");
    cr_assert_eq(trace_watch_parse("  idle(TE)>=5us ", 1.5, &c, &d), 0, "%s", d.msg);
    cr_assert_eq(c.metric, TRACE_WATCH_IDLE);
    cr_assert_eq(c.engine, TRACE_ENGINE_TE);
    cr_assert_eq(c.cmp, TRACE_CMP_GE);
    cr_assert_float_eq(c.value, 7500, 1e-9, "5 us at 1.5 GHz");
    cr_assert_eq(trace_watch_parse("op.duration < 800", 0, &c, &d), 0, "%s", d.msg);
    cr_assert_eq(c.value, 800, "cycles need no clock");
    cr_assert_eq(trace_watch_parse("link.util >= 50%", 1, &c, &d), 0, "%s", d.msg);
    cr_assert_float_eq(c.value, 0.5, 1e-12);
    cr_assert(trace_watch_is_condition("hbm.util > 1"));
    cr_assert_not(trace_watch_is_condition("sip0.*.pe_dma"));
    static const char *const bad[][2] = {
        {"hbm.usage > 1", "METRIC CMP VALUE"},
        {"idle(xx) > 1", "KIND is dma"},
        {"op.duration = 5", "a comparison"},
        {"op.duration > fast", "not a value"},
        {"op.duration > 5 parsecs", "a time is cycles"},
        {"hbm.util > 0.5 or so", "unexpected"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_lt(trace_watch_parse(bad[i][0], 1, &c, &d), 0, "%s", bad[i][0]);
        cr_assert(strstr(d.msg, bad[i][1]), "%s: %s", bad[i][0], d.msg);
    }
    cr_assert_lt(trace_watch_parse("idle(te) > 5us", 0, &c, &d), 0, "no clock for us");
}

/* A run of spec with a watch of cond, one event at a time until it fires; the time of the
 * event it fired at and the event before, then the run to its end. */
struct fired {
    bool fired;
    uint64_t at, before; /* cycles: the event it fired at, the one before */
    uint64_t ev;
    char text[256];
};

static struct trace_live *run_until_fired(struct sim_run **run, const char *spec, const char *cond,
                                          struct fired *f)
{
    struct diag d;
    struct sim_run_opts ro = {.kernel_spec = spec};
    cr_assert_eq(sim_run_new(&ro, run, &d), 0, "%s", d.msg);
    sim_run_timing_only(*run);
    struct trace_live *l;
    struct trace_live_opts o = {.prefill_tokens = -1, .decode_tokens = -1};
    cr_assert_eq(trace_live_new(sim_run_chip(*run), &o, &l, &d), 0, "%s", d.msg);
    struct trace_watch *w = trace_watch_new(l);
    struct trace_watch_cond c;
    cr_assert_eq(trace_watch_parse(cond, sim_run_config(*run)->clock_ghz, &c, &d), 0, "%s", d.msg);
    trace_watch_add(w, 7, &c);
    memset(f, 0, sizeof(*f));
    double ghz = sim_run_config(*run)->clock_ghz;
    uint64_t prev = 0;
    struct sim_engine *e = sim_chip_engine(sim_run_chip(*run));
    while (!f->fired && sim_run_advance(*run, SIM_RUN_EVENTS, 1) == 1) {
        uint64_t now = (uint64_t)(sim_ticks_to_ns(sim_engine_now(e)) * ghz);
        int id;
        if (trace_watch_check(w, &id, &f->ev, f->text, sizeof(f->text))) {
            cr_assert_eq(id, 7);
            f->fired = true;
            f->at = now;
            f->before = prev;
        }
        prev = now;
    }
    trace_watch_free(w);
    sim_run_advance(*run, SIM_RUN_END, 0);
    trace_live_sync(l);
    return l;
}

Test(watch, hbm_util_fires_once_the_window_after_the_first_busy_window_ends)
{
    struct sim_run *run;
    struct fired f;
    struct trace_live *l = run_until_fired(&run, "vector_add:n=65536", "hbm.util > 0.2", &f);
    cr_assert(f.fired);
    cr_log_info("%s", f.text);
    /* the first window of an HBM over 20% of its 256 GB/s, from the run's own samples */
    const struct trace_model *m = trace_live_model(l);
    struct trace_resources *rs = trace_resources_new(m);
    uint64_t W = 1024, first = UINT64_MAX;
    for (size_t i = 0; i < trace_resources_count(rs); i++) {
        const struct trace_resource *r = trace_resources_get(rs, i);
        if (r->kind != TRACE_RES_HBM)
            continue;
        for (uint64_t k = 0; k * W < r->last; k++)
            if (trace_resources_util(rs, i, k * W, (k + 1) * W) > 0.2 && k < first)
                first = k;
    }
    trace_resources_free(rs);
    cr_assert_neq(first, UINT64_MAX, "some window is that busy");
    char want[64];
    snprintf(want, sizeof(want), "in cycles [%llu, %llu)", (unsigned long long)(first * W),
             (unsigned long long)((first + 1) * W));
    cr_assert(strstr(f.text, want), "%s, want %s", f.text, want);
    cr_assert_geq(f.at, (first + 2) * W, "looked at once the next window ended");
    cr_assert_lt(f.before, (first + 2) * W, "at the first event after that");
    trace_live_free(l);
    sim_run_free(run);
}

Test(watch, op_duration_fires_as_the_first_long_op_ends)
{
    struct sim_run *run;
    struct fired f;
    struct trace_live *l = run_until_fired(&run, "vector_add:n=65536", "op.duration > 200", &f);
    cr_assert(f.fired);
    const struct trace_model *m = trace_live_model(l);
    cr_assert_neq(f.ev, UINT64_MAX, "it names the op");
    const struct trace_event *e = trace_model_event(m, f.ev);
    cr_assert_gt(e->end - e->start, 200);
    cr_assert_leq(e->end, f.at + 1, "it ended at the event that fired");
    /* no op longer than that ended before it */
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        const struct trace_event *x = trace_model_event(m, i);
        if (trace_model_track_get(m, x->track)->engine == TRACE_ENGINE_HOST)
            continue; /* host messages are no op records */
        if (x->end - x->start > 200)
            cr_assert_geq(x->end, e->end, "op %llu ended earlier", (unsigned long long)i);
    }
    trace_live_free(l);
    sim_run_free(run);
}

Test(watch, idle_fires_when_the_engines_have_been_idle_that_long)
{
    struct sim_run *run;
    struct fired f;
    /* the TEs do nothing until the GEMM starts, after the inputs are written */
    struct trace_live *l = run_until_fired(&run, "gemm:m=64,n=64,k=64", "idle(te) > 2us", &f);
    cr_assert(f.fired);
    cr_assert_geq(f.at, 2000, "idle since the start: 2 us at 1 GHz");
    cr_assert_lt(f.before, 2001);
    const struct trace_model *m = trace_live_model(l);
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        const struct trace_event *x = trace_model_event(m, i);
        if (trace_model_track_get(m, x->track)->engine == TRACE_ENGINE_TE)
            cr_assert_geq(x->start, f.at, "no TE op had started");
    }
    trace_live_free(l);
    sim_run_free(run);
}
