/*
 * ThreadSanitizer driver for the verdict's second thread (trace/verdict/verdict.h; make
 * tsan): a launch of many ops, each waiting on the one before while an HBM and a link are
 * busy, its verdict worked out with the resources busy during the path's waits on a second
 * thread (threads 2) and on one (threads 1): the two must agree to the last bit. Exit 0 when
 * they do; any data race between the two threads makes ThreadSanitizer report and fail.
 */
#include "sim/data/value.h"
#include "trace/model/model.h"
#include "trace/verdict/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 40000 };

int main(void)
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
    uint32_t op = trace_model_intern(m, "exp", 3);
    for (uint64_t i = 0; i < N; i++) {
        struct trace_event ev = {.start = 300 * i,
                                 .end = 300 * i + 100,
                                 .track = ve,
                                 .op = op,
                                 .layer = TRACE_NO_STR,
                                 .tile = TRACE_NO_STR,
                                 .cmdq_id = 1};
        trace_model_add_event(m, &ev);
    }
    static const char *const res[] = {"sip0.cube0.hbm", "sip0.cube1.hbm",
                                      "sip0.cube0.noc<->sip0.cube1.noc"};
    for (size_t r = 0; r < 3; r++) {
        uint32_t name = trace_model_intern(m, res[r], strlen(res[r]));
        for (uint64_t k = 0; k < 3 * N; k++)
            trace_model_add_bw_sample(
                m, &(struct trace_bw_sample){k * 100, 100, 1000 * ((k * 7 + r) % 11), 0, name});
    }
    trace_model_finish(m);
    struct trace_verdict *one = trace_verdict_new(m, &(struct trace_verdict_opts){.threads = 1});
    struct trace_verdict *two = trace_verdict_new(m, &(struct trace_verdict_opts){.threads = 2});
    int bad = one->nlaunches != 1 || two->nlaunches != 1 || one->launches[0].path.n < N;
    for (int k = 0; !bad && k < TRACE_PCAT_COUNT; k++)
        bad = one->launches[0].time[k] != two->launches[0].time[k];
    bad |= !(one->launches[0].time[TRACE_PCAT_MEMORY] > 0);
    if (bad)
        fprintf(stderr, "verdict_tsan: the verdicts differ (or the path is short)\n");
    else
        printf("verdict_tsan: a path of %zu steps, the same verdict on one thread and on two\n",
               one->launches[0].path.n);
    trace_verdict_free(one);
    trace_verdict_free(two);
    trace_model_free(m);
    return bad;
}
