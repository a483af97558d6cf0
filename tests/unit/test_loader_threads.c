/* The loader's second thread (trace/file/pparse.h): a trace parsed with it gives the same
 * model, the same report (messages and paths, in order), the same fatal diagnostic (line and
 * column), the same progress calls and the same recovered cut as on one thread; and so does
 * a load that reads every element as a tree, without the direct reader of the ENGINE_EVENTs
 * the writer shapes (trace/file/evread.h). */
#include "trace/file/evread.h"
#include "trace/file/loader.h"
#include "trace/file/pparse.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NEV = 6000 };

/* A trace of NEV events (many batches of the worker's) with problems here and there: a
 * non-object, a missing type, a bad engine, an element nested too deep, a negative cycle, an
 * end before the start, an unknown type, a bad phase, a bad escape; bad, if bad_at >= 0, is
 * written as element bad_at. Every other ENGINE_EVENT has the writer's shape (no spaces),
 * one with dependency_ids. */
static char *trace_text(size_t *len, int bad_at, const char *bad)
{
    char *text;
    FILE *f = open_memstream(&text, len);
    fprintf(f, "{\"version\": \"1.0\",\n \"run_metadata\": {},\n \"config_snapshot\": {},\n"
               " \"timeline_events\": [\n");
    static const char *const engines[3] = {"DMA", "TE", "VE"};
    for (int i = 0; i < NEV; i++) {
        if (i)
            fprintf(f, ",\n");
        if (i == bad_at)
            fprintf(f, "%s", bad);
        else if (i == 5)
            fprintf(f, "42");
        else if (i == 1500)
            fprintf(f, "{\"start_cycle\": 1}");
        else if (i == 2500) {
            fprintf(f, "{\"type\": \"ENGINE_EVENT\", \"details\": ");
            for (int k = 0; k < 1100; k++)
                fputc('[', f);
            for (int k = 0; k < 1100; k++)
                fputc(']', f);
            fputc('}', f);
        } else if (i == 4500)
            fprintf(f, "{\"type\": \"FOO_EVENT\", \"x\": 1}");
        else if (i == 5000)
            fprintf(f, "{\"type\": \"TOKEN_EVENT\", \"phase\": \"BOGUS\", \"token_index\": 1, "
                       "\"start_cycle\": 1, \"end_cycle\": 2}");
        else if (i == 5500)
            fprintf(f, "{\"type\": \"ENGINE_EVENT\", \"op\": \"\\uDD00\"}");
        else if (i % 97 == 3)
            fprintf(f,
                    "{\"type\": \"MEM_ACCESS_EVENT\", \"mem_type\": \"DRAM\", \"cycle\": %d, "
                    "\"direction\": \"read\", \"bytes\": 64, \"address\": %d}",
                    i, i * 64);
        else if (i % 2 == 0)
            fprintf(f,
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":\"%s\",\"engine_id\":%d,"
                    "\"cmdq_id\":%d,\"layer_id\":\"l%d\",\"tile_id\":null,\"op\":\"OP%d\","
                    "\"start_cycle\":%d,\"end_cycle\":%d,\"component_id\":\"c%d\"%s,"
                    "\"details\":{\"bytes\":%d}}",
                    i == 2100 ? "XPU" : engines[i % 3], i % 4, i % 2, i / 500, i % 7,
                    i == 3000 ? -5 : i * 10, i == 4000 ? i * 10 - 3 : i * 10 + 7, i % 5,
                    i % 10 == 4 ? ",\"dependency_ids\":[0,2]" : "", i);
        else
            fprintf(f,
                    "{\"type\": \"ENGINE_EVENT\", \"engine\": \"%s\", \"engine_id\": %d, "
                    "\"cmdq_id\": %d, \"layer_id\": \"l%d\", \"op\": \"OP%d\", "
                    "\"start_cycle\": %d, \"end_cycle\": %d, \"details\": {\"bytes\": %d}}",
                    i == 2100 ? "XPU" : engines[i % 3], i % 4, i % 2, i / 500, i % 7,
                    i == 3000 ? -5 : i * 10, i == 4000 ? i * 10 - 3 : i * 10 + 7, i);
    }
    fprintf(f, "\n ],\n \"bandwidth_samples\": [{\"cycle\": 1}],\n \"summary_metrics\": {}\n}\n");
    fclose(f);
    return text;
}

static char *write_tmp(const char *text, size_t len)
{
    char *path = strdup("/tmp/npuscope-threads.XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

struct calls {
    uint64_t v[2 * NEV];
    size_t n, stop_at;
};

static int record(void *ctx, uint64_t done, uint64_t total, uint64_t events)
{
    struct calls *c = ctx;
    (void)total;
    c->v[c->n++] = done, c->v[c->n++] = events;
    return c->stop_at && c->n / 2 >= c->stop_at;
}

struct result {
    int rc;
    struct diag d;
    struct trace_model *m;
    struct trace_report *r;
    struct trace_load_cut cut;
    struct calls calls;
};

static void load(const char *path, int threads, bool recover, size_t stop_at, struct result *o,
                 bool direct)
{
    if (!direct)
        setenv("NPUSCOPE_LOAD_DIRECT", "0", 1);
    memset(o, 0, sizeof(*o));
    o->r = trace_report_new(100);
    o->calls.stop_at = stop_at;
    struct trace_load_progress p = {record, &o->calls, 100};
    struct trace_load_opts opts = {.progress = &p, .recover = recover, .threads = threads};
    o->rc = trace_load_file_opts(path, &opts, o->r, &o->m, &o->cut, &o->d);
    unsetenv("NPUSCOPE_LOAD_DIRECT");
}

static void expect_same(const struct result *a, const struct result *b)
{
    cr_assert_eq(a->rc, b->rc);
    if (a->rc < 0) {
        cr_assert_str_eq(a->d.msg, b->d.msg);
        cr_assert_eq(a->d.line, b->d.line);
        cr_assert_eq(a->d.col, b->d.col);
    }
    cr_assert_eq(a->cut.cut, b->cut.cut);
    cr_assert_eq(a->cut.at, b->cut.at);
    cr_assert_eq(a->calls.n, b->calls.n, "the same progress calls");
    cr_assert_arr_eq(a->calls.v, b->calls.v, a->calls.n * sizeof(uint64_t));
    cr_assert_eq(trace_report_errors(a->r), trace_report_errors(b->r));
    cr_assert_eq(trace_report_warnings(a->r), trace_report_warnings(b->r));
    cr_assert_eq(trace_report_notes(a->r), trace_report_notes(b->r));
    cr_assert_eq(trace_report_count(a->r), trace_report_count(b->r));
    for (size_t i = 0; i < trace_report_count(a->r); i++) {
        const struct trace_problem *x = trace_report_get(a->r, i), *y = trace_report_get(b->r, i);
        cr_assert_eq(x->sev, y->sev);
        cr_assert_str_eq(x->path, y->path);
        cr_assert_str_eq(x->msg, y->msg);
    }
    if (a->rc < 0)
        return;
    const struct trace_model *m = a->m, *n = b->m;
    cr_assert_eq(trace_model_event_count(m), trace_model_event_count(n));
    cr_assert_eq(trace_model_track_count(m), trace_model_track_count(n));
    cr_assert_eq(trace_model_mem_access_count(m), trace_model_mem_access_count(n));
    cr_assert_eq(trace_model_token_count(m), trace_model_token_count(n));
    cr_assert_eq(trace_model_bw_sample_count(m), trace_model_bw_sample_count(n));
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        const struct trace_event *x = trace_model_event(m, i), *y = trace_model_event(n, i);
        cr_assert(x->start == y->start && x->end == y->end && x->details == y->details &&
                      x->track == y->track && x->cmdq_id == y->cmdq_id && x->flags == y->flags,
                  "event %llu", (unsigned long long)i);
        cr_assert_str_eq(trace_model_str(m, x->op), trace_model_str(n, y->op));
        cr_assert_str_eq(trace_model_str(m, x->layer), trace_model_str(n, y->layer));
        const uint64_t *da, *db;
        size_t na = trace_model_event_deps(m, i, &da), nb = trace_model_event_deps(n, i, &db);
        cr_assert_eq(na, nb, "event %llu", (unsigned long long)i);
        if (na) /* no dependencies: both pointers may be NULL */
            cr_assert_arr_eq(da, db, na * sizeof(*da));
    }
}

static void drop(struct result *o)
{
    trace_model_free(o->m);
    trace_report_free(o->r);
}

/* Load text on one thread and on two, and compare. */
static void compare(const char *text, size_t len, bool recover, size_t stop_at, int *rc)
{
    char *path = write_tmp(text, len);
    struct result one, two, trees;
    load(path, 1, recover, stop_at, &one, true);
    load(path, 2, recover, stop_at, &two, true);
    load(path, 1, recover, stop_at, &trees, false);
    expect_same(&one, &two);
    expect_same(&one, &trees);
    *rc = one.rc;
    if (one.rc == 0)
        cr_assert_gt(trace_report_count(one.r), 8, "the problems were found");
    drop(&one);
    drop(&two);
    drop(&trees);
    unlink(path);
    free(path);
}

Test(loader_threads, the_same_model_and_report_as_one_thread)
{
    size_t len;
    char *text = trace_text(&len, -1, NULL);
    int rc;
    compare(text, len, false, 0, &rc);
    cr_assert_eq(rc, 0);
    free(text);
}

Test(loader_threads, the_same_fatal_error_at_the_same_position)
{
    size_t len;
    char *text = trace_text(&len, 4200, "{\"type\": tru}");
    int rc;
    compare(text, len, false, 0, &rc);
    cr_assert_lt(rc, 0);
    free(text);
    text = trace_text(&len, 3333, "{\"type\": \"ENGINE_EVENT\"} {");
    compare(text, len, false, 0, &rc);
    cr_assert_lt(rc, 0);
    free(text);
}

Test(loader_threads, the_same_recovered_events_and_cut)
{
    size_t len;
    char *text = trace_text(&len, -1, NULL);
    int rc;
    for (size_t cut = len / 7; cut < len; cut += len / 7) {
        compare(text, cut, true, 0, &rc);
        cr_assert_eq(rc, 0, "cut at %zu", cut);
    }
    free(text);
}

Test(loader_threads, a_stop_from_the_progress_is_the_same)
{
    size_t len;
    char *text = trace_text(&len, -1, NULL);
    int rc;
    compare(text, len, false, 7, &rc);
    cr_assert_eq(rc, -SIM_ESTATE);
    free(text);
}

/* A trace of NSP ENGINE_EVENTs of the writer's shape whose details name memory spaces: DMA
 * copies and math ops (six inputs: more than the reads kept) over a few names at first,
 * then, from event full_at on, a new name every few events, until the op columns' registry
 * of TRACE_OPINFO_MAX_SPACES is full. */
enum { NSP = 3000 };

static char *spaces_text(size_t *len, int full_at)
{
    char *text;
    FILE *f = open_memstream(&text, len);
    fprintf(f, "{\"version\": \"1.0\",\n \"run_metadata\": {},\n \"config_snapshot\": {},\n"
               " \"timeline_events\": [\n");
    for (int i = 0; i < NSP; i++) {
        char a[32], b[32];
        snprintf(a, sizeof(a), i >= full_at && i % 50 == 0 ? "late%d" : "s%d", (i / 7) % 5);
        snprintf(b, sizeof(b), i % 11 == 0 ? "a_space_name_too_long" : "d%d", i % 3);
        fprintf(f, "%s{\"type\":\"ENGINE_EVENT\",", i ? ",\n" : "");
        if (i % 2)
            fprintf(f,
                    "\"engine\":\"DMA\",\"engine_id\":0,\"cmdq_id\":0,\"layer_id\":\"l1\","
                    "\"tile_id\":null,\"op\":\"dma_read\",\"start_cycle\":%d,\"end_cycle\":%d,"
                    "\"details\":{\"src_space\":\"%s\",\"src_addr\":%d,\"dst_space\":\"%s\","
                    "\"dst_addr\":64,\"nbytes\":128}}",
                    i * 10, i * 10 + 5, a, i * 128, b);
        else
            fprintf(f,
                    "\"engine\":\"VE\",\"engine_id\":1,\"cmdq_id\":0,\"layer_id\":\"l0\","
                    "\"tile_id\":null,\"op\":\"add\",\"start_cycle\":%d,\"end_cycle\":%d,"
                    "\"details\":{\"input_addrs\":[0,64,128,192,256,320],"
                    "\"input_shapes\":[[4],[4],[4],[4],[4],[4]],"
                    "\"input_spaces\":[\"%s\",\"tcm\",\"x%d\",\"%s\",\"sram\",\"y%d\"],"
                    "\"dtype\":\"f16\",\"dst_addr\":%d,\"shape_out\":[4]}}",
                    i * 10, i * 10 + 5, b, i % 4 / 2, a, i >= full_at ? i / 40 : 0, i * 8);
    }
    fprintf(f, "\n ],\n \"summary_metrics\": {}\n}\n");
    fclose(f);
    return text;
}

/* The op columns and strings of m and n are the same. */
static void expect_same_opcols(const struct trace_model *m, const struct trace_model *n)
{
    cr_assert_eq(trace_model_str_count(m), trace_model_str_count(n));
    for (uint32_t s = 0; s < trace_model_str_count(m); s++)
        cr_assert_str_eq(trace_model_str(m, s), trace_model_str(n, s));
    cr_assert_eq(trace_model_event_count(m), trace_model_event_count(n));
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        size_t a = 0, b = 0;
        const uint8_t *x = trace_model_opcol(m, i, &a), *y = trace_model_opcol(n, i, &b);
        cr_assert((x == NULL) == (y == NULL) && (!x || (a == b && memcmp(x, y, a) == 0)),
                  "event %llu", (unsigned long long)i);
    }
}

/* Whatever share of the op columns the second thread decodes (none, all, every other, or
 * as it keeps ahead), the model is the one thread's: the spaces are registered in the
 * events' order, and nothing is stored once the registry is full. */
Test(loader_threads, the_op_columns_decoded_ahead_are_the_same)
{
    static const int full_at[] = {NSP / 3, NSP * 2};
    for (size_t t = 0; t < 2; t++) {
        size_t len;
        char *text = spaces_text(&len, full_at[t]);
        char *path = write_tmp(text, len);
        struct result one;
        load(path, 1, false, 0, &one, true);
        cr_assert_eq(one.rc, 0);
        size_t n;
        cr_assert_not_null(trace_model_opcol(one.m, 0, &n), "op columns while there is room");
        cr_assert(t == 0 ? !trace_model_opcol(one.m, NSP - 1, &n)
                         : trace_model_opcol(one.m, NSP - 1, &n) != NULL,
                  "no op columns once the registry is full, and only then");
        static const char *const modes[] = {"0", "1", "2", NULL};
        for (size_t k = 0; k < 4; k++) {
            struct result two;
            if (modes[k])
                setenv("NPUSCOPE_LOAD_OPINFO", modes[k], 1);
            load(path, 2, false, 0, &two, true);
            unsetenv("NPUSCOPE_LOAD_OPINFO");
            expect_same(&one, &two);
            expect_same_opcols(one.m, two.m);
            drop(&two);
        }
        drop(&one);
        unlink(path);
        free(path);
        free(text);
    }
}

/* The thread that parses ahead hashes an event's strings and call site for the loading
 * thread's caches: the lengths and hashes it hands over are those of the strings it read. */
Test(loader_threads, the_hashes_read_ahead_are_those_of_the_strings)
{
    static const char ev_text[] =
        "{\"type\":\"ENGINE_EVENT\",\"engine\":\"DMA\",\"engine_id\":3,\"cmdq_id\":null,"
        "\"layer_id\":\"layer4\",\"tile_id\":null,\"op\":\"dma_write\",\"start_cycle\":5,"
        "\"end_cycle\":9,\"component_id\":\"sip0.cube1.pe3.pe_dma\",\"details\":{\"nbytes\":16,"
        "\"src\":\"allreduce.c:119\",\"src_func\":\"sim_kutil_allreduce\"}}";
    static struct trace_evread ev;
    size_t len;
    cr_assert(trace_evread_engine(ev_text, sizeof(ev_text) - 1, false, &len, &ev));
    cr_assert(!ev.hashed && !ev.site_ok, "not asked: hashed by the loading thread");
    cr_assert(trace_evread_engine(ev_text, sizeof(ev_text) - 1, true, &len, &ev));
    cr_assert(ev.hashed);
    cr_assert_eq(len, sizeof(ev_text) - 1);
    const char *s[4] = {"layer4", NULL, "dma_write", "sip0.cube1.pe3.pe_dma"};
    for (int k = 0; k < 4; k++) {
        size_t n = s[k] ? strlen(s[k]) : 0;
        cr_assert_eq(ev.len[k], n, "string %d", k);
        if (s[k])
            cr_assert_eq(ev.hash[k], trace_evread_hash(s[k], n, TRACE_EVREAD_SEED), "string %d", k);
    }
    cr_assert(ev.site_ok);
    cr_assert_eq(ev.site_len[0], strlen("allreduce.c:119"));
    cr_assert_eq(ev.site_len[1], strlen("sim_kutil_allreduce"));
    cr_assert_eq(ev.site_hash,
                 trace_evread_hash("sim_kutil_allreduce", 19,
                                   trace_evread_hash("allreduce.c:119", 15, TRACE_EVREAD_SEED)));
    /* strings that differ past their first eight bytes hash apart */
    cr_assert_neq(trace_evread_hash("sip0.cube1.pe3.pe_dma", 21, TRACE_EVREAD_SEED),
                  trace_evread_hash("sip0.cube1.pe2.pe_dma", 21, TRACE_EVREAD_SEED));
}

static atomic_bool spin_on;

static void *spin(void *arg)
{
    (void)arg;
    while (atomic_load(&spin_on))
        ;
    return NULL;
}

/* With a thread ready to run on every core (a run going on), a trace is read on one
 * thread: the machine is seen busy at the moment the load starts. */
Test(loader_threads, a_machine_busy_now_keeps_to_one_thread)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cr_assert_gt(cores, 0);
    pthread_t th[64];
    size_t n = cores < 64 ? (size_t)cores : 64;
    atomic_store(&spin_on, true);
    for (size_t k = 0; k < n; k++)
        cr_assert_eq(pthread_create(&th[k], NULL, spin, NULL), 0);
    usleep(50000);
    bool free_seen = false;
    for (int k = 0; k < 5; k++, usleep(10000))
        free_seen |= trace_pparse_core_free();
    atomic_store(&spin_on, false);
    for (size_t k = 0; k < n; k++)
        pthread_join(th[k], NULL);
    cr_assert_not(free_seen, "%ld cores, each with a thread spinning: none is free", cores);
}

/* Runnable counts (the caller included) returned one per look, the last repeated. */
struct looks {
    const int *seen;
    int n, taken;
};

static int next_look(void *ctx)
{
    struct looks *l = ctx;
    int v = l->seen[l->taken < l->n ? l->taken : l->n - 1];
    l->taken++;
    return v;
}

/* The kernel's short work often shows as a runnable thread at the moment a load starts:
 * a core busy for one look and free at the next is free, and a machine busy at every look
 * is busy after a bounded number of looks. */
Test(loader_threads, a_core_busy_for_a_moment_is_looked_at_again)
{
    const int blip[] = {3, 1};
    struct looks l = {blip, 2, 0};
    cr_assert_eq(trace_pparse_core_free_at(2, next_look, &l), 1);
    cr_assert_eq(l.taken, 2, "looked %d times", l.taken);

    const int busy[] = {3};
    l = (struct looks){busy, 1, 0};
    cr_assert_eq(trace_pparse_core_free_at(2, next_look, &l), 0);
    cr_assert_eq(l.taken, TRACE_PPARSE_CORE_LOOKS, "looked %d times", l.taken);

    const int idle[] = {1};
    l = (struct looks){idle, 1, 0};
    cr_assert_eq(trace_pparse_core_free_at(2, next_look, &l), 1);
    cr_assert_eq(l.taken, 1);

    const int two_of_two[] = {2}; /* the caller and one other on two cores: one is free */
    l = (struct looks){two_of_two, 1, 0};
    cr_assert_eq(trace_pparse_core_free_at(2, next_look, &l), 1);
    const int three_of_two[] = {3};
    l = (struct looks){three_of_two, 1, 0};
    cr_assert_eq(trace_pparse_core_free_at(2, next_look, &l), 0);

    const int unknown[] = {0};
    l = (struct looks){unknown, 1, 0};
    cr_assert_eq(trace_pparse_core_free_at(2, next_look, &l), -1);

    l = (struct looks){idle, 1, 0}; /* one core: never a worker */
    cr_assert_eq(trace_pparse_core_free_at(1, next_look, &l), 0);
}
