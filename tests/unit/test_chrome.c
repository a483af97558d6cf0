/* The Chrome export: the structure of the Trace Event Format file, read back with cJSON. */
#include "trace/chrome.h"
#include "trace/model.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void setup(void)
{
    snprintf(path, sizeof(path), "/tmp/npuscope-chrome.XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
}

static void teardown(void)
{
    unlink(path);
}

static cJSON *read_json(void)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    cr_assert_not_null(j, "not JSON: %.100s", buf);
    return j;
}

static const char *s_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double n_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The first event with phase ph and name (or any name when NULL) after index *from. */
static const cJSON *find(const cJSON *events, const char *ph, const char *name, double pid)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        if (strcmp(s_of(e, "ph"), ph) == 0 && (!name || strcmp(s_of(e, "name"), name) == 0) &&
            (isnan(pid) || n_of(e, "pid") == pid))
            return e;
    }
    return NULL;
}

static int count(const cJSON *events, const char *ph)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events) n += strcmp(s_of(e, "ph"), ph) == 0;
    return n;
}

Test(chrome, events_tracks_markers_tokens_and_counters, .init = setup, .fini = teardown)
{
    struct trace_model *m = trace_model_new();
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 2.0);
    trace_model_set_config_take(m, cfg);
    uint32_t dma = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t te = trace_model_track(m, "sip1.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t host = trace_model_track(m, "host", TRACE_ENGINE_HOST, 0);
    struct trace_event e = {
        .start = 1000, .end = 3000, .track = dma, .cmdq_id = 4, .op_kind = TRACE_KIND_MEMORY};
    e.op = trace_model_intern(m, "dma_read", 8);
    e.layer = trace_model_intern(m, "ffn\x1b]52;c;x\x07", 13);
    uint64_t i = trace_model_add_event(m, &e);
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "nbytes", 2048);
    trace_model_set_details_take(m, i, p);
    struct trace_event g = {.start = 3000,
                            .end = 5000,
                            .track = te,
                            .cmdq_id = TRACE_NO_CMDQ,
                            .op_kind = TRACE_KIND_GEMM};
    g.op = trace_model_intern(m, "gemm_f16", 8);
    trace_model_add_event(m, &g);
    g.track = host, g.op_kind = TRACE_KIND_UNKNOWN, g.op = trace_model_intern(m, "launch", 6);
    trace_model_add_event(m, &g);
    struct trace_marker k = {.cycle = 4000, .name = trace_model_intern(m, "DONE", 4), .track = te};
    trace_model_add_marker(m, &k);
    struct trace_marker k2 = {
        .cycle = 10, .name = trace_model_intern(m, "START", 5), .track = UINT32_MAX};
    trace_model_add_marker(m, &k2);
    struct trace_token t = {.start = 0, .end = 2000, .token_index = 7, .decode = true};
    trace_model_add_token(m, &t);
    trace_model_finish(m);

    struct diag d;
    cr_assert_eq(trace_chrome_write(m, path, 1024, &d), 0, "%s", d.msg);
    cJSON *j = read_json();
    cr_assert_str_eq(s_of(j, "displayTimeUnit"), "ns");
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
    cr_assert(cJSON_IsArray(ev));

    /* a process per sip, one for the rest, tokens and DRAM */
    const cJSON *p1 = find(ev, "M", "process_name", 1);
    cr_assert_str_eq(s_of(cJSON_GetObjectItem(p1, "args"), "name"), "sip0");
    cr_assert_str_eq(s_of(cJSON_GetObjectItem(find(ev, "M", "process_name", 2), "args"), "name"),
                     "sip1");
    cr_assert_str_eq(s_of(cJSON_GetObjectItem(find(ev, "M", "process_name", 3), "args"), "name"),
                     "other");
    /* a thread per track, named after it */
    int threads = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, ev)
    {
        if (strcmp(s_of(x, "name"), "thread_name") || n_of(x, "pid") > 3)
            continue;
        threads++;
        const char *name = s_of(cJSON_GetObjectItem(x, "args"), "name");
        double want_pid = strncmp(name, "sip0", 4) == 0 ? 1 : strncmp(name, "sip1", 4) == 0 ? 2 : 3;
        cr_assert_eq(n_of(x, "pid"), want_pid, "%s", name);
    }
    cr_assert_eq(threads, 3);

    /* complete events: microseconds at 2 GHz; op as name, op_kind as category */
    cr_assert_eq(count(ev, "X"), 4, "three ops and one token");
    const cJSON *x0 = find(ev, "X", "dma_read", NAN);
    cr_assert_not_null(x0);
    cr_assert_str_eq(s_of(x0, "cat"), "memory");
    cr_assert_float_eq(n_of(x0, "ts"), 0.5, 1e-12);
    cr_assert_float_eq(n_of(x0, "dur"), 1.0, 1e-12);
    cr_assert_eq(n_of(x0, "pid"), 1);
    const cJSON *args = cJSON_GetObjectItem(x0, "args");
    cr_assert_eq(n_of(args, "cmdq_id"), 4);
    cr_assert_str_eq(s_of(args, "layer_id"), "ffn\x1b]52;c;x\x07", "strings survive, escaped");
    cr_assert_eq(n_of(cJSON_GetObjectItem(args, "details"), "nbytes"), 2048);
    cr_assert_eq(n_of(find(ev, "X", "gemm_f16", NAN), "pid"), 2);
    cr_assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(find(ev, "X", "gemm_f16", NAN), "args"),
                                       "cmdq_id"));

    /* markers: on their track, or global */
    const cJSON *mk = find(ev, "i", "DONE", NAN);
    cr_assert_str_eq(s_of(mk, "s"), "t");
    cr_assert_eq(n_of(mk, "pid"), 2);
    cr_assert_float_eq(n_of(mk, "ts"), 2.0, 1e-12);
    cr_assert_str_eq(s_of(find(ev, "i", "START", NAN), "s"), "g");

    /* tokens in their own process */
    const cJSON *tk = find(ev, "X", "DECODE token 7", NAN);
    cr_assert_not_null(tk);
    cr_assert_eq(n_of(tk, "pid"), 4);
    cr_assert_float_eq(n_of(tk, "dur"), 1.0, 1e-12);

    /* DRAM bandwidth: 2048 B over cycles [1000, 3000) in 1024-cycle windows */
    cr_assert_eq(count(ev, "C"), 4, "three windows and a return to zero");
    double total = 0;
    cJSON_ArrayForEach(x, ev)
    {
        if (strcmp(s_of(x, "ph"), "C") == 0) {
            cr_assert_eq(n_of(x, "pid"), 5);
            total += n_of(cJSON_GetObjectItem(x, "args"), "read") * 1024;
        }
    }
    cr_assert_float_eq(total, 2048, 1e-6);
    cJSON_Delete(j);
    trace_model_free(m);
}

Test(chrome, without_a_clock_a_cycle_is_a_nanosecond, .init = setup, .fini = teardown)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "VE 3", TRACE_ENGINE_VE, 3);
    struct trace_event e = {.start = 1500, .end = 1750, .track = t, .cmdq_id = TRACE_NO_CMDQ};
    e.op = trace_model_intern(m, "exp", 3);
    trace_model_add_event(m, &e);
    trace_model_finish(m);
    cr_assert_eq(trace_chrome_write(m, path, 0, NULL), 0);
    cJSON *j = read_json();
    const cJSON *ev = cJSON_GetObjectItem(j, "traceEvents");
    const cJSON *x = find(ev, "X", "exp", NAN);
    cr_assert_float_eq(n_of(x, "ts"), 1.5, 1e-12);
    cr_assert_float_eq(n_of(x, "dur"), 0.25, 1e-12);
    cr_assert_str_eq(s_of(cJSON_GetObjectItem(find(ev, "M", "process_name", 1), "args"), "name"),
                     "npu");
    cr_assert_eq(count(ev, "C"), 0);
    cJSON_Delete(j);
    trace_model_free(m);
}

Test(chrome, an_unwritable_destination_is_reported)
{
    struct trace_model *m = trace_model_new();
    trace_model_finish(m);
    struct diag d;
    cr_assert_lt(trace_chrome_write(m, "/nonexistent-dir/out.json", 0, &d), 0);
    cr_assert_str_eq(d.file, "/nonexistent-dir/out.json");
    cr_assert(strstr(d.msg, "cannot create"), "%s", d.msg);
    trace_model_free(m);
}
