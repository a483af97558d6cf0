/* Validation: every rule of the trace format's §11 on a file breaking it (tests/data/traces),
 * each problem with its severity, JSON path and message; the spec's own example is clean. */
#include "trace/file/loader.h"
#include "trace/file/validate.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA "tests/data/traces/"

struct want {
    enum trace_severity sev;
    const char *path;
    const char *msg;
};

/* Check file in bounded memory (trace_validate_stream): the same problems as r holds, in
 * the same order, the same counts, and a model without events that counts them all. */
static void expect_stream_same(const char *file, const struct trace_report *r,
                               const struct trace_model *full, size_t keep)
{
    struct trace_report *rs = trace_report_new(keep);
    struct trace_model *light = NULL;
    uint64_t records = 0;
    struct diag d;
    cr_assert_eq(trace_validate_stream(file, rs, &light, &records, &d), 0, "%s: %s", file, d.msg);
    cr_assert_eq(trace_report_count(rs), trace_report_count(r), "%s: problems", file);
    for (size_t i = 0; i < trace_report_count(r); i++) {
        const struct trace_problem *a = trace_report_get(r, i), *b = trace_report_get(rs, i);
        cr_assert_eq(a->sev, b->sev, "%s: problem %zu", file, i);
        cr_assert_str_eq(a->path, b->path, "%s: problem %zu", file, i);
        cr_assert_str_eq(a->msg, b->msg, "%s: problem %zu", file, i);
    }
    cr_assert_eq(trace_report_errors(rs), trace_report_errors(r));
    cr_assert_eq(trace_report_warnings(rs), trace_report_warnings(r));
    cr_assert_eq(trace_report_notes(rs), trace_report_notes(r));
    cr_assert_eq(trace_model_event_count(light), 0, "%s: events kept", file);
    cr_assert_eq(trace_model_mem_access_count(light), 0, "%s: memory accesses kept", file);
    cr_assert_eq(records,
                 trace_model_event_count(full) + trace_model_token_count(full) +
                     trace_model_marker_count(full) + trace_model_mem_access_count(full),
                 "%s: records", file);
    cr_assert_eq(trace_model_ignored_events(light), trace_model_ignored_events(full));
    cr_assert_eq(trace_model_ignored_fields(light), trace_model_ignored_fields(full));
    trace_model_free(light);
    trace_report_free(rs);
}

/* Load file; expect exactly the problems of w (n of them), in order, the same when it is
 * checked in bounded memory. */
static struct trace_model *expect(const char *file, const struct want *w, size_t n)
{
    struct trace_report *r = trace_report_new(100);
    struct trace_model *m = NULL;
    struct diag d;
    int rc = trace_validate_file(file, r, &m, &d);
    cr_assert_eq(rc, 0, "%s: %s", file, d.msg);
    size_t got = trace_report_count(r);
    for (size_t i = 0; i < got && i < n; i++) {
        const struct trace_problem *p = trace_report_get(r, i);
        cr_assert_eq(p->sev, w[i].sev, "%s: problem %zu: severity of %s: %s", file, i, p->path,
                     p->msg);
        cr_assert_str_eq(p->path, w[i].path, "%s: problem %zu", file, i);
        cr_assert_str_eq(p->msg, w[i].msg, "%s: problem %zu (%s)", file, i, p->path);
    }
    cr_assert_eq(got, n, "%s: %zu problems, expected %zu (first: %s: %s)", file, got, n,
                 got ? trace_report_get(r, 0)->path : "", got ? trace_report_get(r, 0)->msg : "");
    uint64_t count[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        count[w[i].sev]++;
    cr_assert_eq(trace_report_errors(r), count[TRACE_SEV_ERROR]);
    cr_assert_eq(trace_report_warnings(r), count[TRACE_SEV_WARNING]);
    cr_assert_eq(trace_report_notes(r), count[TRACE_SEV_NOTE]);
    expect_stream_same(file, r, m, 100);
    trace_report_free(r);
    return m;
}

/* Loading file fails; the one-line diagnostic contains msg. */
static void expect_fatal(const char *file, const char *msg, int line)
{
    struct trace_report *r = trace_report_new(100);
    struct trace_model *m = (struct trace_model *)1;
    struct diag d;
    cr_assert_lt(trace_validate_file(file, r, &m, &d), 0, "%s loaded", file);
    cr_assert_null(m);
    cr_assert_str_eq(d.file, file);
    cr_assert(strstr(d.msg, msg), "%s: message '%s' lacks '%s'", file, d.msg, msg);
    cr_assert_eq(d.line, line, "%s: line %d", file, d.line);
    /* the same failure when checked in bounded memory */
    struct diag ds;
    uint64_t records;
    m = (struct trace_model *)1;
    cr_assert_lt(trace_validate_stream(file, r, &m, &records, &ds), 0, "%s checked", file);
    cr_assert_null(m);
    cr_assert_str_eq(ds.msg, d.msg);
    cr_assert_eq(ds.line, d.line);
    cr_assert_eq(ds.col, d.col);
    trace_report_free(r);
}

Test(validate, the_spec_example_is_clean)
{
    struct trace_model *m = expect(DATA "spec_example.json", NULL, 0);
    cr_assert_eq(trace_model_event_count(m), 2);
    cr_assert_eq(trace_model_token_count(m), 1);
    cr_assert_eq(trace_model_bw_sample_count(m), 1);
    trace_model_free(m);
}

Test(validate, version_must_be_present_and_1_x)
{
    trace_model_free(expect(DATA "version_1_3.json", NULL, 0));
    expect_fatal(DATA "no_version.json", "not a trace: no \"version\" member", 0);
    expect_fatal(DATA "version_2.json", "version: unsupported trace format version \"2.0\"", 2);
}

Test(validate, timeline_events_must_be_an_array_of_typed_elements)
{
    expect_fatal(DATA "events_not_array.json", "timeline_events: must be an array, found '{'", 28);
    struct want w[] = {{TRACE_SEV_ERROR, "timeline_events[1].type", "missing"}};
    trace_model_free(expect(DATA "event_without_type.json", w, 1));
}

Test(validate, an_engine_event_must_not_end_before_it_starts)
{
    struct want w[] = {
        {TRACE_SEV_ERROR, "timeline_events[1].end_cycle", "1300 is before start_cycle 1400"}};
    struct trace_model *m = expect(DATA "start_after_end.json", w, 1);
    cr_assert_eq(trace_model_event_count(m), 1, "the bad event is skipped");
    trace_model_free(m);
}

Test(validate, cycles_must_not_be_negative)
{
    struct want w[] = {{TRACE_SEV_ERROR, "timeline_events[0].start_cycle", "-5 is negative"}};
    trace_model_free(expect(DATA "negative_cycle.json", w, 1));
}

Test(validate, enum_fields_take_their_allowed_values)
{
    struct want e[] = {{TRACE_SEV_ERROR, "timeline_events[1].engine",
                        "\"GPU\" is not one of DMA, TE, VE, HOST, OTHER"}};
    trace_model_free(expect(DATA "bad_engine.json", e, 1));
    struct want p[] = {
        {TRACE_SEV_ERROR, "timeline_events[2].phase", "\"decode\" is not one of PREFILL, DECODE"}};
    trace_model_free(expect(DATA "bad_phase.json", p, 1));
    struct want m[] = {
        {TRACE_SEV_ERROR, "timeline_events[3].mem_type", "\"L2\" is not one of DRAM, SPM"},
        {TRACE_SEV_ERROR, "timeline_events[4].direction", "\"sideways\" is not one of read, write"},
    };
    trace_model_free(expect(DATA "bad_mem_enums.json", m, 2));
}

Test(validate, cycles_total_below_the_last_end_is_a_warning)
{
    struct want w[] = {{TRACE_SEV_WARNING, "summary_metrics.cycles_total",
                        "100 is below the largest end_cycle 2000"}};
    trace_model_free(expect(DATA "cycles_total_small.json", w, 1));
}

Test(validate, required_fields_missing_or_mistyped)
{
    struct want w[] = {
        {TRACE_SEV_ERROR, "timeline_events[0].end_cycle", "missing"},
        {TRACE_SEV_WARNING, "timeline_events[1].engine_id", "must be an integer, got \"zero\""},
    };
    trace_model_free(expect(DATA "missing_and_mistyped.json", w, 2));
}

Test(validate, missing_optional_blocks_are_warnings)
{
    struct want w[] = {
        {TRACE_SEV_WARNING, "run_metadata", "missing"},
        {TRACE_SEV_WARNING, "config_snapshot", "missing"},
        {TRACE_SEV_WARNING, "bandwidth_samples", "missing"},
        {TRACE_SEV_WARNING, "summary_metrics", "missing"},
    };
    trace_model_free(expect(DATA "missing_blocks.json", w, 4));
}

Test(validate, unknown_event_types_and_fields_are_ignored_and_counted)
{
    struct trace_model *m = expect(DATA "unknown_things.json", NULL, 0);
    cr_assert_eq(trace_model_event_count(m), 2);
    cr_assert_eq(trace_model_ignored_events(m), 1);
    cr_assert_eq(trace_model_ignored_fields(m), 2); /* vendor_field, extra_block */
    trace_model_free(m);
}

Test(validate, a_report_keeps_the_first_problems_and_counts_all)
{
    struct trace_report *r = trace_report_new(2);
    for (int i = 0; i < 5; i++)
        trace_report_at(r, i % 2 ? TRACE_SEV_WARNING : TRACE_SEV_ERROR, "timeline_events", i,
                        "cycle", "problem %d", i);
    trace_report_at(r, TRACE_SEV_WARNING, "summary_metrics", -1, NULL, "x");
    cr_assert_eq(trace_report_count(r), 2);
    cr_assert_eq(trace_report_errors(r), 3);
    cr_assert_eq(trace_report_warnings(r), 3);
    cr_assert_str_eq(trace_report_get(r, 1)->path, "timeline_events[1].cycle");
    cr_assert_str_eq(trace_report_get(r, 1)->msg, "problem 1");
    cr_assert_null(trace_report_get(r, 2));
    trace_report_free(r);
    trace_report_at(NULL, TRACE_SEV_ERROR, "x", -1, NULL, "ignored"); /* no report: no-op */
}

/* Validation of text in memory. */
static struct trace_report *check_text(const char *text, int *rc)
{
    struct trace_report *r = trace_report_new(50);
    struct trace_model *m = NULL;
    *rc = trace_load_buffer(text, strlen(text), "t.json", r, &m, NULL);
    trace_model_free(m);
    return r;
}

Test(validate, field_checks_on_each_event_type)
{
    const char *t =
        "{\"version\":\"1.0\",\"run_metadata\":{\"run_id\":7},\"config_snapshot\":{},"
        "\"bandwidth_samples\":[{\"cycle\":0,\"window_cycles\":0,\"dram_read_bytes\":1,"
        "\"dram_write_bytes\":-1}],\"summary_metrics\":{\"cycles_total\":-3},"
        "\"timeline_events\":["
        "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":0,\"op\":7,"
        "\"start_cycle\":1.5,\"end_cycle\":1e400,\"details\":3},"
        "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":0,\"op\":\"g\","
        "\"start_cycle\":1,\"start_cycle\":2,\"end_cycle\":10000000000000000000,"
        "\"details\":[],\"layer_id\":5,\"op_kind\":\"vector\"},"
        "{\"type\":\"TOKEN_EVENT\",\"phase\":\"DECODE\",\"start_cycle\":9,"
        "\"end_cycle\":3},"
        "{\"type\":\"MARKER_EVENT\",\"cycle\":\"12\"},"
        "{\"type\":\"MEM_ACCESS_EVENT\",\"mem_type\":\"DRAM\",\"cycle\":3,"
        "\"direction\":\"read\",\"bytes\":4,\"source_engine\":\"NPU\"},"
        "{\"type\":7},[1],"
        "{\"type\":\"ENGINE_EVENT\",\"engine\":\"VE\",\"engine_id\":-1,\"cmdq_id\":\"x\","
        "\"op\":\"exp\",\"start_cycle\":0,\"end_cycle\":0}"
        "]}";
    int rc;
    struct trace_report *r = check_text(t, &rc);
    cr_assert_eq(rc, 0);
    static const char *const want[][2] = {
        {"run_metadata.run_id", "must be a string, got int"},
        {"bandwidth_samples[0].dram_write_bytes", "-1 is negative"},
        {"timeline_events[0].start_cycle", "1.5 is not an integer"},
        {"timeline_events[0].end_cycle", "inf is too large (above 2^53)"},
        {"timeline_events[1].start_cycle", "appears twice (the first is used)"},
        {"timeline_events[1].end_cycle", "10000000000000000000 is too large (above 2^53)"},
        {"timeline_events[2].end_cycle", "3 is before start_cycle 9"},
        {"timeline_events[3].cycle", "must be an integer, got \"12\""},
        {"timeline_events[4].addr", "missing"},
        {"timeline_events[4].source_engine", "\"NPU\" is not one of DMA, TE, VE, HOST, OTHER"},
        {"timeline_events[5].type", "must be a string, got 7"},
        {"timeline_events[6]", "must be an object, got an array"},
        {"timeline_events[7].engine_id", "-1 is out of range (0 to 2147483647)"},
        {"timeline_events[7].cmdq_id", "must be an integer, got \"x\""},
        {"summary_metrics.cycles_total", "-3 is negative"},
    };
    size_t n = sizeof(want) / sizeof(want[0]);
    for (size_t i = 0; i < n && i < trace_report_count(r); i++) {
        cr_assert_str_eq(trace_report_get(r, i)->path, want[i][0], "problem %zu", i);
        cr_assert_str_eq(trace_report_get(r, i)->msg, want[i][1], "problem %zu", i);
    }
    cr_assert_eq(trace_report_count(r), n, "%zu problems", trace_report_count(r));
    trace_report_free(r);
}

Test(validate, warnings_for_details_and_strings_of_the_wrong_type_notes_for_extensions)
{
    const char *t = "{\"version\":\"1.0\",\"timeline_events\":["
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":0,\"op\":7,"
                    "\"start_cycle\":1,\"end_cycle\":2,\"details\":3,\"layer_id\":5,"
                    "\"component_id\":9,\"op_kind\":\"vector\",\"t_start_ns\":\"soon\"}]}";
    int rc;
    struct trace_report *r = check_text(t, &rc);
    cr_assert_eq(rc, 0);
    /* the spec's fields: warnings; npuscope's extension fields, which the format does not
     * define (another producer may use them otherwise): notes */
    static const struct want want[] = {
        {TRACE_SEV_WARNING, "timeline_events[0].layer_id", "must be a string, got 5"},
        {TRACE_SEV_WARNING, "timeline_events[0].op", "must be a string, got 7"},
        {TRACE_SEV_WARNING, "timeline_events[0].details", "must be an object, got 3"},
        {TRACE_SEV_NOTE, "timeline_events[0].component_id", "must be a string, got 9"},
        {TRACE_SEV_NOTE, "timeline_events[0].op_kind",
         "\"vector\" is not one of memory, gemm, math, unknown"},
        {TRACE_SEV_NOTE, "timeline_events[0].t_start_ns", "must be a number, got \"soon\""},
    };
    size_t n = sizeof(want) / sizeof(want[0]);
    for (size_t i = 0; i < n && i < trace_report_count(r); i++) {
        cr_assert_eq(trace_report_get(r, i)->sev, want[i].sev, "problem %zu", i);
        cr_assert_str_eq(trace_report_get(r, i)->path, want[i].path, "problem %zu", i);
        cr_assert_str_eq(trace_report_get(r, i)->msg, want[i].msg, "problem %zu", i);
    }
    /* plus the four missing blocks */
    cr_assert_eq(trace_report_count(r), n + 4);
    cr_assert_eq(trace_report_errors(r), 0);
    cr_assert_eq(trace_report_warnings(r), 3 + 4);
    cr_assert_eq(trace_report_notes(r), 3);
    trace_report_free(r);
}

/* The samples against summary_metrics: a consistency check the format does not ask for
 * (sampling windows need not cover every byte), so a note, which leaves the trace valid;
 * strict makes it a warning. */
static const char samples_text[] =
    "{\"version\":\"1.0\",\"run_metadata\":{},\"config_snapshot\":{},"
    "\"timeline_events\":[],\"bandwidth_samples\":["
    "{\"cycle\":0,\"window_cycles\":64,\"dram_read_bytes\":10,\"dram_write_bytes\":1},"
    "{\"cycle\":64,\"window_cycles\":64,\"dram_read_bytes\":5,\"dram_write_bytes\":2},"
    "{\"cycle\":128,\"window_cycles\":0,\"dram_read_bytes\":0,\"dram_write_bytes\":0}],"
    "\"summary_metrics\":{\"cycles_total\":128,\"dram_bytes_read\":15,"
    "\"dram_bytes_write\":4}}";

Test(validate, summary_totals_against_the_samples_are_notes)
{
    int rc;
    struct trace_report *r = check_text(samples_text, &rc);
    cr_assert_eq(rc, 0);
    cr_assert_eq(trace_report_count(r), 2);
    cr_assert_eq(trace_report_get(r, 0)->sev, TRACE_SEV_NOTE);
    cr_assert_str_eq(trace_report_get(r, 0)->path, "bandwidth_samples[2].window_cycles");
    cr_assert_str_eq(trace_report_get(r, 0)->msg, "is 0");
    cr_assert_eq(trace_report_get(r, 1)->sev, TRACE_SEV_NOTE);
    cr_assert_str_eq(trace_report_get(r, 1)->path, "summary_metrics.dram_bytes_write");
    cr_assert_str_eq(trace_report_get(r, 1)->msg,
                     "4 differs from the sum of bandwidth_samples (3)");
    cr_assert_eq(trace_report_errors(r), 0);
    cr_assert_eq(trace_report_warnings(r), 0, "the trace follows the format");
    cr_assert_eq(trace_report_notes(r), 2);
    trace_report_free(r);
}

Test(validate, strict_makes_notes_warnings)
{
    struct trace_report *r = trace_report_new(50);
    trace_report_set_strict(r, true);
    struct trace_model *m = NULL;
    cr_assert_eq(trace_load_buffer(samples_text, strlen(samples_text), "t.json", r, &m, NULL), 0);
    cr_assert_eq(trace_report_count(r), 2);
    cr_assert_eq(trace_report_get(r, 1)->sev, TRACE_SEV_WARNING);
    cr_assert_str_eq(trace_report_get(r, 1)->path, "summary_metrics.dram_bytes_write");
    cr_assert_eq(trace_report_warnings(r), 2);
    cr_assert_eq(trace_report_notes(r), 0);
    trace_model_free(m);
    trace_report_free(r);
}

/* dependency_ids naming the element itself, a later element, one that is no ENGINE_EVENT,
 * one past the array: the same notes, in the same order, when the events are not kept. */
Test(validate, dependency_ids_are_checked_alike_in_bounded_memory)
{
    char path[] = "/tmp/npuscope_validate_deps_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"version\":\"1.0\",\"run_metadata\":{},\"config_snapshot\":{},"
          "\"bandwidth_samples\":[],\"summary_metrics\":{\"cycles_total\":100},"
          "\"timeline_events\":[",
          f);
    for (int k = 0; k < 300; k++) {
        if (k % 7 == 3) {
            fprintf(f, "%s{\"type\":\"MARKER_EVENT\",\"cycle\":%d,\"name\":\"m\"}", k ? "," : "",
                    k);
            continue;
        }
        fprintf(f,
                "%s{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":0,"
                "\"op\":\"mm\",\"start_cycle\":%d,\"end_cycle\":%d,"
                "\"dependency_ids\":[%d,%d,%d,%d,\"x\"]}",
                k ? "," : "", k % 90, k % 90 + 1, k, (k * 37) % 300, k + 1, 400 + k);
    }
    fputs("]}", f);
    fclose(f);
    struct trace_report *r = trace_report_new(1000);
    struct trace_model *m = NULL;
    struct diag d;
    cr_assert_eq(trace_validate_file(path, r, &m, &d), 0, "%s", d.msg);
    cr_assert_gt(trace_report_notes(r), 300, "the fixture names no event");
    cr_assert_gt(trace_model_dep_count(m), 100, "the fixture names events");
    /* element k (not a marker) is event k - k/7 - (k%7>3): each dependency is on the event
     * its element became, and only those */
    size_t ndeps = 0;
    for (int k = 0; k < 300; k++) {
        if (k % 7 == 3)
            continue;
        const uint64_t *on;
        size_t n = trace_model_event_deps(m, (uint64_t)(k - k / 7 - (k % 7 > 3)), &on);
        int named[2] = {(k * 37) % 300, k + 1}, want = 0;
        for (int q = 0; q < 2; q++) {
            int e = named[q];
            if (e == k || e >= 300 || e % 7 == 3)
                continue;
            cr_assert_lt((size_t)want, n, "element %d depends on element %d", k, e);
            cr_assert_eq(on[want], (uint64_t)(e - e / 7 - (e % 7 > 3)), "element %d", k);
            want++;
        }
        cr_assert_eq(n, (size_t)want, "element %d", k);
        ndeps += n;
    }
    cr_assert_eq(ndeps, trace_model_dep_count(m));
    expect_stream_same(path, r, m, 1000);
    trace_model_free(m);
    trace_report_free(r);
    unlink(path);
}
