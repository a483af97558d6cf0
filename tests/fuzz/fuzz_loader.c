/*
 * Fuzz harness for the trace loader and validator: any bytes are loaded as a trace file
 * (from memory, not NUL-terminated); what loads is then used the way the viewer and the
 * summary use it (metrics, bandwidth samples, details on demand, seek and busy time).
 * Nothing may crash, leak or read out of bounds. The bytes are also parsed by the loader's
 * fast parser and by cJSON: whatever the fast parser takes must be cJSON's tree and end.
 */
#include "sim/util/escape.h"
#include "trace/file/fastjson.h"
#include "trace/file/loader.h"
#include "trace/analysis/metrics.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same values, linked as cJSON links them. */
static bool same_tree(const cJSON *a, const cJSON *b)
{
    if (a->type != b->type || a->valueint != b->valueint ||
        memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) != 0 ||
        (a->string == NULL) != (b->string == NULL) || (a->string && strcmp(a->string, b->string)) ||
        (a->valuestring == NULL) != (b->valuestring == NULL) ||
        (a->valuestring && strcmp(a->valuestring, b->valuestring)))
        return false;
    const cJSON *x = a->child, *y = b->child, *lx = NULL, *ly = NULL;
    for (; x && y; lx = x, ly = y, x = x->next, y = y->next)
        if ((lx && (x->prev != lx || y->prev != ly)) || !same_tree(x, y))
            return false;
    return !x && !y && (!a->child || (a->child->prev == lx && b->child->prev == ly));
}

static void fast_is_cjson(const char *p, size_t n)
{
    const char *fe = NULL, *ce = NULL;
    cJSON *f = trace_fastjson_parse(p, n, &fe);
    if (!f)
        return;
    cJSON *c = cJSON_ParseWithLengthOpts(p, n, &ce, 0);
    if (!c || fe != ce || !same_tree(f, c))
        abort();
    cJSON_Delete(f);
    cJSON_Delete(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fast_is_cjson((const char *)data, size);
    struct trace_report *r = trace_report_new(8);
    struct trace_model *m = NULL;
    struct diag d;
    char line[4096];
    if (trace_load_buffer((const char *)data, size, "fuzz.json", r, &m, &d) < 0) {
        diag_format(&d, line, sizeof(line));
        trace_report_free(r);
        return 0;
    }
    for (size_t i = 0; i < trace_report_count(r); i++) {
        const struct trace_problem *p = trace_report_get(r, i);
        sim_escape(p->msg, strlen(p->msg), line, sizeof(line));
    }
    struct sim_value *s = trace_metrics_summary(m);
    sim_value_free(s);
    struct trace_bw_sample *bw;
    trace_metrics_bandwidth(m, 64, &bw);
    free(bw);
    uint64_t n = trace_model_event_count(m);
    for (uint64_t i = 0; i < n && i < 16; i++)
        sim_value_free(trace_model_event_details(m, i));
    uint64_t lo = trace_model_t_min(m), hi = trace_model_t_max(m);
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        trace_model_track_busy(m, t, lo, hi);
        trace_model_track_busy(m, t, 0, UINT64_MAX);
        trace_model_track_seek(m, t, lo + (hi - lo) / 2);
    }
    trace_model_free(m);
    trace_report_free(r);
    return 0;
}
