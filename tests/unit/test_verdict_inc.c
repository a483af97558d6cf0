/*
 * The verdict of a growing model (a live run) made from what the last one left
 * (trace_verdict_opts.inc): at every step of the run equal, item by item and in its text, to
 * the verdict made from scratch, while the launches that ended are kept rather than judged
 * again; whatever they rest on changing (an op added to an ended launch, a bandwidth sample
 * over its span, the decode budget) judges them again.
 */
#include "test_grow.h"
#include "trace/verdict/verdict.h"

#include <criterion/criterion.h>
#include <inttypes.h>

TestSuite(verdict_inc);

#define FEQ(x, y) cr_assert((x) == (y), "%s: step %" PRIu64 " item %zu", #x, step, idx)

static void item_eq(const struct trace_verdict *va, const struct trace_verdict_item *a,
                    const struct trace_verdict *vb, const struct trace_verdict_item *b,
                    uint64_t step, size_t idx)
{
    cr_assert_eq(a->region == NULL, b->region == NULL, "step %" PRIu64, step);
    if (a->region) {
        FEQ(a->region->cmdq_id, b->region->cmdq_id);
        FEQ(a->region->start, b->region->start);
        FEQ(a->region->end, b->region->end);
        cr_assert_str_eq(a->region->name, b->region->name);
        FEQ(a->region->occurrence, b->region->occurrence);
        FEQ(a->region->all.ops, b->region->all.ops);
        FEQ(a->region->engine[TRACE_ENGINE_HOST].ops, b->region->engine[TRACE_ENGINE_HOST].ops);
    }
    FEQ(a->running, b->running);
    FEQ(a->bound, b->bound);
    FEQ(a->heuristic, b->heuristic);
    FEQ(a->link, b->link);
    FEQ(a->share, b->share);
    FEQ(a->length, b->length);
    for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
        FEQ(a->busy[k], b->busy[k]);
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        FEQ(a->time[k], b->time[k]);
    FEQ(a->flops, b->flops);
    FEQ(a->peak_flops, b->peak_flops);
    FEQ(a->dram_bytes, b->dram_bytes);
    FEQ(a->peak_bw, b->peak_bw);
    FEQ(a->hbm_util, b->hbm_util);
    FEQ(a->link_util, b->link_util);
    FEQ(a->host_util, b->host_util);
    FEQ(a->hbm, b->hbm);
    FEQ(a->busiest_link, b->busiest_link);
    FEQ(a->host_link, b->host_link);
    FEQ(a->waits, b->waits);
    for (int d = 0; d < TRACE_DEP_COUNT; d++)
        FEQ(a->wait_by[d], b->wait_by[d]);
    FEQ(a->longest_wait_ev, b->longest_wait_ev);
    FEQ(a->longest_wait, b->longest_wait);
    FEQ(a->missing, b->missing);
    FEQ(a->dma_ops, b->dma_ops);
    FEQ(a->dma_bytes, b->dma_bytes);
    FEQ(a->path.n, b->path.n);
    FEQ(a->path.start, b->path.start);
    FEQ(a->path.end, b->path.end);
    for (size_t s = 0; s < a->path.n; s++) {
        FEQ(a->path.steps[s].ev, b->path.steps[s].ev);
        FEQ(a->path.steps[s].pred, b->path.steps[s].pred);
        FEQ(a->path.steps[s].wait, b->path.steps[s].wait);
        FEQ(a->path.steps[s].why, b->path.steps[s].why);
    }
    char la[16][TRACE_VERDICT_LINE], lb[16][TRACE_VERDICT_LINE];
    size_t na = trace_verdict_evidence(va, a, la, 16), nb = trace_verdict_evidence(vb, b, lb, 16);
    FEQ(na, nb);
    for (size_t i = 0; i < na; i++)
        cr_assert_str_eq(la[i], lb[i], "step %" PRIu64 " item %zu", step, idx);
    char ba[200], bb[200];
    cr_assert_str_eq(trace_verdict_bound_text(va, a, ba, sizeof(ba)),
                     trace_verdict_bound_text(vb, b, bb, sizeof(bb)));
}

/* The verdict made with st equals the one from scratch (every other one's path room handed
 * back to st); returns how many items it kept. */
static size_t check(struct trace_verdict_inc *st, const struct trace_model *m, size_t max_decode,
                    uint64_t step)
{
    struct trace_verdict_opts oi = {.max_decode = max_decode, .inc = st};
    struct trace_verdict_opts os = {.max_decode = max_decode};
    struct trace_verdict *a = trace_verdict_new(m, &oi), *b = trace_verdict_new(m, &os);
    size_t idx = SIZE_MAX;
    FEQ(a->nlaunches, b->nlaunches);
    item_eq(a, &a->run, b, &b->run, step, idx);
    for (idx = 0; idx < a->nlaunches; idx++)
        item_eq(a, &a->launches[idx], b, &b->launches[idx], step, idx);
    if (step % 2) /* (its longest path's room handed back for the next, as the TUI does) */
        trace_verdict_inc_recycle(st, a);
    trace_verdict_free(a);
    trace_verdict_free(b);
    return trace_verdict_inc_reused(st);
}

/* The chip's clock and peaks, so that the verdict has a roofline and fixed costs. */
static void config(struct trace_model *m)
{
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1.0);
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    sim_value_map_set_take(mem, "hbm", sim_value_map());
    sim_value_map_set_float((struct sim_value *)sim_value_map_get(mem, "hbm"), "gbps", 64);
    struct sim_value *pe = sim_value_map_set_take(cfg, "pe", sim_value_map());
    struct sim_value *dma = sim_value_map_set_take(pe, "dma", sim_value_map());
    sim_value_map_set_float(dma, "gbps", 32);
    sim_value_map_set_float(dma, "setup_ns", 5);
    trace_model_set_config_take(m, cfg);
}

/* Bandwidth samples of an HBM, a link and the host link, each window filling up as the run
 * goes (a sample's bytes added to while now is in its window), as a live run records them. */
struct samples {
    uint32_t res[3];
    size_t last[3];
    uint64_t window[3];
    bool any[3];
};

static void sample(struct grow_model *g, struct samples *s)
{
    static const char *const names[3] = {"sip0.cube0.hbm", "sip0.cube0<->sip0.cube1",
                                         "host<->sip0.io_cpu"};
    static const uint64_t width[3] = {200, 300, 500};
    for (int k = 0; k < 3; k++) {
        if (grow_rand(g, 3) == 0)
            continue; /* idle this step */
        s->res[k] = trace_model_intern(g->m, names[k], strlen(names[k]));
        uint64_t w = g->now / width[k] * width[k];
        uint64_t rd = grow_rand(g, 9000), wr = grow_rand(g, 4000);
        if (s->any[k] && s->window[k] == w) {
            trace_model_bw_sample_add(g->m, s->last[k], rd, wr);
            continue;
        }
        s->last[k] =
            trace_model_add_bw_sample(g->m, &(struct trace_bw_sample){.cycle = w,
                                                                      .window = width[k],
                                                                      .read_bytes = rd,
                                                                      .write_bytes = wr,
                                                                      .resource = s->res[k]});
        s->window[k] = w;
        s->any[k] = true;
    }
    trace_model_finish(g->m);
}

static void grow_and_check(uint64_t seed, size_t max_decode, int steps, bool samples)
{
    struct grow_model g;
    grow_new(&g, seed);
    config(g.m);
    struct samples s = {0};
    struct trace_verdict_inc *st = trace_verdict_inc_new();
    size_t reused = 0;
    for (int i = 0; i < steps; i++) {
        grow_step(&g);
        if (samples)
            sample(&g, &s);
        reused += check(st, g.m, max_decode, g.steps);
    }
    cr_assert_gt(reused, (size_t)steps, "the ended launches were kept: %zu items", reused);
    trace_verdict_inc_free(st);
    trace_model_free(g.m);
}

Test(verdict_inc, equals_from_scratch_at_every_step_of_a_growing_model)
{
    grow_and_check(41, 0, 400, true);
}

Test(verdict_inc, equals_from_scratch_without_samples)
{
    grow_and_check(42, 0, 300, false);
}

Test(verdict_inc, equals_from_scratch_when_the_decode_budget_runs_out)
{
    grow_and_check(43, 60, 300, true);
}

Test(verdict_inc, an_op_added_to_an_ended_launch_judges_it_again)
{
    struct grow_model g;
    grow_new(&g, 44);
    config(g.m);
    struct trace_verdict_inc *st = trace_verdict_inc_new();
    for (int i = 0; i < 200; i++)
        grow_step(&g);
    check(st, g.m, 0, g.steps);
    check(st, g.m, 0, g.steps);
    size_t before = trace_verdict_inc_reused(st);
    cr_assert_gt(before, 0);
    struct trace_event ev = {.start = g.now,
                             .end = g.now + 7,
                             .track = g.track[0],
                             .op = trace_model_intern(g.m, "gemm_f16", 8),
                             .cmdq_id = 2};
    trace_model_add_event(g.m, &ev);
    trace_model_finish(g.m);
    check(st, g.m, 0, g.steps); /* launch 2 judged again, and as from scratch */
    cr_assert_lt(trace_verdict_inc_reused(st), before);
    trace_verdict_inc_free(st);
    trace_model_free(g.m);
}

/* A busier sample of an HBM (its busiest rate changed: a live run's samples also merge into
 * wider windows) after the ended launches leaves them kept: with the HBM's peak known, their
 * use of it is what it was. */
Test(verdict_inc, a_new_busiest_sample_after_the_ended_launches_keeps_them)
{
    struct grow_model g;
    grow_new(&g, 47);
    config(g.m);
    struct samples s = {0};
    struct trace_verdict_inc *st = trace_verdict_inc_new();
    for (int i = 0; i < 200; i++) {
        grow_step(&g);
        sample(&g, &s);
    }
    check(st, g.m, 0, g.steps);
    check(st, g.m, 0, g.steps);
    size_t before = trace_verdict_inc_reused(st);
    cr_assert_gt(before, 0);
    uint64_t far = (g.now / 200 + 50) * 200;
    trace_model_add_bw_sample(
        g.m, &(struct trace_bw_sample){
                 .cycle = far, .window = 200, .read_bytes = 1000000, .resource = s.res[0]});
    trace_model_finish(g.m);
    check(st, g.m, 0, g.steps); /* (and as from scratch) */
    cr_assert_eq(trace_verdict_inc_reused(st), before);
    trace_verdict_inc_free(st);
    trace_model_free(g.m);
}

Test(verdict_inc, another_model_starts_over)
{
    struct grow_model a, b;
    grow_new(&a, 45);
    grow_new(&b, 46);
    struct trace_verdict_inc *st = trace_verdict_inc_new();
    for (int i = 0; i < 150; i++) {
        grow_step(&a);
        grow_step(&b);
    }
    check(st, a.m, 0, 1);
    check(st, b.m, 0, 2);
    cr_assert_eq(trace_verdict_inc_reused(st), 0);
    check(st, a.m, 0, 3);
    check(st, a.m, 0, 4);
    cr_assert_gt(trace_verdict_inc_reused(st), 0);
    trace_verdict_inc_free(st);
    trace_model_free(a.m);
    trace_model_free(b.m);
}

Test(verdict_inc, a_kept_launch_whose_decode_budget_changed_is_judged_again)
{
    struct grow_model g;
    grow_new(&g, 47);
    config(g.m);
    for (int i = 0; i < 200; i++)
        grow_step(&g);
    /* a budget that the first four launches' ops (none has op columns) use up exactly */
    struct trace_verdict *v = trace_verdict_new(g.m, NULL);
    cr_assert_gt(v->nlaunches, 6);
    size_t budget = 0;
    for (size_t r = 0; r < 4; r++)
        budget += v->launches[r].region->all.ops;
    int32_t first = v->launches[0].region->cmdq_id;
    trace_verdict_free(v);
    struct trace_verdict_inc *st = trace_verdict_inc_new();
    check(st, g.m, budget, g.steps);
    check(st, g.m, budget, g.steps);
    cr_assert_gt(trace_verdict_inc_reused(st), 4);
    /* an op more in the first launch: the fourth is left without its details now */
    struct trace_event ev = {.start = g.now,
                             .end = g.now + 7,
                             .track = g.track[0],
                             .op = trace_model_intern(g.m, "gemm_f16", 8),
                             .cmdq_id = first};
    trace_model_add_event(g.m, &ev);
    trace_model_finish(g.m);
    check(st, g.m, budget, g.steps);
    trace_verdict_inc_free(st);
    trace_model_free(g.m);
}

/* An op of launch cmdq now on track k of g with the details of a GEMM (k 0) or a DMA read
 * (k 2), which the verdict counts (FLOPs, DMA bytes), ending at once or left in flight. */
static void counted_op(struct grow_model *g, int k, int32_t cmdq)
{
    bool gemm = k == 0;
    const char *op = gemm ? "gemm_f16" : "dma_read";
    struct trace_event ev = {.start = g->now,
                             .end = g->now + 1 + grow_rand(g, 30),
                             .track = g->track[k],
                             .op = trace_model_intern(g->m, op, strlen(op)),
                             .cmdq_id = cmdq,
                             .op_kind = gemm ? TRACE_KIND_GEMM : TRACE_KIND_MEMORY,
                             .flags = grow_rand(g, 3) ? 0 : TRACE_EV_INFLIGHT};
    if (ev.flags)
        ev.end = ev.start;
    uint64_t i = trace_model_add_event(g->m, &ev);
    struct sim_value *d = sim_value_map();
    if (gemm) {
        int64_t sq[2] = {8, 8};
        sim_value_map_set_int(d, "src_a_addr", 0);
        sim_value_map_set_int(d, "src_b_addr", 256);
        sim_value_map_set_int(d, "dst_addr", 512);
        sim_value_map_set_take(d, "shape_a", sim_value_int_list(sq, 2));
        sim_value_map_set_take(d, "shape_b", sim_value_int_list(sq, 2));
        sim_value_map_set_take(d, "shape_out", sim_value_int_list(sq, 2));
        sim_value_map_set_str(d, "dtype_in", grow_rand(g, 2) ? "f16" : "f32");
        sim_value_map_set_str(d, "dtype_out", "f32");
        sim_value_map_set_int(d, "m", 8 + (int64_t)grow_rand(g, 9));
        sim_value_map_set_int(d, "k", 8);
        sim_value_map_set_int(d, "n", 8);
        sim_value_map_set_str(d, "src_a_space", "tcm");
        sim_value_map_set_str(d, "src_b_space", "tcm");
        sim_value_map_set_str(d, "dst_space", "tcm");
    } else {
        sim_value_map_set_int(d, "src_addr", (int64_t)grow_rand(g, 8) * 256);
        sim_value_map_set_int(d, "nbytes", 64 + (int64_t)grow_rand(g, 4000));
        sim_value_map_set_str(d, "handle_id", "h");
        struct sim_value *r = sim_value_map_set_take(d, "replay", sim_value_map());
        sim_value_map_set_str(r, "src_space", "hbm");
        sim_value_map_set_str(r, "dst_space", "tcm");
        sim_value_map_set_int(r, "dst_addr", (int64_t)grow_rand(g, 4) * 256);
    }
    trace_model_set_details_take(g->m, i, d);
    if (ev.flags && g->nopen < GROW_OPEN)
        g->open[g->nopen++] = i;
    else if (ev.flags)
        trace_model_end_event(g->m, i, g->now + 1);
}

/* A live decode is one launch that runs as long as the run: each verdict takes its path and
 * arithmetic on from the ops added since the last (computed from its first op only when an
 * op comes late), and its path's time from the sums kept every `every` steps (0: the
 * default) that the new path and the samples still agree with; it equals the verdict from
 * scratch at every step. */
static void one_launch(uint64_t seed, int chunk, size_t every)
{
    struct grow_model g;
    grow_new(&g, seed);
    config(g.m);
    struct samples s = {0};
    struct trace_verdict_inc *st = trace_verdict_inc_new();
    trace_verdict_inc_set_path_every(st, every);
    int checks = 0;
    size_t reused = 0;
    for (int i = 0; i < 400; i++) {
        grow_step(&g);
        g.cmdq = 3; /* one launch */
        for (int k = (int)grow_rand(&g, 3); k > 0; k--)
            counted_op(&g, grow_rand(&g, 2) ? 0 : 2, 3);
        trace_model_finish(g.m);
        sample(&g, &s);
        if (i % chunk == 0) {
            check(st, g.m, 0, g.steps), checks++;
            reused += trace_verdict_inc_path_reused(st);
        }
        if (i == 200) { /* dropped (the memory budget): judged from its first op, then on */
            cr_assert_gt(trace_verdict_inc_bytes(st), 0);
            trace_verdict_inc_trim(st);
        }
    }
    struct trace_verdict *v = trace_verdict_new(g.m, NULL);
    cr_assert_gt(v->run.flops, 0, "GEMMs counted");
    cr_assert_gt(v->run.dma_bytes, 0, "DMA reads counted");
    trace_verdict_free(v);
    size_t starts = trace_verdict_inc_path_starts(st);
    cr_assert_gt(starts, 0);
    cr_assert_lt(starts, (size_t)checks / 2, "%zu paths from the first op in %d verdicts", starts,
                 checks);
    if (every) /* (the default is more steps than these paths have) */
        cr_assert_gt(reused, (size_t)checks, "the path's time taken on: %zu steps in %d verdicts",
                     reused, checks);
    trace_verdict_inc_free(st);
    trace_model_free(g.m);
}

Test(verdict_inc, a_running_launch_is_taken_on_from_its_new_ops)
{
    one_launch(48, 1, 0);
    one_launch(49, 7, 0);
    one_launch(50, 1, 1);
    one_launch(51, 1, 3);
    one_launch(52, 5, 16);
}
