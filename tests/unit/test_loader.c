/* The loader: spec traces from other simulators, optional fields, ordering, details on
 * demand, and every kind of hostile input (never a crash: a diagnostic or a report). */
#include "sim/util/xalloc.h"
#include "trace/file/loader.h"
#include "trace/analysis/metrics.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA "tests/data/traces/"

static struct trace_model *load_text(const char *text, size_t len, struct trace_report *r,
                                     struct diag *d, int *rc)
{
    struct trace_model *m = NULL;
    *rc = trace_load_buffer(text, len, "t.json", r, &m, d);
    cr_assert((*rc == 0) == (m != NULL));
    return m;
}

/* text must fail to load with a message containing msg. */
static void expect_fatal(const char *text, size_t len, const char *msg)
{
    struct diag d;
    int rc;
    struct trace_model *m = load_text(text, len, NULL, &d, &rc);
    cr_assert_lt(rc, 0, "loaded: %.60s", text);
    cr_assert_null(m);
    cr_assert_str_eq(d.file, "t.json");
    cr_assert(strstr(d.msg, msg), "message '%s' lacks '%s'", d.msg, msg);
}

static void expect_fatal_s(const char *text, const char *msg)
{
    expect_fatal(text, strlen(text), msg);
}

static const char *str(const struct trace_model *m, uint32_t id)
{
    return trace_model_str(m, id);
}

Test(loader, the_spec_example)
{
    struct trace_report *r = trace_report_new(10);
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_file(DATA "spec_example.json", r, &m, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_model_track_count(m), 2);
    const struct trace_event *e = trace_model_event(m, 0);
    const struct trace_track *t = trace_model_track_get(m, e->track);
    cr_assert_str_eq(str(m, t->name), "DMA 0", "a spec trace's track is its engine and id");
    cr_assert_eq(t->engine, TRACE_ENGINE_DMA);
    cr_assert_eq(e->start, 1000);
    cr_assert_eq(e->end, 1100);
    cr_assert_eq(e->cmdq_id, 0);
    cr_assert_str_eq(str(m, e->op), "DMA_LOAD_TILE");
    cr_assert_str_eq(str(m, e->layer), "ffn_1");
    cr_assert_str_eq(str(m, e->tile), "ffn_1_tile_0");
    cr_assert_eq(e->op_kind, TRACE_KIND_MEMORY, "guessed from the engine");
    cr_assert_eq(trace_model_event(m, 1)->op_kind, TRACE_KIND_GEMM);
    struct sim_value *det = trace_model_event_details(m, 1);
    cr_assert_eq(sim_value_get_int(det, "k", 0), 256);
    sim_value_free(det);
    /* the DMA load is DRAM traffic: direction read, 2048 bytes */
    cr_assert_eq(trace_model_transfer_count(m), 1);
    cr_assert_eq(trace_model_transfer(m, 0)->bytes, 2048);
    cr_assert_eq(trace_model_transfer(m, 0)->flags, 0);
    const struct trace_token *tk = trace_model_token(m, 0);
    cr_assert(tk->decode);
    cr_assert_eq(tk->start, 900);
    cr_assert_eq(sim_value_get_int(tk->details, "generated_token_id", 0), 1234);
    cr_assert_eq(trace_model_bw_sample(m, 0)->read_bytes, 4096);
    cr_assert_eq(sim_value_get_int(trace_model_file_summary(m), "cycles_total", 0), 2000);
    cr_assert_eq(sim_value_get_int(sim_value_map_get(trace_model_config(m), "npu"), "num_te", 0),
                 2);
    cr_assert_str_eq(sim_value_get_str(trace_model_metadata(m), "model_name", ""), "TinyLLM");
    cr_assert_eq(trace_model_t_min(m), 900);
    cr_assert_eq(trace_model_t_max(m), 2000);
    trace_model_free(m);
    trace_report_free(r);
}

Test(loader, optional_fields_may_be_absent)
{
    const char *t = "{\"version\":\"1.0\",\"run_metadata\":{},\"config_snapshot\":{},"
                    "\"bandwidth_samples\":[],\"summary_metrics\":{},\"timeline_events\":["
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":\"VE\",\"engine_id\":1,\"op\":\"x\","
                    "\"start_cycle\":5,\"end_cycle\":9},"
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":\"VE\",\"engine_id\":1,\"op\":\"y\","
                    "\"start_cycle\":1,\"end_cycle\":3,\"layer_id\":null,\"tile_id\":null,"
                    "\"cmdq_id\":null,\"details\":null},"
                    "{\"type\":\"MARKER_EVENT\",\"name\":\"M\",\"cycle\":4}]}";
    struct trace_report *r = trace_report_new(10);
    int rc;
    struct trace_model *m = load_text(t, strlen(t), r, NULL, &rc);
    cr_assert_eq(trace_report_errors(r) + trace_report_warnings(r), 0, "%s: %s",
                 trace_report_get(r, 0)->path, trace_report_get(r, 0)->msg);
    cr_assert_eq(trace_model_event(m, 0)->cmdq_id, TRACE_NO_CMDQ);
    cr_assert_eq(trace_model_event(m, 0)->layer, TRACE_NO_STR);
    cr_assert_null(trace_model_event_details(m, 0));
    /* out of order in the file, sorted in the track */
    const uint32_t *idx;
    cr_assert_eq(trace_model_track_events(m, trace_model_event(m, 0)->track, &idx), 2);
    cr_assert_eq(idx[0], 1);
    cr_assert_eq(idx[1], 0);
    cr_assert_eq(trace_model_marker(m, 0)->track, UINT32_MAX);
    trace_model_free(m);
    trace_report_free(r);
}

Test(loader, extension_fields_give_tracks_and_kinds)
{
    const char *t =
        "{\"version\":\"1.0\",\"timeline_events\":["
        "{\"type\":\"ENGINE_EVENT\",\"engine\":\"DMA\",\"engine_id\":2,\"op\":\"dma_write\","
        "\"start_cycle\":0,\"end_cycle\":10,\"component_id\":\"sip0.cube0.pe2.pe_dma\","
        "\"op_kind\":\"memory\",\"t_start_ns\":0.0,\"t_end_ns\":6.5,"
        "\"details\":{\"dst_space\":\"hbm\",\"nbytes\":512,\"snapshot\":null}},"
        "{\"type\":\"ENGINE_EVENT\",\"engine\":\"DMA\",\"engine_id\":2,\"op\":\"ipcq_copy\","
        "\"start_cycle\":10,\"end_cycle\":20,\"component_id\":\"sip0.cube0.pe2.pe_dma\","
        "\"op_kind\":\"memory\",\"details\":{\"src_space\":\"hbm\",\"dst_space\":\"hbm\","
        "\"nbytes\":64}},"
        "{\"type\":\"ENGINE_EVENT\",\"engine\":\"OTHER\",\"engine_id\":0,\"op\":\"Foo\","
        "\"start_cycle\":0,\"end_cycle\":1,\"component_id\":\"sip0.cube0.pe2.pe_cpu\","
        "\"op_kind\":\"unknown\"},"
        "{\"type\":\"MARKER_EVENT\",\"name\":\"K\",\"cycle\":3,"
        "\"component_id\":\"sip0.cube0.pe2.pe_dma\"}]}";
    int rc;
    struct trace_model *m = load_text(t, strlen(t), NULL, NULL, &rc);
    cr_assert_eq(trace_model_track_count(m), 2);
    const struct trace_track *tr = trace_model_track_get(m, trace_model_event(m, 0)->track);
    cr_assert_str_eq(str(m, tr->name), "sip0.cube0.pe2.pe_dma");
    cr_assert_eq(tr->engine_id, 2);
    cr_assert_eq(trace_model_event(m, 2)->op_kind, TRACE_KIND_UNKNOWN);
    cr_assert_eq(trace_model_marker(m, 0)->track, trace_model_event(m, 0)->track);
    /* dma_write to HBM: a write; ipcq_copy HBM -> HBM: a read and a write */
    cr_assert_eq(trace_model_transfer_count(m), 3);
    cr_assert_eq(trace_model_transfer(m, 0)->flags, TRACE_XFER_WRITE);
    cr_assert_eq(trace_model_transfer(m, 0)->bytes, 512);
    cr_assert_eq(trace_model_transfer(m, 1)->flags, 0);
    cr_assert_eq(trace_model_transfer(m, 2)->flags, TRACE_XFER_WRITE);
    trace_model_free(m);
}

Test(loader, versions_1_x_are_read_others_refused)
{
    const char *ok[] = {"\"1.0\"", "\"1.3\"", "\"1\"", "\"1.0.7\""};
    const char *bad[] = {"\"2.0\"", "\"0.9\"", "1.0", "\"v1\"", "\"\"", "null", "\" 1.0\""};
    char buf[128];
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        snprintf(buf, sizeof(buf), "{\"version\":%s,\"timeline_events\":[]}", ok[i]);
        int rc;
        trace_model_free(load_text(buf, strlen(buf), NULL, NULL, &rc));
        cr_assert_eq(rc, 0, "%s refused", ok[i]);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(buf, sizeof(buf), "{\"timeline_events\":[],\"version\":%s}", bad[i]);
        expect_fatal(buf, strlen(buf), "version");
    }
}

Test(loader, not_a_trace)
{
    expect_fatal("", 0, "not a trace: the file is empty");
    expect_fatal_s(" \n\t ", "not a trace: the file is empty");
    expect_fatal_s("hello", "not a trace: expected '{', found 'h'");
    expect_fatal_s("[]", "not a trace: expected '{', found '['");
    expect_fatal_s("\x1b[31m", "not a trace: expected '{', found byte 0x1b");
    expect_fatal_s("{}", "no \"version\"");
    expect_fatal_s("{\"version\":\"1.0\"} x", "unexpected 'x' after the trace");
    expect_fatal_s("{\"version\":\"1.0\",}", "expected a member name");
    expect_fatal_s("{\"version\" \"1.0\"}", "expected ':'");
    expect_fatal_s("{\"version\":\"1.0\",\"timeline_events\":[{\"type\":tru}]}",
                   "timeline_events[0]: invalid JSON: expected a value");
    expect_fatal_s("{\"version\":\"1.0\",\"timeline_events\":[{} {}]}",
                   "expected ',' or ']' after element 0, found '{'");
    expect_fatal_s("{\"version\":\"1.0\",\"x\":[1,2}", "invalid JSON: expected ',' or ']'");
    expect_fatal_s("{\"version\":\"1.0\",\"x\":\"a\\qb\"}", "invalid escape");
    expect_fatal_s("{\"version\":\"1.0\",\"x\":01}", "expected ',' or '}'");
}

Test(loader, a_syntax_error_gives_line_and_column)
{
    const char *t =
        "{\n  \"version\": \"1.0\",\n  \"timeline_events\": [\n    {\"type\": @}\n  ]\n}";
    struct diag d;
    int rc;
    load_text(t, strlen(t), NULL, &d, &rc);
    cr_assert_lt(rc, 0);
    cr_assert_eq(d.line, 4);
    cr_assert_eq(d.col, 14, "column of '@'");
    char line[1200];
    diag_format(&d, line, sizeof(line));
    cr_assert_str_eq(line, "t.json:4:14: timeline_events[0]: invalid JSON: expected a value");
}

Test(loader, every_truncation_of_a_trace_is_refused_cleanly)
{
    size_t len;
    FILE *f = fopen(DATA "spec_example.json", "rb");
    cr_assert_not_null(f);
    char *full = sim_xmalloc(1 << 16);
    len = fread(full, 1, 1 << 16, f);
    fclose(f);
    while (len && (full[len - 1] == '\n' || full[len - 1] == ' '))
        len--;
    for (size_t n = 0; n < len; n++) {
        struct diag d;
        int rc;
        struct trace_model *m = load_text(full, n, NULL, &d, &rc);
        cr_assert_lt(rc, 0, "a trace cut at %zu bytes loaded", n);
        cr_assert_null(m);
    }
    int rc;
    trace_model_free(load_text(full, len, NULL, NULL, &rc));
    cr_assert_eq(rc, 0);
    free(full);
}

/* A trace whose one event has text inside it. */
static char *with_event(const char *event_prefix, const char *middle, size_t reps,
                        const char *event_suffix, size_t *len)
{
    const char *head = "{\"version\":\"1.0\",\"timeline_events\":[";
    const char *tail = "]}";
    size_t ml = strlen(middle);
    *len = strlen(head) + strlen(event_prefix) + ml * reps + strlen(event_suffix) + strlen(tail);
    char *b = sim_xmalloc(*len + 1), *q = b;
    q = stpcpy(q, head);
    q = stpcpy(q, event_prefix);
    for (size_t i = 0; i < reps; i++)
        q = memcpy(q, middle, ml), q += ml;
    q = stpcpy(q, event_suffix);
    stpcpy(q, tail);
    return b;
}

Test(loader, a_million_levels_of_nesting)
{
    enum { DEPTH = 1000000 };
    /* well-formed but deeper than cJSON reads: the element is skipped as an error */
    char *open = with_event("", "[", DEPTH, "", &(size_t){0});
    size_t n = strlen(open) - 2;
    char *t = sim_xmalloc(n + DEPTH + 3);
    memcpy(t, open, n);
    memset(t + n, ']', DEPTH);
    memcpy(t + n + DEPTH, "]}", 3);
    struct trace_report *r = trace_report_new(5);
    int rc;
    struct trace_model *m = load_text(t, n + DEPTH + 2, r, NULL, &rc);
    cr_assert_eq(rc, 0);
    cr_assert_eq(trace_report_errors(r), 1);
    cr_assert_str_eq(trace_report_get(r, 0)->path, "timeline_events[0]");
    cr_assert_str_eq(trace_report_get(r, 0)->msg,
                     "nested 1000000 levels deep (at most 1000 are read); skipped");
    trace_model_free(m);
    trace_report_free(r);
    /* never closed: a syntax error at the end */
    expect_fatal(open, strlen(open) - 2, "unexpected end of file");
    /* deep inside an unknown top-level key, and inside run_metadata */
    char *k = sim_xmalloc(DEPTH * 2 + 100);
    int p = sprintf(k, "{\"version\":\"1.0\",\"x\":");
    memset(k + p, '[', DEPTH);
    memset(k + p + DEPTH, ']', DEPTH);
    strcpy(k + p + 2 * DEPTH, ",\"run_metadata\":[[[[[[[[[[[[]]]]]]]]]]]]}");
    r = trace_report_new(5);
    m = load_text(k, strlen(k), r, NULL, &rc);
    cr_assert_eq(rc, 0);
    cr_assert_eq(trace_model_ignored_fields(m), 1);
    cr_assert_str_eq(trace_report_get(r, 0)->path, "run_metadata");
    cr_assert_str_eq(trace_report_get(r, 0)->msg, "must be an object, got an array");
    trace_model_free(m);
    trace_report_free(r);
    /* a version nested too deep to read is no version */
    p = sprintf(k, "{\"timeline_events\":[],\"version\":");
    memset(k + p, '[', 1500);
    memset(k + p + 1500, ']', 1500);
    strcpy(k + p + 3000, "}");
    expect_fatal_s(k, "version: must be a string");
    p = sprintf(k, "{\"version\":\"1.0\",\"x\":");
    memset(k + p, '[', DEPTH);
    memset(k + p + DEPTH, ']', DEPTH);
    strcpy(k + p + 2 * DEPTH, "}");
    k[p + DEPTH] = '}';
    expect_fatal(k, strlen(k), "invalid JSON: expected a value");
    free(k);
    free(open);
    free(t);
}

Test(loader, an_element_too_big_to_parse_is_out_of_memory_not_bad_json)
{
    size_t len;
    char *t = with_event("{\"type\":\"ENGINE_EVENT\",\"details\":[0", ",0", 2000000, "]}", &len);
    struct diag d;
    int rc;
    cr_assert_null(load_text(t, len, NULL, &d, &rc));
    cr_assert_eq(rc, -SIM_ENOMEM);
    cr_assert(strstr(d.msg, "timeline_events[0]: needs more than 64 MiB"), "%s", d.msg);
    free(t);
    /* the same count of small events is fine */
    t = with_event("{\"type\":\"X\"}", ",{\"type\":\"X\"}", 200000, "", &len);
    struct trace_model *m = load_text(t, len, NULL, NULL, &rc);
    cr_assert_eq(trace_model_ignored_events(m), 200001);
    trace_model_free(m);
    free(t);
}

Test(loader, hostile_values_are_reported_not_fatal)
{
    /* \u0000 and invalid UTF-8 in strings, 1e400, 2^64, negative and duplicate fields */
    const char *t = "{\"version\":\"1.0\",\"timeline_events\":["
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":0,"
                    "\"op\":\"a\\u0000b\\ud83d\\ude00\xff\xfe\",\"start_cycle\":1,\"end_cycle\":2},"
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":0,\"op\":\"x\","
                    "\"start_cycle\":1e400,\"end_cycle\":18446744073709551616},"
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":0,\"op\":\"x\","
                    "\"start_cycle\":-1,\"end_cycle\":-2},"
                    "{\"type\":\"ENGINE_EVENT\",\"type\":\"TOKEN_EVENT\",\"engine\":\"TE\","
                    "\"engine\":\"VE\",\"engine_id\":0,\"op\":\"d\",\"start_cycle\":3,"
                    "\"end_cycle\":4},"
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":[\"TE\"],\"start_cycle\":{},"
                    "\"end_cycle\":true},"
                    "{\"type\":\"\\u0000\"},"
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":1e300,"
                    "\"cmdq_id\":-5,\"op\":\"q\",\"start_cycle\":9007199254740992,"
                    "\"end_cycle\":9007199254740992}"
                    "]}";
    struct trace_report *r = trace_report_new(50);
    int rc;
    struct trace_model *m = load_text(t, strlen(t), r, NULL, &rc);
    cr_assert_eq(rc, 0);
    cr_assert_eq(trace_model_event_count(m), 3);
    /* a string is cut at an embedded NUL (cJSON strings are C strings) */
    cr_assert_str_eq(str(m, trace_model_event(m, 0)->op), "a");
    /* the first of duplicate keys counts */
    cr_assert_eq(trace_model_track_get(m, trace_model_event(m, 1)->track)->engine, TRACE_ENGINE_TE);
    cr_assert_eq(trace_model_event(m, 2)->end, 9007199254740992ull);
    cr_assert_eq(trace_model_event(m, 2)->cmdq_id, TRACE_NO_CMDQ);
    cr_assert_eq(trace_model_ignored_events(m), 1);
    cr_assert_geq(trace_report_errors(r), 6);
    trace_model_free(m);
    trace_report_free(r);
}

Test(loader, files_that_cannot_be_read)
{
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_file("no/such/file.json", NULL, &m, &d), -SIM_ENOENT);
    cr_assert_str_eq(d.file, "no/such/file.json");
    cr_assert(strstr(d.msg, "cannot open"));
    cr_assert_lt(trace_load_file("tests", NULL, &m, &d), 0);
    cr_assert(strstr(d.msg, "Is a directory"), "%s", d.msg);
    cr_assert_lt(trace_load_file("/dev/null", NULL, &m, &d), 0);
    cr_assert(strstr(d.msg, "empty"), "%s", d.msg);
    char path[] = "/tmp/npuscope-empty.XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    cr_assert_lt(trace_load_file(path, NULL, &m, &d), 0);
    cr_assert(strstr(d.msg, "the file is empty"), "%s", d.msg);
    unlink(path);
}

Test(loader, a_byte_order_mark_is_accepted)
{
    const char *t = "\xEF\xBB\xBF{\"version\":\"1.0\",\"timeline_events\":[]}";
    int rc;
    trace_model_free(load_text(t, strlen(t), NULL, NULL, &rc));
    cr_assert_eq(rc, 0);
}

Test(loader, metrics_of_a_spec_trace)
{
    struct trace_model *m;
    cr_assert_eq(trace_load_file(DATA "spec_example.json", NULL, &m, NULL), 0);
    struct trace_metrics x;
    trace_metrics_compute(m, &x);
    /* one DMA read of 2048 bytes over [1000, 1100); TE busy [1100, 1300); token 900..2000 */
    cr_assert_eq(x.cycles_total, 2000);
    cr_assert_eq(x.dram_read, 2048);
    cr_assert_eq(x.dram_source, TRACE_DRAM_TRANSFERS);
    cr_assert_eq(x.dma_active, 100);
    cr_assert_eq(x.dma_max_concurrent, 1);
    cr_assert_eq(x.nte, 1);
    cr_assert_eq(x.te[0].active, 200);
    cr_assert_float_eq(x.te[0].util, 0.1, 1e-12);
    cr_assert(x.has_decode);
    cr_assert_float_eq(x.avg_decode_latency, 1100, 1e-9);
    cr_assert(!x.has_prefill);
    trace_metrics_fini(&x);
    trace_model_free(m);
}

Test(loader, recover_keeps_every_complete_event_before_the_cut)
{
    struct trace_model *whole;
    struct diag d;
    cr_assert_eq(trace_load_file(DATA "views.json", NULL, &whole, &d), 0, "%s", d.msg);
    FILE *f = fopen(DATA "views.json", "rb");
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof(text), f);
    fclose(f);
    char path[] = "/tmp/npuscope-recover.XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    uint64_t last = 0;
    for (size_t cut = n / 10; cut < n; cut += n / 10) {
        cr_assert_eq(ftruncate(fd, 0), 0);
        cr_assert_eq(pwrite(fd, text, cut, 0), (ssize_t)cut);
        struct trace_model *m = NULL;
        cr_assert_lt(trace_load_file(path, NULL, &m, &d), 0, "cut at %zu: refused", cut);
        struct trace_load_opts o = {.recover = true};
        struct trace_load_cut c;
        cr_assert_eq(trace_load_file_opts(path, &o, NULL, &m, &c, &d), 0, "cut at %zu: %s", cut,
                     d.msg);
        cr_assert(c.cut && c.at <= cut && !c.compressed, "cut at %zu: flagged", cut);
        uint64_t ne = trace_model_event_count(m);
        cr_assert_geq(ne, last, "a later cut keeps at least as many events");
        /* the events kept are the whole trace's first ones (in file order) */
        for (uint64_t i = 0; i < ne; i++) {
            const struct trace_event *a = trace_model_event(m, i), *b = trace_model_event(whole, i);
            cr_assert(a->start == b->start && a->end == b->end);
            cr_assert_str_eq(trace_model_str(m, a->op), trace_model_str(whole, b->op));
        }
        last = ne;
        trace_model_free(m);
    }
    cr_assert_gt(last, 0);
    close(fd);
    unlink(path);
    struct trace_model *m;
    struct trace_load_opts o = {.recover = true};
    struct trace_load_cut c;
    cr_assert_eq(trace_load_file_opts(DATA "views.json", &o, NULL, &m, &c, &d), 0);
    cr_assert(!c.cut, "a whole trace is not flagged");
    cr_assert_eq(trace_model_event_count(m), trace_model_event_count(whole));
    trace_model_free(m);
    trace_model_free(whole);
}
