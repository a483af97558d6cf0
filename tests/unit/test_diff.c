/* Comparing two traces (trace/diff.h) and the --fail-if conditions (trace/diffcond.h):
 * matching of launches, regions, tracks and ops, the main change, config differences,
 * alignment, and a parser that takes any bytes. */
#include "sim/data/value.h"
#include "trace/diff.h"
#include "trace/diffcond.h"
#include "trace/loader.h"
#include "trace/model.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/traces/"

static struct trace_model *load_text(const char *text)
{
    struct trace_model *m = NULL;
    struct trace_report *r = trace_report_new(4);
    int rc = trace_load_buffer(text, strlen(text), "t.json", r, &m, NULL);
    cr_assert_eq(rc, 0);
    cr_assert_eq(trace_report_errors(r), 0, "%s",
                 trace_report_count(r) ? trace_report_get(r, 0)->msg : "");
    trace_report_free(r);
    return m;
}

static struct trace_model *load_file(const char *path)
{
    struct trace_model *m = NULL;
    cr_assert_eq(trace_load_file(path, NULL, &m, NULL), 0, "%s", path);
    return m;
}

/* A trace of npuscope's shape: one kernel launch (cmdq) with a DMA read of dma cycles, an
 * add, a DMA write of dma cycles; begin and end markers naming the kernel. */
static struct trace_model *kernel_trace(const char *kernel, int cmdq, uint64_t at, uint64_t dma,
                                        const char *gbps)
{
    char buf[4096];
    uint64_t r0 = at, r1 = at + dma, a1 = r1 + 50, w1 = a1 + dma;
    snprintf(buf, sizeof(buf),
             "{\"version\":\"1.0\",\"run_metadata\":{},"
             "\"config_snapshot\":{\"clock_ghz\":1.0,\"pe\":{\"dma\":{\"gbps\":%s,\"channels\":2}},"
             "\"list\":[1,2]},"
             "\"timeline_events\":["
             "{\"type\":\"ENGINE_EVENT\",\"engine\":\"DMA\",\"engine_id\":0,\"cmdq_id\":%d,"
             "\"op\":\"dma_read\",\"start_cycle\":%llu,\"end_cycle\":%llu,"
             "\"component_id\":\"sip0.cube0.pe0.pe_dma\",\"details\":{\"nbytes\":4096}},"
             "{\"type\":\"ENGINE_EVENT\",\"engine\":\"VE\",\"engine_id\":0,\"cmdq_id\":%d,"
             "\"op\":\"add\",\"start_cycle\":%llu,\"end_cycle\":%llu,"
             "\"component_id\":\"sip0.cube0.pe0.pe_math\"},"
             "{\"type\":\"ENGINE_EVENT\",\"engine\":\"DMA\",\"engine_id\":0,\"cmdq_id\":%d,"
             "\"op\":\"dma_write\",\"start_cycle\":%llu,\"end_cycle\":%llu,"
             "\"component_id\":\"sip0.cube0.pe0.pe_dma\",\"details\":{\"nbytes\":4096}},"
             "{\"type\":\"MARKER_EVENT\",\"name\":\"%s.begin\",\"cycle\":%llu,"
             "\"details\":{\"kernel\":\"%s\",\"cmdq_id\":%d}},"
             "{\"type\":\"MARKER_EVENT\",\"name\":\"%s.end\",\"cycle\":%llu,"
             "\"details\":{\"kernel\":\"%s\",\"cmdq_id\":%d}}],"
             "\"bandwidth_samples\":[],\"summary_metrics\":{}}",
             gbps, cmdq, (unsigned long long)r0, (unsigned long long)r1, cmdq,
             (unsigned long long)r1, (unsigned long long)a1, cmdq, (unsigned long long)a1,
             (unsigned long long)w1, kernel, (unsigned long long)r0, kernel, cmdq, kernel,
             (unsigned long long)w1, kernel, cmdq);
    return load_text(buf);
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

/* ---- conditions ------------------------------------------------------------------------ */

static struct trace_diffcond parse1(const char *s)
{
    struct trace_diffcond *v = NULL;
    size_t n = 0;
    struct diag d;
    cr_assert_eq(trace_diffcond_parse(s, &v, &n, &d), 0, "%s: %s", s, d.msg);
    cr_assert_eq(n, 1);
    struct trace_diffcond c = v[0];
    free(v);
    return c;
}

Test(diffcond, every_form_of_value)
{
    struct trace_diffcond c = parse1("cycles>+5%");
    cr_assert_eq(c.metric, TRACE_DIFFCOND_CYCLES);
    cr_assert_eq(c.cmp, TRACE_DIFFCOND_GT);
    cr_assert_eq(c.unit, TRACE_DIFFCOND_PERCENT);
    cr_assert_float_eq(c.threshold, 5, 1e-12);
    c = parse1("  te.busy <  -10.5%  ");
    cr_assert_eq(c.metric, TRACE_DIFFCOND_BUSY);
    cr_assert_eq(c.engine, TRACE_ENGINE_TE);
    cr_assert_eq(c.cmp, TRACE_DIFFCOND_LT);
    cr_assert_float_eq(c.threshold, -10.5, 1e-12);
    cr_assert_str_eq(c.text, "te.busy <  -10.5%");
    c = parse1("cycles>=1.05x");
    cr_assert_eq(c.cmp, TRACE_DIFFCOND_GE);
    cr_assert_eq(c.unit, TRACE_DIFFCOND_RATIO);
    cr_assert_float_eq(c.threshold, 1.05, 1e-12);
    c = parse1("DMA.Util<=+0.05");
    cr_assert_eq(c.metric, TRACE_DIFFCOND_UTIL);
    cr_assert_eq(c.engine, TRACE_ENGINE_DMA);
    cr_assert_eq(c.cmp, TRACE_DIFFCOND_LE);
    cr_assert_eq(c.unit, TRACE_DIFFCOND_DELTA);
    c = parse1("ops.added>0");
    cr_assert_eq(c.metric, TRACE_DIFFCOND_OPS_ADDED);
    cr_assert_eq(c.unit, TRACE_DIFFCOND_VALUE);
    c = parse1("bw.peak>.5");
    cr_assert_float_eq(c.threshold, 0.5, 1e-12);
    char name[32];
    c = parse1("ve.ops<3");
    cr_assert_str_eq(trace_diffcond_metric_name(&c, name, sizeof(name)), "ve.ops");
}

Test(diffcond, comma_separated_lists_append)
{
    struct trace_diffcond *v = NULL;
    size_t n = 0;
    struct diag d;
    cr_assert_eq(trace_diffcond_parse("cycles>+5%, te.busy<-10%", &v, &n, &d), 0);
    cr_assert_eq(trace_diffcond_parse("dram.bytes>1000", &v, &n, &d), 0);
    cr_assert_eq(n, 3);
    cr_assert_eq(v[1].metric, TRACE_DIFFCOND_BUSY);
    cr_assert_eq(v[2].metric, TRACE_DIFFCOND_DRAM_BYTES);
    /* a bad one anywhere in a list appends nothing of it */
    cr_assert_lt(trace_diffcond_parse("ops<1,cyc>2", &v, &n, &d), 0);
    cr_assert_eq(n, 3);
    free(v);
}

Test(diffcond, bad_conditions_say_why_in_one_line)
{
    static const char *const bad[] = {
        "",
        ",",
        "cycles>5%,",
        "cyc>5",
        "cycles",
        "cycles=5",
        "cycles==5",
        "cycles>",
        "cycles>+",
        "cycles>5%%",
        "cycles>-1.05x",
        "cycles>1e5",
        "cycles>inf",
        "cycles>nan",
        "cycles>5 %",
        "cycles>1.2.3",
        "cycles>-",
        "dma.speed>1",
        "gpu.busy>1",
        ">5",
        "cycles<>5",
        "cycles>1234567890123456",
        "cycles>\x1b[31m",
        "\xff\xfe>1",
        "cycles>5x5",
        "cycles>5%x",
        "a.b.c.d>1",
        "te.busy.x>1",
        "cycles>+5%\n",
        "cycles>0000000000000000000000000000000000000000000000000000000000000000000000000000000001",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct trace_diffcond *v = NULL;
        size_t n = 0;
        struct diag d;
        diag_clear(&d);
        cr_assert_eq(trace_diffcond_parse(bad[i], &v, &n, &d), -SIM_EINVAL, "'%s' parsed", bad[i]);
        cr_assert_eq(n, 0);
        cr_assert(d.msg[0], "no message for '%s'", bad[i]);
        char line[2048];
        cr_assert_null(strchr(diag_format(&d, line, sizeof(line)), '\n'), "%s", line);
        cr_assert_null(strchr(line, '\x1b'), "%s", line);
        free(v);
    }
}

Test(diffcond, any_bytes_parse_or_fail_cleanly)
{
    static const char alphabet[] = "cyclesdmatebusyutilops.+-%x><=,0123456789 \t\x01\x80\xff";
    unsigned seed = 12345;
    for (int k = 0; k < 20000; k++) {
        char s[40];
        size_t len = (size_t)(k % 39);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
        }
        s[len] = '\0';
        struct trace_diffcond *v = NULL;
        size_t n = 0;
        struct diag d;
        int rc = trace_diffcond_parse(s, &v, &n, &d);
        cr_assert(rc == 0 ? n >= 1 : n == 0);
        for (size_t i = 0; i < n; i++)
            cr_assert(isfinite(v[i].threshold));
        free(v);
    }
}

Test(diffcond, evaluation_of_each_unit_and_of_zero)
{
    struct trace_model *a = kernel_trace("vadd", 3, 1000, 100, "64");
    struct trace_model *b = kernel_trace("vadd", 3, 1000, 200, "32");
    struct trace_diff *d = trace_diff_new(a, b, NULL);
    struct trace_diffcond_result r;
    cr_assert(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_BUSY,
                                                           .engine = TRACE_ENGINE_DMA,
                                                           .unit = TRACE_DIFFCOND_PERCENT,
                                                           .threshold = 99.9},
                                  d, &r));
    cr_assert_float_eq(r.value, 100, 1e-9);
    cr_assert_not(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_BUSY,
                                                               .engine = TRACE_ENGINE_DMA,
                                                               .unit = TRACE_DIFFCOND_RATIO,
                                                               .threshold = 2},
                                      d, &r),
                  "2x is not > 2x");
    cr_assert(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_CYCLES,
                                                           .cmp = TRACE_DIFFCOND_GE,
                                                           .unit = TRACE_DIFFCOND_DELTA,
                                                           .threshold = 200},
                                  d, &r));
    cr_assert(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_UTIL,
                                                           .engine = TRACE_ENGINE_VE,
                                                           .cmp = TRACE_DIFFCOND_LT,
                                                           .unit = TRACE_DIFFCOND_DELTA,
                                                           .threshold = 0},
                                  d, &r),
              "the same VE time over a longer run");
    /* from nothing to something: +infinity percent; from nothing to nothing: 0, ratio 1 */
    cr_assert(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_BUSY,
                                                           .engine = TRACE_ENGINE_TE,
                                                           .cmp = TRACE_DIFFCOND_LE,
                                                           .unit = TRACE_DIFFCOND_PERCENT},
                                  d, &r));
    cr_assert_float_eq(r.value, 0, 1e-12);
    trace_diffcond_eval(
        &(struct trace_diffcond){.metric = TRACE_DIFFCOND_OPS_ADDED, .unit = TRACE_DIFFCOND_RATIO},
        d, &r);
    cr_assert_float_eq(r.value, 1, 1e-12);
    cr_assert_not(trace_diffcond_eval(
        &(struct trace_diffcond){.metric = TRACE_DIFFCOND_OPS_ADDED, .unit = TRACE_DIFFCOND_VALUE},
        d, &r));
    cr_assert(isinf(trace_diff_rel(0, 5)));
    cr_assert_float_eq(trace_diff_rel(0, 0), 0, 1e-12);
    trace_diff_free(d);
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
