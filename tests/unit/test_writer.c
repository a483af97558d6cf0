/* The trace writer: the file it writes (parsed back with cJSON), atomic replacement under
 * write failures, and the round trip of a hand-built model through write and load. */
#include "sim/util/escape.h"
#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"
#include "trace/model/format.h"
#include "trace/file/jsonout.h"
#include "trace/file/loader.h"
#include "trace/analysis/metrics.h"
#include "test_tmpdir.h"
#include "trace/file/writer.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files in dir other than the given one (temporary leftovers). */
static int others_in_dir(const char *keep)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && (!keep || strcmp(e->d_name, keep)))
            n++;
    closedir(d);
    return n;
}

/* ---- the writer --------------------------------------------------------------------------- */

static struct sim_value *params_dma_write(void)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_str(p, "src_space", "tcm");
    sim_value_map_set_int(p, "src_addr", 4096);
    int64_t shape[2] = {16, 32};
    sim_value_map_set_take(p, "shape", sim_value_int_list(shape, 2));
    sim_value_map_set_str(p, "dtype", "f16");
    sim_value_map_set_str(p, "dst_space", "hbm");
    sim_value_map_set_int(p, "dst_addr", 1 << 20);
    sim_value_map_set_int(p, "nbytes", 1024);
    sim_value_map_set_str(p, "handle_id", "h7");
    return p;
}

Test(writer, writes_all_six_blocks_and_every_event_type, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/t.json", dir);
    struct sim_value *md = sim_value_map();
    sim_value_map_set_str(md, "run_id", "r1");
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1.5);
    struct diag d;
    struct trace_writer *w = trace_writer_open(path, md, cfg, &d);
    cr_assert_not_null(w);
    struct sim_value *det = params_dma_write();
    struct trace_writer_event e = {
        .engine = TRACE_ENGINE_DMA,
        .engine_id = 3,
        .cmdq_id = 2,
        .op = "dma_write",
        .start_cycle = 15,
        .end_cycle = 30,
        .component_id = "sip0.cube0.pe3.pe_dma",
        .op_kind = TRACE_KIND_MEMORY,
        .t_start_ns = 10.0,
        .t_end_ns = 20.0,
        .details = det,
    };
    cr_assert_eq(trace_writer_engine_event(w, &e), 0);
    struct trace_writer_event e2 = {.engine = TRACE_ENGINE_TE,
                                    .cmdq_id = TRACE_NO_CMDQ,
                                    .op = "gemm_f16",
                                    .start_cycle = 30,
                                    .end_cycle = 90,
                                    .layer_id = "ffn_1",
                                    .op_kind = -1,
                                    .t_start_ns = NAN,
                                    .t_end_ns = NAN};
    cr_assert_eq(trace_writer_engine_event(w, &e2), 0);
    struct trace_writer_mem a = {"DRAM", 20, true, 64, 1 << 20, TRACE_ENGINE_DMA, 3, 2, NULL};
    cr_assert_eq(trace_writer_mem_access(w, &a), 0);
    struct trace_writer_token t = {
        .decode = true, .token_index = 4, .start_cycle = 0, .end_cycle = 100};
    cr_assert_eq(trace_writer_token(w, &t), 0);
    struct trace_writer_marker k = {
        .name = "PREFILL_DONE", .cycle = 50, .component_id = "sip0.io_cpu"};
    cr_assert_eq(trace_writer_marker(w, &k), 0);
    struct trace_bw_sample s = {0, 1024, 0, 1024, TRACE_NO_STR};
    struct sim_value *sum = sim_value_map();
    sim_value_map_set_int(sum, "cycles_total", 100);
    cr_assert_eq(trace_writer_close(w, &s, 1, sum, &d), 0);
    sim_value_free(md);
    sim_value_free(cfg);
    sim_value_free(det);
    sim_value_free(sum);

    char *text = slurp(path, NULL);
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j, "the trace is not JSON");
    cr_assert_str_eq(cJSON_GetObjectItem(j, "version")->valuestring, "1.0");
    cr_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "run_metadata"), "run_id")->valuestring, "r1");
    cr_assert(cJSON_IsObject(cJSON_GetObjectItem(j, "config_snapshot")));
    cJSON *ev = cJSON_GetObjectItem(j, "timeline_events");
    cr_assert_eq(cJSON_GetArraySize(ev), 5);
    cJSON *e0 = cJSON_GetArrayItem(ev, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(e0, "type")->valuestring, "ENGINE_EVENT");
    cr_assert_str_eq(cJSON_GetObjectItem(e0, "engine")->valuestring, "DMA");
    cr_assert_eq(cJSON_GetObjectItem(e0, "engine_id")->valuedouble, 3);
    cr_assert_eq(cJSON_GetObjectItem(e0, "cmdq_id")->valuedouble, 2);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(e0, "layer_id")));
    cr_assert_eq(cJSON_GetObjectItem(e0, "end_cycle")->valuedouble, 30);
    cr_assert_str_eq(cJSON_GetObjectItem(e0, "component_id")->valuestring, "sip0.cube0.pe3.pe_dma");
    cr_assert_str_eq(cJSON_GetObjectItem(e0, "op_kind")->valuestring, "memory");
    cr_assert_eq(cJSON_GetObjectItem(e0, "t_end_ns")->valuedouble, 20.0);
    cJSON *dd = cJSON_GetObjectItem(e0, "details");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(dd, "shape")), 2);
    cr_assert_str_eq(cJSON_GetObjectItem(dd, "dst_space")->valuestring, "hbm");
    cJSON *e1 = cJSON_GetArrayItem(ev, 1);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(e1, "cmdq_id")));
    cr_assert_null(cJSON_GetObjectItem(e1, "t_start_ns"), "NaN times are left out");
    cr_assert_null(cJSON_GetObjectItem(e1, "op_kind"));
    cr_assert_null(cJSON_GetObjectItem(e1, "details"));
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 2), "direction")->valuestring,
                     "write");
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 3), "phase")->valuestring,
                     "DECODE");
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ev, 4), "name")->valuestring,
                     "PREFILL_DONE");
    cJSON *bw = cJSON_GetObjectItem(j, "bandwidth_samples");
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(bw, 0), "dram_write_bytes")->valuedouble,
                 1024);
    cr_assert_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary_metrics"), "cycles_total")->valuedouble,
        100);
    cJSON_Delete(j);
    free(text);
    cr_assert_eq(others_in_dir("t.json"), 0, "a temporary file was left behind");
}

Test(writer, an_empty_trace_is_valid_json, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/e.json", dir);
    struct trace_writer *w = trace_writer_open(path, NULL, NULL, NULL);
    cr_assert_eq(trace_writer_close(w, NULL, 0, NULL, NULL), 0);
    char *text = slurp(path, NULL);
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "timeline_events")), 0);
    cr_assert(cJSON_IsObject(cJSON_GetObjectItem(j, "summary_metrics")));
    cJSON_Delete(j);
    free(text);
}

Test(writer, a_tensor_in_a_value_is_written_as_a_stub, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/v.json", dir);
    struct sim_tensor *t = sim_xcalloc(1, sizeof(*t));
    t->refs = 1, t->dtype = SIM_BF16, t->ndim = 2, t->shape[0] = 2, t->shape[1] = 3;
    struct sim_value *v = sim_value_map();
    sim_value_map_set_take(v, "x", sim_value_tensor(t));
    struct trace_out o;
    cr_assert_eq(trace_out_open(&o, path, NULL), 0);
    trace_out_value(&o, v);
    cr_assert_eq(trace_out_commit(&o, NULL), 0);
    sim_value_free(v);
    sim_tensor_unref(t);
    char *text = slurp(path, NULL);
    cr_assert_str_eq(text, "{\"x\":{\"tensor\":{\"dtype\":\"bf16\",\"shape\":[2,3]}}}");
    free(text);
}

Test(writer, abort_keeps_the_old_file, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/t.json", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    struct trace_writer *w = trace_writer_open(path, NULL, NULL, NULL);
    struct trace_writer_event e = {
        .engine = TRACE_ENGINE_VE, .op = "exp", .op_kind = -1, .t_start_ns = NAN, .t_end_ns = NAN};
    trace_writer_engine_event(w, &e);
    cr_assert_eq(others_in_dir("t.json"), 1, "the temporary file is beside the destination");
    trace_writer_abort(w);
    char *text = slurp(path, NULL);
    cr_assert_str_eq(text, "old");
    free(text);
    cr_assert_eq(others_in_dir("t.json"), 0);
}

Test(writer, a_write_failure_keeps_the_old_file_and_leaves_no_temporary, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/t.json", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    /* the file system refuses to grow any file beyond 64 KiB */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {64 << 10, 64 << 10};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    struct trace_writer *w = trace_writer_open(path, NULL, NULL, NULL);
    cr_assert_not_null(w);
    struct sim_value *det = params_dma_write();
    int rc = 0;
    for (int i = 0; i < 20000 && rc == 0; i++) {
        struct trace_writer_event e = {.engine = TRACE_ENGINE_DMA,
                                       .op = "dma_write",
                                       .start_cycle = (uint64_t)i,
                                       .end_cycle = (uint64_t)i + 5,
                                       .op_kind = TRACE_KIND_MEMORY,
                                       .t_start_ns = i * 0.5,
                                       .t_end_ns = i * 0.5 + 2.5,
                                       .details = det};
        rc = trace_writer_engine_event(w, &e);
    }
    cr_assert_lt(rc, 0, "the failure is reported while writing");
    struct diag d;
    cr_assert_lt(trace_writer_close(w, NULL, 0, NULL, &d), 0);
    cr_assert_str_eq(d.file, path);
    cr_assert(strstr(d.msg, "cannot write") && strstr(d.msg, "too large"), "message: %s", d.msg);
    sim_value_free(det);
    char *text = slurp(path, NULL);
    cr_assert_str_eq(text, "old");
    free(text);
    cr_assert_eq(others_in_dir("t.json"), 0, "a temporary file was left behind");
}

Test(writer, a_missing_directory_is_reported, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/no/such/t.json", dir);
    struct diag d;
    cr_assert_null(trace_writer_open(path, NULL, NULL, &d));
    cr_assert_str_eq(d.file, path);
    cr_assert(strstr(d.msg, "cannot create"), "message: %s", d.msg);
}

/* ---- round trip of a whole model ----------------------------------------------------------- */

/* A model as a live run would fill it: component tracks, DMA/GEMM/MATH ops with params,
 * tokens, markers and memory accesses. */
static struct trace_model *build_model(void)
{
    struct trace_model *m = trace_model_new();
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1.5);
    trace_model_set_config_take(m, cfg);
    struct sim_value *md = sim_value_map();
    sim_value_map_set_str(md, "run_id", "round-trip");
    trace_model_set_metadata_take(m, md);
    uint32_t dma = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t dma1 = trace_model_track(m, "sip0.cube0.pe1.pe_dma", TRACE_ENGINE_DMA, 1);
    uint32_t te = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t ve = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    uint32_t host = trace_model_track(m, "sip0.io_cpu", TRACE_ENGINE_HOST, 0);
    unsigned seed = 8;
    for (int i = 0; i < 400; i++) {
        uint32_t tr = (uint32_t[]){dma, dma1, te, ve, host}[i % 5];
        uint64_t s = (uint64_t)i * 37 + (uint64_t)(rand_r(&seed) % 50);
        struct trace_event e = {
            .start = s,
            .end = s + 1 + (uint64_t)(rand_r(&seed) % 300),
            .track = tr,
            .cmdq_id = i % 7 ? i / 7 : TRACE_NO_CMDQ,
            .layer = i % 3 ? trace_model_intern(m, "ffn_1", 5) : TRACE_NO_STR,
            .tile = i % 4 ? TRACE_NO_STR : trace_model_intern(m, "ffn_1_tile_\x1b", 12),
            .op_kind = (uint8_t)(i % 4),
        };
        const char *op = tr == dma    ? (i % 2 ? "dma_read" : "dma_write")
                         : tr == dma1 ? "ipcq_copy"
                         : tr == te   ? "gemm_f16"
                                      : "exp";
        e.op = trace_model_intern(m, op, strlen(op));
        uint64_t k = trace_model_add_event(m, &e);
        struct sim_value *p = sim_value_map();
        sim_value_map_set_int(p, "nbytes", 64 * (i + 1));
        sim_value_map_set_str(p, "src_space", i % 3 ? "hbm" : "tcm");
        sim_value_map_set_str(p, "dst_space", "hbm");
        sim_value_map_set_float(p, "scale", i + 0.25);
        sim_value_map_set_take(p, "axis", i % 2 ? sim_value_null() : sim_value_int(-1));
        sim_value_map_set_bool(p, "flag", i % 2);
        if (i % 9)
            trace_model_set_details_take(m, k, p);
        else
            sim_value_free(p);
    }
    for (int i = 0; i < 5; i++) {
        struct trace_token t = {.start = (uint64_t)i * 3000,
                                .end = (uint64_t)i * 3000 + 2500,
                                .token_index = i,
                                .decode = i > 0};
        if (i == 2) {
            t.details = sim_value_map();
            sim_value_map_set_int(t.details, "generated_token_id", 50256);
        }
        trace_model_add_token(m, &t);
    }
    struct trace_marker k = {
        .cycle = 3000, .name = trace_model_intern(m, "PREFILL_DONE", 12), .track = host};
    trace_model_add_marker(m, &k);
    trace_model_set_now(m, 20000); /* the run went on after its last op */
    struct trace_mem_access a = {.cycle = 100,
                                 .addr = 4096,
                                 .bytes = 32,
                                 .mem_type = trace_model_intern(m, "DRAM", 4),
                                 .track = dma,
                                 .cmdq_id = 3,
                                 .write = true};
    trace_model_add_mem_access(m, &a);
    trace_model_finish(m);
    return m;
}

/* Equal as JSON numbers: a whole float reads back from a file as an integer. */
static bool same_json(const struct sim_value *a, const struct sim_value *b)
{
    if (a && b && (a->type == SIM_V_INT || a->type == SIM_V_FLOAT) &&
        (b->type == SIM_V_INT || b->type == SIM_V_FLOAT))
        return (a->type == SIM_V_INT ? (double)a->u.i : a->u.f) ==
               (b->type == SIM_V_INT ? (double)b->u.i : b->u.f);
    if (!a || !b || a->type != b->type)
        return a == b;
    if (a->type == SIM_V_MAP) {
        if (a->u.map.len != b->u.map.len)
            return false;
        for (size_t i = 0; i < a->u.map.len; i++)
            if (strcmp(a->u.map.keys[i], b->u.map.keys[i]) ||
                !same_json(a->u.map.vals[i], b->u.map.vals[i]))
                return false;
        return true;
    }
    if (a->type == SIM_V_LIST) {
        if (a->u.list.len != b->u.list.len)
            return false;
        for (size_t i = 0; i < a->u.list.len; i++)
            if (!same_json(a->u.list.items[i], b->u.list.items[i]))
                return false;
        return true;
    }
    return sim_value_equal(a, b);
}

static const char *track_name(const struct trace_model *m, uint32_t t)
{
    return trace_model_str(m, trace_model_track_get(m, t)->name);
}

Test(writer, a_model_round_trips_through_a_file, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/rt.json", dir);
    struct trace_model *a = build_model();
    struct diag d;
    cr_assert_eq(trace_writer_write_model(a, path, 256, &d), 0, "%s", d.msg);
    struct trace_report *r = trace_report_new(10);
    struct trace_model *b;
    cr_assert_eq(trace_load_file(path, r, &b, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_report_errors(r) + trace_report_warnings(r), 0,
                 "the written trace has problems: %s",
                 trace_report_count(r) ? trace_report_get(r, 0)->msg : "");
    cr_assert_eq(trace_model_event_count(b), trace_model_event_count(a));
    for (uint64_t i = 0; i < trace_model_event_count(a); i++) {
        const struct trace_event *x = trace_model_event(a, i), *y = trace_model_event(b, i);
        cr_assert_eq(x->start, y->start);
        cr_assert_eq(x->end, y->end);
        cr_assert_eq(x->cmdq_id, y->cmdq_id);
        cr_assert_eq(x->op_kind, y->op_kind);
        cr_assert_str_eq(trace_model_str(a, x->op), trace_model_str(b, y->op));
        cr_assert_str_eq(trace_model_str(a, x->layer), trace_model_str(b, y->layer));
        cr_assert_str_eq(trace_model_str(a, x->tile), trace_model_str(b, y->tile));
        cr_assert_str_eq(track_name(a, x->track), track_name(b, y->track));
        const struct trace_track *ta = trace_model_track_get(a, x->track);
        const struct trace_track *tb = trace_model_track_get(b, y->track);
        cr_assert_eq(ta->engine, tb->engine);
        cr_assert_eq(ta->engine_id, tb->engine_id);
        struct sim_value *da = trace_model_event_details(a, i);
        struct sim_value *db = trace_model_event_details(b, i);
        cr_assert(sim_value_equal(da, db), "details of event %llu differ", (unsigned long long)i);
        sim_value_free(da);
        sim_value_free(db);
    }
    cr_assert_eq(trace_model_token_count(b), 5);
    cr_assert_eq(trace_model_token(b, 3)->token_index, 3);
    cr_assert(trace_model_token(b, 3)->decode);
    cr_assert_eq(sim_value_get_int(trace_model_token(b, 2)->details, "generated_token_id", 0),
                 50256);
    cr_assert_eq(trace_model_marker_count(b), 1);
    cr_assert_str_eq(track_name(b, trace_model_marker(b, 0)->track), "sip0.io_cpu");
    cr_assert_eq(trace_model_mem_access_count(b), 1);
    cr_assert_eq(trace_model_mem_access(b, 0)->bytes, 32);
    cr_assert(trace_model_mem_access(b, 0)->write);
    cr_assert_str_eq(track_name(b, trace_model_mem_access(b, 0)->track), "sip0.cube0.pe0.pe_dma");
    cr_assert_eq(trace_model_clock_ghz(b), 1.5);
    cr_assert_eq(trace_model_t_max(b), 20000, "the run's length comes back from cycles_total");
    cr_assert_str_eq(sim_value_get_str(trace_model_metadata(b), "run_id", ""), "round-trip");

    /* the same metrics, and the file's summary is the one computed before writing */
    struct sim_value *ma = trace_metrics_summary(a), *mb = trace_metrics_summary(b);
    cr_assert(sim_value_equal(ma, mb), "metrics differ after the round trip");
    cr_assert(same_json(ma, trace_model_file_summary(b)));
    sim_value_free(ma);
    sim_value_free(mb);
    struct trace_bw_sample *sa, *sb;
    size_t na = trace_metrics_bandwidth(a, 256, &sa), nb = trace_metrics_bandwidth(b, 256, &sb);
    cr_assert_eq(na, nb);
    for (size_t i = 0; i < na; i++) {
        cr_assert_eq(sa[i].cycle, sb[i].cycle);
        cr_assert_eq(sa[i].window, sb[i].window);
        cr_assert_eq(sa[i].read_bytes, sb[i].read_bytes);
        cr_assert_eq(sa[i].write_bytes, sb[i].write_bytes);
        cr_assert_eq(sa[i].resource, TRACE_NO_STR);
        cr_assert_eq(sb[i].resource, TRACE_NO_STR);
    }
    cr_assert_eq(trace_model_bw_sample_count(b), na, "the file holds the computed samples");
    free(sa);
    free(sb);
    trace_report_free(r);
    trace_model_free(a);
    trace_model_free(b);
}
