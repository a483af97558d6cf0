/* The trace writer: number and string formatting, the file it writes (parsed back with
 * cJSON), atomic replacement under write failures, the op record -> event helpers, and the
 * round trip of a hand-built model through write and load. */
#include "sim/util/escape.h"
#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"
#include "trace/format.h"
#include "trace/jsonout.h"
#include "trace/loader.h"
#include "trace/metrics.h"
#include "trace/writer.h"

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

static char dir[64];

static void mkdir_tmp(void)
{
    snprintf(dir, sizeof(dir), "/tmp/npuscope-writer.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

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

/* ---- numbers ---------------------------------------------------------------------------- */

static const char *fmt_d(double v)
{
    static char buf[64];
    size_t n = trace_fmt_double(buf, v);
    buf[n] = '\0';
    return buf;
}

Test(jsonout, doubles_are_shortest_and_read_as_floats)
{
    /* the expected strings are Python's repr() of the same values */
    cr_assert_str_eq(fmt_d(0.1), "0.1");
    cr_assert_str_eq(fmt_d(1.0), "1.0");
    cr_assert_str_eq(fmt_d(-2.5), "-2.5");
    cr_assert_str_eq(fmt_d(123.456), "123.456");
    cr_assert_str_eq(fmt_d(0.1 + 0.2), "0.30000000000000004");
    cr_assert_str_eq(fmt_d(1.0 / 3), "0.3333333333333333");
    cr_assert_str_eq(fmt_d(-0.0), "-0.0");
    cr_assert_str_eq(fmt_d(9007199254740992.0), "9007199254740992.0");
    cr_assert_str_eq(fmt_d(1e300), "1e+300");
    cr_assert_str_eq(fmt_d(5e-324), "5e-324");
    cr_assert_str_eq(fmt_d(1.7976931348623157e308), "1.7976931348623157e+308");
    cr_assert_str_eq(fmt_d(2e-7), "2e-07");
    cr_assert_str_eq(fmt_d(NAN), "null");
    cr_assert_str_eq(fmt_d(INFINITY), "null");
    cr_assert_str_eq(fmt_d(-INFINITY), "null");
}

Test(jsonout, every_double_reads_back_exactly)
{
    unsigned seed = 99;
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = ((uint64_t)rand_r(&seed) << 42) ^ ((uint64_t)rand_r(&seed) << 21) ^
                        (uint64_t)rand_r(&seed);
        double v;
        if (i % 2) {
            memcpy(&v, &bits, sizeof(v));
        } else { /* times in ns from integer ticks: the fast path */
            v = (double)(bits % 100000000) / (i % 4 ? 1000.0 : 10.0);
        }
        if (!isfinite(v))
            continue;
        const char *s = fmt_d(v);
        cr_assert(strpbrk(s, ".e"), "%s does not read as a float", s);
        cr_assert_eq(strtod(s, NULL), v, "%s does not read back as %.17g", s, v);
    }
}

Test(jsonout, integers)
{
    char b[32];
    b[trace_fmt_u64(b, 0)] = '\0';
    cr_assert_str_eq(b, "0");
    b[trace_fmt_u64(b, 10)] = '\0';
    cr_assert_str_eq(b, "10");
    b[trace_fmt_u64(b, 1234567)] = '\0';
    cr_assert_str_eq(b, "1234567");
    b[trace_fmt_u64(b, UINT64_MAX)] = '\0';
    cr_assert_str_eq(b, "18446744073709551615");
    b[trace_fmt_i64(b, INT64_MIN)] = '\0';
    cr_assert_str_eq(b, "-9223372036854775808");
    b[trace_fmt_i64(b, -7)] = '\0';
    cr_assert_str_eq(b, "-7");
}

/* ---- strings ---------------------------------------------------------------------------- */

/* Write s as a JSON string into a file, read it back with cJSON. */
static char *round_trip_str(const char *s, size_t n, char **raw)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/s.json", dir);
    struct trace_out o;
    cr_assert_eq(trace_out_open(&o, path, NULL), 0);
    trace_out_str(&o, s, n);
    cr_assert_eq(trace_out_commit(&o, NULL), 0);
    char *text = slurp(path, NULL);
    cJSON *j = cJSON_Parse(text);
    cr_assert(cJSON_IsString(j), "not a JSON string: %.80s", text);
    char *back = sim_xstrdup(j->valuestring);
    cJSON_Delete(j);
    if (raw)
        *raw = text;
    else
        free(text);
    return back;
}

/* Valid UTF-8 kept, each invalid byte replaced by U+FFFD. */
static char *sanitized(const char *s, size_t n)
{
    char *out = malloc(3 * n + 1), *q = out;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = sim_utf8_decode(s + i, n - i, &cp);
        if (cp == 0xFFFD && !(k == 3 && memcmp(s + i, "\xEF\xBF\xBD", 3) == 0))
            k = 1, memcpy(q, "\xEF\xBF\xBD", 3), q += 3;
        else
            memcpy(q, s + i, k), q += k;
        i += k;
    }
    *q = '\0';
    return out;
}

Test(jsonout, strings_round_trip_with_controls_and_bad_utf8, .init = mkdir_tmp, .fini = rm_tmp)
{
    char *raw;
    char *back = round_trip_str("a\"b\\c\n\t\x1b]52;c;x\x07/\x7f", 18, &raw);
    cr_assert_str_eq(back, "a\"b\\c\n\t\x1b]52;c;x\x07/\x7f");
    cr_assert_null(strchr(raw, '\x1b'), "ESC written raw");
    cr_assert_not_null(strstr(raw, "\\u001b"));
    free(raw);
    free(back);
    back = round_trip_str("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, NULL);
    cr_assert_str_eq(back, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    free(back);
    back = round_trip_str("x\xff"
                          "y\xc0\xaf"
                          "z\xe2\x82",
                          8, NULL);
    cr_assert_str_eq(back, "x\xef\xbf\xbd"
                           "y\xef\xbf\xbd\xef\xbf\xbd"
                           "z\xef\xbf\xbd\xef\xbf\xbd");
    free(back);
    back = round_trip_str("a\0b", 3, &raw); /* NUL is written escaped */
    cr_assert_not_null(strstr(raw, "a\\u0000b"));
    free(raw);
    free(back);
}

Test(jsonout, random_byte_strings_round_trip, .init = mkdir_tmp, .fini = rm_tmp)
{
    unsigned seed = 4;
    for (int r = 0; r < 300; r++) {
        char s[200];
        size_t n = (size_t)rand_r(&seed) % sizeof(s);
        for (size_t i = 0; i < n; i++) {
            int c = rand_r(&seed) % 256;
            s[i] = (char)(c ? c : 'z'); /* cJSON strings end at NUL */
        }
        char *back = round_trip_str(s, n, NULL);
        char *want = sanitized(s, n);
        cr_assert_str_eq(back, want);
        free(back);
        free(want);
    }
}

Test(jsonout, long_strings_keep_characters_across_chunks, .init = mkdir_tmp, .fini = rm_tmp)
{
    size_t n = 0;
    char *s = malloc(40000);
    for (int i = 0; n < 39990; i++) {
        const char *c = i % 3 == 0 ? "\xc3\xa9" : i % 3 == 1 ? "\xe2\x82\xac" : "\xf0\x9f\x98\x80";
        memcpy(s + n, c, strlen(c));
        n += strlen(c);
    }
    s[n] = '\0';
    char *back = round_trip_str(s, n, NULL);
    cr_assert_str_eq(back, s, "a multi-byte character was split");
    free(back);
    free(s);
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
    struct trace_bw_sample s = {0, 1024, 0, 1024};
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

/* ---- op record helpers ------------------------------------------------------------------- */

Test(format, engines_come_from_the_component_kind)
{
    cr_assert_eq(trace_engine_for_component("sip0.cube0.pe0.pe_dma"), TRACE_ENGINE_DMA);
    cr_assert_eq(trace_engine_for_component("sip1.cube2.pe3.pe_gemm"), TRACE_ENGINE_TE);
    cr_assert_eq(trace_engine_for_component("sip0.cube0.pe0.pe_math"), TRACE_ENGINE_VE);
    cr_assert_eq(trace_engine_for_component("sip0.io_cpu"), TRACE_ENGINE_HOST);
    cr_assert_eq(trace_engine_for_component("host"), TRACE_ENGINE_HOST);
    cr_assert_eq(trace_engine_for_component("sip0.cube0.pe0.pe_cpu"), TRACE_ENGINE_OTHER);
    cr_assert_eq(trace_engine_for_component("sip0.cube0.hbm"), TRACE_ENGINE_OTHER);
}

Test(format, cycles_round_start_down_and_end_up)
{
    cr_assert_eq(trace_cycles_from_ns(100.0, 1.5, false), 150);
    cr_assert_eq(trace_cycles_from_ns(100.0, 1.5, true), 150); /* 150.00000000000003 */
    cr_assert_eq(trace_cycles_from_ns(10.2, 1.0, false), 10);
    cr_assert_eq(trace_cycles_from_ns(10.2, 1.0, true), 11);
    cr_assert_eq(trace_cycles_from_ns(0.1, 3.0, true), 1);
    cr_assert_eq(trace_cycles_from_ns(-5, 1.0, false), 0);
    cr_assert_eq(trace_cycles_from_ns(NAN, 1.0, true), 0);
    cr_assert_eq(trace_cycles_from_ns(1e300, 1.0, true), (uint64_t)TRACE_MAX_INT);
}

Test(format, details_leave_out_snapshots_and_tensors)
{
    struct sim_tensor *t = sim_xcalloc(1, sizeof(*t));
    t->refs = 1;
    struct sim_value *p = sim_value_map();
    sim_value_map_set_take(p, "snapshot", sim_value_tensor(t));
    struct sim_value *snaps = sim_value_map_set_take(p, "input_snapshots", sim_value_list());
    sim_value_list_push_take(snaps, sim_value_tensor(t));
    struct sim_value *l = sim_value_map_set_take(p, "mixed", sim_value_list());
    sim_value_list_push_take(l, sim_value_int(1));
    sim_value_list_push_take(l, sim_value_tensor(t));
    sim_value_map_set_take(p, "data", sim_value_tensor(t));
    sim_value_map_set_int(p, "nbytes", 64);
    struct sim_value *d = trace_details_from_params(p);
    cr_assert_null(sim_value_map_get(d, "snapshot"));
    cr_assert_null(sim_value_map_get(d, "input_snapshots"));
    cr_assert_null(sim_value_map_get(d, "data"));
    cr_assert_eq(sim_value_get_int(d, "nbytes", 0), 64);
    const struct sim_value *m = sim_value_map_get(d, "mixed");
    cr_assert_eq(m->u.list.len, 2);
    cr_assert_eq(m->u.list.items[1]->type, SIM_V_NULL, "a list keeps its positions");
    sim_value_free(d);
    sim_value_free(p);
    cr_assert_eq(t->refs, 1, "details hold no tensor reference");
    sim_tensor_unref(t);
    cr_assert_null(trace_details_from_params(NULL));
}

Test(format, details_of_an_op_add_its_replay_keys_after_the_params)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "src_addr", 0x1000);
    sim_value_map_set_int(p, "nbytes", 64);
    struct sim_value *r = sim_value_map();
    sim_value_map_set_str(r, "src_space", "sram");
    sim_value_map_set_int(r, "dst_addr", 0x40);
    sim_value_map_set_int(r, "nbytes", 999); /* params win over an annotation */
    struct sim_value *d = trace_details_from_op(p, r);
    cr_assert_eq(d->u.map.len, 4);
    cr_assert_str_eq(d->u.map.keys[0], "src_addr");
    cr_assert_str_eq(d->u.map.keys[2], "src_space");
    cr_assert_eq(sim_value_get_int(d, "nbytes", 0), 64);
    cr_assert_eq(sim_value_get_int(d, "dst_addr", 0), 0x40);
    /* a load from SRAM (an IPCQ slot) is not DRAM traffic once its source space is known */
    struct trace_transfer x[2];
    cr_assert_eq(trace_dram_from_value(TRACE_ENGINE_DMA, "dma_read", d, x), 0);
    sim_value_free(d);
    d = trace_details_from_op(NULL, r);
    cr_assert_eq(d->u.map.len, 3);
    sim_value_free(d);
    cr_assert_null(trace_details_from_op(NULL, NULL));
    sim_value_free(p);
    sim_value_free(r);
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
    cr_assert_eq(memcmp(sa, sb, na * sizeof(*sa)), 0);
    cr_assert_eq(trace_model_bw_sample_count(b), na, "the file holds the computed samples");
    free(sa);
    free(sb);
    trace_report_free(r);
    trace_model_free(a);
    trace_model_free(b);
}
