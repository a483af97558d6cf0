/* The Chrome export: the structure of the Trace Event Format file, read back with cJSON;
 * no two slices of a thread partially overlap, for every built-in kernel's export. */
#include "sim/host/run.h"
#include "sim/kernel/kernel.h"
#include "trace/file/chrome.h"
#include "trace/file/loader.h"
#include "trace/live/live.h"
#include "trace/model/model.h"
#include "sim/util/mapguard.h"
#include "trace/verdict/verdict.h"
#include "test_chain.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    char other[80];
    unlink(path);
    snprintf(other, sizeof(other), "%s.one", path); /* (two_threads_write_the_same_bytes_as_one) */
    unlink(other);
    snprintf(other, sizeof(other), "%s.trace.json", path);
    unlink(other);
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

/* The whole export at path, whatever its size. */
static cJSON *read_json_any(void)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    cr_assert_not_null(j, "the export is not JSON");
    return j;
}

struct slice {
    double pid, tid, ts, te;
    const char *name;
};

static int cmp_slice(const void *a, const void *b)
{
    const struct slice *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->te > y->te ? -1 : x->te < y->te; /* the longer first: it may hold the other */
}

/*
 * The X events of an export grouped by thread (pid, tid): no two of a thread partially
 * overlap (one ends inside the other, after the other starts). Perfetto nests or
 * misdraws them. Times compare within a nanosecond's thousandth of rounding. Returns
 * the number of X events.
 */
static size_t expect_no_partial_overlap(const cJSON *ev, const char *what)
{
    size_t n = 0, cap = 64;
    struct slice *v = malloc(cap * sizeof(*v));
    const cJSON *x;
    cJSON_ArrayForEach(x, ev)
    {
        if (strcmp(s_of(x, "ph"), "X"))
            continue;
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof(*v));
        double ts = n_of(x, "ts"), dur = n_of(x, "dur");
        cr_assert(dur >= 0, "%s: %s has a negative dur", what, s_of(x, "name"));
        v[n++] = (struct slice){n_of(x, "pid"), n_of(x, "tid"), ts, ts + dur, s_of(x, "name")};
    }
    qsort(v, n, sizeof(*v), cmp_slice);
    const double eps = 1e-6;
    /* per thread, a stack of the slices still open at the current start */
    struct slice *open = malloc((n ? n : 1) * sizeof(*open));
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && (v[i].pid != v[i - 1].pid || v[i].tid != v[i - 1].tid))
            depth = 0;
        while (depth && open[depth - 1].te <= v[i].ts + eps)
            depth--;
        if (depth)
            cr_assert(v[i].te <= open[depth - 1].te + eps,
                      "%s: on thread %g/%g, %s [%.6f, %.6f) and %s [%.6f, %.6f) partially overlap",
                      what, v[i].pid, v[i].tid, open[depth - 1].name, open[depth - 1].ts,
                      open[depth - 1].te, v[i].name, v[i].ts, v[i].te);
        open[depth++] = v[i];
    }
    free(open);
    free(v);
    return n;
}

/* The thread of the first X event named name. */
static double tid_of(const cJSON *ev, const char *name)
{
    const cJSON *x = find(ev, "X", name, NAN);
    cr_assert_not_null(x, "no slice %s", name);
    return n_of(x, "tid");
}

Test(chrome, ops_running_at_once_on_a_track_go_to_threads_of_their_own, .init = setup,
     .fini = teardown)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    struct trace_event e = {.track = dma, .cmdq_id = TRACE_NO_CMDQ};
    static const struct {
        const char *op;
        uint64_t s, e;
    } ops[] = {
        {"a", 0, 100},
        {"b", 50, 150},  /* b overlaps a: a thread of its own */
        {"c", 100, 200}, /* starts as a ends: a's thread again */
        {"d", 150, 160}, /* b has ended: b's thread */
    };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        e.op = trace_model_intern(m, ops[i].op, 1);
        e.start = ops[i].s, e.end = ops[i].e;
        trace_model_add_event(m, &e);
    }
    /* two sequences prefilling at once, each token meeting the next */
    struct trace_token t[] = {{.start = 0, .end = 40, .token_index = 0},
                              {.start = 40, .end = 90, .token_index = 1},
                              {.start = 10, .end = 60, .token_index = 0}};
    for (size_t i = 0; i < 3; i++)
        trace_model_add_token(m, &t[i]);
    trace_model_finish(m);
    cr_assert_eq(trace_chrome_write(m, path, 0, NULL), 0);
    cJSON *j = read_json_any();
    const cJSON *ev = cJSON_GetObjectItem(j, "traceEvents");
    cr_assert_eq(expect_no_partial_overlap(ev, "hand-built"), 7);
    cr_assert_eq(tid_of(ev, "a"), tid_of(ev, "c"));
    cr_assert_eq(tid_of(ev, "b"), tid_of(ev, "d"));
    cr_assert_neq(tid_of(ev, "a"), tid_of(ev, "b"));
    /* the second thread is named after the track */
    int named = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, ev)
    {
        if (strcmp(s_of(x, "name"), "thread_name") == 0 && n_of(x, "tid") == tid_of(ev, "b"))
            named += strcmp(s_of(cJSON_GetObjectItem(x, "args"), "name"),
                            "sip0.cube0.pe0.pe_dma (2)") == 0;
    }
    cr_assert_eq(named, 1);
    /* tokens: the first sequence's two on one thread, the second's beside it */
    cr_assert_eq(tid_of(ev, "PREFILL token 1"), 1);
    int prefill0 = 0;
    cJSON_ArrayForEach(x, ev)
    {
        if (strcmp(s_of(x, "name"), "PREFILL token 0") == 0)
            prefill0 += n_of(x, "tid") == 1 ? 1 : 10;
    }
    cr_assert_eq(prefill0, 11, "one PREFILL token 0 on thread 1, the other elsewhere");
    cJSON_Delete(j);
    trace_model_free(m);
}

/* Run kernel spec headless into a model and export it to path. */
static cJSON *export_kernel(const char *spec)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s: %s", spec, d.msg);
    struct trace_live_opts o = {.model_name = spec, .prefill_tokens = -1, .decode_tokens = -1};
    struct trace_live *l;
    cr_assert_eq(trace_live_new(sim_run_chip(r), &o, &l, &d), 0, "%s", d.msg);
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 4096);
        trace_live_sync(l);
    }
    trace_live_sync(l);
    cr_assert_eq(trace_chrome_write(trace_live_model(l), path, 0, &d), 0, "%s", d.msg);
    trace_live_free(l);
    sim_run_free(r);
    return read_json_any();
}

Test(chrome, no_two_slices_of_a_thread_partially_overlap_for_any_built_in_kernel, .init = setup,
     .fini = teardown)
{
    for (size_t k = 0; k < sim_kernel_count(); k++) {
        const char *name = sim_kernel_at(k)->name;
        cJSON *j = export_kernel(name);
        size_t n = expect_no_partial_overlap(cJSON_GetObjectItem(j, "traceEvents"), name);
        cr_assert_gt(n, 0, "%s: no slices", name);
        cJSON_Delete(j);
    }
}

struct tok {
    double start, end, tid;
    const char *phase, *component;
};

static int cmp_tok(const void *a, const void *b)
{
    const struct tok *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

Test(chrome, a_sequences_tokens_meet_on_one_thread, .init = setup, .fini = teardown)
{
    /* each token ends at the cycle the next one of its sequence starts (one rounding rule
     * for every instant), so the two share a thread: no lane of its own for either */
    for (int pes = 1; pes <= 2; pes++) {
        char spec[64];
        snprintf(spec, sizeof(spec), "llm_decode:pes=%d,gen=4", pes);
        cJSON *j = export_kernel(spec);
        const cJSON *ev = cJSON_GetObjectItem(j, "traceEvents");
        expect_no_partial_overlap(ev, spec);
        struct tok t[256];
        size_t n = 0;
        const cJSON *x;
        cJSON_ArrayForEach(x, ev)
        {
            const cJSON *a = cJSON_GetObjectItem(x, "args");
            if (strcmp(s_of(x, "ph"), "X") || !strstr(s_of(x, "name"), " token ") || n == 256)
                continue;
            t[n++] = (struct tok){n_of(a, "start_cycle"), n_of(a, "end_cycle"), n_of(x, "tid"),
                                  s_of(x, "cat"),
                                  s_of(cJSON_GetObjectItem(a, "details"), "component_id")};
        }
        qsort(t, n, sizeof(*t), cmp_tok);
        int meets = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t k = i + 1; k < n; k++) {
                if (strcmp(t[k].component, t[i].component))
                    continue;
                /* the next token of the same sequence */
                cr_assert_geq(t[k].start, t[i].end, "%s: tokens of one sequence overlap", spec);
                if (t[k].start == t[i].end && strcmp(t[k].phase, t[i].phase) == 0) {
                    meets++;
                    cr_assert_eq(t[k].tid, t[i].tid, "%s: a token and the next on two threads",
                                 spec);
                }
                break;
            }
        cr_assert_geq(meets, 3, "%s: %d tokens meeting the next", spec, meets);
        cJSON_Delete(j);
    }
}

/* ---- counters per resource, flows for dependencies and critical paths ---------------------- */

/* The process named name. */
static double pid_named(const cJSON *ev, const char *name)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, ev)
    {
        if (strcmp(s_of(x, "ph"), "M") == 0 && strcmp(s_of(x, "name"), "process_name") == 0 &&
            strcmp(s_of(cJSON_GetObjectItem(x, "args"), "name"), name) == 0)
            return n_of(x, "pid");
    }
    cr_assert_fail("no process named %s", name);
    return NAN;
}

/* Every flow event of category cat is valid Trace Event Format ("s" then "f" with "bp":
 * "e", one of each per id, each on the thread and at the start of a slice); the arrows as
 * pairs of slice names, from -> to, into pairs (room for cap). Returns the count. */
static size_t flows(const cJSON *ev, const char *cat, const char *(*pairs)[2], size_t cap)
{
    size_t n = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, ev)
    {
        if (strcmp(s_of(s, "cat"), cat) || strcmp(s_of(s, "ph"), "s"))
            continue;
        cr_assert(cJSON_IsString(cJSON_GetObjectItem(s, "name")));
        double id = n_of(s, "id");
        cr_assert(!isnan(id) && !isnan(n_of(s, "pid")) && !isnan(n_of(s, "tid")) &&
                  !isnan(n_of(s, "ts")));
        const cJSON *f = NULL, *x;
        int fs = 0, ss = 0;
        cJSON_ArrayForEach(x, ev)
        {
            if (strcmp(s_of(x, "cat"), cat) || n_of(x, "id") != id)
                continue;
            if (strcmp(s_of(x, "ph"), "f") == 0)
                f = x, fs++;
            else
                ss += strcmp(s_of(x, "ph"), "s") == 0;
        }
        cr_assert_eq(ss, 1, "flow %g starts once", id);
        cr_assert_eq(fs, 1, "flow %g ends once", id);
        cr_assert_str_eq(s_of(f, "bp"), "e", "the end binds to the enclosing slice");
        cr_assert_str_eq(s_of(f, "name"), s_of(s, "name"));
        const char *names[2] = {NULL, NULL};
        const cJSON *ends[2] = {s, f};
        for (int k = 0; k < 2; k++) {
            cJSON_ArrayForEach(x, ev)
            {
                if (strcmp(s_of(x, "ph"), "X") == 0 && n_of(x, "pid") == n_of(ends[k], "pid") &&
                    n_of(x, "tid") == n_of(ends[k], "tid") && n_of(x, "ts") == n_of(ends[k], "ts"))
                    names[k] = s_of(x, "name");
            }
            cr_assert_not_null(names[k], "flow %g: no slice where its %s lies", id,
                               k ? "end" : "start");
        }
        cr_assert_lt(n, cap);
        pairs[n][0] = names[0], pairs[n][1] = names[1];
        n++;
    }
    return n;
}

Test(chrome, resource_counters_and_flows_for_dependencies_and_critical_paths, .init = setup,
     .fini = teardown)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t gemm = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    const struct {
        const char *op;
        uint32_t *track;
        uint64_t s, e;
    } ops[] = {
        {"load_a", &dma, 0, 100},
        {"load_b", &dma, 100, 300},
        {"matmul", &gemm, 300, 700},
        {"store", &dma, 700, 800},
    };
    for (size_t i = 0; i < 4; i++) {
        struct trace_event e = {.start = ops[i].s,
                                .end = ops[i].e,
                                .track = *ops[i].track,
                                .cmdq_id = 3,
                                .op = trace_model_intern(m, ops[i].op, strlen(ops[i].op))};
        trace_model_add_event(m, &e);
    }
    trace_model_add_dep(m, 2, 0); /* matmul on load_a and load_b */
    trace_model_add_dep(m, 2, 1);
    uint32_t hbm = trace_model_intern(m, "sip0.cube0.hbm", 14);
    uint32_t link = trace_model_intern(m, "sip0.cube0<->sip0.cube1", 23);
    struct trace_bw_sample bw[] = {
        {.cycle = 0, .window = 100, .read_bytes = 800, .write_bytes = 0, .resource = hbm},
        {.cycle = 100, .window = 100, .read_bytes = 1600, .write_bytes = 0, .resource = hbm},
        {.cycle = 700, .window = 100, .read_bytes = 0, .write_bytes = 400, .resource = hbm},
        {.cycle = 0, .window = 100, .read_bytes = 200, .write_bytes = 100, .resource = link},
        {.cycle = 0,
         .window = 1000,
         .read_bytes = 2400,
         .write_bytes = 400,
         .resource = TRACE_NO_STR},
    };
    for (size_t i = 0; i < sizeof(bw) / sizeof(bw[0]); i++)
        trace_model_add_bw_sample(m, &bw[i]);
    trace_model_finish(m);
    cr_assert_eq(trace_chrome_write(m, path, 0, NULL), 0);
    cJSON *j = read_json_any();
    const cJSON *ev = cJSON_GetObjectItem(j, "traceEvents");

    /* a counter track per resource, in their own process, back to zero after a gap */
    double rp = pid_named(ev, "HBMs and links");
    int hbm_n = 0, link_n = 0;
    double last_hbm_ts = -1, last_hbm_read = -1;
    const cJSON *x;
    cJSON_ArrayForEach(x, ev)
    {
        if (strcmp(s_of(x, "ph"), "C") || strcmp(s_of(x, "cat"), "bandwidth"))
            continue;
        cr_assert_eq(n_of(x, "pid"), rp);
        const cJSON *args = cJSON_GetObjectItem(x, "args");
        cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(args, "read")));
        cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(args, "write")));
        cr_assert(n_of(x, "ts") >= 0);
        if (strcmp(s_of(x, "name"), "sip0.cube0.hbm bytes/cycle") == 0) {
            cr_assert_gt(n_of(x, "ts"), last_hbm_ts, "a resource's counter goes forward");
            if (hbm_n == 1)
                last_hbm_read = n_of(args, "read");
            last_hbm_ts = n_of(x, "ts");
            hbm_n++;
        } else {
            cr_assert_str_eq(s_of(x, "name"), "sip0.cube0<->sip0.cube1 bytes/cycle");
            link_n++;
        }
    }
    /* hbm: 0, 100 (its second window), 200 (zero: a gap), 700, 800 (zero) */
    cr_assert_eq(hbm_n, 5);
    cr_assert_eq(last_hbm_read, 16.0, "1600 bytes over 100 cycles");
    cr_assert_eq(link_n, 2);
    cr_assert_not_null(find(ev, "C", "DRAM bytes/cycle", NAN), "the DRAM's counter stays");

    /* an arrow per dependency_id, from the op depended on to the op */
    const char *pairs[16][2];
    cr_assert_eq(flows(ev, "dependency", pairs, 16), 2);
    cr_assert_str_eq(pairs[0][0], "load_a");
    cr_assert_str_eq(pairs[0][1], "matmul");
    cr_assert_str_eq(pairs[1][0], "load_b");
    cr_assert_str_eq(pairs[1][1], "matmul");

    /* the launch's critical path: load_b (ended last of matmul's), matmul, store */
    size_t np = flows(ev, "critical_path", pairs, 16);
    cr_assert_eq(np, 3, "load_a -> load_b -> matmul -> store");
    cr_assert_str_eq(pairs[0][0], "load_a");
    cr_assert_str_eq(pairs[1][0], "load_b");
    cr_assert_str_eq(pairs[1][1], "matmul");
    cr_assert_str_eq(pairs[2][1], "store");
    cJSON_ArrayForEach(x, ev)
    {
        if (strcmp(s_of(x, "cat"), "critical_path") == 0)
            cr_assert_str_eq(s_of(x, "name"), "critical path: cmdq 3");
    }
    cJSON_Delete(j);
    trace_model_free(m);
}

/* The bytes of the file at p (a new string; *n its length). */
static char *slurp_file(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    cr_assert_not_null(f, "%s", p);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    buf[len] = '\0';
    *n = (size_t)len;
    return buf;
}

/* Exported with the details read again from the trace file (copied as they stand where
 * they can be: plain strings and integers; parsed where not: escapes, non-ASCII, fractions,
 * repeated keys, whitespace, deep nesting, a details that is null, missing, not an object),
 * the file is byte for byte the export through the model. */
Test(chrome, details_read_from_the_file_give_the_same_bytes, .init = setup, .fini = teardown)
{
    static const char *const traces[] = {
        "tests/data/traces/details_forms.json", "tests/data/traces/spec_example.json",
        "tests/data/traces/srcsites.json",      "tests/data/traces/unknown_things.json",
        "tests/data/traces/views.json",
    };
    for (size_t k = 0; k < sizeof(traces) / sizeof(traces[0]); k++) {
        struct trace_model *m = NULL;
        struct diag d;
        cr_assert_eq(trace_load_file(traces[k], NULL, &m, &d), 0, "%s: %s", traces[k], d.msg);
        char other[80];
        snprintf(other, sizeof(other), "%s.model", path);
        cr_assert_eq(trace_chrome_write(m, other, 0, &d), 0, "%s", d.msg);
        cr_assert_eq(trace_chrome_export(m, traces[k], path, 0, &d), 0, "%s", d.msg);
        size_t na, nb;
        char *a = slurp_file(other, &na), *b = slurp_file(path, &nb);
        cr_assert_eq(na, nb, "%s: %zu bytes against %zu", traces[k], nb, na);
        cr_assert(memcmp(a, b, na) == 0, "%s: the exports differ", traces[k]);
        if (k == 0) { /* the forms are there */
            cr_assert(strstr(b, "\"details\":{\"x\":1.5,\"y\":1000,\"z\":0,\"w\":7"));
            cr_assert(strstr(b, "\"details\":{\"x\":1,\"y\":[1,2],\"s\":\"a b\"}"));
            cr_assert(strstr(b, "\"details\":{\"x\":1,\"y\":3}"));
            cr_assert(strstr(b, "\"details\":[1,\"2\",[]]"));
        }
        free(a);
        free(b);
        unlink(other);
        trace_model_free(m);
    }
}

/* Exported on two threads (pieces of events formatted by each in turn, written in order),
 * the file is byte for byte the export on one, with the details read from the trace file or
 * through the model: a trace of 70,001 ops (five pieces and a part: each buffer used twice),
 * with details copied as they stand, details parsed and printed again (a fraction, an
 * escape), none, and null. */
Test(chrome, two_threads_write_the_same_bytes_as_one, .init = setup, .fini = teardown)
{
    enum { N = 70001 };
    char trace[80], one[80];
    snprintf(trace, sizeof(trace), "%s.trace.json", path);
    snprintf(one, sizeof(one), "%s.one", path);
    FILE *f = fopen(trace, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"version\": \"1.0\", \"config_snapshot\": {\"clock_ghz\": 1.5},\n"
               " \"timeline_events\": [\n");
    for (int i = 0; i < N; i++) {
        int pe = i % 3, t = i / 3 * 70;
        fprintf(f,
                "%s{\"type\": \"ENGINE_EVENT\", \"engine\": \"DMA\", \"engine_id\": %d, "
                "\"op\": \"dma_read\", \"start_cycle\": %d, \"end_cycle\": %d, "
                "\"component_id\": \"sip0.cube0.pe%d.pe_dma\", \"op_kind\": \"memory\"",
                i ? "," : "", pe, t, t + 40 + i % 7, pe);
        if (i % 11 == 3)
            fprintf(f, ", \"details\": {\"x\": %d.25, \"s\": \"a\\\"b\"}", i);
        else if (i % 13 == 5)
            fprintf(f, ", \"details\": null");
        else if (i % 2)
            fprintf(f, ", \"details\": {\"src_addr\": %d, \"nbytes\": 2048, \"h\": \"h%d\"}",
                    4096 * i, i % 17);
        fprintf(f, "}\n");
    }
    fprintf(f, "], \"summary_metrics\": {}}\n");
    cr_assert_eq(fclose(f), 0);
    struct trace_model *m = NULL;
    struct diag d;
    cr_assert_eq(trace_load_file(trace, NULL, &m, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_model_event_count(m), N);
    for (int via_file = 0; via_file < 2; via_file++) {
        const char *src = via_file ? trace : NULL;
        cr_assert_eq(trace_chrome_export_with(m, src, one, 0, 1, NULL, &d), 0, "%s", d.msg);
        cr_assert_eq(trace_chrome_export_with(m, src, path, 0, 2, NULL, &d), 0, "%s", d.msg);
        size_t na, nb;
        char *a = slurp_file(one, &na), *b = slurp_file(path, &nb);
        cr_assert_eq(na, nb, "%zu bytes on two threads against %zu on one", nb, na);
        cr_assert(memcmp(a, b, na) == 0, "the exports differ (details from the %s)",
                  via_file ? "file" : "model");
        cr_assert(strstr(b, "\"details\":{\"x\":69996.25,\"s\":\"a\\\"b\"}"), "the last pieces");
        free(a);
        free(b);
    }
    trace_model_free(m);
    unlink(one);
    unlink(trace);
}

/* The critical paths of a verdict kept beside the index are drawn as judged: the export is
 * the same byte for byte as with the paths computed (three launches of a chain of 41 ops),
 * and a mark put in a judged path shows in the file (it is the verdict's path that is
 * drawn, not one computed again). */
Test(chrome, a_kept_verdicts_paths_are_drawn_as_judged, .init = setup, .fini = teardown)
{
    struct trace_model *m = chain_model(3, 41, 0);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    cr_assert_eq(v->nlaunches, 3);
    char own[80];
    snprintf(own, sizeof(own), "%s.own", path);
    struct diag d;
    cr_assert_eq(trace_chrome_export_with(m, NULL, own, 0, 1, NULL, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_chrome_export_with(m, NULL, path, 0, 1, v, &d), 0, "%s", d.msg);
    size_t na, nb;
    char *a = slurp_file(own, &na), *b = slurp_file(path, &nb);
    cr_assert(na == nb && memcmp(a, b, na) == 0, "the paths judged drawn otherwise");
    cr_assert(strstr(b, "\"critical path: "), "no path drawn");
    free(a);
    free(b);
    /* a mark: the second launch's path judged one step shorter (its first step gone) */
    struct trace_critpath *p = &v->launches[1].path;
    cr_assert_gt(p->n, 2);
    memmove(p->steps, p->steps + 1, (p->n - 1) * sizeof(*p->steps));
    p->n--;
    cr_assert_eq(trace_chrome_export_with(m, NULL, path, 0, 1, v, &d), 0, "%s", d.msg);
    cJSON *j = read_json_any();
    const char *pairs[128][2];
    size_t n = flows(cJSON_GetObjectItem(j, "traceEvents"), "critical_path", pairs, 128);
    cr_assert_eq(n, 3 * 40 - 1, "the mark does not show: %zu arrows", n);
    cJSON_Delete(j);
    trace_verdict_free(v);
    trace_model_free(m);
    unlink(own);
}

/* A trace cut short on disk after it was loaded and before its details are read again for
 * the export: no SIGBUS; the file is JSON, the ops before the cut keep their details, those
 * past it have none, and the cut is counted (the command line says so). */
Test(chrome, a_trace_cut_short_after_its_load_exports_without_the_details_past_the_cut,
     .init = setup, .fini = teardown)
{
    enum { N = 4000 };
    char trace[80];
    snprintf(trace, sizeof(trace), "%s.trace.json", path);
    FILE *f = fopen(trace, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"version\": \"1.0\", \"timeline_events\": [\n");
    for (int i = 0; i < N; i++)
        fprintf(f,
                "%s{\"type\": \"ENGINE_EVENT\", \"engine\": \"DMA\", \"engine_id\": 0, "
                "\"op\": \"dma_read\", \"start_cycle\": %d, \"end_cycle\": %d, "
                "\"component_id\": \"sip0.cube0.pe0.pe_dma\", \"op_kind\": \"memory\", "
                "\"details\": {\"src_addr\": %d, \"nbytes\": 64, \"h\": \"op%d\"}}\n",
                i ? "," : "", 10 * i, 10 * i + 5, 64 * i, i);
    fprintf(f, "]}\n");
    cr_assert_eq(fclose(f), 0);
    struct trace_model *m = NULL;
    struct diag d;
    cr_assert_eq(trace_load_file(trace, NULL, &m, &d), 0, "%s", d.msg);
    struct stat st;
    cr_assert_eq(stat(trace, &st), 0);
    cr_assert_eq(truncate(trace, st.st_size / 4), 0);
    unsigned long cuts = sim_mapguard_cuts();
    cr_assert_eq(trace_chrome_export_with(m, trace, path, 0, 1, NULL, &d), 0, "%s", d.msg);
    cr_assert_gt(sim_mapguard_cuts(), cuts, "the cut is counted");
    cJSON *j = read_json_any();
    char *text = cJSON_PrintUnformatted(j);
    cr_assert(strstr(text, "\"h\":\"op0\""), "the first op's details");
    cr_assert_null(strstr(text, "\"h\":\"op3999\""), "the last op's details, past the cut");
    free(text);
    cJSON_Delete(j);
    trace_model_free(m);
    unlink(trace);
}
