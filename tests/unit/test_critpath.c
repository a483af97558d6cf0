/* The critical path (trace/verdict/critpath.h) and the details it reads (trace/analysis/opinfo.h),
 * on a small DAG whose path is worked out by hand: RAW through memory ranges, a tile, an engine
 * kept busy, launch order, the composite op left out for its stages, and a trace's own
 * dependency_ids read, followed and written back. */
#include "test_chain.h"
#include "sim/data/value.h"
#include "trace/verdict/critpath.h"
#include "trace/file/loader.h"
#include "trace/model/model.h"
#include "trace/analysis/opinfo.h"
#include "trace/file/writer.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void same_path(const struct trace_critpath *a, const struct trace_critpath *b,
                      const char *what);

static uint64_t add(struct trace_model *m, uint32_t t, const char *op, enum trace_op_kind k,
                    uint64_t s, uint64_t e, const char *tile)
{
    struct trace_event ev = {.start = s,
                             .end = e,
                             .track = t,
                             .op = trace_model_intern(m, op, strlen(op)),
                             .tile = tile ? trace_model_intern(m, tile, strlen(tile)) : 0,
                             .cmdq_id = 0,
                             .op_kind = (uint8_t)k};
    return trace_model_add_event(m, &ev);
}

/* A dma_read of n bytes from hbm src to tcm dst (ADR-0052 D3.1 and its replay keys). */
static void dma_read(struct trace_model *m, uint64_t ev, int64_t src, int64_t dst, int64_t n)
{
    struct sim_value *d = sim_value_map();
    sim_value_map_set_int(d, "src_addr", src);
    sim_value_map_set_int(d, "nbytes", n);
    sim_value_map_set_str(d, "handle_id", "h");
    struct sim_value *r = sim_value_map_set_take(d, "replay", sim_value_map());
    sim_value_map_set_str(r, "src_space", "hbm");
    sim_value_map_set_str(r, "dst_space", "tcm");
    sim_value_map_set_int(r, "dst_addr", dst);
    trace_model_set_details_take(m, ev, d);
}

/* A 8x8 @ 8x8 f32 GEMM in TCM: 256 bytes per operand. */
static void gemm(struct trace_model *m, uint64_t ev, int64_t a, int64_t b, int64_t out)
{
    struct sim_value *d = sim_value_map();
    int64_t sq[2] = {8, 8};
    sim_value_map_set_int(d, "src_a_addr", a);
    sim_value_map_set_int(d, "src_b_addr", b);
    sim_value_map_set_int(d, "dst_addr", out);
    sim_value_map_set_take(d, "shape_a", sim_value_int_list(sq, 2));
    sim_value_map_set_take(d, "shape_b", sim_value_int_list(sq, 2));
    sim_value_map_set_take(d, "shape_out", sim_value_int_list(sq, 2));
    sim_value_map_set_str(d, "dtype_in", "f32");
    sim_value_map_set_str(d, "dtype_out", "f32");
    sim_value_map_set_int(d, "m", 8);
    sim_value_map_set_int(d, "k", 8);
    sim_value_map_set_int(d, "n", 8);
    sim_value_map_set_str(d, "src_a_space", "tcm");
    sim_value_map_set_str(d, "src_b_space", "tcm");
    sim_value_map_set_str(d, "dst_space", "tcm");
    trace_model_set_details_take(m, ev, d);
}

/* A math op over 64 f32 at tcm in, into tcm out. */
static void math(struct trace_model *m, uint64_t ev, int64_t in, int64_t out)
{
    struct sim_value *d = sim_value_map();
    int64_t shape[1] = {64};
    sim_value_map_set_take(d, "input_addrs", sim_value_int_list(&in, 1));
    struct sim_value *shapes = sim_value_map_set_take(d, "input_shapes", sim_value_list());
    sim_value_list_push_take(shapes, sim_value_int_list(shape, 1));
    struct sim_value *spaces = sim_value_map_set_take(d, "input_spaces", sim_value_list());
    sim_value_list_push_take(spaces, sim_value_str("tcm"));
    struct sim_value *dtypes = sim_value_map_set_take(d, "input_dtypes", sim_value_list());
    sim_value_list_push_take(dtypes, sim_value_str("f32"));
    sim_value_map_set_int(d, "dst_addr", out);
    sim_value_map_set_str(d, "dst_space", "tcm");
    sim_value_map_set_take(d, "shape_out", sim_value_int_list(shape, 1));
    sim_value_map_set_str(d, "dtype", "f32");
    sim_value_map_set_take(d, "axis", sim_value_null());
    trace_model_set_details_take(m, ev, d);
}

/* A dma_write of n bytes from tcm src to hbm dst (D3.2). */
static void dma_write(struct trace_model *m, uint64_t ev, int64_t src, int64_t dst, int64_t n)
{
    struct sim_value *d = sim_value_map();
    sim_value_map_set_str(d, "src_space", "tcm");
    sim_value_map_set_int(d, "src_addr", src);
    sim_value_map_set_str(d, "dst_space", "hbm");
    sim_value_map_set_int(d, "dst_addr", dst);
    sim_value_map_set_int(d, "nbytes", n);
    trace_model_set_details_take(m, ev, d);
}

/* The path of evs, computed on one thread and again with the second (its details read
 * ahead, its arrays faulted in ahead, whatever the set's size; its arrays handed over for
 * the caller to free; each step's span kept): both the same; the ops' spans handed out
 * with the arrays alone, each step's op's its event's start, end (in flight: now) and
 * track, as is the span kept with each step (and with a copy of the path); none kept
 * unless asked for. */
static void path_of(const struct trace_model *m, const uint64_t *evs, size_t n,
                    struct trace_critpath *p)
{
    const struct trace_op_span *spans = (const void *)evs; /* (set to NULL, or to them) */
    struct trace_critpath_input in = {
        .m = m, .events = evs, .n = n, .start = 0, .threads = 1, .spans = &spans};
    trace_critpath_compute(&in, p);
    cr_assert_null(spans, "no spans without a release to take them");
    cr_assert_null(p->spans, "no step's span kept unless asked for");
    struct trace_critpath q;
    struct sim_release big = {0};
    in.threads = 2, in.release = &big, in.step_spans = true;
    trace_critpath_compute(&in, &q);
    cr_assert(q.n == 0 || q.spans, "the steps' spans kept");
    struct trace_critpath c;
    trace_critpath_copy(&c, &q);
    cr_assert(n == 0 || big.n >= 2, "the ops' arrays handed over: %zu", big.n);
    cr_assert(q.ops == 0 || spans, "the spans handed out with them");
    uint64_t now = trace_model_now(m);
    for (size_t i = 0; i < q.n; i++) {
        const struct trace_event *e = trace_model_event(m, q.steps[i].ev);
        const struct trace_op_span *o = &spans[q.steps[i].op];
        uint64_t end = e->flags & TRACE_EV_INFLIGHT ? (now > e->start ? now : e->start) : e->end;
        cr_assert(o->start == e->start && o->end == end && o->track == e->track,
                  "step %zu's op's span", i);
        const struct trace_op_span *k = &q.spans[i];
        cr_assert(k->start == e->start && k->end == end && k->track == e->track,
                  "step %zu's span kept", i);
        cr_assert(c.spans != q.spans && c.spans[i].start == k->start && c.spans[i].end == k->end &&
                      c.spans[i].track == k->track,
                  "step %zu's span copied", i);
    }
    trace_critpath_fini(&c);     /* (its own: ASan would tell) */
    sim_release_go(&big, false); /* (each freed once: ASan would tell) */
    cr_assert(q.n == p->n && q.ops == p->ops && q.end == p->end && q.decoded == p->decoded,
              "with a second thread: %zu steps of %llu ops", q.n, (unsigned long long)q.ops);
    for (size_t i = 0; i < p->n; i++) {
        const struct trace_path_step *a = &p->steps[i], *b = &q.steps[i];
        cr_assert(a->ev == b->ev && a->pred == b->pred && a->wait == b->wait && a->why == b->why,
                  "with a second thread: step %zu", i);
        if (a->why == TRACE_DEP_RAW)
            cr_assert(a->range.space == b->range.space && a->range.lo == b->range.lo &&
                          a->range.hi == b->range.hi,
                      "with a second thread: step %zu's range", i);
    }
    trace_critpath_fini(&q);
}

/*
 * The DAG, cycles [0, 500):
 *   A  dma0  dma_read  [0, 100)    hbm 0..256 -> tcm 0..256
 *   B  dma1  dma_read  [0, 150)    hbm 256..512 -> tcm 256..512
 *   D  ve0   exp       [100, 130)  tcm 0..256 -> tcm 1024..1280       (RAW on A)
 *   C  te0   gemm      [160, 400)  tcm 0..256, 256..512 -> tcm 512..768 (RAW on A and B)
 *   E  dma0  dma_write [405, 500)  tcm 512..768 -> hbm 4096            (RAW on C)
 * The path is B, C, E: 150 + 10 + 240 + 5 + 95 = 500 cycles.
 */
Test(critpath, a_hand_computed_dag_follows_its_latest_dependencies)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma0 = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t dma1 = trace_model_track(m, "sip0.cube0.pe1.pe_dma", TRACE_ENGINE_DMA, 1);
    uint32_t te0 = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t ve0 = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    uint64_t A = add(m, dma0, "dma_read", TRACE_KIND_MEMORY, 0, 100, NULL);
    uint64_t B = add(m, dma1, "dma_read", TRACE_KIND_MEMORY, 0, 150, NULL);
    uint64_t D = add(m, ve0, "exp", TRACE_KIND_MATH, 100, 130, NULL);
    uint64_t C = add(m, te0, "gemm_f32", TRACE_KIND_GEMM, 160, 400, NULL);
    uint64_t E = add(m, dma0, "dma_write", TRACE_KIND_MEMORY, 405, 500, NULL);
    dma_read(m, A, 0, 0, 256);
    dma_read(m, B, 256, 256, 256);
    math(m, D, 0, 1024);
    gemm(m, C, 0, 256, 512);
    dma_write(m, E, 512, 4096, 256);
    trace_model_finish(m);

    uint64_t all[] = {A, B, C, D, E};
    struct trace_critpath p;
    path_of(m, all, 5, &p);
    cr_assert(p.with_addresses);
    cr_assert_eq(p.ops, 5);
    cr_assert_eq(p.n, 3, "B, C, E");
    cr_assert_eq(p.steps[0].ev, B);
    cr_assert_eq(p.steps[0].why, TRACE_DEP_START);
    cr_assert_eq(p.steps[0].wait, 0);
    cr_assert_eq(p.steps[1].ev, C);
    cr_assert_eq(p.steps[1].pred, B, "C read what A and B wrote: B ended last");
    cr_assert_eq(p.steps[1].why, TRACE_DEP_RAW);
    cr_assert_eq(p.steps[1].wait, 10);
    cr_assert_eq(p.steps[1].range.lo, 256);
    cr_assert_eq(p.steps[1].range.hi, 512);
    cr_assert_eq(p.steps[2].ev, E);
    cr_assert_eq(p.steps[2].why, TRACE_DEP_RAW);
    cr_assert_eq(p.steps[2].wait, 5);
    uint64_t sum = 0;
    for (size_t i = 0; i < p.n; i++) {
        const struct trace_event *e = trace_model_event(m, p.steps[i].ev);
        sum += p.steps[i].wait + (e->end - e->start);
    }
    cr_assert_eq(sum, 500, "the path's waits and durations add up to its end");
    cr_assert_eq(p.end, 500);
    char why[128];
    cr_assert_str_eq(trace_critpath_why(&p, &p.steps[2], why, sizeof(why)),
                     "reads tcm 0x200..0x300 it wrote");
    cr_assert_eq(trace_critpath_find(&p, C), 1);
    cr_assert_eq(trace_critpath_find(&p, D), SIZE_MAX);
    trace_critpath_fini(&p);

    /* D waits on A through the bytes A wrote */
    uint64_t ad[] = {D, A};
    path_of(m, ad, 2, &p);
    cr_assert_eq(p.n, 2);
    cr_assert_eq(p.steps[1].ev, D);
    cr_assert_eq(p.steps[1].pred, A);
    cr_assert_eq(p.steps[1].why, TRACE_DEP_RAW);
    trace_critpath_fini(&p);
    trace_model_free(m);
}

/* The RAW predecessor of ops reading bytes two ops wrote, both ending at 100: the writer of
 * the first range it reads, of the lowest bytes within one range. */
Test(critpath, of_writers_ending_together_the_first_bytes_read_win)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma1 = trace_model_track(m, "sip0.cube0.pe1.pe_dma", TRACE_ENGINE_DMA, 1);
    uint32_t dma2 = trace_model_track(m, "sip0.cube0.pe2.pe_dma", TRACE_ENGINE_DMA, 2);
    uint32_t te0 = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t ve0 = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    uint64_t A = add(m, dma1, "dma_read", TRACE_KIND_MEMORY, 0, 100, NULL);
    uint64_t B = add(m, dma2, "dma_read", TRACE_KIND_MEMORY, 0, 100, NULL);
    uint64_t C = add(m, te0, "gemm_f32", TRACE_KIND_GEMM, 120, 300, NULL);
    uint64_t C2 = add(m, te0, "gemm_f32", TRACE_KIND_GEMM, 320, 500, NULL);
    uint64_t D = add(m, ve0, "exp", TRACE_KIND_MATH, 120, 200, NULL);
    dma_read(m, A, 0, 0, 256);      /* tcm 0..256 */
    dma_read(m, B, 4096, 256, 256); /* tcm 256..512 */
    gemm(m, C, 256, 0, 1024);       /* reads B's bytes first */
    gemm(m, C2, 0, 256, 2048);      /* reads A's bytes first */
    math(m, D, 128, 3072);          /* tcm 128..384: A's bytes, then B's */
    trace_model_finish(m);

    struct {
        uint64_t op, pred, lo, hi;
    } want[] = {{C, B, 256, 512}, {C2, A, 0, 256}, {D, A, 128, 256}};
    for (size_t w = 0; w < 3; w++) {
        uint64_t set[] = {A, B, want[w].op};
        struct trace_critpath p;
        path_of(m, set, 3, &p);
        cr_assert_eq(p.n, 2);
        cr_assert_eq(p.steps[1].ev, want[w].op);
        cr_assert_eq(p.steps[1].why, TRACE_DEP_RAW);
        cr_assert_eq(p.steps[1].pred, want[w].pred, "op %zu", w);
        cr_assert_eq(p.steps[1].range.lo, want[w].lo, "op %zu", w);
        cr_assert_eq(p.steps[1].range.hi, want[w].hi, "op %zu", w);
        trace_critpath_fini(&p);
    }
    trace_model_free(m);
}

Test(critpath, tiles_engines_and_launch_order_when_memory_says_nothing)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t ve0 = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    uint32_t te0 = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    /* a tile's two stages on two engines; the second waits 10 cycles on the first */
    uint64_t F = add(m, ve0, "VE_TILE", TRACE_KIND_MATH, 130, 300, "t1");
    uint64_t G = add(m, dma0, "DMA_STORE", TRACE_KIND_MEMORY, 310, 350, "t1");
    /* an op queued behind another on its engine */
    uint64_t X = add(m, dma0, "DMA_LOAD", TRACE_KIND_MEMORY, 350, 400, NULL);
    /* an op with nothing to wait on but what ended before it */
    uint64_t Y = add(m, te0, "TE_GEMM", TRACE_KIND_GEMM, 420, 480, NULL);
    trace_model_finish(m);
    uint64_t evs[] = {F, G, X, Y};
    struct trace_critpath p;
    path_of(m, evs, 4, &p);
    cr_assert_not(p.with_addresses);
    cr_assert(p.with_tiles);
    cr_assert_eq(p.n, 4, "F, G, X, Y");
    cr_assert_eq(p.steps[0].ev, F);
    cr_assert_eq(p.steps[0].wait, 130, "from the start of the span");
    cr_assert_eq(p.steps[1].why, TRACE_DEP_TILE);
    cr_assert_eq(p.steps[1].wait, 10);
    cr_assert_eq(p.steps[2].ev, X);
    cr_assert_eq(p.steps[2].why, TRACE_DEP_ENGINE);
    cr_assert_eq(p.steps[2].wait, 0);
    cr_assert_eq(p.steps[3].ev, Y);
    cr_assert_eq(p.steps[3].why, TRACE_DEP_ORDER);
    cr_assert_eq(p.steps[3].wait, 20);
    trace_critpath_fini(&p);
    trace_model_free(m);
}

Test(critpath, a_composite_op_gives_way_to_its_stages)
{
    struct trace_model *m = trace_model_new();
    uint32_t te0 = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint32_t dma0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint64_t big = add(m, te0, "composite_gemm", TRACE_KIND_GEMM, 0, 1000, "g");
    uint64_t rd = add(m, dma0, "TileToken/DMA_READ", TRACE_KIND_UNKNOWN, 0, 300, "g");
    uint64_t gm = add(m, te0, "TileToken/GEMM", TRACE_KIND_UNKNOWN, 300, 800, "g");
    uint64_t wr = add(m, dma0, "TileToken/DMA_WRITE", TRACE_KIND_UNKNOWN, 800, 1000, "g");
    trace_model_finish(m);
    uint64_t evs[] = {big, rd, gm, wr};
    struct trace_critpath p;
    path_of(m, evs, 4, &p);
    cr_assert_eq(p.ops, 3);
    cr_assert_eq(p.n, 3);
    cr_assert_eq(p.steps[0].ev, rd);
    cr_assert_eq(p.steps[2].ev, wr);
    trace_critpath_fini(&p);
    trace_model_free(m);
}

Test(opinfo, gemm_math_and_spec_dma_details)
{
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    struct trace_opinfo o;
    /* a spec trace's GEMM: m, n, k only */
    struct sim_value *d = sim_value_map();
    sim_value_map_set_int(d, "m", 64);
    sim_value_map_set_int(d, "n", 128);
    sim_value_map_set_int(d, "k", 256);
    trace_opinfo_decode("TE_GEMM_TILE", TRACE_KIND_GEMM, d, &sp, &o);
    cr_assert_eq(o.flops, 2.0 * 64 * 128 * 256);
    sim_value_free(d);
    /* a TileToken GEMM stage: its arithmetic, marked as a stage's (a composite op holding
     * it counts it too) */
    d = sim_value_map();
    sim_value_map_set_int(d, "m", 16);
    sim_value_map_set_int(d, "n", 16);
    sim_value_map_set_int(d, "k", 16);
    trace_opinfo_decode("TileToken/GEMM", TRACE_KIND_UNKNOWN, d, &sp, &o);
    cr_assert_eq(o.flops, 2.0 * 16 * 16 * 16);
    cr_assert(o.stage);
    cr_assert_eq(o.nreads, 0, "a composite's stage names no addresses");
    sim_value_free(d);
    /* an explicit TileToken's DMA stage names its ranges */
    d = sim_value_map();
    sim_value_map_set_str(d, "src_space", "hbm");
    sim_value_map_set_int(d, "src_addr", 8192);
    sim_value_map_set_str(d, "dst_space", "tcm");
    sim_value_map_set_int(d, "dst_addr", 0);
    sim_value_map_set_int(d, "nbytes", 4096);
    trace_opinfo_decode("TileToken/DMA_READ", TRACE_KIND_UNKNOWN, d, &sp, &o);
    cr_assert_eq(o.bytes, 4096);
    cr_assert_eq(o.flops, 0);
    cr_assert_eq(o.nreads, 1);
    cr_assert_eq(o.reads[0].space, 0);
    cr_assert_eq(o.reads[0].lo, 8192);
    cr_assert_eq(o.reads[0].hi, 8192 + 4096);
    cr_assert(o.has_write);
    cr_assert_eq(o.write.space, 1);
    cr_assert_eq(o.write.hi, 4096);
    sim_value_free(d);
    /* a spec trace's DMA read */
    d = sim_value_map();
    sim_value_map_set_str(d, "direction", "read");
    sim_value_map_set_int(d, "bytes", 2048);
    sim_value_map_set_int(d, "dram_addr", 120000);
    trace_opinfo_decode("DMA_LOAD_TILE", TRACE_KIND_MEMORY, d, &sp, &o);
    cr_assert_eq(o.bytes, 2048);
    cr_assert_eq(o.nreads, 1);
    cr_assert_eq(o.reads[0].space, 0);
    cr_assert_eq(o.reads[0].lo, 120000);
    cr_assert_eq(o.reads[0].hi, 122048);
    cr_assert_not(o.has_write);
    sim_value_free(d);
    /* a reduction counts its input elements */
    d = sim_value_map();
    int64_t in = 0, shape[2] = {4, 64}, out[1] = {4};
    sim_value_map_set_take(d, "input_addrs", sim_value_int_list(&in, 1));
    struct sim_value *shapes = sim_value_map_set_take(d, "input_shapes", sim_value_list());
    sim_value_list_push_take(shapes, sim_value_int_list(shape, 2));
    sim_value_map_set_take(d, "shape_out", sim_value_int_list(out, 1));
    sim_value_map_set_str(d, "dtype", "f32");
    sim_value_map_set_int(d, "axis", 1);
    sim_value_map_set_int(d, "dst_addr", 4096);
    trace_opinfo_decode("sum", TRACE_KIND_MATH, d, &sp, &o);
    cr_assert_eq(o.flops, 256);
    cr_assert_eq(o.reads[0].hi, 1024, "4 x 64 f32 from tcm 0");
    cr_assert_eq(o.write.lo, 4096);
    cr_assert_eq(o.write.hi, 4096 + 16);
    sim_value_free(d);
}

Test(critpath, dependency_ids_of_a_trace_are_followed)
{
    /* element 1 is a MARKER_EVENT: dependency_ids count every element of the array */
    static const char json[] =
        "{\"version\": \"1.0\", \"timeline_events\": [\n"
        "{\"type\": \"ENGINE_EVENT\", \"engine\": \"DMA\", \"engine_id\": 0, \"op\": \"LOAD\","
        " \"start_cycle\": 0, \"end_cycle\": 100},\n"
        "{\"type\": \"MARKER_EVENT\", \"name\": \"m\", \"cycle\": 5},\n"
        "{\"type\": \"ENGINE_EVENT\", \"engine\": \"VE\", \"engine_id\": 0, \"op\": \"OTHER\","
        " \"start_cycle\": 0, \"end_cycle\": 150},\n"
        "{\"type\": \"ENGINE_EVENT\", \"engine\": \"TE\", \"engine_id\": 0, \"op\": \"GEMM\","
        " \"start_cycle\": 200, \"end_cycle\": 300, \"dependency_ids\": [0]},\n"
        "{\"type\": \"ENGINE_EVENT\", \"engine\": \"TE\", \"engine_id\": 1, \"op\": \"BAD\","
        " \"start_cycle\": 300, \"end_cycle\": 310, \"dependency_ids\": [1, 99, \"x\"]}\n"
        "]}\n";
    struct trace_model *m;
    struct trace_report *r = trace_report_new(16);
    struct diag d;
    cr_assert_eq(trace_load_buffer(json, strlen(json), "deps.json", r, &m, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_model_dep_count(m), 1);
    size_t noted = 0;
    for (size_t i = 0; i < trace_report_count(r); i++) {
        const struct trace_problem *q = trace_report_get(r, i);
        if (strstr(q->path, "dependency_ids")) {
            /* an extension field of npuscope's: its problems are notes */
            cr_assert_eq(q->sev, TRACE_SEV_NOTE);
            cr_assert(strstr(q->path, "timeline_events[4].dependency_ids["), "%s", q->path);
            noted++;
        }
    }
    cr_assert_eq(noted, 3, "a marker, an index beyond, not a number");
    const uint64_t *on;
    cr_assert_eq(trace_model_event_deps(m, 2, &on), 1);
    cr_assert_eq(on[0], 0, "element 0 is model event 0");
    uint64_t evs[] = {0, 1, 2};
    struct trace_critpath p;
    path_of(m, evs, 3, &p);
    cr_assert(p.with_explicit);
    cr_assert_eq(p.n, 2, "LOAD, GEMM: not OTHER, which ended later but is no dependency");
    cr_assert_eq(p.steps[0].ev, 0);
    cr_assert_eq(p.steps[1].why, TRACE_DEP_EXPLICIT);
    cr_assert_eq(p.steps[1].wait, 100);
    trace_critpath_fini(&p);
    /* written back, the indices are those of the written array */
    char path[] = "/tmp/npuscope-deps-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(trace_writer_write_model(m, path, 0, &d), 0, "%s", d.msg);
    struct trace_model *back;
    cr_assert_eq(trace_load_file(path, NULL, &back, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_model_event_deps(back, 2, &on), 1);
    cr_assert_eq(on[0], 0);
    unlink(path);
    trace_model_free(back);
    trace_model_free(m);
    trace_report_free(r);
}

/*
 * A chain of n ops back to back on one engine (op i at [i * 70001, i * 70001 + 70000): each
 * waits a cycle on the one before, over a span that needs more than 16 bits), given to the
 * path in the order they were added: forward, backward or shuffled, with a second engine
 * running ops that start and end at the same cycles as the chain's (equal keys) but end
 * earlier overall, and ops of no length between them (ends of two kinds). Then two DMA
 * reads ending together write the same bytes, and a math op reads them: it waits on the
 * one that comes later in the set (ops ending together end in the set's order), though
 * the math op comes between them in the set. Whatever
 * the order (a set already sorted, one an insertion sort handles, one it gives up on), the
 * path is the whole chain, then that read, then the math op.
 */
static void chain_in_order(size_t n, int order)
{
    struct trace_model *m = trace_model_new();
    uint32_t a = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t b = trace_model_track(m, "DMA 1", TRACE_ENGINE_DMA, 1);
    uint32_t c = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    uint32_t w1t = trace_model_track(m, "DMA 2", TRACE_ENGINE_DMA, 2);
    uint32_t w2t = trace_model_track(m, "DMA 3", TRACE_ENGINE_DMA, 3);
    uint32_t rt = trace_model_track(m, "VE 1", TRACE_ENGINE_VE, 1);
    size_t *perm = malloc(n * sizeof(*perm));
    for (size_t i = 0; i < n; i++)
        perm[i] = order == 1 ? n - 1 - i : i;
    uint64_t x = 12345;
    for (size_t i = n; order == 2 && i > 1; i--) { /* Fisher-Yates with an LCG */
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t j = (size_t)(x >> 33) % i, t = perm[i - 1];
        perm[i - 1] = perm[j], perm[j] = t;
    }
    uint64_t *chain = malloc(n * sizeof(*chain));
    uint64_t *evs = malloc((3 * n + 3) * sizeof(*evs));
    size_t k = 0;
    for (size_t q = 0; q < n; q++) {
        size_t i = perm[q];
        uint64_t s = i * 70001;
        chain[i] = add(m, a, "dma_read", TRACE_KIND_MEMORY, s, s + 70000, NULL);
        evs[k++] = chain[i];
        if (i + 1 < n) { /* the last ends earlier than the chain's */
            evs[k++] = add(m, b, "dma_read", TRACE_KIND_MEMORY, s, s + 70000, NULL);
            evs[k++] = add(m, c, "exp", TRACE_KIND_MATH, s + 5, s + 5, NULL);
        }
    }
    uint64_t t = n * 70001 + 100;
    uint64_t w1 = add(m, w1t, "dma_read", TRACE_KIND_MEMORY, t, t + 50, NULL);
    uint64_t w2 = add(m, w2t, "dma_read", TRACE_KIND_MEMORY, t + 10, t + 50, NULL);
    uint64_t r = add(m, rt, "exp", TRACE_KIND_MATH, t + 60, t + 70, NULL);
    dma_read(m, w1, 0, 0, 256);
    dma_read(m, w2, 256, 0, 256);
    math(m, r, 0, 1024);
    trace_model_finish(m);
    for (int swap = 0; swap < 2; swap++) {
        evs[k] = swap ? w2 : w1;
        evs[k + 1] = r; /* ends after both: the second is sorted past it, not past the first */
        evs[k + 2] = swap ? w1 : w2;
        struct trace_critpath p;
        path_of(m, evs, k + 3, &p);
        cr_assert_eq(p.ops, k + 3);
        cr_assert_eq(p.n, n + 2, "n %zu order %d: the whole chain, a read, the math op", n, order);
        for (size_t i = 0; i < n; i++) {
            cr_assert_eq(p.steps[i].ev, chain[i], "n %zu order %d: step %zu", n, order, i);
            cr_assert_eq(p.steps[i].why, i ? TRACE_DEP_ENGINE : TRACE_DEP_START);
            cr_assert_eq(p.steps[i].wait, i ? 1 : 0);
        }
        cr_assert_eq(p.steps[n + 1].ev, r);
        cr_assert_eq(p.steps[n + 1].why, TRACE_DEP_RAW);
        cr_assert_eq(p.steps[n + 1].pred, swap ? w1 : w2,
                     "n %zu order %d: the read later in the set wrote last", n, order);
        cr_assert_eq(p.end, t + 70);
        trace_critpath_fini(&p);
    }
    free(evs);
    free(chain);
    free(perm);
    trace_model_free(m);
}

Test(critpath, ops_in_any_order_give_the_same_chain)
{
    static const size_t sizes[] = {1, 2, 3, 7, 1001, 4099};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
        for (int order = 0; order < 3; order++)
            chain_in_order(sizes[s], order);
}

/* An op of no length ends after the ops that end in the same cycle (the last cycle of an
 * op with a length): it wrote the bytes last. The ends are two sorted runs, merged. */
Test(critpath, an_op_of_no_length_ends_after_those_ending_with_it)
{
    struct trace_model *m = trace_model_new();
    uint32_t d0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t d1 = trace_model_track(m, "DMA 1", TRACE_ENGINE_DMA, 1);
    uint32_t ve = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    uint64_t w = add(m, d0, "dma_read", TRACE_KIND_MEMORY, 0, 50, NULL);
    uint64_t z = add(m, d1, "dma_read", TRACE_KIND_MEMORY, 49, 49, NULL);
    uint64_t r = add(m, ve, "exp", TRACE_KIND_MATH, 60, 70, NULL);
    dma_read(m, w, 0, 0, 256);
    dma_read(m, z, 256, 0, 256);
    math(m, r, 0, 1024);
    trace_model_finish(m);
    uint64_t evs[] = {w, z, r};
    struct trace_critpath p;
    path_of(m, evs, 3, &p);
    cr_assert_eq(p.n, 3, "w, z, r");
    cr_assert_eq(p.steps[2].ev, r);
    cr_assert_eq(p.steps[2].pred, z);
    cr_assert_eq(p.steps[2].why, TRACE_DEP_RAW);
    trace_critpath_fini(&p);
    trace_model_free(m);
}

/* An op of one cycle: its end, seen a cycle early, is its start; it must not come before
 * the op's own start (the op would be its own predecessor, the path cut at it), whether it
 * ended or is in flight a cycle after it started (a live run's last op, often). */
Test(critpath, an_op_of_one_cycle_waits_on_the_op_before_it)
{
    for (int live = 0; live < 2; live++) {
        struct trace_model *m = trace_model_new();
        uint32_t ve = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
        uint64_t w = add(m, ve, "exp", TRACE_KIND_MATH, 0, 50, NULL);
        struct trace_event e = {.start = 50,
                                .end = live ? 50 : 51,
                                .track = ve,
                                .op = trace_model_intern(m, "mul", 3),
                                .op_kind = TRACE_KIND_MATH,
                                .flags = live ? TRACE_EV_INFLIGHT : 0};
        uint64_t x = trace_model_add_event(m, &e);
        if (live) /* x in flight since cycle 50, now 51 */
            trace_model_set_now(m, 51);
        trace_model_finish(m);
        uint64_t evs[] = {w, x};
        struct trace_critpath p;
        path_of(m, evs, 2, &p);
        cr_assert_eq(p.n, 2, "w then x, not x alone (live %d): %zu steps", live, p.n);
        cr_assert_eq(p.steps[0].ev, w);
        cr_assert_eq(p.steps[1].ev, x);
        cr_assert_eq(p.steps[1].pred, w);
        cr_assert_eq(p.steps[1].why, TRACE_DEP_ENGINE);
        trace_critpath_fini(&p);
        trace_model_free(m);
    }
}

/* Two DMA reads (A, B), a math op, a GEMM reading what A and B wrote (C) and a DMA write of
 * what C wrote (E), into ev; the first `with` of them given op columns. */
static struct trace_model *five_ops(uint64_t *ev, size_t with)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma0 = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t dma1 = trace_model_track(m, "sip0.cube0.pe1.pe_dma", TRACE_ENGINE_DMA, 1);
    uint32_t te0 = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t ve0 = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    ev[0] = add(m, dma0, "dma_read", TRACE_KIND_MEMORY, 0, 100, NULL);
    ev[1] = add(m, dma1, "dma_read", TRACE_KIND_MEMORY, 0, 150, NULL);
    ev[2] = add(m, ve0, "exp", TRACE_KIND_MATH, 100, 130, NULL);
    ev[3] = add(m, te0, "gemm_f32", TRACE_KIND_GEMM, 160, 400, NULL);
    ev[4] = add(m, dma0, "dma_write", TRACE_KIND_MEMORY, 405, 500, NULL);
    dma_read(m, ev[0], 0, 0, 256);
    dma_read(m, ev[1], 256, 256, 256);
    math(m, ev[2], 0, 1024);
    gemm(m, ev[3], 0, 256, 512);
    dma_write(m, ev[4], 512, 4096, 256);
    trace_model_finish(m);
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    for (size_t i = 0; i < with; i++) {
        struct trace_opinfo oi;
        trace_opinfo_of_event(m, ev[i], &sp, &oi);
        trace_opinfo_store(m, ev[i], &oi, &sp);
        cr_assert(trace_opinfo_cached(m, ev[i]));
    }
    return m;
}

/* Ops whose details are packed in op columns (a loaded trace's) have their ranges read from
 * there as the sweep goes; the first op without them has those before it kept, and every
 * later one: the path is the same whichever ops have columns. */
Test(critpath, ops_with_and_without_op_columns_give_the_same_path)
{
    for (int cols = 0; cols < 4; cols++) { /* none, the first two, all but the last, all */
        size_t with = cols == 0 ? 0 : cols == 1 ? 2 : cols == 2 ? 4 : 5;
        uint64_t ev[5];
        struct trace_model *m = five_ops(ev, with);
        struct trace_critpath p;
        path_of(m, ev, 5, &p);
        cr_assert(p.with_addresses, "columns %d", cols);
        cr_assert_eq(p.n, 3, "B, C, E (columns %d)", cols);
        cr_assert_eq(p.steps[1].ev, ev[3]);
        cr_assert_eq(p.steps[1].pred, ev[1], "C read what A and B wrote: B ended last");
        cr_assert_eq(p.steps[1].why, TRACE_DEP_RAW);
        cr_assert_eq(p.steps[1].range.lo, 256);
        cr_assert_eq(p.steps[1].range.hi, 512);
        cr_assert_eq(p.steps[2].ev, ev[4]);
        cr_assert_eq(p.steps[2].why, TRACE_DEP_RAW);
        char why[128];
        cr_assert_str_eq(trace_critpath_why(&p, &p.steps[2], why, sizeof(why)),
                         "reads tcm 0x200..0x300 it wrote", "columns %d", cols);
        trace_critpath_fini(&p);
        trace_model_free(m);
    }
}

/* each_event and with_details: the events seen in the gathering pass, and the answer. */
struct gathered {
    const struct trace_model *m;
    const uint64_t *ev;
    size_t n, wrong;  /* events seen; of those, not the i-th's */
    size_t calls;     /* of with_details */
    size_t uncached;  /* as it was told */
    size_t seen_then; /* events seen by then */
    bool answer;      /* with_details's */
    size_t infos;     /* each_info's calls */
};

static void gathered_event(void *ctx, size_t i, const struct trace_event *e)
{
    struct gathered *g = ctx;
    g->wrong += i != g->n || e != trace_model_event(g->m, g->ev[i]);
    g->n++;
}

static bool gathered_details(void *ctx, size_t uncached)
{
    struct gathered *g = ctx;
    g->calls++;
    g->uncached = uncached;
    g->seen_then = g->n;
    return g->answer;
}

static void gathered_info(void *ctx, size_t i, const struct trace_opinfo *oi)
{
    (void)i, (void)oi;
    ((struct gathered *)ctx)->infos++;
}

/* A caller looking at every event of the set too (the verdict's scan) does it in the pass
 * that gathers the ops, told how many have no op columns before any detail is read; when it
 * says no details, the path is the one of max_decode 1 (no ranges, none handed over), else
 * the one without it. */
Test(critpath, events_seen_as_gathered_and_the_details_read_as_the_caller_says)
{
    for (int cols = 0; cols < 3; cols++) { /* none, the first two, all */
        for (int answer = 0; answer < 2; answer++) {
            size_t with = cols == 0 ? 0 : cols == 1 ? 2 : 5;
            uint64_t ev[5];
            struct trace_model *m = five_ops(ev, with);
            struct gathered g = {.m = m, .ev = ev, .answer = answer};
            struct trace_critpath p, ref;
            struct trace_critpath_input in = {.m = m,
                                              .events = ev,
                                              .n = 5,
                                              .each_info = gathered_info,
                                              .each_event = gathered_event,
                                              .with_details = gathered_details,
                                              .each_ctx = &g};
            trace_critpath_compute(&in, &p);
            struct trace_critpath_input rin = {
                .m = m, .events = ev, .n = 5, .max_decode = answer ? 0 : 1};
            trace_critpath_compute(&rin, &ref);
            cr_assert_eq(g.n, 5, "every event seen once (columns %d)", cols);
            cr_assert_eq(g.wrong, 0, "in order, each its own");
            cr_assert_eq(g.calls, 1);
            cr_assert_eq(g.seen_then, 5, "told after the pass");
            cr_assert_eq(g.uncached, 5 - with, "columns %d", cols);
            cr_assert_eq(g.infos, answer ? 5 : 0, "details read as told (%d)", answer);
            cr_assert_eq(p.with_addresses, (bool)answer);
            cr_assert_eq(p.truncated, ref.truncated);
            same_path(&p, &ref, answer ? "details" : "no details");
            trace_critpath_fini(&p);
            trace_critpath_fini(&ref);
            trace_model_free(m);
        }
    }
}

/* each_info: the ops handed over, in order, and their arithmetic. */
struct handed {
    size_t n, out_of_order;
    double flops;
};

static void count_handed(void *ctx, size_t i, const struct trace_opinfo *oi)
{
    struct handed *h = ctx;
    h->out_of_order += i != h->n;
    h->n++;
    h->flops += oi->flops;
}

/* Tens of thousands of ops with op columns, each reading what the op three before it wrote,
 * and one op that starts first and ends near the end (its details read far ahead of the
 * others'): the path read as the sweep goes (each op's details read once, handed to the
 * caller in order) is the path of the same ops' details given by the caller. */
Test(critpath, details_read_as_the_sweep_goes_give_the_path_of_details_given)
{
    enum { N = 50000 };
    struct trace_model *m = trace_model_new();
    uint32_t ve[5];
    for (int t = 0; t < 5; t++) {
        char name[40];
        snprintf(name, sizeof(name), "sip0.cube0.pe%d.pe_math", t);
        ve[t] = trace_model_track(m, name, TRACE_ENGINE_VE, t);
    }
    uint64_t *ev = calloc(N + 1, sizeof(*ev));
    for (size_t i = 0; i < N; i++) {
        ev[i] = add(m, ve[i % 4], "exp", TRACE_KIND_MATH, 10 * i, 10 * i + 25, NULL);
        math(m, ev[i], (int64_t)(256 * ((i + 997) % 1000)), (int64_t)(256 * (i % 1000)));
    }
    ev[N] = add(m, ve[4], "exp", TRACE_KIND_MATH, 0, 10 * N - 1000, NULL);
    math(m, ev[N], 0, 256 * 1000);
    trace_model_finish(m);
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    struct trace_opinfo *info = calloc(N + 1, sizeof(*info));
    double flops = 0;
    for (size_t i = 0; i <= N; i++) {
        trace_opinfo_of_event(m, ev[i], &sp, &info[i]);
        trace_opinfo_store(m, ev[i], &info[i], &sp);
        flops += info[i].flops;
    }
    struct trace_critpath given, swept;
    struct trace_critpath_input in = {
        .m = m, .events = ev, .n = N + 1, .info = info, .info_spaces = &sp};
    trace_critpath_compute(&in, &given);
    struct handed h = {0};
    in = (struct trace_critpath_input){
        .m = m, .events = ev, .n = N + 1, .each_info = count_handed, .each_ctx = &h};
    trace_critpath_compute(&in, &swept);
    cr_assert_eq(h.n, N + 1, "every op handed over once");
    cr_assert_eq(h.out_of_order, 0);
    cr_assert(h.flops == flops && flops > 0);
    cr_assert_gt(given.n, 100, "a long path (%zu)", given.n);
    cr_assert_eq(swept.n, given.n);
    cr_assert_eq(swept.with_addresses, given.with_addresses);
    size_t raw = 0;
    for (size_t s = 0; s < given.n; s++) {
        const struct trace_path_step *a = &given.steps[s], *b = &swept.steps[s];
        cr_assert(a->ev == b->ev && a->pred == b->pred && a->wait == b->wait && a->why == b->why,
                  "step %zu", s);
        char wa[128], wb[128];
        cr_assert_str_eq(trace_critpath_why(&given, a, wa, sizeof(wa)),
                         trace_critpath_why(&swept, b, wb, sizeof(wb)));
        raw += a->why == TRACE_DEP_RAW;
    }
    cr_assert_gt(raw, 100, "the ops wait on what they read (%zu)", raw);
    trace_critpath_fini(&given);
    trace_critpath_fini(&swept);
    free(info);
    free(ev);
    trace_model_free(m);
}

/* Two paths step by step the same. */
static void same_path(const struct trace_critpath *a, const struct trace_critpath *b,
                      const char *what)
{
    cr_assert_eq(a->n, b->n, "%s", what);
    cr_assert_eq(a->end, b->end, "%s", what);
    for (size_t i = 0; i < a->n; i++) {
        const struct trace_path_step *x = &a->steps[i], *y = &b->steps[i];
        cr_assert(x->ev == y->ev && x->pred == y->pred && x->wait == y->wait && x->why == y->why,
                  "%s: step %zu", what, i);
        if (x->why == TRACE_DEP_RAW)
            cr_assert(x->range.space == y->range.space && x->range.lo == y->range.lo &&
                          x->range.hi == y->range.hi,
                      "%s: step %zu's bytes", what, i);
    }
}

/*
 * A set in start order, in end order, in both (as a model's events mostly are) or in
 * neither gives one path: n ops on four engines, of three tiles or none, each reading the
 * bytes another wrote; no two start together nor end together, so the set's order breaks
 * no tie. overlap: an op may end after the next two start, in another order (else each op
 * ends before the next starts: both in order).
 */
static void one_path_whatever_the_order(bool overlap)
{
    enum { N = 200 };
    struct trace_model *m = trace_model_new();
    uint32_t tr[4];
    for (int t = 0; t < 4; t++) {
        char name[16];
        snprintf(name, sizeof(name), "DMA %d", t);
        tr[t] = trace_model_track(m, name, TRACE_ENGINE_DMA, t);
    }
    static const char *const tiles[3] = {NULL, "t1", "t2"};
    uint64_t by_start[N], by_end[N], reversed[N], end[N];
    for (size_t i = 0; i < N; i++) {
        /* the ends' last cycles differ: in i % 100, then by more than 1000 * (i - j) */
        uint64_t s = 1000 * i, e = s + 1 + (overlap ? 100 * ((i * 37) % 23) + i % 100 : 900);
        uint64_t ev = i % 2 ? add(m, tr[i % 4], "dma_read", TRACE_KIND_MEMORY, s, e, tiles[i % 3])
                            : add(m, tr[i % 4], "exp", TRACE_KIND_MATH, s, e, tiles[i % 3]);
        if (i % 2)
            dma_read(m, ev, 0, (int64_t)(i % 5) * 256, 256);
        else
            math(m, ev, (int64_t)((i / 2) % 5) * 256, (int64_t)((i / 2 + 1) % 5) * 256);
        by_start[i] = by_end[i] = ev;
        reversed[N - 1 - i] = ev;
        end[i] = e;
    }
    trace_model_finish(m);
    for (size_t i = 1; i < N; i++) /* by_end sorted by end (insertion) */
        for (size_t j = i; j > 0 && end[j - 1] > end[j]; j--) {
            uint64_t t = end[j];
            end[j] = end[j - 1], end[j - 1] = t;
            t = by_end[j];
            by_end[j] = by_end[j - 1], by_end[j - 1] = t;
        }
    struct trace_critpath a, b, c;
    path_of(m, by_start, N, &a);
    path_of(m, by_end, N, &b);
    path_of(m, reversed, N, &c);
    cr_assert_geq(a.n, 10, "a chain of ops: %zu", a.n);
    cr_assert(a.with_tiles && a.with_addresses);
    same_path(&a, &b, overlap ? "by start, by end" : "in order, in order");
    same_path(&a, &c, overlap ? "by start, reversed" : "in order, reversed");
    trace_critpath_fini(&a);
    trace_critpath_fini(&b);
    trace_critpath_fini(&c);
    trace_model_free(m);
}

Test(critpath, a_set_in_start_or_end_order_or_neither_gives_one_path)
{
    one_path_whatever_the_order(false);
    one_path_whatever_the_order(true);
}

/* Two opinfos alike field by field (padding aside). */
static void same_opinfo(const struct trace_opinfo *a, const struct trace_opinfo *b,
                        const char *what, size_t i)
{
    cr_assert(a->flops == b->flops && a->bytes == b->bytes && a->stage == b->stage,
              "%s %zu: arithmetic", what, i);
    cr_assert(memcmp(a->dtype, b->dtype, sizeof(a->dtype)) == 0, "%s %zu: dtype", what, i);
    cr_assert(a->nreads == b->nreads && a->has_write == b->has_write, "%s %zu: counts", what, i);
    for (unsigned r = 0; r < TRACE_OPINFO_MAX_READS; r++) /* also those past nreads */
        cr_assert(a->reads[r].space == b->reads[r].space && a->reads[r].lo == b->reads[r].lo &&
                      a->reads[r].hi == b->reads[r].hi,
                  "%s %zu: read %u", what, i, r);
    cr_assert(a->write.space == b->write.space && a->write.lo == b->write.lo &&
                  a->write.hi == b->write.hi,
              "%s %zu: write", what, i);
}

/*
 * Op columns read apart from the registry (on the critical path's second thread), then
 * their spaces looked up (or named from the names looked up before, when they are all it
 * names), give what trace_opinfo_unpack gives, opinfo and registry alike:
 * ops of every shape, naming 29 spaces (more than a registry holds: the ranges of those it
 * has no room for are dropped, the same way), and every cut of their bytes (which unpack
 * refuses, the raw read refuses).
 */
Test(opinfo, columns_read_apart_then_named_give_what_unpack_gives)
{
    enum { OPS = 600 };
    struct trace_model *m = trace_model_new();
    /* two registries naming 13 spaces each besides hbm, tcm and sram */
    struct trace_spaces pk[2];
    for (int r = 0; r < 2; r++) {
        trace_spaces_init(&pk[r]);
        for (unsigned s = 3; s < TRACE_OPINFO_MAX_SPACES; s++)
            snprintf(pk[r].names[s], sizeof(pk[r].names[s]), "%c%u", r ? 'b' : 'a', s);
        pk[r].n = TRACE_OPINFO_MAX_SPACES;
    }
    static const char *const dtypes[] = {"", "f16", "bf16", "f32", "int8"};
    uint8_t(*buf)[TRACE_OPCOL_MAX] = calloc(OPS, sizeof(*buf));
    size_t *len = calloc(OPS, sizeof(*len));
    for (size_t i = 0; i < OPS; i++) {
        struct trace_opinfo o = {0};
        uint64_t x = i * 2654435761u;
        o.flops = i % 7 == 0 ? 0.5 * (double)i : (double)(i % 5) * 1e6; /* raw or integer */
        o.bytes = i % 3 ? (uint64_t)i << (i % 40) : 0;
        snprintf(o.dtype, sizeof(o.dtype), "%s", dtypes[i % 5]);
        o.stage = i % 11 == 0;
        o.nreads = (unsigned)(i % (TRACE_OPINFO_MAX_READS + 1));
        for (unsigned r = 0; r < o.nreads; r++) {
            uint64_t lo = (x >> (8 * r)) % 100000 * 64 + ((uint64_t)r << 44);
            o.reads[r] =
                (struct trace_range){(uint8_t)((x >> (4 * r)) % 16), lo, lo + 64 * (r + 1)};
        }
        o.has_write = i % 4 != 1;
        if (o.has_write)
            o.write = (struct trace_range){(uint8_t)(i % 16), x % 4096, x % 4096 + i + 1};
        len[i] = trace_opinfo_pack(m, &o, &pk[(i / 50) % 2], buf[i]);
    }
    trace_model_finish(m);
    struct trace_spaces a, b;
    trace_spaces_init(&a);
    trace_spaces_init(&b);
    size_t dropped = 0, cut = 0, from_known = 0;
    uint32_t known[64];
    uint8_t known_id[64];
    unsigned nknown = 0;
    for (size_t i = 0; i < OPS; i++) {
        struct trace_opinfo x, y;
        struct trace_opinfo_raw raw;
        cr_assert(trace_opinfo_unpack(m, buf[i], len[i], &a, &x), "op %zu", i);
        cr_assert(trace_opinfo_unpack_raw(m, buf[i], len[i], &raw), "op %zu", i);
        /* named from the names looked up before it alone, when they are all it names */
        struct trace_opinfo z;
        if (trace_opinfo_resolve_known(&raw, known, known_id, nknown, &z)) {
            same_opinfo(&x, &z, "op named from those known", i);
            from_known++;
        }
        trace_opinfo_resolve(m, &raw, &b, &y);
        same_opinfo(&x, &y, "op", i);
        dropped += raw.nreads - y.nreads;
        for (unsigned r = raw.has_write ? 0 : 1; r <= raw.nreads; r++) {
            int id = trace_opinfo_space_of(m, &b, raw.name[r]);
            bool met = false;
            for (unsigned k = 0; k < nknown; k++)
                met |= known[k] == raw.name[r];
            if (id >= 0 && !met)
                known[nknown] = raw.name[r], known_id[nknown++] = (uint8_t)id;
        }
        /* a cut of its bytes: refused alike (unpack may have registered spaces first: so
         * does the registry of a reader that unpacks what the raw read refused) */
        size_t at = i % len[i];
        bool ok = trace_opinfo_unpack(m, buf[i], at, &a, &x);
        cr_assert_eq(trace_opinfo_unpack_raw(m, buf[i], at, &raw), ok, "op %zu cut at %zu", i, at);
        if (ok) {
            trace_opinfo_resolve(m, &raw, &b, &y);
            same_opinfo(&x, &y, "cut op", i);
        } else {
            cr_assert_not(trace_opinfo_unpack(m, buf[i], at, &b, &y));
            cut++;
        }
        cr_assert_eq(a.n, b.n, "op %zu: the registries alike", i);
        for (unsigned s = 0; s < a.n; s++)
            cr_assert_str_eq(a.names[s], b.names[s], "op %zu", i);
    }
    cr_assert_eq(a.n, TRACE_OPINFO_MAX_SPACES, "the registry filled");
    cr_assert_gt(dropped, 50, "ranges of spaces it had no room for (%zu)", dropped);
    cr_assert_gt(cut, OPS / 2, "cuts refused (%zu)", cut);
    cr_assert_gt(from_known, OPS / 2, "named from those known (%zu)", from_known);
    free(buf);
    free(len);
    trace_model_free(m);
}

/* each_info: every opinfo handed over, in the order handed (the index of each). */
struct recorded {
    size_t n, cap;
    size_t *i;
    struct trace_opinfo *oi;
    struct trace_progress *cancel_at_progress; /* set: cancelled once cancel_at are handed */
    size_t cancel_at;
};

static void record_handed(void *ctx, size_t i, const struct trace_opinfo *oi)
{
    struct recorded *r = ctx;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->i = realloc(r->i, r->cap * sizeof(*r->i));
        r->oi = realloc(r->oi, r->cap * sizeof(*r->oi));
    }
    r->i[r->n] = i;
    r->oi[r->n++] = *oi;
    if (r->cancel_at_progress && r->n == r->cancel_at)
        atomic_store(&r->cancel_at_progress->cancel, true);
}

/*
 * A launch of 100 000 ops with op columns, on four tracks, each reading ranges others wrote
 * in spaces of their own (named as the ops are met: five of them, the registry's ids in that
 * order), a composite op left out for its stages among them: the path read with the
 * details read ahead on a second thread (threads 2, and by default at this size) is the
 * path read on one, each op's info handed over once, in the same order and the same, and
 * the spaces named alike; cancelled while it reads, it stops (an empty path) rather than
 * hang.
 */
Test(critpath, details_read_ahead_on_a_second_thread_give_the_same_path_and_infos)
{
    enum { N = 100000 };
    struct trace_model *m = trace_model_new();
    uint32_t ve[4];
    for (int t = 0; t < 4; t++) {
        char name[40];
        snprintf(name, sizeof(name), "sip0.cube0.pe%d.pe_math", t);
        ve[t] = trace_model_track(m, name, TRACE_ENGINE_VE, t);
    }
    uint64_t *ev = calloc(N, sizeof(*ev));
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    static const char *const names[] = {"", "", "", "l1", "spad", "l2", "vram", "l3"};
    for (size_t i = 0; i < N; i++) {
        bool comp = i == 5000, stage = i == 5001;
        const char *op = comp ? "composite_gemm" : stage ? "TileToken/GEMM" : "exp";
        ev[i] = add(m, ve[i % 4], op, TRACE_KIND_MATH, 10 * i, 10 * i + 25 + i % 7, NULL);
        struct trace_opinfo o = {.flops = (double)(i % 13), .bytes = i, .stage = stage};
        /* a space first met at op 1000 * s (s from 3), then by one op in ten */
        unsigned nsp = 3 + (unsigned)(i / 1000 < 5 ? i / 1000 : 5);
        o.nreads = (unsigned)(i % 3);
        for (unsigned r = 0; r < o.nreads; r++) {
            uint64_t lo = 256 * ((i + 997 * (r + 1)) % 1000);
            unsigned s = i % 10 ? 1 : (unsigned)((i / 10 + r) % nsp);
            o.reads[r] = (struct trace_range){0, lo, lo + 256};
            o.reads[r].space = (uint8_t)s; /* named below */
        }
        o.has_write = true;
        o.write = (struct trace_range){i % 10 == 5 ? (uint8_t)(i / 10 % nsp) : 1, 256 * (i % 1000),
                                       256 * (i % 1000) + 256};
        /* the registry: names in the order of their ids */
        while (sp.n < nsp) {
            snprintf(sp.names[sp.n], sizeof(sp.names[0]), "%s", names[sp.n]);
            sp.n++;
        }
        trace_opinfo_store(m, ev[i], &o, &sp);
    }
    trace_model_finish(m);
    struct trace_critpath one, two, dflt;
    struct recorded r1 = {0}, r2 = {0}, r3 = {0};
    struct trace_critpath_input in = {
        .m = m, .events = ev, .n = N, .each_info = record_handed, .each_ctx = &r1, .threads = 1};
    trace_critpath_compute(&in, &one);
    in.threads = 2, in.each_ctx = &r2;
    trace_critpath_compute(&in, &two);
    in.threads = 0, in.each_ctx = &r3;
    trace_critpath_compute(&in, &dflt);
    cr_assert_gt(one.n, 1000, "a long path (%zu)", one.n);
    cr_assert(one.with_addresses);
    same_path(&one, &two, "one thread, two");
    same_path(&one, &dflt, "one thread, the default");
    cr_assert_eq(r1.n, N - 1, "every op but the composite handed over");
    const struct recorded *rs[2] = {&r2, &r3};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(rs[k]->n, r1.n);
        for (size_t j = 0; j < r1.n; j++) {
            cr_assert_eq(rs[k]->i[j], r1.i[j], "op %zu handed in order", j);
            same_opinfo(&r1.oi[j], &rs[k]->oi[j], "handed", j);
        }
    }
    cr_assert_eq(one.spaces.n, 8, "the spaces met");
    for (unsigned s = 0; s < one.spaces.n; s++) {
        cr_assert_str_eq(one.spaces.names[s], two.spaces.names[s]);
        cr_assert_str_eq(one.spaces.names[s], dflt.spaces.names[s]);
    }
    trace_critpath_fini(&two);
    /* cancelled as it reads: an empty path, at once */
    struct trace_progress prog = {0};
    struct recorded rc = {.cancel_at_progress = &prog, .cancel_at = N / 3};
    in.threads = 2, in.each_ctx = &rc, in.progress = &prog;
    trace_critpath_compute(&in, &two);
    cr_assert_eq(two.n, 0, "cancelled: no path");
    cr_assert_lt(rc.n, N / 3 + 2 * TRACE_PROGRESS_EVERY, "it stopped soon (%zu)", rc.n);
    trace_critpath_fini(&two);
    trace_critpath_fini(&one);
    trace_critpath_fini(&dflt);
    free(r1.i), free(r1.oi), free(r2.i), free(r2.oi), free(r3.i), free(r3.oi);
    free(rc.i), free(rc.oi);
    free(ev);
    trace_model_free(m);
}

/*
 * A set given as one run of events (events NULL: the n from first on) is the set given as
 * their array: 40 000 ops with op columns, after 77 events of the model not in it, each
 * reading what one before it wrote; the same path on one thread and on two, each op's info
 * handed over with the same index, in the same order, and its steps naming the same events.
 */
Test(critpath, a_set_given_as_one_run_of_events_is_the_set_given_as_their_array)
{
    enum { N = 40000, BEFORE = 77 };
    struct trace_model *m = trace_model_new();
    uint32_t ve = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    uint32_t te = trace_model_track(m, "sip0.cube0.pe1.pe_gemm", TRACE_ENGINE_TE, 0);
    for (int i = 0; i < BEFORE; i++)
        add(m, ve, "exp", TRACE_KIND_MATH, (uint64_t)i, (uint64_t)i + 1, NULL);
    uint64_t *ev = calloc(N, sizeof(*ev));
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    snprintf(sp.names[0], sizeof(sp.names[0]), "tcm");
    sp.n = 1;
    for (size_t i = 0; i < N; i++) {
        uint64_t s = 1000 + 10 * i;
        ev[i] = add(m, i % 2 ? te : ve, "exp", TRACE_KIND_MATH, s, s + 9 + i % 5, NULL);
        struct trace_opinfo o = {.flops = (double)(i % 11), .bytes = i};
        o.nreads = i % 3 ? 1 : 0;
        uint64_t lo = 64 * ((i * 7919) % 613);
        o.reads[0] = (struct trace_range){0, lo, lo + 64};
        o.has_write = true;
        o.write = (struct trace_range){0, 64 * (i % 613), 64 * (i % 613) + 64};
        trace_opinfo_store(m, ev[i], &o, &sp);
    }
    trace_model_finish(m);
    cr_assert_eq(ev[0], BEFORE);
    cr_assert_eq(ev[N - 1], BEFORE + N - 1, "the set is one run of the model's events");
    for (unsigned threads = 1; threads <= 2; threads++) {
        struct trace_critpath a, b;
        struct recorded ra = {0}, rb = {0};
        struct trace_critpath_input in = {.m = m,
                                          .events = ev,
                                          .n = N,
                                          .each_info = record_handed,
                                          .each_ctx = &ra,
                                          .threads = threads};
        trace_critpath_compute(&in, &a);
        in.events = NULL, in.first = BEFORE, in.each_ctx = &rb;
        trace_critpath_compute(&in, &b);
        cr_assert_gt(a.n, 100, "a long path (%zu)", a.n);
        cr_assert(a.with_addresses);
        same_path(&a, &b, threads == 1 ? "one thread" : "two threads");
        for (size_t s = 0; s < a.n; s++)
            cr_assert(a.steps[s].ev >= BEFORE && a.steps[s].ev < BEFORE + N, "step %zu", s);
        cr_assert_eq(ra.n, N, "every op handed over");
        cr_assert_eq(rb.n, ra.n);
        for (size_t j = 0; j < ra.n; j++) {
            cr_assert_eq(rb.i[j], ra.i[j], "op %zu handed in order", j);
            same_opinfo(&ra.oi[j], &rb.oi[j], "handed", j);
        }
        trace_critpath_fini(&a);
        trace_critpath_fini(&b);
        free(ra.i), free(ra.oi), free(rb.i), free(rb.oi);
    }
    free(ev);
    trace_model_free(m);
}

/* each_raw: an op's arithmetic handed on the second thread, recorded as each_info's would be
 * (its index, flops, bytes, dtype, stage), in the same record as each_info's, so that the
 * order is the order of the calls of either; raw counts them (each with its event's track:
 * m, ev). */
struct both {
    struct recorded r;
    size_t raw;
    const struct trace_model *m;
    const uint64_t *ev;
};

static void both_info(void *ctx, size_t i, const struct trace_opinfo *oi)
{
    struct both *b = ctx;
    struct trace_opinfo o = {.flops = oi->flops, .bytes = oi->bytes, .stage = oi->stage};
    memcpy(o.dtype, oi->dtype, sizeof(o.dtype));
    record_handed(&b->r, i, &o);
}

static void both_raw(void *ctx, size_t i, uint32_t track, const struct trace_opinfo_raw *raw)
{
    struct both *b = ctx;
    cr_assert_eq(track, trace_model_event(b->m, b->ev[i])->track, "op %zu's track", i);
    struct trace_opinfo o = {.flops = raw->flops, .bytes = raw->bytes, .stage = raw->stage};
    memcpy(o.dtype, raw->dtype, sizeof(o.dtype));
    record_handed(&b->r, i, &o);
    b->raw++;
}

/*
 * A launch of 60 000 ops with op columns (GEMMs of three dtypes and math ops, stages among
 * them, each reading bytes an op before it wrote): with each_raw, the details read ahead on a
 * second thread hand each op's arithmetic there, every op once to each_raw or each_info, in order,
 * the same as each_info alone gets on one thread (a sum of their flops in that order the same
 * double), the path the same, to the bytes each step read of its predecessor; with an umbrella op
 * left out (its stages in the set), each_info alone.
 */
Test(critpath, arithmetic_handed_on_the_second_thread_in_order)
{
    enum { N = 60000 };
    static const char *const dt[] = {"f16", "bf16", "f32"};
    for (int with_comp = 0; with_comp < 2; with_comp++) {
        struct trace_model *m = trace_model_new();
        uint32_t tr[4];
        for (int t = 0; t < 4; t++) {
            char name[40];
            snprintf(name, sizeof(name), "sip0.cube0.pe%d.pe_%s", t, t < 2 ? "gemm" : "math");
            tr[t] = trace_model_track(m, name, t < 2 ? TRACE_ENGINE_TE : TRACE_ENGINE_VE, t);
        }
        uint64_t *ev = calloc(N, sizeof(*ev));
        struct trace_spaces sp;
        trace_spaces_init(&sp);
        for (size_t i = 0; i < N; i++) {
            bool comp = with_comp && i == 777, stage = i % 50 == 3;
            const char *op = comp ? "composite_gemm" : stage ? "TileToken/GEMM" : "op";
            ev[i] = add(m, tr[i % 4], op, i % 4 < 2 ? TRACE_KIND_GEMM : TRACE_KIND_MATH, 10 * i,
                        10 * i + 25 + i % 7, NULL);
            struct trace_opinfo o = {
                .flops = 0.1 * (double)(i % 17), .bytes = i % 5 ? 0 : i, .stage = stage};
            if (i % 4 < 2)
                snprintf(o.dtype, sizeof(o.dtype), "%s", dt[i % 3]);
            /* the bytes op i - 4 wrote (ended before it starts), and of one op in nine
             * those of ops i - 5 and i - 6 too (more ranges than fit in the line the
             * second thread hands an op in) */
            o.nreads = i % 9 ? 1 : 3;
            for (unsigned r = 0; r < o.nreads; r++) {
                uint64_t lo = 256 * ((i + 296 - r) % 300);
                o.reads[r] = (struct trace_range){0, lo, lo + 256};
            }
            o.has_write = true;
            o.write = (struct trace_range){0, 256 * (i % 300), 256 * (i % 300) + 256};
            trace_opinfo_store(m, ev[i], &o, &sp);
        }
        trace_model_finish(m);
        struct trace_critpath one, two;
        struct both b1 = {.m = m, .ev = ev}, b2 = {.m = m, .ev = ev};
        struct trace_critpath_input in = {
            .m = m, .events = ev, .n = N, .each_info = both_info, .each_ctx = &b1, .threads = 1};
        trace_critpath_compute(&in, &one);
        in.threads = 2, in.each_raw = both_raw, in.each_ctx = &b2;
        trace_critpath_compute(&in, &two);
        cr_assert_gt(one.n, 100, "a long path (%zu)", one.n);
        size_t raw = 0;
        for (size_t s = 0; s < one.n; s++)
            raw += one.steps[s].why == TRACE_DEP_RAW;
        cr_assert_gt(raw, one.n / 2, "waits on the bytes read (%zu of %zu)", raw, one.n);
        same_path(&one, &two, "each_info alone, with each_raw");
        cr_assert_eq(b1.raw, 0);
        if (with_comp)
            cr_assert_eq(b2.raw, 0, "an op left out: each_info alone (%zu)", b2.raw);
        else
            cr_assert_gt(b2.raw, N / 2, "handed on the second thread (%zu)", b2.raw);
        cr_assert_eq(b1.r.n, N - (size_t)with_comp, "every op handed once");
        cr_assert_eq(b2.r.n, b1.r.n, "every op handed once");
        double f1 = 0, f2 = 0;
        for (size_t j = 0; j < b1.r.n; j++) {
            cr_assert_eq(b2.r.i[j], b1.r.i[j], "op %zu handed in order", j);
            same_opinfo(&b1.r.oi[j], &b2.r.oi[j], "handed", j);
            f1 += b1.r.oi[j].flops, f2 += b2.r.oi[j].flops;
        }
        cr_assert(f1 == f2 && f1 > 0);
        trace_critpath_fini(&one);
        trace_critpath_fini(&two);
        free(b1.r.i), free(b1.r.oi), free(b2.r.i), free(b2.r.oi);
        free(ev);
        trace_model_free(m);
    }
}

/* A viewer's path (the Gantt's C, the Chrome export's) of a launch of one op past
 * TRACE_CRITPATH_KEEP_MAX: its ranges read from the op columns, nothing kept, each op's step
 * the RAW it waited on, as the verdict has it; one op without its columns, and the ranges
 * would have to be decoded and kept: none are read, the path says truncated. */
Test(critpath, a_viewers_path_past_the_keep_budget_reads_the_op_columns)
{
    const size_t n = TRACE_CRITPATH_KEEP_MAX + 1;
    for (size_t bare = 0; bare < 2; bare++) {
        struct trace_model *m = chain_model(1, n, bare);
        struct trace_critpath_input in = {
            .m = m, .first = 0, .n = n, .with_details = trace_critpath_details_bounded};
        in.each_ctx = &in.n;
        struct trace_critpath p;
        trace_critpath_compute(&in, &p);
        cr_assert_eq(p.truncated, bare == 1, "bare %zu", bare);
        cr_assert_eq(p.with_addresses, bare == 0, "bare %zu", bare);
        if (bare) { /* (the PE's order alone: every other op) */
            cr_assert_lt(p.n, n);
            for (size_t k = 1; k < p.n; k += 9973)
                cr_assert_neq(p.steps[k].why, TRACE_DEP_RAW, "step %zu", k);
        } else {
            cr_assert_eq(p.n, n, "every op on the chain");
            for (size_t k = 1; k < n; k += 9973)
                cr_assert(p.steps[k].why == TRACE_DEP_RAW && p.steps[k].pred == k - 1,
                          "step %zu: %s", k, trace_dep_name(p.steps[k].why));
            cr_assert_eq(p.steps[n - 1].range.lo, 64 * (n - 2));
            cr_assert_eq(p.steps[n - 1].range.hi, 64 * (n - 1));
        }
        trace_critpath_fini(&p);
        trace_model_free(m);
    }
}
