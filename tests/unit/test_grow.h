/*
 * A growing model for the incremental analyses' tests: a stand-in for a live run, stepped
 * one tick at a time. Each step may start ops (appended in start order, in flight), end
 * some of those in flight in any order, raise markers and tokens, and moves now on. The ops
 * are spread over engines of every kind (a HOST track whose KernelLaunch ops name their
 * kernel, GEMMs that say their m, n, k), layers and launches (some with neither), with DRAM
 * transfers, zero-length ops, a long op now and then that stays in flight for many steps, a slow op
 * now and then, and an op now and then that is recorded late, with a start before the latest (as a
 * host's KernelLaunch is), once in a while very late. A fixed seed makes each run the same.
 */
#ifndef TEST_GROW_H
#define TEST_GROW_H

#include "sim/data/value.h"
#include "trace/model/model.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { GROW_TRACKS = 6, GROW_OPEN = 64 };

struct grow_model {
    struct trace_model *m;
    uint32_t track[GROW_TRACKS];
    uint64_t open[GROW_OPEN]; /* events in flight */
    size_t nopen;
    uint64_t now, rng, steps;
    int32_t cmdq;
    int64_t tokens;
    uint64_t token_start;
};

static inline uint64_t grow_rand(struct grow_model *g, uint64_t n)
{
    g->rng = g->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (g->rng >> 33) % n;
}

static inline void grow_new(struct grow_model *g, uint64_t seed)
{
    memset(g, 0, sizeof(*g));
    g->rng = seed;
    g->m = trace_model_new();
    static const struct {
        const char *name;
        enum trace_engine e;
    } t[GROW_TRACKS] = {
        {"sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE}, {"sip0.cube0.pe1.pe_gemm", TRACE_ENGINE_TE},
        {"sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA}, {"sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE},
        {"host.io_cpu", TRACE_ENGINE_HOST},          {"sip0.other", TRACE_ENGINE_OTHER}};
    for (int i = 0; i < GROW_TRACKS; i++)
        g->track[i] = trace_model_track(g->m, t[i].name, t[i].e, 0);
    trace_model_finish(g->m);
}

/* Start an op on track k now. */
static inline void grow_start(struct grow_model *g, int k)
{
    static const char *const ops[] = {"gemm_f16", "gemm_f16",     "dma_read",
                                      "exp",      "KernelLaunch", "barrier"};
    char layer[16];
    snprintf(layer, sizeof(layer), "L%d", (int)(g->steps / 7 % 5));
    const char *op = ops[k];
    if (k == 2 && grow_rand(g, 3) == 0)
        op = "dma_write";
    struct trace_event ev = {
        .start = g->now,
        .end = g->now,
        .track = g->track[k],
        .op = trace_model_intern(g->m, op, strlen(op)),
        .layer = grow_rand(g, 9) ? trace_model_intern(g->m, layer, strlen(layer)) : TRACE_NO_STR,
        .cmdq_id = grow_rand(g, 11) ? g->cmdq : TRACE_NO_CMDQ,
        .op_kind = TRACE_KIND_UNKNOWN,
        .flags = TRACE_EV_INFLIGHT};
    uint64_t i = trace_model_add_event(g->m, &ev);
    if (k == 2) { /* a DMA moves DRAM bytes, as the live feed says at its start */
        struct trace_transfer x[2] = {
            {.bytes = 64 + grow_rand(g, 4096)},
            {.bytes = 32 + grow_rand(g, 512), .flags = TRACE_XFER_WRITE | TRACE_XFER_KV}};
        trace_model_set_transfers(g->m, i, x, grow_rand(g, 4) ? 1 : 2);
    }
    if (k <= 1 && grow_rand(g, 3)) { /* a GEMM says how much work it does, most of them */
        struct sim_value *d = sim_value_map();
        sim_value_map_set_int(d, "m", 16 << grow_rand(g, 3));
        sim_value_map_set_int(d, "n", 64);
        sim_value_map_set_int(d, "k", 64);
        trace_model_set_details_take(g->m, i, d);
    }
    if (k == 4 && strcmp(op, "KernelLaunch") == 0 && grow_rand(g, 2)) {
        struct sim_value *d = sim_value_map();
        char kernel[32];
        snprintf(kernel, sizeof(kernel), "kern_%d", (int)(g->cmdq % 3));
        sim_value_map_set_str(d, "kernel", kernel);
        trace_model_set_details_take(g->m, i, d);
    }
    if (g->nopen < GROW_OPEN)
        g->open[g->nopen++] = i;
    else
        trace_model_end_event(g->m, i, g->now);
}

/* One step: end some ops in flight (any of them, so out of order; a zero-length one at
 * once), start some, a marker or a token now and then; now moves on. */
static inline void grow_step(struct grow_model *g)
{
    g->steps++;
    for (size_t k = 0; k < g->nopen;) {
        /* the first op stays in flight long now and then: the oldest blocks the others */
        bool keep = grow_rand(g, 3) != 0 || (k == 0 && g->steps % 50 < 30);
        if (keep) {
            k++;
            continue;
        }
        trace_model_end_event(g->m, g->open[k], g->now);
        g->open[k] = g->open[--g->nopen];
    }
    int starts = (int)grow_rand(g, 4);
    for (int s = 0; s < starts; s++)
        grow_start(g, (int)grow_rand(g, GROW_TRACKS));
    if (grow_rand(g, 8) == 0) { /* a zero-length op */
        grow_start(g, (int)grow_rand(g, GROW_TRACKS));
        trace_model_end_event(g->m, g->open[--g->nopen], g->now);
    }
    if (grow_rand(g, 15) == 0 && g->now > 3000) { /* recorded late */
        uint64_t now = g->now;
        g->now -= grow_rand(g, 15) ? grow_rand(g, 600) : now / 2;
        grow_start(g, 4);
        g->now = now;
    }
    if (g->steps % 23 == 0)
        g->cmdq++;
    if (grow_rand(g, 10) == 0) { /* a marker, most naming the launch */
        struct sim_value *d = NULL;
        if (grow_rand(g, 4)) {
            d = sim_value_map();
            char kernel[32];
            snprintf(kernel, sizeof(kernel), "marked_%d", (int)g->cmdq);
            sim_value_map_set_str(d, "kernel", kernel);
            sim_value_map_set_int(d, "cmdq_id", g->cmdq - (int32_t)grow_rand(g, 2));
        }
        const char *name = grow_rand(g, 2) ? "begin" : "INVALID_TRACE";
        struct trace_marker k = {g->now, trace_model_intern(g->m, name, strlen(name)), UINT32_MAX,
                                 d};
        trace_model_add_marker(g->m, &k);
    }
    if (g->steps % 17 == 0) { /* a token ends: it spans since the last one */
        struct sim_value *d = sim_value_map();
        sim_value_map_set_str(d, "kernel", "tok_kernel");
        sim_value_map_set_int(d, "cmdq_id", g->cmdq);
        trace_model_add_token(g->m, &(struct trace_token){.start = g->token_start,
                                                          .end = g->now,
                                                          .token_index = g->tokens,
                                                          .decode = g->tokens > 0,
                                                          .details = d});
        g->tokens++;
        g->token_start = g->now;
    }
    g->now += 1 + grow_rand(g, 40) + (grow_rand(g, 60) == 0 ? 3000 : 0);
    trace_model_set_now(g->m, g->now);
    trace_model_finish(g->m);
}

#endif
