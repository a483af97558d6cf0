/*
 * Fuzz harness for the trace loader and validator: any bytes are loaded as a trace file
 * (from memory, not NUL-terminated); what loads is then used the way the viewer and the
 * summary use it (metrics, bandwidth samples, details on demand, seek and busy time).
 * Nothing may crash, leak or read out of bounds. The bytes are also parsed by the loader's
 * fast parser and by cJSON: whatever the fast parser takes must be cJSON's tree and end.
 * The bytes are loaded again with every element read as a tree (NPUSCOPE_LOAD_DIRECT=0, no
 * direct reader of ENGINE_EVENTs, trace/file/evread.h), and on two threads with the second
 * decoding every other event's op columns (trace/file/pparse.h): the same answer,
 * diagnostic, report and model. And the bytes are checked without keeping the events (check_only,
 * as validate streams a trace): the same answer and report, dependency_ids resolved alike.
 */
#include "sim/util/escape.h"
#include "trace/file/compress.h"
#include "trace/file/fastjson.h"
#include "trace/file/loader.h"
#include "trace/analysis/metrics.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

static void same_or_abort(bool same)
{
    if (!same)
        abort();
}

/* The models a and b hold the same strings, tracks, events, op columns, dependencies and
 * DRAM transfers. */
static void same_model(const struct trace_model *a, const struct trace_model *b)
{
    uint32_t ns = trace_model_str_count(a);
    same_or_abort(ns == trace_model_str_count(b));
    for (uint32_t i = 0; i < ns; i++)
        same_or_abort(
            trace_model_str_len(a, i) == trace_model_str_len(b, i) &&
            memcmp(trace_model_str(a, i), trace_model_str(b, i), trace_model_str_len(a, i)) == 0);
    size_t nt = trace_model_track_count(a);
    same_or_abort(nt == trace_model_track_count(b));
    for (uint32_t t = 0; t < nt; t++) {
        const struct trace_track *x = trace_model_track_get(a, t), *y = trace_model_track_get(b, t);
        same_or_abort(x->name == y->name && x->engine == y->engine && x->engine_id == y->engine_id);
    }
    uint64_t n = trace_model_event_count(a);
    same_or_abort(n == trace_model_event_count(b));
    for (uint64_t i = 0; i < n; i++) {
        const struct trace_event *x = trace_model_event(a, i), *y = trace_model_event(b, i);
        same_or_abort(x->start == y->start && x->end == y->end && x->details == y->details &&
                      x->track == y->track && x->op == y->op && x->layer == y->layer &&
                      x->tile == y->tile && x->cmdq_id == y->cmdq_id && x->op_kind == y->op_kind &&
                      x->flags == y->flags && x->site == y->site);
        size_t ca = 0, cb = 0; /* not set without op columns */
        const uint8_t *oa = trace_model_opcol(a, i, &ca), *ob = trace_model_opcol(b, i, &cb);
        same_or_abort((oa == NULL) == (ob == NULL) &&
                      (!oa || (ca == cb && memcmp(oa, ob, ca) == 0)));
        const uint64_t *da, *db;
        size_t na = trace_model_event_deps(a, i, &da), nb = trace_model_event_deps(b, i, &db);
        same_or_abort(na == nb && (!na || memcmp(da, db, na * sizeof(*da)) == 0));
    }
    size_t nx = trace_model_transfer_count(a);
    same_or_abort(nx == trace_model_transfer_count(b));
    for (size_t i = 0; i < nx; i++) {
        const struct trace_transfer *x = trace_model_transfer(a, i),
                                    *y = trace_model_transfer(b, i);
        same_or_abort(x->bytes == y->bytes && x->event == y->event && x->flags == y->flags);
    }
}

/* The load of data with the variables env (name, value, ..., NULL) set answers as rc, d, r
 * and m did. */
static void load_is_same(const uint8_t *data, size_t size, int rc, const struct diag *d,
                         const struct trace_report *r, const struct trace_model *m,
                         const char *const *env)
{
    struct trace_report *r2 = trace_report_new(8);
    struct trace_model *m2 = NULL;
    struct diag d2;
    for (const char *const *e = env; *e; e += 2)
        setenv(e[0], e[1], 1);
    int rc2 = trace_load_buffer((const char *)data, size, "fuzz.json", r2, &m2, &d2);
    for (const char *const *e = env; *e; e += 2)
        unsetenv(e[0]);
    same_or_abort(rc == rc2);
    if (rc < 0) {
        char a[4096], b[4096];
        diag_format(d, a, sizeof(a));
        diag_format(&d2, b, sizeof(b));
        same_or_abort(strcmp(a, b) == 0);
    }
    same_or_abort(trace_report_count(r) == trace_report_count(r2));
    for (size_t i = 0; i < trace_report_count(r); i++) {
        const struct trace_problem *x = trace_report_get(r, i), *y = trace_report_get(r2, i);
        same_or_abort(x->sev == y->sev && strcmp(x->path, y->path) == 0 &&
                      strcmp(x->msg, y->msg) == 0);
    }
    if (m)
        same_model(m, m2);
    trace_model_free(m2);
    trace_report_free(r2);
}

/* The check without the events (check_only, through a file in memory: the loader reads
 * files) answers as rc and r did (a compressed stream is left out: only a file is one). */
static void check_only_is_load(const uint8_t *data, size_t size, int rc,
                               const struct trace_report *r)
{
    if (trace_z_kind_of_bytes(data, size) != TRACE_Z_NONE)
        return;
    int fd = memfd_create("fuzz.json", MFD_CLOEXEC);
    if (fd < 0)
        return;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    struct trace_report *r2 = trace_report_new(8);
    struct trace_model *m2 = NULL;
    struct diag d2;
    struct trace_load_opts o = {.threads = 1, .check_only = true};
    int rc2 = trace_load_file_opts(path, &o, r2, &m2, NULL, &d2);
    close(fd);
    same_or_abort(rc == rc2);
    same_or_abort(trace_report_count(r) == trace_report_count(r2));
    for (size_t i = 0; i < trace_report_count(r); i++) {
        const struct trace_problem *x = trace_report_get(r, i), *y = trace_report_get(r2, i);
        same_or_abort(x->sev == y->sev && strcmp(x->path, y->path) == 0 &&
                      strcmp(x->msg, y->msg) == 0);
    }
    trace_model_free(m2);
    trace_report_free(r2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fast_is_cjson((const char *)data, size);
    struct trace_report *r = trace_report_new(8);
    struct trace_model *m = NULL;
    struct diag d;
    char line[4096];
    int rc = trace_load_buffer((const char *)data, size, "fuzz.json", r, &m, &d);
    static const char *const trees[] = {"NPUSCOPE_LOAD_DIRECT", "0", NULL};
    load_is_same(data, size, rc, &d, r, m, trees);
    /* on two threads, the one parsing ahead decoding every other event's op columns */
    static const char *const ahead[] = {"NPUSCOPE_LOAD_THREADS", "2", "NPUSCOPE_LOAD_OPINFO", "2",
                                        NULL};
    load_is_same(data, size, rc, &d, r, m, ahead);
    check_only_is_load(data, size, rc, r);
    if (rc < 0) {
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
