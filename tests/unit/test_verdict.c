/*
 * The bottleneck verdict (trace/verdict/verdict.h) on workloads whose bottleneck is known by
 * construction, run on the default chip with the live feed: GEMMs on data in TCM are
 * compute-bound, a large vector add is bound by DMA / HBM bandwidth, a chain of tiny
 * dependent ops by dependency latency, big MemoryWrites from host buffers by the host
 * link. A trace from another producer gets a verdict from what it has and says what it
 * lacks.
 */
#include "sim/chip/chip.h"
#include "sim/host/host.h"
#include "sim/host/run.h"
#include "sim/kernel/kernel.h"
#include "sim/kernel/tl.h"
#include "sim/program/workload.h"
#include "trace/live/live.h"
#include "trace/file/loader.h"
#include "trace/analysis/resources.h"
#include "trace/verdict/verdict.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- running a program -------------------------------------------------------------------- */

struct ran {
    struct sim_config *cfg;
    struct sim_workload *wl;
    struct sim_chip *chip;
    struct trace_live *live;
    struct trace_verdict *v;
};

static void run_program(struct ran *r, const char *program, const struct sim_kernel *k)
{
    struct diag d;
    cr_assert_eq(sim_config_load_embedded(SIM_CONFIG_DEFAULT, &r->cfg, &d), 0, "%s", d.msg);
    cr_assert_eq(sim_workload_load(program, strlen(program), "w.yaml", &r->wl, &d), 0, "%s: %s",
                 d.path, d.msg);
    r->chip = sim_chip_new(r->cfg, 0);
    struct sim_host *host = sim_host_start(r->chip, r->wl, NULL);
    if (k)
        sim_host_add_kernel(host, k);
    struct trace_live_opts o = {.prefill_tokens = -1, .decode_tokens = -1};
    cr_assert_eq(trace_live_new(r->chip, &o, &r->live, &d), 0, "%s", d.msg);
    sim_engine_run(sim_chip_engine(r->chip), SIM_RUN_END, 0);
    cr_assert(sim_host_done(host));
    for (size_t i = 0; i < sim_host_result_count(host); i++)
        cr_assert(sim_host_result(host, i)->resp.completion.ok, "request %zu: %s", i,
                  sim_host_result(host, i)->resp.completion.error_message);
    trace_live_sync(r->live);
    r->v = trace_verdict_new(trace_live_model(r->live), NULL);
}

static void ran_free(struct ran *r)
{
    trace_verdict_free(r->v);
    trace_live_free(r->live);
    sim_chip_free(r->chip);
    sim_workload_free(r->wl);
    sim_config_free(r->cfg);
}

/* The launch of kernel name. */
static const struct trace_verdict_item *launch(const struct trace_verdict *v, const char *name)
{
    for (size_t i = 0; i < v->nlaunches; i++)
        if (strcmp(v->launches[i].region->name, name) == 0)
            return &v->launches[i];
    cr_assert_fail("no launch named %s", name);
    return NULL;
}

static void show(const struct trace_verdict *v, const struct trace_verdict_item *it)
{
    char lines[12][TRACE_VERDICT_LINE];
    size_t n = trace_verdict_evidence(v, it, lines, 12);
    for (size_t i = 0; i < n; i++)
        cr_log_info("%s", lines[i]);
}

#define LAUNCH(name, args)                                                                         \
    "- msg_type: KernelLaunch\n  correlation_id: c\n  request_id: k\n"                             \
    "  target_device: \"sip:0\"\n"                                                                 \
    "  kernel_ref: {name: " name ", kind: builtin, deploy_sip: 0, deploy_cube: 0,\n"               \
    "               deploy_pe: 0, nbytes_code: 0}\n"                                               \
    "  args: [" args "]\n"

#define TENSOR(pa, nbytes, dtype)                                                                  \
    "{arg_kind: tensor, dtype: " #dtype ", tensor_pa_map: {shards: [{sip: 0, cube: 0, pe: 0, "     \
    "pa: " #pa ", nbytes: " #nbytes ", offset_bytes: 0}]}}"

/* ---- compute: GEMMs on data in TCM ------------------------------------------------------ */

static void gemm_tcm(struct tl *tl, const struct kargs *a)
{
    int64_t sq[2] = {128, 128};
    struct tl_tensor *x = tl_reshape(tl, tl_arg(tl, a, 0), 2, sq); /* f16 */
    struct tl_tensor *y = tl_reshape(tl, tl_arg(tl, a, 1), 2, sq);
    struct tl_tensor *ta = tl_load(tl, x), *tb = tl_load(tl, y);
    for (int i = 0; i < 40; i++) {
        uint64_t mark = tl_tcm_mark(tl);
        tl_dot(tl, ta, tb);
        tl_tcm_release(tl, mark);
    }
}

static const struct sim_kernel gemm_tcm_def = {.name = "gemm_tcm", .fn = gemm_tcm};

Test(verdict, gemms_on_data_in_tcm_are_compute_bound)
{
    static const char program[] =
        "messages:\n"
        "- {msg_type: MemoryWrite, correlation_id: c, request_id: a, target_device: \"sip:0\",\n"
        "   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 32768, dst_mem_kind: HBM,\n"
        "   src_kind: pattern, pattern: {pattern_kind: fill_fp16, value: 0.5}, dtype: f16}\n"
        "- {msg_type: MemoryWrite, correlation_id: c, request_id: b, target_device: \"sip:0\",\n"
        "   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 32768, nbytes: 32768, dst_mem_kind: HBM,\n"
        "   src_kind: pattern, pattern: {pattern_kind: fill_fp16, value: 0.25}, dtype: f16}\n" LAUNCH(
            "gemm_tcm", TENSOR(0, 32768, f16) ", " TENSOR(32768, 32768, f16));
    struct ran r = {0};
    run_program(&r, program, &gemm_tcm_def);
    const struct trace_verdict_item *it = launch(r.v, "gemm_tcm");
    show(r.v, it);
    cr_assert_eq(it->bound, TRACE_BOUND_COMPUTE, "%s", trace_bound_name(it->bound));
    cr_assert_gt(it->share, 0.5);
    cr_assert_gt(it->busy[TRACE_ENGINE_TE], 0.8);
    /* 40 GEMMs of 128^3 at f16 */
    cr_assert_eq(it->flops, 40 * 2.0 * 128 * 128 * 128);
    cr_assert_eq(it->peak_flops, 2.0 * 1024, "one TE engine, 1024 f16 MACs per cycle");
    cr_assert_gt(it->flops / (double)it->length / it->peak_flops, 0.8, "near the roof");
    cr_assert_eq(r.v->run.bound, TRACE_BOUND_COMPUTE);
    ran_free(&r);
}

/* ---- dependency latency: a chain of tiny dependent ops ------------------------------------ */

static void chain(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_arg(tl, a, 0);
    struct tl_tensor *v = tl_load(tl, x);
    for (int i = 0; i < 200; i++)
        v = tl_neg(tl, v);
    tl_store(tl, x, v);
}

static const struct sim_kernel chain_def = {.name = "chain", .fn = chain};

Test(verdict, a_chain_of_tiny_dependent_ops_is_latency_bound)
{
    static const char program[] =
        "messages:\n"
        "- {msg_type: MemoryWrite, correlation_id: c, request_id: a, target_device: \"sip:0\",\n"
        "   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 64, dst_mem_kind: HBM,\n"
        "   src_kind: pattern, pattern: {pattern_kind: fill_fp32, value: 1}, dtype: f32}\n" LAUNCH(
            "chain", TENSOR(0, 64, f32));
    struct ran r = {0};
    run_program(&r, program, &chain_def);
    const struct trace_verdict_item *it = launch(r.v, "chain");
    show(r.v, it);
    cr_assert_eq(it->bound, TRACE_BOUND_LATENCY, "%s", trace_bound_name(it->bound));
    cr_assert_gt(it->path.n, 200, "the chain is the path");
    /* each neg waited on the one before through the bytes it wrote */
    size_t raw = 0;
    for (size_t s = 0; s < it->path.n; s++)
        raw += it->path.steps[s].why == TRACE_DEP_RAW;
    cr_assert_geq(raw, 200);
    ran_free(&r);
}

/* ---- DMA / HBM bandwidth: a large vector add ------------------------------------------------- */

Test(verdict, a_large_vector_add_is_bound_by_dma_and_hbm)
{
    struct sim_run *run;
    struct diag d;
    struct sim_run_opts ro = {.kernel_spec = "vector_add:n=262144"};
    cr_assert_eq(sim_run_new(&ro, &run, &d), 0, "%s", d.msg);
    sim_run_timing_only(run);
    struct trace_live *l;
    struct trace_live_opts o = {.prefill_tokens = -1, .decode_tokens = -1};
    cr_assert_eq(trace_live_new(sim_run_chip(run), &o, &l, &d), 0, "%s", d.msg);
    sim_run_advance(run, SIM_RUN_END, 0);
    trace_live_sync(l);
    struct trace_verdict *v = trace_verdict_new(trace_live_model(l), NULL);
    const struct trace_verdict_item *it = launch(v, "vector_add");
    show(v, it);
    cr_assert_eq(it->bound, TRACE_BOUND_MEMORY, "%s", trace_bound_name(it->bound));
    cr_assert_gt(it->busy[TRACE_ENGINE_DMA], 0.8);
    cr_assert_eq(it->dram_bytes, 262144 * 4 * 3, "x and y read, out written");
    cr_assert_eq(it->missing, 0, "npuscope's own trace lacks nothing");
    /* -k writes the inputs from host buffers: the run as a whole waits on the host link */
    show(v, &v->run);
    cr_assert_eq(v->run.bound, TRACE_BOUND_HOST, "%s", trace_bound_name(v->run.bound));
    trace_verdict_free(v);
    trace_live_free(l);
    sim_run_free(run);
}

/* ---- the arithmetic of TileToken GEMMs, counted once ---------------------------------------- */

/* The verdict of built-in kernel spec, run timing only. */
static struct trace_verdict *verdict_of(const char *spec, struct sim_run **run,
                                        struct trace_live **l)
{
    struct diag d;
    struct sim_run_opts ro = {.kernel_spec = spec};
    cr_assert_eq(sim_run_new(&ro, run, &d), 0, "%s", d.msg);
    sim_run_timing_only(*run);
    struct trace_live_opts o = {.prefill_tokens = -1, .decode_tokens = -1};
    cr_assert_eq(trace_live_new(sim_run_chip(*run), &o, l, &d), 0, "%s", d.msg);
    sim_run_advance(*run, SIM_RUN_END, 0);
    trace_live_sync(*l);
    return trace_verdict_new(trace_live_model(*l), NULL);
}

Test(verdict, tiletoken_gemms_count_their_arithmetic_once)
{
    static const struct {
        const char *spec, *name;
        double flops;
    } cases[] = {
        /* composite_gemm ops, each holding TileToken stages that repeat its sizes */
        {"gemm:m=128,n=64,k=32", "gemm", 2.0 * 128 * 64 * 32},
        /* explicit TileTokens: the GEMM stages are the only arithmetic */
        {"gemm_explicit:m=128,n=32,k=64", "gemm_explicit", 2.0 * 128 * 32 * 64},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct sim_run *run;
        struct trace_live *l;
        struct trace_verdict *v = verdict_of(cases[c].spec, &run, &l);
        const struct trace_verdict_item *it = launch(v, cases[c].name);
        show(v, it);
        cr_assert_eq(it->flops, cases[c].flops, "%s: %g FLOP", cases[c].spec, it->flops);
        cr_assert_gt(it->peak_flops, 0);
        cr_assert_gt(it->dram_bytes, 0, "%s: HBM bytes, from the samples if not the ops",
                     cases[c].spec);
        cr_assert_eq(it->missing, 0);
        trace_verdict_free(v);
        trace_live_free(l);
        sim_run_free(run);
    }
}

/* ---- live: a launch still running --------------------------------------------------------- */

Test(verdict, live_a_launch_is_running_until_its_completion_crosses_back)
{
    struct sim_run *run;
    struct diag d;
    struct sim_run_opts ro = {.kernel_spec = "vector_add:n=65536"};
    cr_assert_eq(sim_run_new(&ro, &run, &d), 0, "%s", d.msg);
    sim_run_timing_only(run);
    struct trace_live *l;
    struct trace_live_opts o = {.prefill_tokens = -1, .decode_tokens = -1};
    cr_assert_eq(trace_live_new(sim_run_chip(run), &o, &l, &d), 0, "%s", d.msg);
    /* step until the kernel's first op has ended and no op of it is in flight: a gap
     * between two of its ops, where only the missing Completion says it runs */
    bool seen_gap = false;
    while (!seen_gap && sim_run_advance(run, SIM_RUN_EVENTS, 1) > 0) {
        trace_live_sync(l);
        const struct trace_model *m = trace_live_model(l);
        bool ended = false, inflight = false;
        for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
            const struct trace_event *e = trace_model_event(m, i);
            if (trace_model_track_get(m, e->track)->engine != TRACE_ENGINE_DMA)
                continue;
            inflight |= (e->flags & TRACE_EV_INFLIGHT) != 0;
            ended |= !(e->flags & TRACE_EV_INFLIGHT);
        }
        if (!ended || inflight)
            continue;
        seen_gap = true;
        struct trace_verdict *v = trace_verdict_new(m, NULL);
        const struct trace_verdict_item *it = launch(v, "vector_add");
        cr_assert(it->running, "between two ops, the kernel still runs");
        cr_assert(v->run.running);
        trace_verdict_free(v);
    }
    cr_assert(seen_gap, "a moment with no DMA in flight after the first ended");
    sim_run_advance(run, SIM_RUN_END, 0);
    trace_live_sync(l);
    struct trace_verdict *v = trace_verdict_new(trace_live_model(l), NULL);
    cr_assert_not(launch(v, "vector_add")->running, "its Completion came back");
    cr_assert_not(v->run.running);
    trace_verdict_free(v);
    trace_live_free(l);
    sim_run_free(run);
}

/* ---- host transfer: big MemoryWrites from host buffers -------------------------------------- */

Test(verdict, big_memory_writes_from_host_buffers_are_host_bound)
{
    char dir[] = "/tmp/npuscope-verdict-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/buf.bin", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    static unsigned char zeros[1 << 20];
    cr_assert_eq(fwrite(zeros, 1, sizeof(zeros), f), sizeof(zeros));
    fclose(f);
    char program[2048];
    int n = snprintf(program, sizeof(program), "messages:\n");
    for (int i = 0; i < 4; i++)
        n += snprintf(program + n, sizeof(program) - (size_t)n,
                      "- {msg_type: MemoryWrite, correlation_id: c, request_id: w%d,\n"
                      "   target_device: \"sip:0\", dst_sip: 0, dst_cube: 0, dst_pe: 0,\n"
                      "   dst_pa: %d, nbytes: 1048576, dst_mem_kind: HBM,\n"
                      "   src_kind: host_buffer_ref, host_buffer_ref: %s}\n",
                      i, i << 20, path);
    struct ran r = {0};
    run_program(&r, program, NULL);
    show(r.v, &r.v->run);
    cr_assert_eq(r.v->run.bound, TRACE_BOUND_HOST, "%s", trace_bound_name(r.v->run.bound));
    cr_assert_gt(r.v->run.share, 0.8);
    cr_assert_eq(r.v->nlaunches, 4, "a region per MemoryWrite");
    cr_assert_str_eq(r.v->launches[3].region->name, "MemoryWrite");
    cr_assert_eq(r.v->launches[3].region->occurrence, 3);
    /* the bytes cross the host link, then the io_cpu's link to the cube, both at the host
     * class's 32 GB/s: each carries them for 40% of the run */
    cr_assert_gt(r.v->run.host_util, 0.35, "the host links carried the bytes");
    ran_free(&r);
    unlink(path);
    rmdir(dir);
}

/* ---- another producer's trace --------------------------------------------------------------- */

Test(verdict, a_spec_trace_gets_a_verdict_and_the_missing_evidence)
{
    static const char json[] =
        "{\"version\": \"1.0\", \"timeline_events\": [\n"
        "{\"type\": \"ENGINE_EVENT\", \"engine\": \"DMA\", \"engine_id\": 0, \"cmdq_id\": 0,"
        " \"op\": \"DMA_LOAD\", \"start_cycle\": 0, \"end_cycle\": 800,"
        " \"details\": {\"direction\": \"read\", \"bytes\": 65536}},\n"
        "{\"type\": \"ENGINE_EVENT\", \"engine\": \"TE\", \"engine_id\": 0, \"cmdq_id\": 0,"
        " \"op\": \"TE_GEMM\", \"start_cycle\": 800, \"end_cycle\": 900,"
        " \"details\": {\"m\": 8, \"n\": 8, \"k\": 8}},\n"
        "{\"type\": \"ENGINE_EVENT\", \"engine\": \"DMA\", \"engine_id\": 0, \"cmdq_id\": 0,"
        " \"op\": \"DMA_STORE\", \"start_cycle\": 900, \"end_cycle\": 1000,"
        " \"details\": {\"direction\": \"write\", \"bytes\": 256}}\n"
        "]}\n";
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_buffer(json, strlen(json), "spec.json", NULL, &m, &d), 0, "%s", d.msg);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    cr_assert_eq(v->nlaunches, 1);
    const struct trace_verdict_item *it = &v->launches[0];
    show(v, it);
    cr_assert_eq(it->bound, TRACE_BOUND_MEMORY, "%s", trace_bound_name(it->bound));
    cr_assert_eq(it->path.n, 3, "engine order");
    cr_assert(it->missing & TRACE_MISSING_PEAKS);
    cr_assert(it->missing & TRACE_MISSING_RESOURCES);
    cr_assert(it->missing & TRACE_MISSING_DEPS);
    cr_assert_eq(it->flops, 2.0 * 8 * 8 * 8);
    char lines[12][TRACE_VERDICT_LINE];
    size_t n = trace_verdict_evidence(v, it, lines, 12);
    size_t said = 0;
    for (size_t i = 0; i < n; i++)
        said += strncmp(lines[i], "missing", 7) == 0;
    cr_assert_eq(said, 3, "each missing piece of evidence named");
    struct sim_value *x = trace_verdict_to_value(v);
    const struct sim_value *run = sim_value_map_get(x, "run");
    cr_assert_str_eq(sim_value_get_str(run, "bound", ""), "memory");
    sim_value_free(x);
    trace_verdict_free(v);
    trace_model_free(m);
}

/* ---- DMA per-transfer cost: many tiny loads ------------------------------------------------ */

static void tiny_loads(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_arg(tl, a, 0);
    for (uint64_t i = 0; i < 256; i++) {
        uint64_t mark = tl_tcm_mark(tl);
        int64_t one[1] = {1};
        tl_load(tl, tl_view(tl, x, i, 1, one));
        tl_tcm_release(tl, mark);
    }
}

static const struct sim_kernel tiny_loads_def = {.name = "tiny_loads", .fn = tiny_loads};

Test(verdict, many_tiny_transfers_are_bound_by_the_dma_per_transfer_cost)
{
    static const char program[] =
        "messages:\n"
        "- {msg_type: MemoryWrite, correlation_id: c, request_id: a, target_device: \"sip:0\",\n"
        "   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 1024, dst_mem_kind: HBM,\n"
        "   src_kind: pattern, pattern: {pattern_kind: fill_fp32, value: 1}, dtype: f32}\n" LAUNCH(
            "tiny_loads", TENSOR(0, 1024, f32));
    struct ran r = {0};
    run_program(&r, program, &tiny_loads_def);
    struct trace_verdict_item *it = (struct trace_verdict_item *)launch(r.v, "tiny_loads");
    show(r.v, it);
    cr_assert_eq(it->bound, TRACE_BOUND_DMA_FIXED, "%s", trace_bound_name(it->bound));
    cr_assert_eq(it->heuristic, TRACE_BOUND_DMA_FIXED);
    cr_assert_eq(it->dma_ops, 256, "the transfers counted");
    cr_assert_eq(it->dma_bytes, 256 * 4, "and their bytes");
    cr_assert(!it->checked);
    char buf[200];
    /* the feed was given no run_metadata.notes: not known to be npuscope's, so it stays a
     * heuristic that cannot be checked */
    cr_assert_str_eq(trace_verdict_basis_text(r.v, it, buf, sizeof(buf)),
                     "heuristic: another producer's trace, its workload cannot be run again");

    /* an experiment that says otherwise wins, and the heuristic is kept */
    struct trace_verdict_check c = {.cmdq_id = it->region->cmdq_id,
                                    .bound = TRACE_BOUND_MEMORY,
                                    .resource = "HBM bandwidth",
                                    .factor = 2,
                                    .change = -0.3};
    trace_verdict_check(r.v, &c, 1);
    cr_assert(it->checked);
    cr_assert_eq(it->bound, TRACE_BOUND_MEMORY);
    cr_assert_eq(it->heuristic, TRACE_BOUND_DMA_FIXED);
    cr_assert_str_eq(trace_verdict_bound_text(r.v, it, buf, sizeof(buf)), "HBM bandwidth");
    cr_assert_str_eq(trace_verdict_basis_text(r.v, it, buf, sizeof(buf)),
                     "checked by experiment: HBM bandwidth x2 shortens it 30.0% (the heuristic "
                     "said DMA per-transfer cost)");
    ran_free(&r);
}

/* The verdict weighs the resources over each step of a path in time order, its searches
 * started where the last one ended: whatever the hint (the start, the last search's, one
 * past the end, one after the window), the same utilization as a search from scratch. */
Test(resources, a_search_from_a_hint_finds_what_a_search_from_scratch_does)
{
    struct trace_model *m = trace_model_new();
    uint32_t hbm = trace_model_intern(m, "sip0.cube0.hbm", 14);
    for (uint64_t i = 0; i < 300; i++) /* windows of 100 cycles, some empty, some wider */
        if (i % 7 != 3)
            trace_model_add_bw_sample(m, &(struct trace_bw_sample){i * 100, i % 11 ? 100 : 60,
                                                                   64 * (i % 5 + 1), 32 * (i % 3),
                                                                   hbm});
    trace_model_finish(m);
    struct trace_resources *rs = trace_resources_new(m);
    cr_assert_eq(trace_resources_count(rs), 1);
    size_t last = 0;
    uint64_t x = 7;
    for (int q = 0; q < 2000; q++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t a = (x >> 33) % 31000, b = a + 1 + (x >> 13) % 900;
        if (q < 500) /* in time order first, as a path asks, then anywhere */
            a = (uint64_t)q * 60, b = a + 1 + (x >> 13) % 300;
        double want = trace_resources_util(rs, 0, a, b);
        size_t hints[4] = {0, last, 1000, (size_t)(b / 100 + 3)};
        for (int h = 0; h < 4; h++) {
            size_t hint = hints[h];
            cr_assert_eq(trace_resources_util_from(rs, 0, a, b, &hint), want,
                         "window [%llu, %llu) from hint %d", (unsigned long long)a,
                         (unsigned long long)b, h);
            if (h == 1)
                last = hint;
        }
    }
    trace_resources_free(rs);
    trace_model_free(m);
}

/* The utilization of each window asked of a resource at once, as the verdict asks for the
 * path's waits (the busiest resource's): the same value as asking window by window,
 * whatever the windows (in time order or not, outside the samples, empty or reversed), for
 * an HBM, a link, a resource of one sample, one with none and one that does not exist. */
static void check_windows(const struct trace_resources *rs, size_t i, const uint64_t (*w)[2],
                          size_t n, bool in_order, size_t hint0)
{
    double(*most)[2] = malloc((n ? n : 1) * sizeof(*most));
    for (size_t j = 0; j < n; j++)
        most[j][0] = 0, most[j][1] = 0.25; /* raised where the utilization is larger */
    size_t hint = hint0;
    trace_resources_util_max(rs, i, w, n, in_order, &most[0][0], 2, &hint);
    trace_resources_util_max(rs, i, w, n, in_order, &most[0][1], 2, NULL);
    for (size_t j = 0; j < n; j++) {
        double u = trace_resources_util(rs, i, w[j][0], w[j][1]);
        cr_assert_eq(most[j][0], u, "resource %zu window %zu [%llu, %llu): %.17g, alone %.17g", i,
                     j, (unsigned long long)w[j][0], (unsigned long long)w[j][1], most[j][0], u);
        cr_assert_eq(most[j][1], u > 0.25 ? u : 0.25);
    }
    free(most);
}

Test(resources, windows_asked_at_once_have_the_utilization_each_has_alone)
{
    struct trace_model *m = trace_model_new();
    uint32_t hbm = trace_model_intern(m, "sip0.cube0.hbm", 14);
    uint32_t link = trace_model_intern(m, "sip0.cube0.noc<->sip0.cube1.noc", 31);
    uint32_t one = trace_model_intern(m, "sip0.cube1.hbm", 14);
    uint64_t x = 11, t[2] = {50, 0};
    for (int q = 0; q < 4000; q++) { /* back to back or apart, of random widths and bytes */
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int k = (int)(x >> 63);
        uint64_t width = 1 + (x >> 20) % 97, gap = (x >> 40) % 4 ? 0 : (x >> 30) % 300;
        t[k] += gap;
        trace_model_add_bw_sample(m, &(struct trace_bw_sample){t[k], width, (x >> 8) % 5000,
                                                               (x >> 24) % 3 ? (x >> 28) % 900 : 0,
                                                               k ? link : hbm});
        t[k] += width;
    }
    trace_model_add_bw_sample(m, &(struct trace_bw_sample){1000, 40, 400, 100, one});
    trace_model_finish(m);
    struct trace_resources *rs = trace_resources_new(m);
    cr_assert_eq(trace_resources_count(rs), 3);
    uint64_t end = (t[0] > t[1] ? t[0] : t[1]) + 500;
    enum { N = 3000 };
    uint64_t(*w)[2] = malloc(N * sizeof(*w));
    /* in time order, as a path's waits: short, long, empty and outside the samples */
    uint64_t at = 0;
    for (size_t j = 0; j < N; j++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        at += (x >> 50) % 40;
        uint64_t len = (x >> 20) % 5 == 0   ? 0
                       : (x >> 30) % 8 == 0 ? (x >> 33) % 2000
                                            : (x >> 33) % 60;
        w[j][0] = at, w[j][1] = at + len;
        at += len;
    }
    for (size_t i = 0; i < 5; i++) {
        check_windows(rs, i, w, N, true, 0);
        check_windows(rs, i, w, N, false, 0);
        check_windows(rs, i, w, N, true, 100000); /* a hint past the end */
        check_windows(rs, i, w + N / 2, N / 2, true, 17);
    }
    /* anywhere, and reversed */
    for (size_t j = 0; j < N; j++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        w[j][0] = (x >> 20) % end, w[j][1] = w[j][0] + (x >> 44) % 400;
        if (j % 13 == 0)
            w[j][1] = w[j][0] / 2;
    }
    for (size_t i = 0; i < 3; i++)
        check_windows(rs, i, w, N, false, 0);
    check_windows(rs, 0, w, 0, true, 0); /* no windows */
    trace_resources_free(rs);
    trace_model_free(m);

    /* no samples at all */
    m = trace_model_new();
    trace_model_finish(m);
    rs = trace_resources_new(m);
    cr_assert_eq(trace_resources_count(rs), 0);
    check_windows(rs, 0, (const uint64_t[][2]){{0, 10}, {10, 10}, {20, 100}}, 3, true, 0);
    trace_resources_free(rs);
    trace_model_free(m);
    free(w);
}

/* A window already as busy as a resource can be is not looked at, and only then: windows
 * preset just below and just at their own utilization come out the same as asked alone, on
 * a resource whose samples lie apart and on one whose samples overlap (where a window can
 * take more than the highest rate of a sample: [50, 100) takes half of each of two). */
Test(resources, a_window_as_busy_as_the_resource_can_be_is_left_and_only_then)
{
    struct trace_model *m = trace_model_new();
    uint32_t apart = trace_model_intern(m, "sip0.cube0.hbm", 14);
    uint32_t over = trace_model_intern(m, "sip0.cube1.hbm", 14);
    for (uint64_t i = 0; i < 50; i++)
        trace_model_add_bw_sample(
            m, &(struct trace_bw_sample){i * 100, 100, 100 * (i % 7 + 1), 50 * (i % 3), apart});
    trace_model_add_bw_sample(m, &(struct trace_bw_sample){0, 100, 1000, 0, over});
    trace_model_add_bw_sample(m, &(struct trace_bw_sample){50, 100, 1000, 0, over});
    trace_model_finish(m);
    struct trace_resources *rs = trace_resources_new(m);
    cr_assert_eq(trace_resources_count(rs), 2);
    enum { N = 400 };
    uint64_t w[N][2];
    double most[N];
    for (size_t i = 0; i < 2; i++) {
        uint64_t x = 5;
        for (size_t j = 0; j < N; j++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            w[j][0] = i ? 50 : (x >> 20) % 5000;
            w[j][1] = w[j][0] + (i ? 50 : 1 + (x >> 40) % 300);
            double u = trace_resources_util(rs, i, w[j][0], w[j][1]);
            most[j] = j % 3 == 0 ? u : j % 3 == 1 ? u * 0.999 : u * 0.5;
        }
        trace_resources_util_max(rs, i, (const uint64_t(*)[2])w, N, false, most, 1, NULL);
        for (size_t j = 0; j < N; j++) {
            double u = trace_resources_util(rs, i, w[j][0], w[j][1]);
            cr_assert_eq(most[j], u, "resource %zu window %zu: %.17g, alone %.17g", i, j, most[j],
                         u);
        }
    }
    cr_assert_eq(trace_resources_util(rs, 1, 50, 100), 2.0, "above the highest rate");
    trace_resources_free(rs);
    trace_model_free(m);
}

/* A wait is as busy as the busiest resource during it, whatever the order the resources come
 * in: during the wait [100, 200) between two vector ops, sip0.cube0.hbm is half busy,
 * sip0.cube1.hbm a fifth (never more than 0.3 of its peak) and the link between them 0.8; the
 * resources are weighed the busiest-they-can-be first, so the quiet HBM listed before the
 * link does not hide it. The wait is then 80% memory, 20% latency. */
Test(verdict, a_wait_is_as_busy_as_its_busiest_resource_whatever_their_order)
{
    struct trace_model *m = trace_model_new();
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1);
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    sim_value_map_set_float(sim_value_map_set_take(mem, "hbm", sim_value_map()), "gbps", 100);
    struct sim_value *noc = sim_value_map_set_take(cfg, "noc", sim_value_map());
    sim_value_map_set_float(sim_value_map_set_take(noc, "cube_cube", sim_value_map()), "gbps", 100);
    trace_model_set_config_take(m, cfg);
    uint32_t ve = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    const char *op = "exp";
    for (int i = 0; i < 2; i++) {
        struct trace_event ev = {.start = 200u * (unsigned)i,
                                 .end = 200u * (unsigned)i + 100,
                                 .track = ve,
                                 .op = trace_model_intern(m, op, strlen(op)),
                                 .layer = TRACE_NO_STR,
                                 .tile = TRACE_NO_STR,
                                 .cmdq_id = 1};
        trace_model_add_event(m, &ev);
    }
    static const struct {
        const char *name;
        uint64_t bytes[2]; /* in [0, 100) and [100, 200), of 100 bytes a cycle */
    } res[] = {{"sip0.cube0.hbm", {10000, 5000}},
               {"sip0.cube1.hbm", {3000, 2000}},
               {"sip0.cube0.noc<->sip0.cube1.noc", {9000, 8000}}};
    for (size_t r = 0; r < 3; r++) {
        uint32_t name = trace_model_intern(m, res[r].name, strlen(res[r].name));
        for (uint64_t k = 0; k < 2; k++)
            trace_model_add_bw_sample(
                m, &(struct trace_bw_sample){k * 100, 100, res[r].bytes[k], 0, name});
    }
    trace_model_finish(m);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    cr_assert_eq(v->nlaunches, 1);
    const struct trace_verdict_item *it = &v->launches[0];
    show(v, it);
    cr_assert_eq(it->waits, 100, "the wait between the ops");
    cr_assert_float_eq(it->time[TRACE_PCAT_MEMORY], 80, 1e-9, "%g", it->time[TRACE_PCAT_MEMORY]);
    cr_assert_float_eq(it->time[TRACE_PCAT_LATENCY], 20, 1e-9, "%g", it->time[TRACE_PCAT_LATENCY]);
    trace_verdict_free(v);
    trace_model_free(m);
}

/* A DMA op of 5 GiB on the path (more than the 4 bytes an op the verdict keeps its bytes in
 * hold): its time is the transfer of all its bytes at 100 bytes a cycle, the rest what every
 * transfer pays; its bytes counted whole. */
Test(verdict, a_dma_op_of_more_than_4_gib_is_timed_by_all_its_bytes)
{
    struct trace_model *m = trace_model_new();
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1);
    struct sim_value *pe = sim_value_map_set_take(cfg, "pe", sim_value_map());
    sim_value_map_set_float(sim_value_map_set_take(pe, "dma", sim_value_map()), "gbps", 100);
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    sim_value_map_set_float(sim_value_map_set_take(mem, "hbm", sim_value_map()), "gbps", 100);
    trace_model_set_config_take(m, cfg);
    uint32_t dma = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    const char *op = "dma_read";
    struct trace_event e = {.start = 0,
                            .end = 60000000,
                            .track = dma,
                            .op = trace_model_intern(m, op, strlen(op)),
                            .layer = TRACE_NO_STR,
                            .tile = TRACE_NO_STR,
                            .cmdq_id = 1,
                            .op_kind = TRACE_KIND_MEMORY};
    uint64_t ev = trace_model_add_event(m, &e);
    uint64_t bytes = (uint64_t)5 << 30;
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    trace_opinfo_store(m, ev, &(struct trace_opinfo){.bytes = bytes}, &sp);
    trace_model_finish(m);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    cr_assert_eq(v->nlaunches, 1);
    const struct trace_verdict_item *it = &v->launches[0];
    show(v, it);
    cr_assert_eq(it->path.n, 1);
    cr_assert_eq(it->dma_bytes, bytes);
    double data = (double)bytes / 100;
    cr_assert_float_eq(it->time[TRACE_PCAT_MEMORY], data, 1e-6, "%f", it->time[TRACE_PCAT_MEMORY]);
    cr_assert_float_eq(it->time[TRACE_PCAT_DMA_FIXED], 60000000 - data, 1e-6, "%f",
                       it->time[TRACE_PCAT_DMA_FIXED]);
    trace_verdict_free(v);
    trace_model_free(m);
}

/* ---- a long path's waits on a second thread ---------------------------------------------- */

/* Two items alike figure by figure, their doubles the same doubles. */
static void same_figures(const struct trace_verdict_item *a, const struct trace_verdict_item *b,
                         const char *what)
{
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        cr_assert(a->time[k] == b->time[k], "%s: category %d: %a against %a", what, k, a->time[k],
                  b->time[k]);
    cr_assert_eq(a->bound, b->bound, "%s", what);
    cr_assert(a->share == b->share, "%s", what);
    cr_assert_eq(a->waits, b->waits, "%s", what);
    for (int d = 0; d < TRACE_DEP_COUNT; d++)
        cr_assert_eq(a->wait_by[d], b->wait_by[d], "%s", what);
    cr_assert_eq(a->longest_wait, b->longest_wait, "%s", what);
    cr_assert_eq(a->longest_wait_ev, b->longest_wait_ev, "%s", what);
    cr_assert(a->flops == b->flops && a->dma_bytes == b->dma_bytes, "%s", what);
    cr_assert_eq(a->path.n, b->path.n, "%s", what);
}

/* The resources busy during the waits of a path worked out on a second thread (part of the
 * steps there, the others here, as the ops' time is split) give the verdict worked out on
 * one thread, to the last bit: a decode whose path waits on HBMs and links busy. */
Test(verdict, the_waits_worked_out_on_a_second_thread_give_the_same_verdict)
{
    struct sim_run *run;
    struct trace_live *l;
    struct trace_verdict *ref = verdict_of("llm_decode:layers=2,gen=4", &run, &l);
    const struct trace_model *m = trace_live_model(l);
    struct trace_verdict *one = trace_verdict_new(m, &(struct trace_verdict_opts){.threads = 1});
    struct trace_verdict *two = trace_verdict_new(m, &(struct trace_verdict_opts){.threads = 2});
    cr_assert_gt(one->nlaunches, 0);
    cr_assert_eq(one->nlaunches, two->nlaunches);
    same_figures(&one->run, &two->run, "the run");
    same_figures(&ref->run, &two->run, "the run, by default");
    size_t waited = 0;
    for (size_t i = 0; i < one->nlaunches; i++) {
        const struct trace_verdict_item *a = &one->launches[i], *b = &two->launches[i];
        same_figures(a, b, a->region->name);
        same_figures(&ref->launches[i], b, a->region->name);
        waited += a->waits && a->path.n > 8;
    }
    cr_assert_gt(waited, 0, "some long path waits");
    cr_assert_gt(one->run.time[TRACE_PCAT_MEMORY], 0);
    trace_verdict_free(one);
    trace_verdict_free(two);
    trace_verdict_free(ref);
    trace_live_free(l);
    sim_run_free(run);
}

/* ---- progress: a launch's path says how far it got, and stops when cancelled --------------- */

struct judged {
    const struct trace_model *m;
    struct trace_progress p;
    struct trace_verdict *v;
    atomic_bool done;
};

static void *judge_main(void *arg)
{
    struct judged *j = arg;
    j->v = trace_verdict_new(j->m, &(struct trace_verdict_opts){.progress = &j->p});
    atomic_store(&j->done, true);
    return NULL;
}

/* A verdict of m judged on a worker that pauses at every check of its progress, this thread
 * noting the steps it names (into seen, *nseen of them) and cancelling it once it names
 * cancel_at. */
static struct trace_verdict *judge_watched(const struct trace_model *m, const char *cancel_at,
                                           const char **seen, size_t *nseen)
{
    struct judged j = {.m = m, .p = {.delay_us = 100 * 1000}};
    atomic_init(&j.done, false);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, judge_main, &j), 0);
    *nseen = 0;
    while (!atomic_load(&j.done)) {
        const char *what = atomic_load(&j.p.what);
        if (what && (!*nseen || strcmp(seen[*nseen - 1], what) != 0) && *nseen < 16)
            seen[(*nseen)++] = what;
        if (what && strcmp(what, cancel_at) == 0)
            atomic_store(&j.p.cancel, true);
        usleep(1000);
    }
    pthread_join(th, NULL);
    return j.v;
}

/* The first of seen[0..n) that is what, or SIZE_MAX. */
static size_t seen_at(const char **seen, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(seen[i], what) == 0)
            return i;
    return SIZE_MAX;
}

Test(verdict, a_launch_path_shows_its_steps_and_stops_in_the_middle_when_cancelled)
{
    struct sim_run *run;
    struct trace_live *l;
    struct trace_verdict *ref = verdict_of("llm_decode:layers=2,gen=4", &run, &l);
    const struct trace_model *m = trace_live_model(l);
    /* cancelled as its first launch's path sweeps its ops' dependencies, then as it
     * gathers them */
    static const char *const at[] = {"critical path: dependencies", "critical path: the ops"};
    for (size_t c = 0; c < 2; c++) {
        const char *seen[16];
        size_t nseen;
        struct trace_verdict *v = judge_watched(m, at[c], seen, &nseen);
        for (size_t i = 0; i < nseen; i++)
            cr_log_info("cancelled at %s: step %zu: %s", at[c], i, seen[i]);
        size_t ops = seen_at(seen, nseen, "critical path: the ops");
        size_t deps = seen_at(seen, nseen, "critical path: dependencies");
        cr_assert_lt(ops, nseen, "the path's gathering of its ops is shown");
        if (c == 0)
            cr_assert(deps < nseen && ops < deps, "then its sweep of their dependencies");
        else
            cr_assert_eq(deps, SIZE_MAX, "cancelled as it gathers: no sweep");
        /* the launch whose path was cancelled has none: it did not run to its end first */
        cr_assert_gt(v->nlaunches, 0);
        size_t r = v->nlaunches - 1;
        cr_assert_eq(v->launches[r].path.n, 0, "launch %zu's path stopped in the middle", r);
        cr_assert_gt(ref->launches[r].path.n, 0, "judged to the end, it has a path");
        trace_verdict_free(v);
    }
    trace_verdict_free(ref);
    trace_live_free(l);
    sim_run_free(run);
}

/* ---- the run of a trace without launches: the path the Gantt shows ----------------------- */

/* A trace without launches (no cmdq_id): on each of three PEs, rounds of a load and a GEMM
 * reading what the PE's GEMM before it wrote in TCM, the load beside that GEMM and mostly
 * ending before it (every fifth longer), the first op starting at cycle 7; into *json (to
 * free). */
static size_t no_launch_trace(char **json)
{
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
    cr_assert(s);
    len += (size_t)snprintf(s + len, cap - len, "{\"version\": \"1.0\", \"timeline_events\": [\n");
    const char *sep = "";
    for (int pe = 0; pe < 3; pe++) {
        uint64_t g0 = 7 + (uint64_t)pe * 3, g1 = g0 + 25; /* the GEMM before (or the first) */
        for (int r = 0; r < 101; r++) {                   /* (a prime) */
            uint64_t l0 = g0, l1 = l0 + (r % 5 ? 20 : 60) + (uint64_t)((r * 7 + pe) % 3);
            len += (size_t)snprintf(
                s + len, cap - len,
                "%s{\"type\": \"ENGINE_EVENT\", \"engine\": \"DMA\", \"engine_id\": %d, \"op\": "
                "\"dma_read\", \"start_cycle\": %llu, \"end_cycle\": %llu, \"component_id\": "
                "\"sip0.cube0.pe%d.pe_dma\", \"op_kind\": \"memory\", \"details\": {\"src_addr\": "
                "%d, \"nbytes\": 2048}}\n",
                sep, pe, (unsigned long long)l0, (unsigned long long)l1, pe, r * 2048);
            sep = ",";
            g0 = (g1 > l1 ? g1 : l1) + (uint64_t)(r % 3);
            g1 = g0 + 30 + (uint64_t)((r * 5) % 11);
            len += (size_t)snprintf(
                s + len, cap - len,
                ",{\"type\": \"ENGINE_EVENT\", \"engine\": \"TE\", \"engine_id\": %d, \"op\": "
                "\"gemm_f16\", \"start_cycle\": %llu, \"end_cycle\": %llu, \"component_id\": "
                "\"sip0.cube0.pe%d.pe_gemm\", \"op_kind\": \"gemm\", \"details\": {\"m\": 16, "
                "\"n\": 16, \"k\": 16, \"src_a_space\": \"tcm\", \"src_a_addr\": %d, "
                "\"src_b_space\": \"tcm\", \"src_b_addr\": 65536, \"dst_space\": \"tcm\", "
                "\"dst_addr\": %d, \"shape_a\": [16, 16], \"shape_b\": [16, 16], \"shape_out\": "
                "[16, 16], \"dtype_in\": \"f16\", \"dtype_out\": \"f16\"}}\n",
                pe, (unsigned long long)g0, (unsigned long long)g1, pe, (r % 2) * 512,
                ((r + 1) % 2) * 512);
            cr_assert_lt(len, cap - 2048);
        }
    }
    len += (size_t)snprintf(s + len, cap - len, "]}\n");
    *json = s;
    return len;
}

Test(verdict, the_run_of_a_trace_without_launches_has_the_path_the_gantt_computes)
{
    char *json;
    size_t len = no_launch_trace(&json);
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_buffer(json, len, "run.json", NULL, &m, &d), 0, "%s", d.msg);
    free(json);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    cr_assert_eq(v->nlaunches, 0);
    const struct trace_critpath *judged = &v->run.path;
    cr_assert_gt(judged->n, 10);
    /* as the Gantt's C computes the run's path: every op, from cycle 0 (the run's span,
     * though its first op starts at 7), its details read as a viewer reads them */
    size_t n = (size_t)trace_model_event_count(m);
    uint64_t *evs = malloc(n * sizeof(*evs));
    for (size_t i = 0; i < n; i++)
        evs[i] = i;
    struct trace_critpath_input in = {.m = m,
                                      .events = evs,
                                      .n = n,
                                      .start = 0,
                                      .with_details = trace_critpath_details_bounded,
                                      .each_ctx = &n};
    struct trace_critpath p;
    trace_critpath_compute(&in, &p);
    cr_assert_eq(v->run_region.start, 0, "the run judged from cycle 0 too");
    cr_assert_eq(p.start, judged->start);
    cr_assert_eq(p.n, judged->n, "%zu steps computed, %zu judged", p.n, judged->n);
    cr_assert_eq(p.steps[0].wait, trace_model_event(m, p.steps[0].ev)->start,
                 "the first op waited from cycle 0");
    size_t raw = 0;
    for (size_t k = 0; k < p.n; k++) {
        const struct trace_path_step *a = &p.steps[k], *b = &judged->steps[k];
        cr_assert(a->ev == b->ev && a->pred == b->pred && a->wait == b->wait && a->why == b->why,
                  "step %zu: op %llu after %llu (%s), judged op %llu after %llu (%s)", k,
                  (unsigned long long)a->ev, (unsigned long long)a->pred, trace_dep_name(a->why),
                  (unsigned long long)b->ev, (unsigned long long)b->pred, trace_dep_name(b->why));
        cr_assert(a->why != TRACE_DEP_RAW ||
                  (a->range.space == b->range.space && a->range.lo == b->range.lo &&
                   a->range.hi == b->range.hi));
        raw += a->why == TRACE_DEP_RAW;
    }
    cr_assert_gt(raw, 0, "reads after writes on the path");
    trace_critpath_fini(&p);
    free(evs);
    trace_verdict_free(v);
    trace_model_free(m);
}
