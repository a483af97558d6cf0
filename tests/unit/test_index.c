/* The binary index of a trace (trace/cache/index.c): a model rebuilt from the index is the
 * model loaded from the JSON; an index of a trace that changed, or an index cut or
 * bit-flipped anywhere, is refused, never used; trace_index_load writes, uses and rebuilds
 * it; arrays of several checksum blocks, written in place, round trip the same. */
#include "sim/host/run.h"
#include "test_runtrace.h"
#include "test_tmpdir.h"
#include "trace/cache/index.h"
#include "trace/file/loader.h"
#include "trace/file/writer.h"
#include "trace/live/live.h"
#include "trace/model/mapped.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

/* A trace written from a short llm_decode run (tokens, markers, resource samples, op
 * columns, transfers, call sites) at dir/t.json. */
static void write_run_trace(char *path, size_t size)
{
    snprintf(path, size, "%s/t.json", dir);
    test_write_run_trace(path);
}

static struct trace_model *load(const char *path)
{
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_file(path, NULL, &m, &d), 0, "%s", d.msg);
    return m;
}

static bool same_value(const struct sim_value *a, const struct sim_value *b)
{
    return a == b || (a && b && sim_value_equal(a, b));
}

/* b, rebuilt from the index, holds what a, loaded from the JSON, holds. */
static void assert_same(const struct trace_model *a, const struct trace_model *b)
{
    cr_assert_eq(trace_model_str_count(a), trace_model_str_count(b));
    for (uint32_t i = 0; i < trace_model_str_count(a); i++)
        cr_assert_str_eq(trace_model_str(a, i), trace_model_str(b, i));
    cr_assert_eq(trace_model_site_count(a), trace_model_site_count(b));
    cr_assert_eq(trace_model_track_count(a), trace_model_track_count(b));
    for (uint32_t t = 0; t < trace_model_track_count(a); t++)
        cr_assert_eq(memcmp(trace_model_track_get(a, t), trace_model_track_get(b, t),
                            sizeof(struct trace_track)),
                     0);
    uint64_t ne = trace_model_event_count(a);
    cr_assert_eq(ne, trace_model_event_count(b));
    cr_assert_gt(ne, 0);
    /* each track's op kinds, kept with the index's events: those of its events */
    uint8_t *kinds = calloc(trace_model_track_count(a) + 1, 1);
    for (uint64_t i = 0; i < ne; i++)
        kinds[trace_model_event(a, i)->track] |= trace_kind_bit(trace_model_event(a, i)->op_kind);
    for (uint32_t t = 0; t < trace_model_track_count(a); t++) {
        cr_assert_eq(trace_model_track_kinds(a, t), kinds[t], "track %u", t);
        cr_assert_eq(trace_model_track_kinds(b, t), kinds[t], "track %u read back", t);
    }
    free(kinds);
    size_t cols = 0;
    for (uint64_t i = 0; i < ne; i++) {
        cr_assert_eq(
            memcmp(trace_model_event(a, i), trace_model_event(b, i), sizeof(struct trace_event)), 0,
            "event %llu", (unsigned long long)i);
        size_t na, nb;
        const uint8_t *ca = trace_model_opcol(a, i, &na), *cb = trace_model_opcol(b, i, &nb);
        cr_assert_eq(ca == NULL, cb == NULL);
        if (ca) {
            cols++;
            cr_assert_eq(na, nb);
            cr_assert_eq(memcmp(ca, cb, na), 0);
        }
        const uint64_t *da, *db;
        size_t nda = trace_model_event_deps(a, i, &da), ndb = trace_model_event_deps(b, i, &db);
        cr_assert_eq(nda, ndb);
        for (size_t k = 0; k < nda; k++)
            cr_assert_eq(da[k], db[k]);
        if (i % 97 == 0) { /* details are still read from the trace */
            struct sim_value *x = trace_model_event_details(a, i),
                             *y = trace_model_event_details(b, i);
            cr_assert(same_value(x, y), "details of event %llu", (unsigned long long)i);
            sim_value_free(x);
            sim_value_free(y);
        }
    }
    cr_assert_eq(trace_model_transfer_count(a), trace_model_transfer_count(b));
    for (size_t i = 0; i < trace_model_transfer_count(a); i++)
        cr_assert_eq(memcmp(trace_model_transfer(a, i), trace_model_transfer(b, i),
                            sizeof(struct trace_transfer)),
                     0);
    cr_assert_eq(trace_model_mem_access_count(a), trace_model_mem_access_count(b));
    cr_assert_eq(trace_model_token_count(a), trace_model_token_count(b));
    for (size_t i = 0; i < trace_model_token_count(a); i++) {
        const struct trace_token *x = trace_model_token(a, i), *y = trace_model_token(b, i);
        cr_assert(x->start == y->start && x->end == y->end && x->token_index == y->token_index &&
                  x->decode == y->decode && same_value(x->details, y->details));
    }
    cr_assert_eq(trace_model_marker_count(a), trace_model_marker_count(b));
    for (size_t i = 0; i < trace_model_marker_count(a); i++) {
        const struct trace_marker *x = trace_model_marker(a, i), *y = trace_model_marker(b, i);
        cr_assert(x->cycle == y->cycle && x->name == y->name && x->track == y->track &&
                  same_value(x->details, y->details));
    }
    cr_assert_eq(trace_model_bw_sample_count(a), trace_model_bw_sample_count(b));
    cr_assert_eq(trace_model_dram_sample_count(a), trace_model_dram_sample_count(b));
    for (size_t i = 0; i < trace_model_bw_sample_count(a); i++) {
        const struct trace_bw_sample *x = trace_model_bw_sample(a, i),
                                     *y = trace_model_bw_sample(b, i);
        cr_assert(x->cycle == y->cycle && x->window == y->window &&
                  x->read_bytes == y->read_bytes && x->write_bytes == y->write_bytes &&
                  x->resource == y->resource);
    }
    cr_assert(same_value(trace_model_metadata(a), trace_model_metadata(b)));
    cr_assert(same_value(trace_model_config(a), trace_model_config(b)));
    cr_assert(same_value(trace_model_file_summary(a), trace_model_file_summary(b)));
    cr_assert(same_value(trace_model_energy(a), trace_model_energy(b)));
    cr_assert_eq(trace_model_power_count(a), trace_model_power_count(b));
    for (size_t i = 0; i < trace_model_power_count(a); i++)
        cr_assert_eq(memcmp(trace_model_power(a, i), trace_model_power(b, i),
                            sizeof(struct trace_power_sample)),
                     0);
    cr_assert_eq(trace_model_t_min(a), trace_model_t_min(b));
    cr_assert_eq(trace_model_t_max(a), trace_model_t_max(b));
    cr_assert_eq(trace_model_now(a), trace_model_now(b));
    cr_assert_eq(trace_model_ignored_fields(a), trace_model_ignored_fields(b));
    (void)cols;
}

static void index_of(char *idx, size_t size)
{
    snprintf(idx, size, "%s/cache/t.idx", dir);
}

Test(index, a_model_read_back_from_its_index_is_the_loaded_one, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128], idx[128];
    write_run_trace(path, sizeof(path));
    index_of(idx, sizeof(idx));
    struct trace_model *a = load(path), *b;
    struct trace_index_counts c = {3, 5}, back;
    struct diag d;
    cr_assert_eq(trace_index_write(a, path, &c, idx, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_index_read(path, idx, &b, &back, &d), 0, "%s", d.msg);
    cr_assert_gt(trace_model_token_count(a), 0, "the fixture has tokens");
    cr_assert_gt(trace_model_marker_count(a), 0, "and markers");
    cr_assert_gt(trace_model_bw_sample_count(a), trace_model_dram_sample_count(a),
                 "and resource samples");
    cr_assert_gt(trace_model_transfer_count(a), 0, "and transfers");
    cr_assert_not_null(trace_model_energy(a), "and energy");
    cr_assert_gt(trace_model_power_count(a), 0, "and power samples");
    assert_same(a, b);
    cr_assert_eq(back.errors, 3);
    cr_assert_eq(back.warnings, 5);
    trace_model_free(a);
    trace_model_free(b);
}

/* Reopened, the model reads its events, columns and track indexes from the mapped index in
 * place; the first change copies them, and the model then changes like any other. */
Test(index, a_reopened_model_reads_the_index_in_place_and_copies_it_to_change, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char path[128], idx[128];
    write_run_trace(path, sizeof(path));
    index_of(idx, sizeof(idx));
    struct trace_model *a = load(path), *b;
    struct diag d;
    cr_assert_eq(trace_index_write(a, path, NULL, idx, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_index_read(path, idx, &b, NULL, &d), 0, "%s", d.msg);
    cr_assert(trace_model_is_lent(b), "the events are the index's, not a copy");
    cr_assert_not(trace_model_is_lent(a));
    uint64_t ne = trace_model_event_count(b);
    struct trace_event e = *trace_model_event(b, ne - 1);
    e.start = e.end = trace_model_t_max(b) + 10;
    e.flags = 0;
    uint64_t i = trace_model_add_event(b, &e);
    cr_assert_not(trace_model_is_lent(b), "changed: the model holds its own copy");
    cr_assert_eq(i, ne);
    const uint8_t col[] = {7, 7, 7};
    trace_model_set_opcol(b, i, col, sizeof(col));
    trace_model_add_dep(b, i, 0);
    trace_model_finish(b);
    trace_model_add_event(a, &e);
    trace_model_set_opcol(a, i, col, sizeof(col));
    trace_model_add_dep(a, i, 0);
    trace_model_finish(a);
    assert_same(a, b);
    uint32_t tr = e.track;
    const uint32_t *ia, *ib;
    size_t na = trace_model_track_events(a, tr, &ia), nb = trace_model_track_events(b, tr, &ib);
    cr_assert_eq(na, nb);
    cr_assert_eq(memcmp(ia, ib, na * sizeof(*ia)), 0);
    cr_assert_eq(trace_model_track_busy(a, tr, 0, e.end + 1),
                 trace_model_track_busy(b, tr, 0, e.end + 1));
    trace_model_free(a);
    trace_model_free(b);
}

Test(index, dependencies_and_hand_written_traces_round_trip, .init = mkdir_tmp, .fini = rm_tmp)
{
    const char text[] =
        "{\"version\": \"1.0\", \"timeline_events\": ["
        "{\"type\": \"ENGINE_EVENT\", \"engine\": \"DMA\", \"engine_id\": 0, \"op\": \"a\","
        " \"start_cycle\": 5, \"end_cycle\": 10, \"x_unknown\": 1},"
        "{\"type\": \"ENGINE_EVENT\", \"engine\": \"TE\", \"engine_id\": 0, \"op\": \"b\","
        " \"start_cycle\": 10, \"end_cycle\": 30, \"dependency_ids\": [0]},"
        "{\"type\": \"SOMETHING_NEW\"}],"
        " \"summary_metrics\": {\"cycles_total\": 40}}";
    char path[128], idx[128];
    snprintf(path, sizeof(path), "%s/h.json", dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    index_of(idx, sizeof(idx));
    struct trace_model *a = load(path), *b;
    struct diag d;
    cr_assert_eq(trace_model_dep_count(a), 1);
    cr_assert_eq(trace_index_write(a, path, NULL, idx, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_index_read(path, idx, &b, NULL, &d), 0, "%s", d.msg);
    assert_same(a, b);
    cr_assert_eq(trace_model_ignored_events(b), 1);
    trace_model_free(a);
    trace_model_free(b);
}

/* The index at idx must be refused with a message containing msg. */
static void expect_refused(const char *path, const char *idx, const char *msg)
{
    struct trace_model *m = NULL;
    struct diag d;
    int rc = trace_index_read(path, idx, &m, NULL, &d);
    cr_assert_lt(rc, 0, "a bad index was used (%s)", msg);
    cr_assert_null(m);
    cr_assert(strstr(d.msg, msg), "'%s' lacks '%s'", d.msg, msg);
}

Test(index, an_index_of_a_changed_trace_is_stale, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128], idx[128];
    write_run_trace(path, sizeof(path));
    index_of(idx, sizeof(idx));
    struct trace_model *a = load(path);
    struct diag d;
    cr_assert_eq(trace_index_write(a, path, NULL, idx, &d), 0, "%s", d.msg);
    trace_model_free(a);
    /* the same size and content, another mtime */
    struct utimbuf t = {.actime = 1000000000, .modtime = 1000000000};
    cr_assert_eq(utime(path, &t), 0);
    expect_refused(path, idx, "stale");
    /* the same mtime, a byte changed at the end */
    a = load(path);
    cr_assert_eq(trace_index_write(a, path, NULL, idx, &d), 0, "%s", d.msg);
    trace_model_free(a);
    struct stat st;
    stat(path, &st);
    FILE *f = fopen(path, "r+");
    fseek(f, -2, SEEK_END);
    fputc(' ', f);
    fclose(f);
    struct utimbuf same = {.actime = st.st_atime, .modtime = st.st_mtime};
    utime(path, &same);
    expect_refused(path, idx, "stale");
}

/* A run's trace at path, its model loaded (returned), its index written at idx and read
 * back into *bytes (*n long); bad, the name of a damaged copy beside it. */
static struct trace_model *indexed(char *path, char *idx, char *bad, char **bytes, size_t *n)
{
    write_run_trace(path, 128);
    index_of(idx, 128);
    snprintf(bad, 160, "%s.bad", idx);
    struct trace_model *a = load(path);
    struct diag d;
    cr_assert_eq(trace_index_write(a, path, NULL, idx, &d), 0, "%s", d.msg);
    *n = 0;
    *bytes = slurp(idx, n);
    return a;
}

Test(index, a_cut_or_bit_flipped_index_is_never_used, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128], idx[128], bad[160], *bytes;
    size_t n;
    trace_model_free(indexed(path, idx, bad, &bytes, &n));
    cr_assert_gt(n, 4096);
    /* bit flips: in the header, the start of the payload, the middle, the last byte */
    size_t at[] = {0, 20, 100, 200, n / 3, n / 2, n - 1};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            bytes[at[i]] ^= (char)(1 << bit);
            FILE *f = fopen(bad, "wb");
            fwrite(bytes, 1, n, f);
            fclose(f);
            bytes[at[i]] ^= (char)(1 << bit);
            /* (past the header, by the checksum: the content is rebuilt beside it, and
             * what holds together all the same is dropped) */
            expect_refused(path, bad, at[i] < 160 ? "" : "corrupt: its checksum does not match");
        }
    }
    /* cuts: inside the header, just after it, in the middle, one byte short */
    size_t cut[] = {0, 50, 200, n / 2, n - 1};
    for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
        FILE *f = fopen(bad, "wb");
        fwrite(bytes, 1, cut[i], f);
        fclose(f);
        expect_refused(path, bad, "corrupt");
    }
    /* one byte more */
    FILE *f = fopen(bad, "wb");
    fwrite(bytes, 1, n, f);
    fputc(0, f);
    fclose(f);
    expect_refused(path, bad, "corrupt");
    free(bytes);
}

/* An index damaged behind its checksum (resealed: trace_index_reseal) is refused by what
 * its content is checked against: an event's track, its end before its start, its details
 * past the trace's end; resealed undamaged, it is read as before. */
Test(index, an_index_damaged_behind_its_checksum_is_refused_by_its_content, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char path[128], idx[128], bad[160], *bytes;
    size_t n;
    struct trace_model *a = indexed(path, idx, bad, &bytes, &n);
    struct diag d;
    /* an event of the middle with a start past 0, found where the index keeps it raw */
    uint64_t k = trace_model_event_count(a) / 2;
    while (k < trace_model_event_count(a) && trace_model_event(a, k)->start == 0)
        k++;
    cr_assert_lt(k, trace_model_event_count(a));
    struct trace_event ev = *trace_model_event(a, k);
    char *at = memmem(bytes, n, &ev, sizeof(ev));
    cr_assert_not_null(at, "event %llu is not in the index", (unsigned long long)k);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    struct trace_event damaged[3] = {ev, ev, ev};
    damaged[0].track = UINT32_MAX;
    damaged[1].end = ev.start - 1;
    damaged[2].details = (uint64_t)st.st_size;
    for (int i = 0; i <= 3; i++) {
        memcpy(at, i < 3 ? &damaged[i] : &ev, sizeof(ev));
        FILE *f = fopen(bad, "wb");
        cr_assert_eq(fwrite(bytes, 1, n, f), n);
        fclose(f);
        cr_assert_eq(trace_index_reseal(bad, &d), 0, "%s", d.msg);
        if (i < 3) {
            expect_refused(path, bad, "does not hold together");
            continue;
        }
        struct trace_model *b = NULL;
        cr_assert_eq(trace_index_read(path, bad, &b, NULL, &d), 0, "%s", d.msg);
        assert_same(a, b);
        trace_model_free(b);
    }
    free(bytes);
    trace_model_free(a);
}

Test(index, load_writes_uses_and_rebuilds_the_index, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128], cache[128];
    write_run_trace(path, sizeof(path));
    snprintf(cache, sizeof(cache), "%s/xdg", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    char *idx = trace_index_path(path);
    cr_assert_not_null(idx);
    cr_assert(strncmp(idx, cache, strlen(cache)) == 0, "%s is in %s", idx, cache);
    cr_assert(strstr(idx, "/npuscope/t.json-"), "%s", idx);
    struct trace_model *m;
    struct diag d;
    enum trace_index_use u;
    struct stat st;
    cr_assert_eq(trace_index_load(path, true, &m, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_UNUSED);
    cr_assert_neq(stat(idx, &st), 0, "--no-cache writes no index");
    trace_model_free(m);
    cr_assert_eq(trace_index_load(path, false, &m, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_WRITTEN);
    struct trace_model *first = m;
    cr_assert_eq(trace_index_load(path, false, &m, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_HIT);
    assert_same(first, m);
    trace_model_free(m);
    /* damaged: loaded from the JSON, the index written again, then used */
    FILE *f = fopen(idx, "r+");
    fseek(f, 300, SEEK_SET);
    fputc('!', f);
    fclose(f);
    cr_assert_eq(trace_index_load(path, false, &m, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_REBUILT);
    assert_same(first, m);
    trace_model_free(m);
    cr_assert_eq(trace_index_load(path, false, &m, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_HIT);
    trace_model_free(m);
    trace_model_free(first);
    free(idx);
    unsetenv("XDG_CACHE_HOME");
}

/* How many of the whole pages inside the n bytes at p are mapped in, from the process's
 * page tables (/proc/self/pagemap's present bit): those of the array alone, whatever the
 * allocator or a sanitizer makes resident meanwhile. */
static long present_pages(const void *p, size_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) / page, b = ((uintptr_t)p + n) / page;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0, "no /proc/self/pagemap");
    long present = 0;
    for (uintptr_t x = a; x < b; x++) {
        uint64_t e = 0;
        cr_assert_eq(pread(fd, &e, sizeof(e), (off_t)(x * sizeof(e))), (ssize_t)sizeof(e));
        present += (long)(e >> 63 & 1);
    }
    close(fd);
    return present;
}

/* A reopened model's pages read by a pass are given back (RSS drops by the events' pages)
 * and read again, the same, on the next read; a model's own arrays are left alone. */
Test(index, the_pages_of_a_reopened_model_are_given_back_and_read_again, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char path[128], idx[128];
    write_run_trace(path, sizeof(path));
    index_of(idx, sizeof(idx));
    struct trace_model *a = load(path), *b;
    struct diag d;
    cr_assert_eq(trace_index_write(a, path, NULL, idx, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_index_read(path, idx, &b, NULL, &d), 0, "%s", d.msg);
    uint64_t ne = trace_model_event_count(b), sum = 0;
    long pages = (long)(ne * sizeof(struct trace_event) / 4096);
    cr_assert_gt(pages, 8, "the fixture's events span pages (%llu events)", (unsigned long long)ne);
    for (uint64_t i = 0; i < ne; i++)
        sum += trace_model_event(b, i)->start;
    const struct trace_event *evs = trace_model_event(b, 0);
    long before = present_pages(evs, ne * sizeof(*evs));
    trace_model_lent_giveback(b);
    trace_model_lent_settle(b); /* (given back behind) */
    long after = present_pages(evs, ne * sizeof(*evs));
    cr_assert_geq(before - after, pages - 2, "%ld pages given back of %ld", before - after, pages);
    cr_assert_eq(after, 0, "%ld of the events' pages still mapped in", after);
    uint64_t again = 0;
    for (uint64_t i = 0; i < ne; i++)
        again += trace_model_event(b, i)->start;
    cr_assert_eq(again, sum);
    trace_model_lent_giveback(a); /* its own: nothing happens */
    assert_same(a, b);
    trace_model_free(a);
    trace_model_free(b);
}

/* A hand-written trace of n ENGINE_EVENTs on a few tracks at dir/big.json: its events'
 * array spans several of the checksum's 1 MiB blocks. */
static void write_big_trace(char *path, size_t size, int n)
{
    snprintf(path, size, "%s/big.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"version\": \"1.0\", \"timeline_events\": [\n");
    for (int i = 0; i < n; i++)
        fprintf(f,
                "%s{\"type\":\"ENGINE_EVENT\",\"engine\":\"%s\",\"engine_id\":%d,\"cmdq_id\":0,"
                "\"layer_id\":\"layer%d\",\"tile_id\":null,\"op\":\"%s\",\"start_cycle\":%d,"
                "\"end_cycle\":%d,\"details\":{\"src\":\"k.c:%d\",\"nbytes\":%d}}\n",
                i ? "," : "", i % 3 ? "VE" : "DMA", i % 4, i % 7, i % 3 ? "add" : "dma_read", i * 3,
                i * 3 + 5, i % 11 + 1, 64 * (i % 5 + 1));
    fprintf(f, "]}\n");
    fclose(f);
}

/* The events a pass reads next are mapped in at once: after trace_model_lent_ahead, every
 * page of the stretch asked for is mapped in, none far from it (the kernel maps a page's
 * neighbours with it, up to a large folio's 2 MiB), and the events read the same; a
 * model's own arrays are left alone. */
Test(index, a_stretch_of_a_reopened_models_events_is_mapped_in_at_once, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char path[128], idx[128];
    void *probe = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(probe != MAP_FAILED);
    bool can = madvise(probe, 4096, MADV_POPULATE_READ) == 0; /* (Linux 5.14 on) */
    munmap(probe, 4096);
    if (!can)
        cr_skip_test("MADV_POPULATE_READ is not supported here");
    write_big_trace(path, sizeof(path), 200000); /* 9 MB of events */
    index_of(idx, sizeof(idx));
    struct trace_model *a = load(path), *b;
    struct diag d;
    cr_assert_eq(trace_index_write(a, path, NULL, idx, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_index_read(path, idx, &b, NULL, &d), 0, "%s", d.msg);
    uint64_t ne = trace_model_event_count(b);
    const struct trace_event *evs = trace_model_event(b, 0);
    trace_model_lent_giveback(b);
    trace_model_lent_settle(b);
    cr_assert_eq(present_pages(evs, ne * sizeof(*evs)), 0, "given back first");
    /* a stretch in the middle, its ends inside pages */
    uint64_t lo = ne / 2 + 1, hi = ne / 2 + ne / 16 - 1;
    trace_model_lent_ahead(b, lo, hi);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (uintptr_t)(evs + lo) / page * page,
              end = ((uintptr_t)(evs + hi) + page - 1) / page * page;
    cr_assert_eq(present_pages((const void *)first, end - first), (long)((end - first) / page),
                 "every page of events %llu to %llu mapped in", (unsigned long long)lo,
                 (unsigned long long)hi);
    const char *past = (const char *)end + (2 << 20), *before = (const char *)first - (2 << 20);
    cr_assert_lt((const void *)past, (const void *)(evs + ne), "room past the stretch");
    cr_assert_gt((const void *)before, (const void *)evs, "room before it");
    cr_assert_eq(present_pages(past, (size_t)((const char *)(evs + ne) - past)), 0,
                 "none far past the stretch");
    cr_assert_eq(present_pages(evs, (size_t)(before - (const char *)evs)), 0, "none far before it");
    for (uint64_t i = 0; i < ne; i++)
        cr_assert_eq(trace_model_event(b, i)->start, trace_model_event(a, i)->start);
    trace_model_lent_ahead(b, hi, lo);                        /* nothing to map */
    trace_model_lent_ahead(b, 0, ne + 1);                     /* past the events: nothing */
    trace_model_lent_ahead(a, 0, trace_model_event_count(a)); /* its own: nothing happens */
    trace_model_free(a);
    trace_model_free(b);
}

/* The index's arrays of more than a checksum block are written from the model in place:
 * the index still reads back (its checksum checked) as the loaded model, a bit flipped in
 * them is still found, and the first open that writes the index gives the same model as
 * the next that uses it. */
Test(index, arrays_over_a_block_round_trip_and_their_damage_is_found, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char path[128], idx[128], cache[128], bad[160];
    enum { EVENTS = 80000 };
    write_big_trace(path, sizeof(path), EVENTS);
    index_of(idx, sizeof(idx));
    struct trace_model *a = load(path), *b;
    cr_assert_eq(trace_model_event_count(a), EVENTS);
    cr_assert_gt(EVENTS * sizeof(struct trace_event), (size_t)2 << 20);
    struct diag d;
    cr_assert_eq(trace_index_write(a, path, NULL, idx, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_index_read(path, idx, &b, NULL, &d), 0, "%s", d.msg);
    assert_same(a, b);
    trace_model_free(b);
    size_t n = 0;
    char *bytes = slurp(idx, &n);
    cr_assert_gt(n, (size_t)4 << 20);
    snprintf(bad, sizeof(bad), "%s.bad", idx);
    /* in the events, in a block written in place; in blocks of each of the checksum's two
     * chains (even and odd blocks, checked on two threads); in the last block */
    const size_t at[] = {n / 2, ((size_t)1 << 20) + 4096, ((size_t)2 << 20) + 4096,
                         ((size_t)3 << 20) + 4096, n - 3};
    for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
        cr_assert_lt(at[k], n);
        bytes[at[k]] ^= 4;
        FILE *f = fopen(bad, "wb");
        fwrite(bytes, 1, n, f);
        fclose(f);
        bytes[at[k]] ^= 4;
        expect_refused(path, bad, "corrupt");
    }
    free(bytes);
    snprintf(cache, sizeof(cache), "%s/xdg", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    enum trace_index_use u;
    cr_assert_eq(trace_index_load(path, false, &b, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_WRITTEN);
    assert_same(a, b);
    trace_model_free(b);
    cr_assert_eq(trace_index_load(path, false, &b, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_HIT);
    assert_same(a, b);
    trace_model_free(b);
    trace_model_free(a);
    unsetenv("XDG_CACHE_HOME");
}

/* The files in the cache directory dir/xdg/npuscope whose name holds part. */
static int cache_files(const char *part)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "ls %s/xdg/npuscope 2>/dev/null | grep -c -- '%s'", dir, part);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (fscanf(p, "%d", &n) != 1)
        n = 0;
    pclose(p);
    return n;
}

Test(index, load_later_gives_the_model_first_then_writes_the_index, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char path[128], cache[128];
    write_run_trace(path, sizeof(path));
    snprintf(cache, sizeof(cache), "%s/xdg", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    char *idx = trace_index_path(path);
    struct trace_model *m, *again;
    struct trace_index_job *job;
    struct diag d;
    enum trace_index_use u;
    struct stat st;
    cr_assert_eq(trace_index_load_later(path, false, &m, NULL, &u, &d, NULL, &job), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_WRITTEN);
    cr_assert_not_null(job);
    cr_assert_neq(stat(idx, &st), 0, "no index before the job runs");
    cr_assert_eq(trace_index_job_start(job, m), 0);
    cr_assert_eq(trace_index_job_finish(job, &d), 0, "%s", d.msg);
    cr_assert_eq(stat(idx, &st), 0, "the job wrote the index");
    cr_assert_eq(cache_files(".tmp."), 0, "no temporary file left");
    /* the next open is served by it, and holds the model the first open showed */
    cr_assert_eq(trace_index_load_later(path, false, &again, NULL, &u, &d, NULL, &job), 0);
    cr_assert_eq(u, TRACE_INDEX_HIT);
    cr_assert_null(job, "nothing left to write");
    assert_same(m, again);
    trace_model_free(again);
    trace_model_free(m);
    /* --no-cache: no job */
    cr_assert_eq(trace_index_load_later(path, true, &m, NULL, &u, &d, NULL, &job), 0);
    cr_assert_eq(u, TRACE_INDEX_UNUSED);
    cr_assert_null(job);
    trace_model_free(m);
    free(idx);
    unsetenv("XDG_CACHE_HOME");
}

/* The viewer's index waits while a person waits for an analysis (busy not zero), then is
 * written whole; given up while it waits, it stops waiting and leaves nothing. */
Test(index, a_job_waits_while_busy_then_writes_the_index, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128], cache[128];
    write_run_trace(path, sizeof(path));
    snprintf(cache, sizeof(cache), "%s/xdg", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    char *idx = trace_index_path(path);
    struct trace_model *m;
    struct trace_index_job *job;
    struct diag d;
    struct stat st;
    static atomic_uint busy;
    atomic_store(&busy, 1);
    cr_assert_eq(trace_index_load_later(path, false, &m, NULL, NULL, &d, NULL, &job), 0);
    trace_index_job_pause_while(job, &busy);
    cr_assert_eq(trace_index_job_start(job, m), 0);
    struct timespec ts = {0, 300 * 1000 * 1000L};
    nanosleep(&ts, NULL);
    cr_assert_neq(stat(idx, &st), 0, "no index while busy");
    cr_assert_eq(cache_files(".tmp."), 1, "its temporary file, waiting");
    atomic_store(&busy, 0);
    cr_assert_eq(trace_index_job_finish(job, &d), 0, "%s", d.msg);
    cr_assert_eq(stat(idx, &st), 0, "written once no longer busy");
    struct trace_model *again;
    enum trace_index_use u;
    cr_assert_eq(trace_index_load(path, false, &again, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_HIT, "whole: it serves the next open");
    assert_same(m, again);
    trace_model_free(again);
    trace_model_free(m);
    /* given up while it waits: it ends, no index, no temporary file */
    cr_assert_eq(unlink(idx), 0);
    atomic_store(&busy, 1);
    cr_assert_eq(trace_index_load_later(path, false, &m, NULL, NULL, &d, NULL, &job), 0);
    trace_index_job_pause_while(job, &busy);
    cr_assert_eq(trace_index_job_start(job, m), 0);
    nanosleep(&ts, NULL);
    trace_index_job_abandon(job);
    cr_assert_lt(trace_index_job_finish(job, &d), 0, "ended though still busy");
    cr_assert_neq(stat(idx, &st), 0);
    cr_assert_eq(cache_files(".tmp."), 0);
    trace_model_free(m);
    free(idx);
    unsetenv("XDG_CACHE_HOME");
}

Test(index, a_job_given_up_or_never_started_leaves_no_index, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128], cache[128];
    write_run_trace(path, sizeof(path));
    snprintf(cache, sizeof(cache), "%s/xdg", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    char *idx = trace_index_path(path);
    struct trace_model *m;
    struct trace_index_job *job;
    struct diag d;
    enum trace_index_use u;
    struct stat st;
    /* never started: nothing written */
    cr_assert_eq(trace_index_load_later(path, false, &m, NULL, &u, &d, NULL, &job), 0);
    cr_assert_lt(trace_index_job_finish(job, &d), 0);
    cr_assert_neq(stat(idx, &st), 0);
    trace_model_free(m);
    /* given up as it starts (the process ending): no index, no temporary file */
    cr_assert_eq(trace_index_load_later(path, false, &m, NULL, &u, &d, NULL, &job), 0);
    trace_index_job_abandon(job); /* before: the write never begins */
    cr_assert_eq(trace_index_job_start(job, m), 0);
    trace_index_job_abandon(job);
    cr_assert_lt(trace_index_job_finish(job, &d), 0);
    cr_assert_neq(stat(idx, &st), 0, "a write given up leaves no index");
    cr_assert_eq(cache_files(".tmp."), 0, "nor its temporary file");
    /* the next open loads the JSON again and hands out the write again */
    trace_model_free(m);
    cr_assert_eq(trace_index_load_later(path, false, &m, NULL, &u, &d, NULL, &job), 0);
    cr_assert_eq(u, TRACE_INDEX_WRITTEN);
    cr_assert_not_null(job);
    trace_index_job_finish(job, NULL);
    trace_model_free(m);
    /* a cache that cannot be written (a file where its directory would be): the job says
     * so once, and the model is there all the same */
    char file[160];
    snprintf(file, sizeof(file), "%s/not-a-dir", dir);
    FILE *f = fopen(file, "w");
    fclose(f);
    setenv("XDG_CACHE_HOME", file, 1);
    cr_assert_eq(trace_index_load_later(path, false, &m, NULL, &u, &d, NULL, &job), 0);
    cr_assert_not_null(job);
    cr_assert_lt(trace_index_job_start(job, m), 0);
    cr_assert_eq(trace_index_job_start(job, m), 0, "tried once, not again");
    cr_assert_lt(trace_index_job_finish(job, &d), 0);
    cr_assert(strstr(d.msg, "cannot create"), "%s", d.msg);
    cr_assert_gt(trace_model_event_count(m), 0);
    trace_model_free(m);
    free(idx);
    unsetenv("XDG_CACHE_HOME");
}
