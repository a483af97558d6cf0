/* The verdict kept beside a trace's index (trace/cache/vcache.c): read back, it is the
 * verdict judged, figure for figure and step for step, with the same evidence on screen,
 * whether the model comes from the JSON or the index; a trace that changed, another budget
 * of details, a file cut, grown or damaged anywhere, or contents that do not fit the model
 * (checksums made to hold) are not served; a checked verdict is not kept. */
#include "test_runtrace.h"
#include "test_tmpdir.h"
#include "trace/cache/index.h"
#include "trace/cache/vcache.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

/* A trace of a short llm_decode run (launches, ops with addresses, tiles) at dir/t.json, its
 * cache in dir/xdg. */
static void write_run_trace(char *path, size_t size)
{
    snprintf(path, size, "%s/t.json", dir);
    test_write_run_trace(path);
    char cache[128];
    snprintf(cache, sizeof(cache), "%s/xdg", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
}

static struct trace_model *open_trace(const char *path)
{
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_index_load(path, false, &m, NULL, NULL, &d, NULL), 0, "%s", d.msg);
    return m;
}

/* Two doubles the same to the bit. */
#define SAME_F(a, b, what)                                                                         \
    cr_assert(memcmp(&(a), &(b), sizeof(double)) == 0, "%s: %s %.17g against %.17g", where, what,  \
              (a), (b))

/* b, read back, is a: every figure, name and step, and the evidence a user reads. */
static void same_item(const struct trace_verdict *va, const struct trace_verdict_item *a,
                      const struct trace_verdict *vb, const struct trace_verdict_item *b,
                      const char *where)
{
    cr_assert_eq(a->region->cmdq_id, b->region->cmdq_id, "%s", where);
    cr_assert_eq(a->region->start, b->region->start, "%s", where);
    cr_assert(a->running == b->running && a->bound == b->bound && a->heuristic == b->heuristic,
              "%s: bound", where);
    cr_assert(a->link == b->link && a->hbm == b->hbm && a->busiest_link == b->busiest_link &&
                  a->host_link == b->host_link,
              "%s: names", where);
    SAME_F(a->share, b->share, "share");
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
        SAME_F(a->busy[e], b->busy[e], "busy");
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        SAME_F(a->time[k], b->time[k], "time");
    SAME_F(a->flops, b->flops, "flops");
    SAME_F(a->peak_flops, b->peak_flops, "peak flops");
    SAME_F(a->peak_bw, b->peak_bw, "peak bandwidth");
    SAME_F(a->hbm_util, b->hbm_util, "HBM");
    SAME_F(a->link_util, b->link_util, "link");
    SAME_F(a->host_util, b->host_util, "host");
    cr_assert(a->length == b->length && a->dram_bytes == b->dram_bytes && a->waits == b->waits &&
                  a->longest_wait_ev == b->longest_wait_ev && a->longest_wait == b->longest_wait &&
                  a->missing == b->missing && a->dma_ops == b->dma_ops &&
                  a->dma_bytes == b->dma_bytes,
              "%s: counts", where);
    cr_assert(memcmp(a->wait_by, b->wait_by, sizeof(a->wait_by)) == 0, "%s: waits", where);
    const struct trace_critpath *p = &a->path, *q = &b->path;
    cr_assert(p->n == q->n && p->start == q->start && p->end == q->end && p->ops == q->ops &&
                  p->decoded == q->decoded && p->with_addresses == q->with_addresses &&
                  p->with_tiles == q->with_tiles && p->with_explicit == q->with_explicit &&
                  p->truncated == q->truncated && p->spaces.n == q->spaces.n,
              "%s: path", where);
    for (unsigned s = 0; s < p->spaces.n; s++)
        cr_assert_str_eq(p->spaces.names[s], q->spaces.names[s], "%s", where);
    for (size_t s = 0; s < p->n; s++) {
        const struct trace_path_step *x = &p->steps[s], *y = &q->steps[s];
        cr_assert(x->ev == y->ev && x->pred == y->pred && x->wait == y->wait && x->why == y->why &&
                      x->range.space == y->range.space && x->range.lo == y->range.lo &&
                      x->range.hi == y->range.hi,
                  "%s: step %zu", where, s);
    }
    char la[12][TRACE_VERDICT_LINE], lb[12][TRACE_VERDICT_LINE], ba[256], bb[256];
    size_t na = trace_verdict_evidence(va, a, la, 12), nb = trace_verdict_evidence(vb, b, lb, 12);
    cr_assert_eq(na, nb, "%s", where);
    for (size_t i = 0; i < na; i++)
        cr_assert_str_eq(la[i], lb[i], "%s", where);
    cr_assert_str_eq(trace_verdict_bound_text(va, a, ba, sizeof(ba)),
                     trace_verdict_bound_text(vb, b, bb, sizeof(bb)), "%s", where);
}

static void same_verdict(const struct trace_verdict *a, const struct trace_verdict *b)
{
    same_item(a, &a->run, b, &b->run, "run");
    cr_assert_eq(a->nlaunches, b->nlaunches);
    cr_assert_gt(a->nlaunches, 0);
    size_t steps = 0;
    for (size_t i = 0; i < a->nlaunches; i++) {
        char where[32];
        snprintf(where, sizeof(where), "launch %zu", i);
        same_item(a, &a->launches[i], b, &b->launches[i], where);
        steps += a->launches[i].path.n;
    }
    cr_assert_gt(steps, 10, "paths of some length were compared");
}

Test(vcache, a_kept_verdict_reads_back_as_it_was_judged, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    write_run_trace(path, sizeof(path));
    struct trace_model *m = open_trace(path); /* from the JSON, the index written */
    struct diag d;
    cr_assert_null(trace_vcache_load(m, path, NULL, &d), "none kept yet");
    cr_assert(strstr(d.msg, ": none kept"), "%s", d.msg);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    cr_assert_eq(trace_vcache_save(v, path, NULL, &d), 0, "%s", d.msg);
    struct trace_progress pg = {0};
    struct trace_verdict_opts o = {.progress = &pg};
    struct trace_verdict *k = trace_vcache_load(m, path, &o, &d);
    cr_assert_not_null(k, "%s", d.msg);
    cr_assert_str_eq(atomic_load(&pg.what), "verdict: kept from an earlier view");
    same_verdict(v, k);
    trace_verdict_free(k);
    /* the model of the next view, from the index */
    struct trace_model *m2 = open_trace(path);
    k = trace_vcache_load(m2, path, NULL, &d);
    cr_assert_not_null(k, "%s", d.msg);
    same_verdict(v, k);
    trace_verdict_free(k);
    trace_model_free(m2);
    trace_verdict_free(v);
    trace_model_free(m);
    unsetenv("XDG_CACHE_HOME");
}

/* Not served, with a message saying so. */
static void refused(const struct trace_model *m, const char *path,
                    const struct trace_verdict_opts *o, const char *what)
{
    struct diag d = {0};
    struct trace_verdict *v = trace_vcache_load(m, path, o, &d);
    cr_assert_null(v, "%s: served", what);
    cr_assert(strstr(d.msg, "kept verdict not used: ") && !strstr(d.msg, "none kept"), "%s: %s",
              what, d.msg);
}

static unsigned char *read_file(const char *file, size_t *n)
{
    char *p = slurp(file, n);
    cr_assert_not_null(p, "%s", file);
    return (unsigned char *)p;
}

static void write_file(const char *file, const unsigned char *p, size_t n)
{
    FILE *f = fopen(file, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* The file of bytes p (a kept verdict's, maybe changed) with its checksums made to hold. */
static void write_sealed(const char *file, unsigned char *p, size_t n)
{
    write_file(file, p, n);
    struct diag d;
    cr_assert_eq(trace_vcache_reseal(file, &d), 0, "%s", d.msg);
}

Test(vcache, a_changed_trace_another_budget_or_a_damaged_file_is_not_served, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char path[128];
    write_run_trace(path, sizeof(path));
    struct trace_model *m = open_trace(path);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    struct diag d;
    cr_assert_eq(trace_vcache_save(v, path, NULL, &d), 0, "%s", d.msg);
    char *file = trace_vcache_path(path);
    size_t n;
    unsigned char *good = read_file(file, &n);
    cr_assert_gt(n, sizeof(struct trace_vcache_header) + 1000);
    struct trace_verdict *k = trace_vcache_load(m, path, NULL, &d);
    cr_assert_not_null(k, "%s", d.msg);
    trace_verdict_free(k);

    struct trace_verdict_opts other = {.max_decode = 5};
    refused(m, path, &other, "another budget of details");
    /* a byte changed: in the header, at the payload's start, middle and end */
    size_t at[] = {
        0,     9,    17, sizeof(struct trace_vcache_header) - 1, sizeof(struct trace_vcache_header),
        n / 2, n - 1};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        unsigned char *bad = malloc(n);
        memcpy(bad, good, n);
        bad[at[i]] ^= 0x20;
        write_file(file, bad, n);
        char what[64];
        snprintf(what, sizeof(what), "byte %zu changed", at[i]);
        refused(m, path, NULL, what);
        free(bad);
    }
    /* cut, or a byte more */
    size_t cut[] = {0, 40, sizeof(struct trace_vcache_header), n / 2, n - 1};
    for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
        write_file(file, good, cut[i]);
        refused(m, path, NULL, "cut");
    }
    unsigned char *more = malloc(n + 1);
    memcpy(more, good, n);
    more[n] = 0;
    write_file(file, more, n + 1);
    refused(m, path, NULL, "a byte more");
    write_sealed(file, more, n + 1);
    refused(m, path, NULL, "a byte more, sealed");
    free(more);
    /* whole again: served; then the trace touched (its mtime): not */
    write_file(file, good, n);
    k = trace_vcache_load(m, path, NULL, &d);
    cr_assert_not_null(k, "%s", d.msg);
    trace_verdict_free(k);
    struct timespec t[2] = {{time(NULL) - 100, 0}, {time(NULL) - 100, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
    refused(m, path, NULL, "the trace changed");
    /* a checked verdict is not kept */
    struct trace_verdict_check c = {.cmdq_id = TRACE_NO_CMDQ, .bound = TRACE_BOUND_NONE};
    trace_verdict_check(v, &c, 1);
    cr_assert_lt(trace_vcache_save(v, path, NULL, &d), 0);
    free(good);
    free(file);
    trace_verdict_free(v);
    trace_model_free(m);
    unsetenv("XDG_CACHE_HOME");
}

/* Whether every event, name and enumeration of v is the model's and in range. */
static void fits(const struct trace_model *m, const struct trace_verdict *v)
{
    uint64_t ne = trace_model_event_count(m);
    uint32_t ns = trace_model_str_count(m);
    for (size_t i = 0; i <= v->nlaunches; i++) {
        const struct trace_verdict_item *it = i ? &v->launches[i - 1] : &v->run;
        cr_assert(it->bound < TRACE_BOUND_COUNT && it->heuristic < TRACE_BOUND_COUNT);
        cr_assert(it->link < ns && it->hbm < ns && it->busiest_link < ns && it->host_link < ns);
        cr_assert(it->longest_wait_ev < ne || it->longest_wait_ev == UINT64_MAX);
        cr_assert(it->path.spaces.n <= TRACE_OPINFO_MAX_SPACES);
        for (size_t s = 0; s < it->path.n; s++) {
            const struct trace_path_step *st = &it->path.steps[s];
            cr_assert(st->ev < ne && (st->pred < ne || st->pred == UINT64_MAX));
            cr_assert(st->why < TRACE_DEP_COUNT && st->range.space < TRACE_OPINFO_MAX_SPACES);
        }
    }
}

/* A file whose checksums hold may still have been written by someone else: every byte of
 * its payload set to 0xff in turn (sealed again), it is either refused or fits the model;
 * an event, a name or a reason out of range is refused. */
Test(vcache, contents_that_do_not_fit_the_model_are_refused, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    write_run_trace(path, sizeof(path));
    struct trace_model *m = open_trace(path);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    struct diag d;
    cr_assert_eq(trace_vcache_save(v, path, NULL, &d), 0, "%s", d.msg);
    char *file = trace_vcache_path(path);
    size_t n;
    unsigned char *good = read_file(file, &n), *bad = malloc(n);
    size_t h = sizeof(struct trace_vcache_header), served = 0, tried = 0;
    for (size_t at = h; at < n; at += 1 + (at - h) / 64) { /* every byte of the first items */
        memcpy(bad, good, n);
        if (bad[at] == 0xff)
            continue;
        bad[at] = 0xff;
        write_sealed(file, bad, n);
        struct trace_verdict *k = trace_vcache_load(m, path, NULL, &d);
        tried++;
        if (k) {
            fits(m, k);
            served++;
            trace_verdict_free(k);
        }
    }
    cr_assert_gt(tried, 200);
    cr_assert_lt(served, tried, "some changes are refused");
    /* the last step's event, one past the model's; its reason, one past the last */
    uint64_t ne = trace_model_event_count(m);
    size_t last = n - 42; /* (the last step: event, predecessor, wait, reason, space, bytes) */
    memcpy(bad, good, n);
    memcpy(bad + last, &ne, 8);
    write_sealed(file, bad, n);
    refused(m, path, NULL, "an event past the model's");
    memcpy(bad, good, n);
    bad[last + 24] = TRACE_DEP_COUNT;
    write_sealed(file, bad, n);
    refused(m, path, NULL, "a reason past the last");
    memcpy(bad, good, n);
    write_sealed(file, bad, n);
    struct trace_verdict *k = trace_vcache_load(m, path, NULL, &d);
    cr_assert_not_null(k, "sealed unchanged: served (%s)", d.msg);
    trace_verdict_free(k);
    free(bad);
    free(good);
    free(file);
    trace_verdict_free(v);
    trace_model_free(m);
    unsetenv("XDG_CACHE_HOME");
}

/* Leaving the viewer gives up a verdict still being written by removing its temporary
 * file. The viewer makes that file before the write starts on its own thread, so a removal
 * before the write has begun still finds it: the write then keeps nothing (the rename fails)
 * rather than making the file anew, and a pack made but never written leaves none. */
Test(vcache, a_write_given_up_before_it_starts_leaves_nothing, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    write_run_trace(path, sizeof(path));
    struct trace_model *m = open_trace(path);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    struct diag d;
    struct trace_vcache_pack *k = trace_vcache_pack(v, path, NULL, &d);
    cr_assert_not_null(k, "%s", d.msg);
    char *tmp = strdup(trace_vcache_pack_tmp(k)), *file = trace_vcache_path(path);
    struct stat st;
    cr_assert_neq(stat(tmp, &st), 0, "packing alone makes no file");
    cr_assert_eq(trace_vcache_pack_create(k, &d), 0, "%s", d.msg);
    cr_assert_eq(stat(tmp, &st), 0, "the temporary file made at once");
    cr_assert_eq(unlink(tmp), 0); /* given up, as the viewer leaves */
    cr_assert_lt(trace_vcache_write(k, &d), 0, "a write given up fails");
    cr_assert_neq(stat(tmp, &st), 0, "no temporary file left");
    cr_assert_neq(stat(file, &st), 0, "no verdict kept");
    trace_vcache_pack_free(k);
    k = trace_vcache_pack(v, path, NULL, &d); /* made, then freed unwritten */
    cr_assert_not_null(k, "%s", d.msg);
    cr_assert_eq(trace_vcache_pack_create(k, &d), 0, "%s", d.msg);
    free(tmp);
    tmp = strdup(trace_vcache_pack_tmp(k));
    trace_vcache_pack_free(k);
    cr_assert_neq(stat(tmp, &st), 0, "a pack freed unwritten leaves no file");
    struct trace_verdict *kept = trace_vcache_load(m, path, NULL, &d);
    cr_assert_null(kept, "nothing to read back");
    free(tmp);
    free(file);
    trace_verdict_free(v);
    trace_model_free(m);
    unsetenv("XDG_CACHE_HOME");
}

/* The viewer packs a verdict as it is judged and writes it later, on a thread of its own:
 * the pack holds all of it (the verdict may be freed, or checked, meanwhile), its temporary
 * file is named as the cache prunes them (NAME-HASH.vrd.tmp. and six letters or digits),
 * and none is left once it is written. */
Test(vcache, a_pack_written_later_holds_the_verdict_as_judged, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    write_run_trace(path, sizeof(path));
    struct trace_model *m = open_trace(path);
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    struct diag d;
    struct trace_vcache_pack *k = trace_vcache_pack(v, path, NULL, &d);
    cr_assert_not_null(k, "%s", d.msg);
    struct trace_vcache_pack *k2 = trace_vcache_pack(v, path, NULL, &d);
    char *file = trace_vcache_path(path);
    const char *tmp = trace_vcache_pack_tmp(k);
    size_t n = strlen(file);
    cr_assert(strncmp(tmp, file, n) == 0 && strncmp(tmp + n, ".tmp.", 5) == 0 &&
                  strlen(tmp + n + 5) == 6 &&
                  strspn(tmp + n + 5, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmno"
                                      "pqrstuvwxyz0123456789") == 6,
              "%s", tmp);
    cr_assert_str_neq(tmp, trace_vcache_pack_tmp(k2), "each pack its own temporary file");
    trace_vcache_pack_free(k2);
    struct trace_verdict_check c = {.cmdq_id = TRACE_NO_CMDQ, .bound = TRACE_BOUND_NONE};
    trace_verdict_check(v, &c, 1); /* (after the pack: kept as judged) */
    trace_verdict_free(v);
    cr_assert_eq(trace_vcache_write(k, &d), 0, "%s", d.msg);
    struct stat st;
    cr_assert_neq(stat(tmp, &st), 0, "no temporary file left");
    cr_assert_eq(stat(file, &st), 0);
    trace_vcache_pack_free(k);
    struct trace_verdict *kept = trace_vcache_load(m, path, NULL, &d);
    cr_assert_not_null(kept, "%s", d.msg);
    v = trace_verdict_new(m, NULL);
    same_verdict(v, kept);
    trace_verdict_free(kept);
    trace_verdict_free(v);
    free(file);
    trace_model_free(m);
    unsetenv("XDG_CACHE_HOME");
}
