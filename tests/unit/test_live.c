/*
 * The live trace feed: op records become ENGINE_EVENTs while the chip runs (in flight at
 * their start, ended with their details at their end), markers and tokens follow, the
 * streamed file loads back into the same model with the same summary metrics, validates
 * clean, and its bandwidth samples add up; a run stopped early is written whole and
 * marked incomplete; a trace file that cannot be created fails before the run.
 */
#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/host/host.h"
#include "sim/kernel/kernel.h"
#include "sim/chip/oplog.h"
#include "sim/host/run.h"
#include "sim/kernel/tl.h"
#include "sim/program/workload.h"
#include "trace/model/format.h"
#include "trace/live/live.h"
#include "trace/file/loader.h"
#include "trace/analysis/metrics.h"
#include "trace/live/sumacc.h"
#include "trace/file/validate.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[256];

static void mkdir_tmp(void)
{
    const char *t = getenv("TMPDIR"); /* the system's temporary directory */
    snprintf(dir, sizeof(dir), "%s/npuscope-live.XXXXXX", t && *t ? t : P_tmpdir);
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(live, .init = mkdir_tmp, .fini = rm_tmp);

/* Events of op records: every event but the HOST spans (host messages, io_cpu, m_cpu). */
static uint64_t op_events(const struct trace_model *m)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < trace_model_event_count(m); i++)
        n += trace_model_track_get(m, trace_model_event(m, i)->track)->engine != TRACE_ENGINE_HOST;
    return n;
}

static const char *tmp_path(const char *name)
{
    static char buf[4][320];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
    return buf[k];
}

/* Entries in dir (temporary leftovers included). */
static int files_in_dir(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static struct trace_live_opts opts(const char *path)
{
    return (struct trace_live_opts){
        .trace_path = path,
        .timestamp = 1764498765, /* 2025-11-30T10:32:45Z */
        .model_name = "test",
        .cmdq_file = "kernel:test",
        .prefill_tokens = -1,
        .decode_tokens = -1,
    };
}

static struct sim_run *new_run(const char *spec)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s", d.msg);
    return r;
}

static struct trace_live *new_live(struct sim_chip *chip, const struct trace_live_opts *o)
{
    struct trace_live *l;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(trace_live_new(chip, o, &l, &d), 0, "%s", d.msg);
    return l;
}

static struct trace_model *load(const char *path, struct trace_report **rep)
{
    struct trace_report *r = trace_report_new(16);
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_file(path, r, &m, &d), 0, "%s", d.msg);
    for (size_t i = 0; i < trace_report_count(r); i++)
        cr_log_warn("%s: %s", trace_report_get(r, i)->path, trace_report_get(r, i)->msg);
    if (rep)
        *rep = r;
    else
        trace_report_free(r);
    return m;
}

static cJSON *parse_file(const char *path)
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
    cr_assert_not_null(j, "%s is not JSON", path);
    return j;
}

/* ---- comparing models -------------------------------------------------------------------- */

/* Event indices of a track sorted by (start, end, op): the file is in end order, the live
 * model in start order, so only a canonical order compares. */
struct sorted {
    const struct trace_model *m;
    uint64_t *v;
    size_t n;
};

static const struct trace_model *cmp_model;

static int cmp_ev(const void *a, const void *b)
{
    const struct trace_event *x = trace_model_event(cmp_model, *(const uint64_t *)a);
    const struct trace_event *y = trace_model_event(cmp_model, *(const uint64_t *)b);
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return strcmp(trace_model_str(cmp_model, x->op), trace_model_str(cmp_model, y->op));
}

static struct sorted track_events(const struct trace_model *m, uint32_t t)
{
    const uint32_t *idx;
    size_t n = trace_model_track_events(m, t, &idx);
    struct sorted s = {m, malloc((n ? n : 1) * sizeof(uint64_t)), n};
    for (size_t k = 0; k < n; k++)
        s.v[k] = idx[k];
    cmp_model = m;
    qsort(s.v, n, sizeof(uint64_t), cmp_ev);
    return s;
}

static int32_t find_track(const struct trace_model *m, const char *name)
{
    for (uint32_t t = 0; t < trace_model_track_count(m); t++)
        if (strcmp(trace_model_str(m, trace_model_track_get(m, t)->name), name) == 0)
            return (int32_t)t;
    return -1;
}

/* Equal value trees, numbers compared by value: JSON cannot tell 1.0 from 1 (FORMAT.md,
 * "Numbers and strings"), so a whole float reads back as an integer. */
static bool equiv(const struct sim_value *a, const struct sim_value *b)
{
    if (!a || !b)
        return a == b;
    bool na = a->type == SIM_V_INT || a->type == SIM_V_FLOAT;
    bool nb = b->type == SIM_V_INT || b->type == SIM_V_FLOAT;
    if (na && nb)
        return (a->type == SIM_V_INT ? (double)a->u.i : a->u.f) ==
               (b->type == SIM_V_INT ? (double)b->u.i : b->u.f);
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case SIM_V_LIST:
        if (a->u.list.len != b->u.list.len)
            return false;
        for (size_t i = 0; i < a->u.list.len; i++)
            if (!equiv(a->u.list.items[i], b->u.list.items[i]))
                return false;
        return true;
    case SIM_V_MAP:
        if (a->u.map.len != b->u.map.len)
            return false;
        for (size_t i = 0; i < a->u.map.len; i++)
            if (strcmp(a->u.map.keys[i], b->u.map.keys[i]) ||
                !equiv(a->u.map.vals[i], b->u.map.vals[i]))
                return false;
        return true;
    default: return sim_value_equal(a, b);
    }
}

static const char *opt(const struct trace_model *m, uint32_t id)
{
    return id == TRACE_NO_STR ? "(null)" : trace_model_str(m, id);
}

/* Everything the model holds, live vs loaded, compared by content. */
static void expect_same_model(const struct trace_model *a, const struct trace_model *b)
{
    cr_assert_eq(trace_model_event_count(a), trace_model_event_count(b));
    uint64_t seen = 0;
    for (uint32_t ta = 0; ta < trace_model_track_count(a); ta++) {
        const struct trace_track *tra = trace_model_track_get(a, ta);
        const char *name = trace_model_str(a, tra->name);
        int32_t tb = find_track(b, name);
        cr_assert_geq(tb, 0, "track %s is missing from the loaded model", name);
        const struct trace_track *trb = trace_model_track_get(b, (uint32_t)tb);
        cr_assert_eq(tra->engine, trb->engine, "%s", name);
        struct sorted ea = track_events(a, ta), eb = track_events(b, (uint32_t)tb);
        cr_assert_eq(ea.n, eb.n, "%s: %zu vs %zu events", name, ea.n, eb.n);
        if (ea.n)
            cr_assert_eq(tra->engine_id, trb->engine_id, "%s", name);
        for (size_t k = 0; k < ea.n; k++) {
            const struct trace_event *x = trace_model_event(a, ea.v[k]);
            const struct trace_event *y = trace_model_event(b, eb.v[k]);
            cr_assert_eq(x->start, y->start, "%s #%zu", name, k);
            cr_assert_eq(x->end, y->end, "%s #%zu", name, k);
            cr_assert_str_eq(trace_model_str(a, x->op), trace_model_str(b, y->op));
            cr_assert_str_eq(opt(a, x->layer), opt(b, y->layer));
            cr_assert_str_eq(opt(a, x->tile), opt(b, y->tile));
            cr_assert_eq(x->cmdq_id, y->cmdq_id);
            cr_assert_eq(x->op_kind, y->op_kind);
            struct sim_value *da = trace_model_event_details(a, ea.v[k]);
            struct sim_value *db = trace_model_event_details(b, eb.v[k]);
            cr_assert(equiv(da, db), "%s #%zu: details differ", name, k);
            sim_value_free(da);
            sim_value_free(db);
        }
        seen += ea.n;
        free(ea.v);
        free(eb.v);
    }
    cr_assert_eq(seen, trace_model_event_count(a));

    cr_assert_eq(trace_model_marker_count(a), trace_model_marker_count(b));
    for (size_t i = 0; i < trace_model_marker_count(a); i++) {
        const struct trace_marker *x = trace_model_marker(a, i), *y = trace_model_marker(b, i);
        cr_assert_eq(x->cycle, y->cycle);
        cr_assert_str_eq(trace_model_str(a, x->name), trace_model_str(b, y->name));
        cr_assert_str_eq(trace_model_str(a, trace_model_track_get(a, x->track)->name),
                         trace_model_str(b, trace_model_track_get(b, y->track)->name));
        cr_assert(equiv(x->details, y->details));
    }
    cr_assert_eq(trace_model_token_count(a), trace_model_token_count(b));
    for (size_t i = 0; i < trace_model_token_count(a); i++) {
        const struct trace_token *x = trace_model_token(a, i), *y = trace_model_token(b, i);
        cr_assert_eq(x->start, y->start);
        cr_assert_eq(x->end, y->end);
        cr_assert_eq(x->token_index, y->token_index);
        cr_assert_eq(x->decode, y->decode);
        cr_assert(equiv(x->details, y->details));
    }
    cr_assert_eq(trace_model_mem_access_count(a), trace_model_mem_access_count(b));
    cr_assert_eq(trace_model_transfer_count(a), trace_model_transfer_count(b));
    cr_assert_eq(trace_model_t_max(a), trace_model_t_max(b));
    cr_assert(equiv(trace_model_metadata(a), trace_model_metadata(b)));
    cr_assert(equiv(trace_model_config(a), trace_model_config(b)));
}

static void expect_same_summary(const struct trace_model *live, const struct trace_model *loaded)
{
    struct sim_value *a = trace_metrics_summary(live), *b = trace_metrics_summary(loaded);
    cr_assert(sim_value_equal(a, b), "summary metrics differ live vs loaded");
    /* and what the file says is what both compute (its energy: test_energy.c) */
    struct sim_value *f = sim_value_clone(trace_model_file_summary(loaded));
    sim_value_map_del(f, "energy");
    cr_assert(equiv(a, f));
    sim_value_free(f);
    sim_value_free(a);
    sim_value_free(b);
}

static void expect_valid(const char *path)
{
    struct trace_report *r = trace_report_new(8);
    struct diag d;
    cr_assert_eq(trace_validate_file(path, r, NULL, &d), 0, "%s", d.msg);
    for (size_t i = 0; i < trace_report_count(r); i++)
        cr_log_error("%s: %s", trace_report_get(r, i)->path, trace_report_get(r, i)->msg);
    cr_assert_eq(trace_report_errors(r), 0);
    cr_assert_eq(trace_report_warnings(r), 0);
    trace_report_free(r);
}

/* ---- vector_add, streamed ------------------------------------------------------------------ */

Test(live, a_run_streams_a_trace_that_loads_back_into_the_same_model)
{
    /* 5 PEs: the fifth is sip0.cube1.pe0, the fifth DMA and MATH engine of the chip */
    struct sim_run *r = new_run("vector_add:pes=5,n=20480");
    const char *path = tmp_path("t.json");
    struct trace_live_opts o = opts(path);
    o.mem_events = true;
    struct trace_live *l = new_live(sim_run_chip(r), &o);
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 50);
        trace_live_sync(l);
    }
    struct diag d;
    cr_assert_eq(trace_live_finish(l, true, &d), 0, "%s", d.msg);
    cr_assert_eq(files_in_dir(), 1, "the trace and nothing else");

    /* one ENGINE_EVENT per op record, none left in flight */
    const struct trace_model *m = trace_live_model(l);
    size_t nrec;
    struct sim_op_record *const *rec = sim_oplog_records(sim_chip_oplog(sim_run_chip(r)), &nrec);
    cr_assert_eq(op_events(m), nrec);
    cr_assert_eq(nrec, 5 * 4, "per PE: load x, load y, add, store");
    for (uint64_t i = 0; i < trace_model_event_count(m); i++)
        cr_assert_not(trace_model_event(m, i)->flags & TRACE_EV_INFLIGHT);

    /* the engine ids of FORMAT.md: index among engines of a kind in topology order */
    int32_t t = find_track(m, "sip0.cube1.pe0.pe_dma");
    cr_assert_geq(t, 0);
    cr_assert_eq(trace_model_track_get(m, (uint32_t)t)->engine, TRACE_ENGINE_DMA);
    cr_assert_eq(trace_model_track_get(m, (uint32_t)t)->engine_id, 4);
    t = find_track(m, "sip0.cube0.pe3.pe_math");
    cr_assert_eq(trace_model_track_get(m, (uint32_t)t)->engine, TRACE_ENGINE_VE);
    cr_assert_eq(trace_model_track_get(m, (uint32_t)t)->engine_id, 3);

    /* each record's times in cycles at 1 GHz: both rounded down (the cycle each instant
     * falls in; FORMAT.md) */
    for (size_t k = 0; k < nrec; k++) {
        uint64_t i = trace_live_event_of_record(l, rec[k]->note.id);
        cr_assert_neq(i, UINT64_MAX);
        const struct trace_event *ev = trace_model_event(m, i);
        cr_assert_eq(ev->start, (uint64_t)floor(rec[k]->t_start));
        cr_assert_eq(ev->end, (uint64_t)floor(rec[k]->t_end));
        cr_assert_str_eq(trace_model_str(m, ev->op), rec[k]->op_name);
        cr_assert_eq(ev->cmdq_id, rec[k]->note.cmdq_id);
        if (strcmp(rec[k]->op_name, "dma_read") == 0) {
            /* exactly ADR-0052 D3.1's keys, then the load's destination under "replay"
             * and the call site of its tl_load (FORMAT.md) */
            struct sim_value *det = trace_model_event_details(m, i);
            cr_assert_eq(det->u.map.len, 6);
            cr_assert_str_eq(det->u.map.keys[0], "src_addr");
            cr_assert_str_eq(det->u.map.keys[1], "nbytes");
            cr_assert_str_eq(det->u.map.keys[2], "handle_id");
            cr_assert_str_eq(det->u.map.keys[3], "replay");
            cr_assert_str_eq(det->u.map.keys[4], "src");
            cr_assert_str_eq(det->u.map.keys[5], "src_func");
            cr_assert(strncmp(sim_value_get_str(det, "src", ""), "vector_add.c:", 13) == 0);
            const struct sim_value *rp = sim_value_map_get(det, "replay");
            cr_assert_str_eq(sim_value_get_str(rp, "dst_space", ""), "tcm");
            cr_assert_eq(sim_value_get_int(rp, "dst_addr", -1),
                         sim_value_get_int(rec[k]->note.replay, "dst_addr", -2));
            sim_value_free(det);
        }
    }

    struct trace_model *back = load(path, NULL);
    expect_same_model(m, back);
    expect_same_summary(m, back);
    expect_valid(path);

    /* DRAM traffic: each PE loads its 4096-element shards of x and y and stores out (f32) */
    struct trace_metrics x;
    trace_metrics_compute(back, &x);
    cr_assert_eq(x.dram_read, 20480 * 4 * 2);
    cr_assert_eq(x.dram_write, 20480 * 4);
    cr_assert_eq(x.nve, 5);
    trace_metrics_fini(&x);
    /* --mem-events: one per transfer, at the op's start */
    cr_assert_eq(trace_model_mem_access_count(back), 15);
    trace_model_free(back);

    /* the samples in the file add up to the totals in its summary */
    cJSON *j = parse_file(path);
    const cJSON *s, *sm = cJSON_GetObjectItem(j, "summary_metrics");
    double rd = 0, wr = 0;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "bandwidth_samples"))
    {
        if (cJSON_GetObjectItem(s, "resource"))
            continue; /* an HBM's or a link's, not the DRAM's */
        cr_assert_eq(cJSON_GetObjectItem(s, "window_cycles")->valuedouble, TRACE_BW_WINDOW_DEFAULT);
        cr_assert_eq(fmod(cJSON_GetObjectItem(s, "cycle")->valuedouble, 1024), 0);
        rd += cJSON_GetObjectItem(s, "dram_read_bytes")->valuedouble;
        wr += cJSON_GetObjectItem(s, "dram_write_bytes")->valuedouble;
    }
    cr_assert_eq(rd, cJSON_GetObjectItem(sm, "dram_bytes_read")->valuedouble);
    cr_assert_eq(wr, cJSON_GetObjectItem(sm, "dram_bytes_write")->valuedouble);
    cr_assert_eq(rd, 20480 * 8);
    /* run_metadata as given, the clock at the top of config_snapshot */
    const cJSON *meta = cJSON_GetObjectItem(j, "run_metadata");
    cr_assert_str_eq(cJSON_GetObjectItem(meta, "timestamp")->valuestring, "2025-11-30T10:32:45Z");
    cr_assert_str_eq(cJSON_GetObjectItem(meta, "run_id")->valuestring, "npuscope-20251130T103245Z");
    cr_assert_str_eq(cJSON_GetObjectItem(meta, "cmdq_file")->valuestring, "kernel:test");
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(meta, "incomplete")));
    cr_assert_null(cJSON_GetObjectItem(meta, "tokens"));
    cr_assert_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "config_snapshot"), "clock_ghz")->valuedouble,
        1.0);
    cJSON_Delete(j);

    trace_live_free(l);
    sim_run_free(r);
}

Test(live, ops_are_in_flight_from_their_start_to_their_end)
{
    struct sim_run *r = new_run("vector_add:n=64");
    struct trace_live *l = new_live(
        sim_run_chip(r), &(struct trace_live_opts){.prefill_tokens = -1, .decode_tokens = -1});
    struct trace_model *m = trace_live_model(l);
    struct sim_oplog *log = sim_chip_oplog(sim_run_chip(r));
    bool saw_inflight = false;
    uint64_t changes = 0;
    /* one engine event at a time: after each, the model agrees with the op log */
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 1);
        trace_live_sync(l);
        size_t pending = sim_oplog_pending_count(log);
        size_t inflight = 0;
        for (uint64_t i = 0; i < trace_model_event_count(m); i++)
            inflight += (trace_model_event(m, i)->flags & TRACE_EV_INFLIGHT) != 0;
        cr_assert_eq(inflight, pending);
        cr_assert_eq(op_events(m), sim_oplog_count(log) + pending);
        cr_assert_eq(trace_live_op_changes(l), 2 * sim_oplog_count(log) + pending);
        cr_assert_geq(trace_live_op_changes(l), changes);
        changes = trace_live_op_changes(l);
        for (size_t k = 0; k < pending; k++) {
            uint64_t i = trace_live_event_of_record(l, sim_oplog_pending(log, k)->note.id);
            /* an op in flight shows its params, and reaches "now" */
            struct sim_value *det = trace_model_event_details(m, i);
            cr_assert(sim_value_map_get(det, "nbytes") || sim_value_map_get(det, "dtype"));
            sim_value_free(det);
            const struct trace_event *ev = trace_model_event(m, i);
            uint64_t now = trace_model_now(m);
            cr_assert_geq(now, ev->start);
            cr_assert_geq(trace_model_track_busy(m, ev->track, ev->start, now + 1),
                          now - ev->start);
            saw_inflight = true;
        }
        /* now follows the engine clock, in cycles at 1 GHz (rounded up) */
        double ns = sim_ticks_to_ns(sim_engine_now(sim_chip_engine(sim_run_chip(r))));
        cr_assert_eq(trace_model_now(m), (uint64_t)ceil(ns));
    }
    cr_assert(saw_inflight);
    cr_assert_eq(trace_live_finish(l, true, NULL), 0, "no file: nothing to do");
    trace_live_free(l);
    sim_run_free(r);
}

/* ---- markers, tokens, layer and tile ids ----------------------------------------------------- */

/* Two tokens (a prefill and a decode one), each: a layer marker, load, exp, store. */
static void tokens_kernel(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_arg(tl, a, 0);
    for (int t = 0; t < 2; t++) {
        tl_token_begin(tl, t, t == 1);
        tl_set_layer(tl, "layer0");
        tl_set_tile(tl, t ? "tile1" : "tile0");
        tl_marker(tl, t ? "decode" : "prefill");
        struct tl_tensor *v = tl_load(tl, x);
        tl_store(tl, x, tl_exp(tl, v));
        tl_set_layer(tl, NULL);
        tl_set_tile(tl, NULL);
        tl_token_end(tl);
    }
}

static const struct sim_kernel tokens_kernel_def = {.name = "tokens", .fn = tokens_kernel};

static const char tokens_program[] =
    "messages:\n"
    "- {msg_type: MemoryWrite, correlation_id: c1, request_id: w, target_device: \"sip:0\",\n"
    "   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 256, dst_mem_kind: HBM,\n"
    "   src_kind: pattern, pattern: {pattern_kind: zero}, dtype: f32}\n"
    "- msg_type: KernelLaunch\n  correlation_id: c1\n  request_id: k\n"
    "  target_device: \"sip:0\"\n"
    "  kernel_ref: {name: tokens, kind: builtin, deploy_sip: 0, deploy_cube: 0,\n"
    "               deploy_pe: 0, nbytes_code: 0}\n"
    "  args: [{arg_kind: tensor, dtype: f32, shape: [64], tensor_pa_map: {shards: [\n"
    "          {sip: 0, cube: 0, pe: 0, pa: 0, nbytes: 256, offset_bytes: 0}]}}]\n";

Test(live, markers_tokens_layers_and_tiles_reach_the_trace)
{
    struct sim_config *cfg;
    struct sim_workload *wl;
    struct diag d;
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0, "%s", d.msg);
    cr_assert_eq(sim_workload_load(tokens_program, strlen(tokens_program), "t.yaml", &wl, &d), 0,
                 "%s: %s", d.path, d.msg);
    struct sim_chip *chip = sim_chip_new(cfg, 0);
    struct sim_host *host = sim_host_start(chip, wl, NULL);
    sim_host_add_kernel(host, &tokens_kernel_def);
    const char *path = tmp_path("tokens.json");
    struct trace_live_opts o = opts(path);
    o.prefill_tokens = 1;
    o.decode_tokens = 1;
    o.workload_type = "LLM_PREFILL_AND_DECODE";
    struct trace_live *l = new_live(chip, &o);
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_END, 0);
    cr_assert(sim_host_done(host));
    cr_assert(sim_host_result(host, 1)->resp.completion.ok);
    cr_assert_eq(trace_live_finish(l, true, &d), 0, "%s", d.msg);
    const struct trace_model *m = trace_live_model(l);

    double clock = cfg->clock_ghz;
    cr_assert_eq(trace_model_marker_count(m), 2);
    cr_assert_eq(trace_model_token_count(m), 2);
    for (size_t i = 0; i < 2; i++) {
        const struct sim_chip_marker *cm = sim_chip_marker(chip, i);
        const struct trace_marker *k = trace_model_marker(m, i);
        cr_assert_str_eq(trace_model_str(m, k->name), i ? "decode" : "prefill");
        cr_assert_eq(k->cycle, (uint64_t)floor(cm->t_ns * clock + 1e-9));
        cr_assert_str_eq(trace_model_str(m, trace_model_track_get(m, k->track)->name),
                         "sip0.cube0.pe0.pe_cpu");
        cr_assert_str_eq(sim_value_get_str(k->details, "kernel", ""), "tokens");
        cr_assert_eq(sim_value_get_int(k->details, "cmdq_id", -1), 1);
        const struct trace_token *tk = trace_model_token(m, i);
        cr_assert_eq(tk->token_index, (int64_t)i);
        cr_assert_eq(tk->decode, i == 1);
        /* a token spans its marker and its ops */
        cr_assert_leq(tk->start, k->cycle);
        cr_assert_gt(tk->end, tk->start);
    }
    /* the ops inside a token carry its layer and tile */
    size_t tagged = 0;
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        if (ev->layer == TRACE_NO_STR)
            continue;
        cr_assert_str_eq(trace_model_str(m, ev->layer), "layer0");
        const struct trace_token *tk =
            trace_model_token(m, ev->start >= trace_model_token(m, 1)->start);
        cr_assert_geq(ev->start, tk->start);
        cr_assert_leq(ev->end, tk->end);
        cr_assert_str_eq(trace_model_str(m, ev->tile), tk->decode ? "tile1" : "tile0");
        tagged++;
    }
    cr_assert_eq(tagged, 6, "load, exp, store per token");

    struct trace_model *back = load(path, NULL);
    expect_same_model(m, back);
    expect_same_summary(m, back);
    expect_valid(path);
    struct trace_metrics x;
    trace_metrics_compute(back, &x);
    cr_assert(x.has_prefill && x.has_decode);
    cr_assert_eq(x.prefill_latency, trace_model_token(m, 0)->end - trace_model_token(m, 0)->start);
    trace_metrics_fini(&x);
    trace_model_free(back);
    cJSON *j = parse_file(path);
    const cJSON *tok = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "run_metadata"), "tokens");
    cr_assert_eq(cJSON_GetObjectItem(tok, "prefill_tokens")->valuedouble, 1);
    cr_assert_eq(cJSON_GetObjectItem(tok, "decode_tokens")->valuedouble, 1);
    cJSON_Delete(j);

    trace_live_free(l);
    sim_chip_free(chip);
    sim_workload_free(wl);
    sim_config_free(cfg);
}

/* ---- stopping early, writing now, failing ------------------------------------------------------
 */

Test(live, a_run_stopped_early_is_written_whole_and_marked_incomplete)
{
    struct sim_run *r = new_run("vector_add:pes=2,n=8192");
    const char *path = tmp_path("early.json");
    struct trace_live_opts o = opts(path);
    struct trace_live *l = new_live(sim_run_chip(r), &o);
    struct sim_oplog *log = sim_chip_oplog(sim_run_chip(r));
    /* run until some ops ended and one is in flight */
    while (!(sim_oplog_count(log) >= 2 && sim_oplog_pending_count(log) >= 1)) {
        cr_assert(sim_run_advance(r, SIM_RUN_EVENTS, 1) == 1);
        trace_live_sync(l);
    }
    size_t ended = sim_oplog_count(log), inflight = sim_oplog_pending_count(log);

    /* a snapshot now (the TUI's w), the stream untouched */
    const char *snap = tmp_path("snap.json");
    struct diag d;
    cr_assert_eq(trace_live_write(l, snap, true, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_live_finish(l, false, &d), 0, "%s", d.msg);
    cr_assert_eq(files_in_dir(), 2, "the snapshot and the trace, no temporary file");

    for (int f = 0; f < 2; f++) {
        const char *p = f ? snap : path;
        expect_valid(p);
        struct trace_model *back = load(p, NULL);
        cr_assert_eq(op_events(back), ended + inflight);
        expect_same_summary(trace_live_model(l), back);
        /* an op in flight ends at now in the file */
        uint64_t now = trace_model_now(trace_live_model(l));
        size_t at_now = 0;
        for (uint64_t i = 0; i < trace_model_event_count(back); i++)
            at_now += trace_model_event(back, i)->end == now;
        cr_assert_geq(at_now, inflight);
        cr_assert(sim_value_get_bool(trace_model_metadata(back), "incomplete", false));
        trace_model_free(back);
    }
    trace_live_free(l);
    sim_run_free(r);
}

Test(live, a_trace_file_that_cannot_be_created_fails_before_the_run)
{
    struct sim_run *r = new_run("vector_add:n=64");
    struct trace_live *l = NULL;
    struct diag d;
    struct trace_live_opts o = opts(tmp_path("no/such/dir/t.json"));
    cr_assert_lt(trace_live_new(sim_run_chip(r), &o, &l, &d), 0);
    cr_assert_null(l);
    cr_assert_str_eq(d.file, o.trace_path);
    cr_assert(strstr(d.msg, "No such file or directory"), "%s", d.msg);

    o = opts(dir); /* a directory */
    cr_assert_lt(trace_live_new(sim_run_chip(r), &o, &l, &d), 0);
    cr_assert(strstr(d.msg, "directory"), "%s", d.msg);
    cr_assert_eq(files_in_dir(), 0);

    /* freeing an unfinished feed leaves nothing behind */
    o = opts(tmp_path("dropped.json"));
    l = new_live(sim_run_chip(r), &o);
    sim_run_advance(r, SIM_RUN_END, 0);
    trace_live_free(l);
    cr_assert_eq(files_in_dir(), 0);
    sim_run_free(r);
}

Test(live, two_feeds_and_two_runs_in_one_process_agree)
{
    /* no global state: the same run twice gives the same file, byte for byte */
    char *text[2];
    for (int k = 0; k < 2; k++) {
        struct sim_run *r = new_run("vector_add:pes=3,n=3000");
        const char *path = tmp_path(k ? "b.json" : "a.json");
        struct trace_live_opts o = opts(path);
        struct trace_live *l = new_live(sim_run_chip(r), &o);
        sim_run_advance(r, SIM_RUN_END, 0);
        cr_assert_eq(trace_live_finish(l, true, NULL), 0);
        trace_live_free(l);
        sim_run_free(r);
        cJSON *j = parse_file(path);
        text[k] = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
    }
    cr_assert_str_eq(text[0], text[1]);
    free(text[0]);
    free(text[1]);
}

Test(live, llm_decode_tokens_and_markers_round_trip)
{
    /* 3 prompt tokens (one prefill step) and 2 generated ones on 2 layers: a TOKEN_EVENT
     * per step, a marker per layer of every step and PREFILL_DONE
     * (sim/kernels/llm_decode.c) */
    struct sim_run *r = new_run("llm_decode:prompt=3,gen=2,layers=2");
    const char *path = tmp_path("llm.json");
    struct trace_live_opts o = opts(path);
    o.mem_events = true;
    struct trace_live *l = new_live(sim_run_chip(r), &o);
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 500);
        trace_live_sync(l);
    }
    cr_assert_eq(trace_live_finish(l, true, NULL), 0);
    const struct trace_model *m = trace_live_model(l);
    cr_assert_eq(trace_model_token_count(m), 3);
    size_t prefill = 0, layer_marks = 0, done = 0;
    for (size_t i = 0; i < trace_model_token_count(m); i++)
        prefill += !trace_model_token(m, i)->decode;
    for (size_t i = 0; i < trace_model_marker_count(m); i++) {
        const char *name = trace_model_str(m, trace_model_marker(m, i)->name);
        layer_marks += strncmp(name, "layer", 5) == 0;
        done += strcmp(name, "PREFILL_DONE") == 0;
    }
    cr_assert_eq(prefill, 1);
    cr_assert_eq(layer_marks, 3 * 2);
    cr_assert_eq(done, 1);
    struct trace_model *back = load(path, NULL);
    expect_same_model(m, back);
    expect_same_summary(m, back);
    expect_valid(path);
    trace_model_free(back);
    trace_live_free(l);
    sim_run_free(r);
}

/* The metrics of m (trace_metrics_compute) and of the feed's counts agree exactly. */
static void expect_same_metrics(const struct trace_live *l, const char *what)
{
    const struct trace_model *m = trace_live_model(l);
    struct trace_metrics x, y;
    trace_metrics_compute(m, &x);
    trace_sumacc_metrics(trace_live_sumacc(l), m, &y);
    struct sim_value *vx = trace_metrics_to_value(&x), *vy = trace_metrics_to_value(&y);
    cr_assert(equiv(vx, vy), "%s: the counted summary differs from the model's", what);
    sim_value_free(vx);
    sim_value_free(vy);
    trace_metrics_fini(&x);
    trace_metrics_fini(&y);
    struct trace_bw_sample *sx, *sy;
    size_t nx = trace_metrics_bandwidth(m, 0, &sx),
           ny = trace_sumacc_bandwidth(trace_live_sumacc(l), &sy);
    cr_assert_eq(nx, ny, "%s: %zu bandwidth samples counted, %zu in the model", what, ny, nx);
    for (size_t i = 0; i < nx; i++)
        cr_assert(sx[i].cycle == sy[i].cycle && sx[i].window == sy[i].window &&
                      sx[i].read_bytes == sy[i].read_bytes &&
                      sx[i].write_bytes == sy[i].write_bytes,
                  "%s: sample %zu", what, i);
    free(sx);
    free(sy);
}

Test(live, the_summary_counted_as_the_run_goes_is_the_models)
{
    /* a viewer's summary comes from the counts: at the end they are the model's, figure
     * for figure, on odd sizes and on a run with KV-cache traffic and tokens */
    const char *specs[] = {"vector_add:pes=3,n=3001", "softmax:rows=3", "gemm:m=33,n=17,k=65",
                           "llm_decode:prompt=3,gen=2,layers=2", "allreduce_ring:n=1001"};
    for (size_t k = 0; k < sizeof(specs) / sizeof(*specs); k++) {
        struct sim_run *r = new_run(specs[k]);
        struct trace_live_opts o = opts(NULL);
        struct trace_live *l = new_live(sim_run_chip(r), &o);
        uint64_t busy_before = 0;
        while (!sim_run_over(r)) {
            sim_run_advance(r, SIM_RUN_EVENTS, 300);
            trace_live_sync(l);
            /* mid-run: ops in flight count as busy up to now, so busy time only grows */
            struct trace_metrics y;
            trace_sumacc_metrics(trace_live_sumacc(l), trace_live_model(l), &y);
            cr_assert_geq(y.dma_active, busy_before, "%s", specs[k]);
            cr_assert_leq(y.dma_active, y.cycles_total, "%s", specs[k]);
            busy_before = y.dma_active;
            trace_metrics_fini(&y);
        }
        trace_live_sync(l);
        expect_same_metrics(l, specs[k]);
        trace_live_free(l);
        sim_run_free(r);
    }
}

Test(live, a_stream_only_feed_keeps_no_events_and_cannot_rewrite)
{
    struct sim_run *r = new_run("vector_add:pes=3,n=3000");
    const char *path = tmp_path("s.json");
    struct trace_live_opts o = opts(path);
    o.stream_only = true;
    struct trace_live *l = new_live(sim_run_chip(r), &o);
    sim_run_advance(r, SIM_RUN_END, 0);
    trace_live_sync(l);
    cr_assert_eq(op_events(trace_live_model(l)), 0, "the model keeps no op");
    struct diag d;
    diag_clear(&d);
    cr_assert_lt(trace_live_write(l, tmp_path("w.json"), true, &d), 0);
    cr_assert(strstr(d.msg, "keeps no events"), "%s", d.msg);
    cr_assert_eq(trace_live_finish(l, true, NULL), 0);
    trace_live_free(l);
    sim_run_free(r);
    /* the same run keeping its model: the same ops, the same summary */
    r = new_run("vector_add:pes=3,n=3000");
    o.stream_only = false;
    o.trace_path = tmp_path("k.json");
    l = new_live(sim_run_chip(r), &o);
    sim_run_advance(r, SIM_RUN_END, 0);
    cr_assert_eq(trace_live_finish(l, true, NULL), 0);
    struct trace_model *back = load(path, NULL), *kept = load(o.trace_path, NULL);
    cr_assert_gt(op_events(back), 0);
    expect_same_model(kept, back);
    expect_same_summary(kept, back);
    expect_valid(path);
    trace_model_free(back);
    trace_model_free(kept);
    trace_live_free(l);
    sim_run_free(r);
}

/* An observer comparing what a record says it moves with what a reader of the trace finds
 * in its details (the DRAM rule over the details the writer writes). */
static size_t mem_checked, mem_moving;
static void check_mem(void *ctx, const struct sim_op_record *rec)
{
    (void)ctx;
    enum trace_engine e = trace_engine_for_component(rec->component_id);
    struct trace_transfer a[2], b[2];
    int na = trace_dram_from_mem(e, rec->op_name, &rec->mem, a);
    struct sim_value *replay = NULL;
    struct sim_value *params = sim_op_record_params(rec, &replay);
    struct sim_value *details = trace_details_from_op(params, replay);
    int nb = trace_dram_from_value(e, rec->op_name, details, b);
    sim_value_free(params);
    sim_value_free(replay);
    sim_value_free(details);
    cr_assert_eq(na, nb, "%s on %s: %d transfers from the record, %d from its params", rec->op_name,
                 rec->component_id, na, nb);
    for (int j = 0; j < na; j++)
        cr_assert(a[j].bytes == b[j].bytes && a[j].flags == b[j].flags, "%s: transfer %d",
                  rec->op_name, j);
    mem_checked++;
    mem_moving += na > 0;
}

Test(live, what_a_record_says_it_moves_is_what_its_params_say)
{
    /* the feed counts DRAM traffic from the record's struct sim_op_mem, a trace's readers
     * from the details: both must give the same transfers, KV-cache flags included */
    const char *specs[] = {"llm_decode:prompt=3,gen=2,layers=2", "allreduce_ring:n=1001",
                           "gemm_explicit", "vector_add:pes=3,n=3001"};
    for (size_t k = 0; k < sizeof(specs) / sizeof(*specs); k++) {
        struct sim_run *r = new_run(specs[k]);
        sim_run_timing_only(r);
        struct sim_oplog_observer obs = {.on_start = check_mem, .on_end = check_mem};
        sim_oplog_observe(sim_chip_oplog(sim_run_chip(r)), &obs);
        sim_run_advance(r, SIM_RUN_END, 0);
        sim_run_free(r);
    }
    cr_assert_gt(mem_moving, 100, "%zu of %zu records move DRAM bytes", mem_moving, mem_checked);
}

/* The run to its end through feed l: held still for each stretch of `held` events (the
 * model, its samples and its generation must not move meanwhile), then let go and caught
 * up `slice` entries at a time, with `between` more events run between two slices (heard
 * behind what was kept), each slice synced and the model the run as it was at an instant:
 * no op starts after its now, no token or marker past it. */
static void run_held(struct sim_run *r, struct trace_live *l, uint64_t held, size_t slice,
                     uint64_t between)
{
    const struct trace_model *m = trace_live_model(l);
    size_t kept_most = 0;
    while (!sim_run_over(r)) {
        uint64_t n = trace_model_event_count(m), gen = trace_model_generation(m);
        uint64_t now = trace_model_now(m);
        size_t samples = trace_model_bw_sample_count(m);
        trace_live_defer(l, true);
        sim_run_advance(r, SIM_RUN_EVENTS, held);
        trace_live_sync(l); /* (held: leaves it as it is) */
        cr_assert_eq(trace_model_event_count(m), n);
        cr_assert_eq(trace_model_generation(m), gen);
        cr_assert_eq(trace_model_now(m), now);
        cr_assert_eq(trace_model_bw_sample_count(m), samples);
        size_t bytes;
        size_t kept = trace_live_deferred(l, &bytes);
        cr_assert(!kept || bytes > 0);
        kept_most = kept > kept_most ? kept : kept_most;
        cr_assert_eq(trace_live_catch_up(l, slice), kept); /* held: nothing applied */
        trace_live_defer(l, false);
        /* the run's time when it was let go: the model, behind, is not past it */
        double ghz = sim_chip_config(sim_run_chip(r))->clock_ghz;
        uint64_t let_go = trace_cycles_from_ns(
            sim_ticks_to_ns(sim_engine_now(sim_chip_engine(sim_run_chip(r)))), ghz, true);
        size_t from_hold = kept, left = kept; /* the entries kept while held not applied */
        for (size_t before = left; (left = trace_live_catch_up(l, slice)); before = left) {
            from_hold -= before - left < from_hold ? before - left : from_hold;
            trace_live_sync(l);
            uint64_t t = trace_model_now(m);
            cr_assert(!from_hold || t <= let_go, "now %llu past the run's %llu",
                      (unsigned long long)t, (unsigned long long)let_go);
            for (uint64_t i = 0; i < trace_model_event_count(m); i++)
                cr_assert_leq(trace_model_event(m, i)->start, t, "event %llu after now",
                              (unsigned long long)i);
            for (size_t i = 0; i < trace_model_token_count(m); i++)
                cr_assert_leq(trace_model_token(m, i)->end, t);
            for (size_t i = 0; i < trace_model_marker_count(m); i++)
                cr_assert_leq(trace_model_marker(m, i)->cycle, t);
            if (!sim_run_over(r))
                sim_run_advance(r, SIM_RUN_EVENTS, between);
            left = trace_live_deferred(l, NULL);
        }
        trace_live_sync(l);
    }
    cr_assert_gt(kept_most, 0, "nothing was ever kept while held");
    cr_assert_eq(trace_live_deferred(l, NULL), 0);
}

/* a and b the same JSON, but for numbers within a relative 1e-12 (energy adds up the same
 * doubles in another order when a run was held), the order of timeline_events (markers
 * are streamed when the feed syncs) and run_metadata.timestamp; where when not. */
static int cmp_printed(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static void sort_timeline(cJSON *doc)
{
    cJSON *tl = cJSON_GetObjectItem(doc, "timeline_events");
    int n = cJSON_GetArraySize(tl);
    char **v = calloc((size_t)n + 1, sizeof(*v));
    for (int i = 0; i < n; i++)
        v[i] = cJSON_PrintUnformatted(cJSON_GetArrayItem(tl, i));
    qsort(v, (size_t)n, sizeof(*v), cmp_printed);
    cJSON *sorted = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON_AddItemToArray(sorted, cJSON_Parse(v[i]));
        free(v[i]);
    }
    free(v);
    cJSON_ReplaceItemInObject(doc, "timeline_events", sorted);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "run_metadata"), "timestamp");
}

static bool same_json(const cJSON *a, const cJSON *b, char *where, size_t size)
{
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) {
        double x = a->valuedouble, y = b->valuedouble;
        return x == y || fabs(x - y) <= 1e-12 * fmax(fabs(x), fabs(y));
    }
    if ((a->type & 0xff) != (b->type & 0xff))
        return false;
    if (cJSON_IsArray(a) || cJSON_IsObject(a)) {
        if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
            return snprintf(where, size, "%s: sizes", a->string ? a->string : "?"), false;
        for (const cJSON *x = a->child, *y = b->child; x; x = x->next, y = y->next) {
            if ((x->string || y->string) && strcmp(x->string, y->string) != 0)
                return snprintf(where, size, "%s vs %s", x->string, y->string), false;
            if (!same_json(x, y, where, size)) {
                if (!where[0])
                    snprintf(where, size, "%s", x->string ? x->string : "an item");
                return false;
            }
        }
        return true;
    }
    return cJSON_Compare(a, b, true);
}

Test(live, a_model_held_while_the_run_goes_on_catches_up_to_the_same_trace)
{
    /* the same run straight through and held still stretch after stretch (tokens, markers,
     * host spans, DMA traffic; samples a few cycles wide, so that their windows widen while
     * held): the same model and the same file */
    struct {
        uint64_t held;
        size_t slice;
        uint64_t between;
    } ways[] = {{0, 0, 0}, {300, 7, 11}, {1, 1, 1}, {5000, 1000, 0}, {97, 3, 200}};
    cJSON *doc[sizeof(ways) / sizeof(ways[0])];
    struct trace_model *first = NULL;
    for (size_t k = 0; k < sizeof(ways) / sizeof(ways[0]); k++) {
        struct sim_run *r = new_run("llm_decode:prompt=3,gen=2,layers=2");
        char name[32];
        snprintf(name, sizeof(name), "held%zu.json", k);
        const char *path = tmp_path(name);
        struct trace_live_opts o = opts(path);
        o.mem_events = true;
        o.bw_window = 8;
        struct trace_live *l = new_live(sim_run_chip(r), &o);
        if (!ways[k].held)
            sim_run_advance(r, SIM_RUN_END, 0);
        else
            run_held(r, l, ways[k].held, ways[k].slice, ways[k].between);
        cr_assert_eq(trace_live_finish(l, true, NULL), 0);
        if (!first)
            first = load(path, NULL);
        else
            expect_same_model(trace_live_model(l), first);
        doc[k] = parse_file(path);
        sort_timeline(doc[k]);
        char where[128] = "";
        cr_assert(!k || same_json(doc[0], doc[k], where, sizeof(where)),
                  "held %llu events at a time: %s differs", (unsigned long long)ways[k].held,
                  where);
        trace_live_free(l);
        sim_run_free(r);
    }
    trace_model_free(first);
    for (size_t k = 0; k < sizeof(ways) / sizeof(ways[0]); k++)
        cJSON_Delete(doc[k]);
}

Test(live, a_trace_written_while_behind_has_all_that_was_kept)
{
    /* written (w) after a stretch held: what was kept is in the file, as if never held */
    const char *a = tmp_path("straight.json"), *b = tmp_path("behind.json");
    cJSON *doc[2];
    for (int k = 0; k < 2; k++) {
        struct sim_run *r = new_run("vector_add:pes=3,n=3000");
        struct trace_live_opts o = opts(NULL);
        struct trace_live *l = new_live(sim_run_chip(r), &o);
        sim_run_advance(r, SIM_RUN_EVENTS, 400);
        trace_live_sync(l);
        trace_live_defer(l, k == 1);
        sim_run_advance(r, SIM_RUN_EVENTS, 600);
        trace_live_sync(l);
        trace_live_defer(l, false);
        cr_assert_eq(trace_live_deferred(l, NULL) > 0, k == 1);
        struct diag d;
        cr_assert_eq(trace_live_write(l, k ? b : a, true, &d), 0, "%s", d.msg);
        cr_assert_eq(trace_live_deferred(l, NULL), 0);
        doc[k] = parse_file(k ? b : a);
        sort_timeline(doc[k]);
        trace_live_free(l);
        sim_run_free(r);
    }
    char where[128] = "";
    cr_assert(same_json(doc[0], doc[1], where, sizeof(where)), "%s differs", where);
    cJSON_Delete(doc[0]);
    cJSON_Delete(doc[1]);
}
