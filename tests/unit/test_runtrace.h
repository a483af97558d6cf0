/*
 * A trace written from a short llm_decode run (launches, tokens, markers, resource samples,
 * op columns with addresses, transfers, call sites) at path: what the tests of the cache
 * (the index, its pruning, the verdict kept beside it) and of the fast parser open.
 */
#ifndef TEST_RUNTRACE_H
#define TEST_RUNTRACE_H

#include "sim/host/run.h"
#include "trace/file/writer.h"
#include "trace/live/live.h"

#include <criterion/criterion.h>

static inline void test_write_run_trace(const char *path)
{
    struct sim_run_opts ro = {.kernel_spec = "llm_decode:layers=1,gen=2"};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s", d.msg);
    struct trace_live_opts o = {.model_name = "t", .prefill_tokens = -1, .decode_tokens = -1};
    struct trace_live *l;
    cr_assert_eq(trace_live_new(sim_run_chip(r), &o, &l, &d), 0, "%s", d.msg);
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 4096);
        trace_live_sync(l);
    }
    trace_live_sync(l);
    cr_assert_eq(trace_writer_write_model(trace_live_model(l), path, 0, &d), 0, "%s", d.msg);
    trace_live_free(l);
    sim_run_free(r);
}

#endif
