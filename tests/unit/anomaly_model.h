/*
 * A model with an anomaly of every kind, for the anomalies' unit tests and their
 * ThreadSanitizer program (plain C: no Criterion): launches of six gemms, every 13th op 20x
 * slower and every 17th launch after a long gap, each launch's DMA read, every 7th of them
 * beyond the DRAM's peak of 64 bytes a cycle; an INVALID_TRACE marker half way. And whether
 * two anomalies are the same, every field (the doubles to the bit).
 */
#ifndef TESTS_ANOMALY_MODEL_H
#define TESTS_ANOMALY_MODEL_H

#include "sim/data/value.h"
#include "trace/model/model.h"
#include "trace/verdict/anomaly.h"

#include <stdbool.h>
#include <string.h>

static inline uint64_t anomaly_model_op(struct trace_model *m, uint32_t track, uint32_t name,
                                        uint64_t s, uint64_t e, int32_t cmdq)
{
    struct trace_event ev = {.start = s,
                             .end = e,
                             .track = track,
                             .op = name,
                             .layer = TRACE_NO_STR,
                             .tile = TRACE_NO_STR,
                             .cmdq_id = cmdq};
    return trace_model_add_event(m, &ev);
}

/* The model of `launches` launches, finished. */
static inline struct trace_model *anomaly_model(int launches)
{
    struct trace_model *m = trace_model_new();
    uint32_t te = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t dma = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t gemm = trace_model_intern(m, "gemm", 4), rd = trace_model_intern(m, "dma_read", 8);
    uint64_t t = 0;
    for (int l = 0; l < launches; l++) {
        for (int i = 0; i < 6; i++) {
            uint64_t d = (l * 6 + i) % 13 == 0 ? 2000 : 100;
            t += (l % 17 == 0 && i == 3) ? 5000 : 10;
            anomaly_model_op(m, te, gemm, t, t + d, l);
            t += d;
        }
        uint64_t ev = anomaly_model_op(m, dma, rd, t, t + 1024, l);
        trace_model_add_transfer(
            m, &(struct trace_transfer){.bytes = l % 7 ? 4096 : 262144, .event = (uint32_t)ev});
        t += 1024;
    }
    struct sim_value *det = sim_value_map();
    sim_value_map_set_str(det, "error", "kernel 'k' on sip0.cube0.pe0: boom");
    trace_model_add_marker(
        m, &(struct trace_marker){.cycle = t / 2,
                                  .name = trace_model_intern(m, "INVALID_TRACE", 13),
                                  .track = UINT32_MAX,
                                  .details = det});
    struct sim_value *cfg = sim_value_map();
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    sim_value_map_set_int(mem, "dram_peak_bw_bytes_per_cycle", 64);
    trace_model_set_config_take(m, cfg);
    trace_model_finish(m);
    return m;
}

static inline bool anomaly_same_bits(double x, double y)
{
    return memcmp(&x, &y, sizeof(x)) == 0;
}

static inline bool anomaly_same(const struct trace_anomaly *a, const struct trace_anomaly *b)
{
    return a->kind == b->kind && a->start == b->start && a->end == b->end && a->event == b->event &&
           a->track == b->track && a->marker == b->marker &&
           anomaly_same_bits(a->value, b->value) && anomaly_same_bits(a->reference, b->reference) &&
           anomaly_same_bits(a->per_work, b->per_work) && a->count == b->count &&
           a->repeats == b->repeats && a->first == b->first && a->last == b->last;
}

#endif
