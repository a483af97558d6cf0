/*
 * A model of kernel launches whose ops hand bytes on from one to the next (the critical
 * path's and the Gantt's path tests): in each launch (cmdq_id 1, 2, ...), op i writes the 64
 * bytes of TCM at 64 * i and reads the 64 before them, which op i - 1 wrote; the ops take
 * the DMA engines of two PEs in turn, 10 cycles each, back to back. Each op's path step is
 * thus its predecessor's RAW (without the ranges: the order of ends). Op columns are given
 * to every op but the first `bare` of the model.
 */
#ifndef TEST_CHAIN_H
#define TEST_CHAIN_H

#include "trace/analysis/opinfo.h"
#include "trace/model/model.h"

#include <string.h>

static inline struct trace_model *chain_model(size_t launches, size_t ops, size_t bare)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma[2] = {trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0),
                       trace_model_track(m, "sip0.cube0.pe1.pe_dma", TRACE_ENGINE_DMA, 1)};
    uint32_t name = trace_model_intern(m, "ipcq_copy", 9);
    uint64_t t = 0;
    for (size_t l = 0; l < launches; l++)
        for (size_t i = 0; i < ops; i++, t += 10) {
            struct trace_event ev = {.start = t,
                                     .end = t + 10,
                                     .track = dma[i % 2],
                                     .op = name,
                                     .op_kind = TRACE_KIND_MEMORY,
                                     .layer = TRACE_NO_STR,
                                     .tile = TRACE_NO_STR,
                                     .cmdq_id = (int32_t)(l + 1)};
            trace_model_add_event(m, &ev);
        }
    trace_model_finish(m);
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    uint64_t n = trace_model_event_count(m);
    for (uint64_t e = bare; e < n; e++) {
        uint64_t i = e % ops;
        struct trace_opinfo o;
        memset(&o, 0, sizeof(o));
        o.bytes = 64;
        o.has_write = true;
        o.write = (struct trace_range){1, 64 * i, 64 * i + 64}; /* (1: tcm) */
        if (i) {
            o.nreads = 1;
            o.reads[0] = (struct trace_range){1, 64 * i - 64, 64 * i};
        }
        trace_opinfo_store(m, e, &o, &sp);
    }
    return m;
}

#endif
