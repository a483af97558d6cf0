/* Comparing two traces (trace/diff/diff.h): matching of launches, regions, tracks and ops, the
 * main change, config differences, alignment, loading a trace to compare. */
#include "sim/data/value.h"
#include "trace/diff/diff.h"
#include "trace/file/loader.h"
#include "trace/model/model.h"

#include "test_diff_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/traces/"

static struct trace_model *load_file(const char *path)
{
    struct trace_model *m = NULL;
    cr_assert_eq(trace_load_file(path, NULL, &m, NULL), 0, "%s", path);
    return m;
}

Test(diff, identical_traces_have_no_changes)
{
    struct trace_model *a = kernel_trace("vadd", 3, 1000, 100, "64");
    struct trace_model *b = kernel_trace("vadd", 3, 1000, 100, "64");
    struct trace_diff *d = trace_diff_new(a, b, NULL);
    cr_assert_eq(d->changes, 0);
    cr_assert_eq(d->main_engine, -1);
    cr_assert_eq(d->nconfig, 0);
    cr_assert_eq(d->cycles_a, d->cycles_b);
    cr_assert_eq(d->match, TRACE_REGION_LAUNCH);
    cr_assert_null(d->note);
    cr_assert_eq(d->nlaunches, 1);
    cr_assert_eq(d->launches[0].status, TRACE_DIFF_MATCHED);
    cr_assert_eq(d->run.ops_added + d->run.ops_removed, 0);
    for (uint64_t i = 0; i < trace_model_event_count(a); i++) {
        uint64_t j = trace_diff_match_event(d, 0, i);
        cr_assert_neq(j, TRACE_DIFF_NONE);
        cr_assert_eq(trace_model_event(a, i)->op, trace_model_event(b, j)->op);
        cr_assert_eq(trace_diff_match_event(d, 1, j), i);
    }
    cr_assert_eq(trace_diff_align(d, 1234), 1234);
    trace_diff_free(d);
    trace_model_free(a);
    trace_model_free(b);
}

Test(diff, slower_dma_is_the_main_change_with_its_sign_and_size)
{
    struct trace_model *a = kernel_trace("vadd", 3, 1000, 100, "64");
    struct trace_model *b = kernel_trace("vadd", 3, 1000, 200, "32");
    struct trace_diff *d = trace_diff_new(a, b, NULL);
    cr_assert_eq(d->main_engine, TRACE_ENGINE_DMA);
    const struct trace_diff_item *dma = &d->run.engines[TRACE_ENGINE_DMA];
    cr_assert_eq(dma->a.busy, 200);
    cr_assert_eq(dma->b.busy, 400);
    cr_assert_eq(d->run.engines[TRACE_ENGINE_VE].a.busy, d->run.engines[TRACE_ENGINE_VE].b.busy);
    cr_assert_eq(d->cycles_b - d->cycles_a, 200);
    cr_assert_eq(d->nconfig, 1);
    cr_assert_str_eq(d->config[0].key, "pe.dma.gbps");
    cr_assert_eq(d->config[0].a->u.i, 64);
    cr_assert_eq(d->config[0].b->u.i, 32);
    /* the component and the op names say the same, largest change first */
    cr_assert_str_eq(d->run.tracks[0].name, "sip0.cube0.pe0.pe_dma");
    cr_assert_eq(d->run.tracks[0].b.busy - d->run.tracks[0].a.busy, 200);
    cr_assert(strcmp(d->run.ops[0].name, "dma_read") == 0 ||
              strcmp(d->run.ops[0].name, "dma_write") == 0);
    cr_assert_eq(d->run.ops[2].a.op_cycles, d->run.ops[2].b.op_cycles, "add did not change");
    cr_assert_eq(trace_region_length(d->launches[0].b) - trace_region_length(d->launches[0].a),
                 200);
    cr_assert(d->changes > 0);
    cr_assert_float_eq(trace_diff_rel(200, 400), 1.0, 1e-12);
    trace_diff_free(d);
    trace_model_free(a);
    trace_model_free(b);
}

Test(diff, launches_match_by_kernel_name_and_order_not_by_cmdq)
{
    /* B ran one more host message first: the same kernel is cmdq 4, and later */
    struct trace_model *a = kernel_trace("vadd", 3, 1000, 100, "64");
    struct trace_model *b = kernel_trace("vadd", 4, 5000, 100, "64");
    struct trace_diff *d = trace_diff_new(a, b, NULL);
    cr_assert_eq(d->nlaunches, 1);
    cr_assert_eq(d->launches[0].status, TRACE_DIFF_MATCHED);
    cr_assert_str_eq(d->launches[0].name, "vadd");
    cr_assert_eq(d->launches[0].a->cmdq_id, 3);
    cr_assert_eq(d->launches[0].b->cmdq_id, 4);
    cr_assert_eq(d->run.ops_added + d->run.ops_removed, 0);
    cr_assert_eq(d->match, TRACE_REGION_LAUNCH);
    /* aligned at the launch's start: A's cycle 1010 is B's 5010; before it, itself */
    cr_assert_eq(trace_diff_align(d, 1010), 5010);
    cr_assert_eq(trace_diff_align(d, 10), 10);
    trace_diff_free(d);
    trace_model_free(a);
    trace_model_free(b);
}

Test(diff, traces_with_nothing_in_common_are_compared_whole_with_a_note)
{
    struct trace_model *a = kernel_trace("vadd", 3, 1000, 100, "64");
    struct trace_model *b = kernel_trace("softmax", 3, 1000, 100, "64");
    struct trace_diff *d = trace_diff_new(a, b, NULL);
    cr_assert_eq(d->match, TRACE_REGION_RUN);
    cr_assert_not_null(d->note);
    cr_assert_eq(d->nlaunches, 2);
    cr_assert_eq(d->launches[0].status, TRACE_DIFF_REMOVED);
    cr_assert_eq(d->launches[1].status, TRACE_DIFF_ADDED);
    cr_assert_eq(d->run.ops_added + d->run.ops_removed, 0, "ops still match in the runs");
    trace_diff_free(d);
    trace_model_free(a);
    trace_model_free(b);

    a = load_file(DATA "spec_example.json");
    b = kernel_trace("vadd", 3, 1000, 100, "64");
    d = trace_diff_new(a, b, NULL);
    cr_assert_eq(d->match, TRACE_REGION_RUN);
    cr_assert_not_null(d->note);
    trace_diff_free(d);
    trace_model_free(a);
    trace_model_free(b);
}

static const struct trace_diff_item *item(const struct trace_diff_item *v, size_t n,
                                          const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    cr_assert_fail("no item %s", name);
    return NULL;
}

static const struct trace_diff_region *region(const struct trace_diff_region *v, size_t n,
                                              const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    cr_assert_fail("no region %s", name);
    return NULL;
}

Test(diff, added_and_removed_ops_launches_components_and_op_names)
{
    struct trace_model *a = load_file(DATA "diff_base.json");
    struct trace_model *b = load_file(DATA "diff_ops.json");
    struct trace_diff *d = trace_diff_new(a, b, NULL);
    cr_assert_eq(d->match, TRACE_REGION_LAUNCH);
    cr_assert_eq(d->run.ops_removed, 1, "DMA_STORE_TILE");
    cr_assert_eq(d->run.ops_added, 1, "VE_SOFTMAX_TILE");
    cr_assert_eq(region(d->launches, d->nlaunches, "cmdq 3")->status, TRACE_DIFF_REMOVED);
    cr_assert_eq(region(d->launches, d->nlaunches, "cmdq 5")->status, TRACE_DIFF_ADDED);
    const struct trace_diff_region *g = region(d->launches, d->nlaunches, "cmdq 1");
    cr_assert_eq(g->status, TRACE_DIFF_MATCHED);
    cr_assert_eq(trace_region_length(g->b) - trace_region_length(g->a), 100);
    cr_assert_eq(item(d->run.ops, d->run.nops, "DMA_STORE_TILE")->status, TRACE_DIFF_REMOVED);
    cr_assert_eq(item(d->run.ops, d->run.nops, "VE_SOFTMAX_TILE")->status, TRACE_DIFF_ADDED);
    cr_assert_eq(item(d->run.ops, d->run.nops, "TE_GEMM_TILE")->b.op_cycles, 500);
    cr_assert_eq(item(d->run.tracks, d->run.ntracks, "VE 1")->status, TRACE_DIFF_ADDED);
    cr_assert_eq(item(d->run.tracks, d->run.ntracks, "DMA 0")->b.ops, 1);
    cr_assert_eq(d->run.engines[TRACE_ENGINE_VE].b.ops, 2);
    /* the marker regions see the same ops come and go */
    cr_assert_eq(region(d->markers, d->nmarkers, "FFN")->ops_removed, 1);
    cr_assert_eq(region(d->markers, d->nmarkers, "ATTN")->ops_added, 1);
    cr_assert_eq(d->nconfig, 1);
    cr_assert_str_eq(d->config[0].key, "npu.num_ve");
    cr_assert_eq(d->bw_a.write, 1024);
    cr_assert_eq(d->bw_b.write, 0);
    /* the removed op has no match; the longer GEMM has one */
    for (uint64_t i = 0; i < trace_model_event_count(a); i++) {
        const char *op = trace_model_str(a, trace_model_event(a, i)->op);
        uint64_t j = trace_diff_match_event(d, 0, i);
        if (strcmp(op, "DMA_STORE_TILE") == 0)
            cr_assert_eq(j, TRACE_DIFF_NONE);
        else
            cr_assert_str_eq(trace_model_str(b, trace_model_event(b, j)->op), op);
    }
    trace_diff_free(d);
    trace_model_free(a);
    trace_model_free(b);
}

Test(diff, config_keys_nested_listed_and_missing)
{
    struct trace_model *a = load_text(
        "{\"version\":\"1.0\",\"config_snapshot\":{\"x\":{\"y\":[1,{\"z\":2}]},\"gone\":true,"
        "\"s\":\"p\",\"same\":1.5},\"timeline_events\":[]}");
    struct trace_model *b = load_text(
        "{\"version\":\"1.0\",\"config_snapshot\":{\"x\":{\"y\":[1,{\"z\":3}]},\"new\":null,"
        "\"s\":\"q\",\"same\":1.5},\"timeline_events\":[]}");
    struct trace_diff *d = trace_diff_new(a, b, NULL);
    cr_assert_eq(d->nconfig, 4);
    cr_assert_str_eq(d->config[0].key, "gone");
    cr_assert_null(d->config[0].b);
    cr_assert_str_eq(d->config[1].key, "new");
    cr_assert_null(d->config[1].a);
    cr_assert_str_eq(d->config[2].key, "s");
    cr_assert_str_eq(d->config[3].key, "x.y[1].z");
    char buf[64];
    cr_assert_str_eq(trace_diff_value_text(d->config[2].b, buf, sizeof(buf)), "\"q\"");
    cr_assert_str_eq(trace_diff_value_text(NULL, buf, sizeof(buf)), "(missing)");
    cr_assert_eq(d->match, TRACE_REGION_RUN);
    cr_assert_eq(d->main_engine, -1);
    trace_diff_free(d);
    trace_diff_free(NULL);
    trace_model_free(a);
    trace_model_free(b);
}

Test(diff, an_empty_config_snapshot_has_no_keys)
{
    struct trace_model *a =
        load_text("{\"version\":\"1.0\",\"config_snapshot\":{},\"timeline_events\":[]}");
    struct trace_model *b =
        load_text("{\"version\":\"1.0\",\"config_snapshot\":{\"k\":{}},\"timeline_events\":[]}");
    struct trace_diff *d = trace_diff_new(a, b, NULL);
    cr_assert_eq(d->nconfig, 1);
    cr_assert_str_eq(d->config[0].key, "k", "an empty map inside is a value");
    trace_diff_free(d);
    trace_model_free(a);
    trace_model_free(b);
}

/* Without the op pairs (npuscope diff's report), every count is the same: ops added and
 * removed in the run, in each launch and in each marker region, and the changes. */
Test(diff, counts_without_the_op_pairs_are_the_same)
{
    static const char *const pairs[][2] = {{DATA "diff_base.json", DATA "diff_ops.json"},
                                           {DATA "diff_ops.json", DATA "diff_base.json"},
                                           {DATA "srcdiff_a.json", DATA "srcdiff_b.json"},
                                           {DATA "views.json", DATA "spec_example.json"}};
    for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
        struct trace_model *a = load_file(pairs[k][0]);
        struct trace_model *b = load_file(pairs[k][1]);
        struct trace_diff_opts o = {.no_pairs = true};
        struct trace_diff *d = trace_diff_new(a, b, NULL), *e = trace_diff_new(a, b, &o);
        cr_assert_eq(e->changes, d->changes, "%s", pairs[k][0]);
        cr_assert_eq(e->match, d->match);
        cr_assert_eq(e->run.ops_added, d->run.ops_added, "%s", pairs[k][0]);
        cr_assert_eq(e->run.ops_removed, d->run.ops_removed, "%s", pairs[k][0]);
        cr_assert_eq(e->nlaunches, d->nlaunches);
        for (size_t i = 0; i < d->nlaunches; i++) {
            cr_assert_eq(e->launches[i].ops_added, d->launches[i].ops_added);
            cr_assert_eq(e->launches[i].ops_removed, d->launches[i].ops_removed);
        }
        cr_assert_eq(e->nmarkers, d->nmarkers);
        for (size_t i = 0; i < d->nmarkers; i++) {
            cr_assert_eq(e->markers[i].ops_added, d->markers[i].ops_added);
            cr_assert_eq(e->markers[i].ops_removed, d->markers[i].ops_removed);
        }
        /* and the same usage of every op name, component and engine kind of the run */
        cr_assert_eq(e->run.nops, d->run.nops);
        for (size_t i = 0; i < d->run.nops; i++) {
            cr_assert_str_eq(e->run.ops[i].name, d->run.ops[i].name);
            cr_assert_eq(e->run.ops[i].a.ops, d->run.ops[i].a.ops);
            cr_assert_eq(e->run.ops[i].b.op_cycles, d->run.ops[i].b.op_cycles);
        }
        cr_assert_eq(e->run.ntracks, d->run.ntracks);
        for (size_t i = 0; i < d->run.ntracks; i++) {
            cr_assert_str_eq(e->run.tracks[i].name, d->run.tracks[i].name);
            cr_assert_eq(e->run.tracks[i].a.busy, d->run.tracks[i].a.busy);
            cr_assert_eq(e->run.tracks[i].b.busy, d->run.tracks[i].b.busy);
        }
        for (int i = 0; i < TRACE_ENGINE_COUNT; i++)
            cr_assert_eq(e->run.engines[i].b.busy, d->run.engines[i].b.busy);
        if (trace_model_event_count(a))
            cr_assert_eq(trace_diff_match_event(e, 0, 0), TRACE_DIFF_NONE, "no pairs kept");
        if (k == 0) /* the fixture has ops added and removed */
            cr_assert_eq(e->run.ops_added + e->run.ops_removed, 2);
        trace_diff_free(e);
        trace_diff_free(d);
        trace_model_free(a);
        trace_model_free(b);
    }
}
