/*
 * Traces for the tests of the comparison (test_diff.c, test_diffcond.c): a trace from JSON
 * text, and a small trace of npuscope's shape (one kernel launch: a DMA read, an add, a
 * DMA write, the kernel's begin and end markers) whose DMA ops last as long as asked.
 */
#ifndef TEST_DIFF_UTIL_H
#define TEST_DIFF_UTIL_H

#include "trace/file/loader.h"
#include "trace/model/model.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static inline struct trace_model *load_text(const char *text)
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

/* A trace of npuscope's shape: one kernel launch (cmdq) with a DMA read of dma cycles, an
 * add, a DMA write of dma cycles; begin and end markers naming the kernel. */
static inline struct trace_model *kernel_trace(const char *kernel, int cmdq, uint64_t at,
                                               uint64_t dma, const char *gbps)
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

#endif
