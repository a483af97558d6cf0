/* The index cache kept small (trace/cache/index.c): the least recently used indexes go first
 * once the cache is over its limit, indexes of traces that are gone and temporary indexes of
 * writers that died go at once, the index just written and files that are not indexes
 * stay, a verdict kept beside an index goes with it; an index a loaded model has mapped can
 * go while the model still reads it; the limit comes from NPUSCOPE_CACHE_MAX. */
#include "sim/host/run.h"
#include "test_runtrace.h"
#include "test_tmpdir.h"
#include "trace/cache/index.h"
#include "trace/file/loader.h"
#include "trace/file/writer.h"
#include "trace/live/live.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A short run's trace at path. */
static void write_trace(const char *path)
{
    test_write_run_trace(path);
}

/* A file dir/name of size bytes last modified age seconds ago. */
static void put_file(const char *name, size_t size, time_t age)
{
    char p[192];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f, "%s", p);
    for (size_t i = 0; i < size; i++)
        fputc('x', f);
    fclose(f);
    struct timespec t[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, p, t, 0), 0);
}

static bool there(const char *name)
{
    char p[192];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

Test(index_prune, the_least_recently_used_indexes_go_until_the_cache_fits, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    put_file("a.json-00000000000000a1.idx", 1000, 400);
    put_file("b.json-00000000000000b2.idx", 1000, 300);
    put_file("c.json-00000000000000c3.idx", 1000, 200);
    put_file("d.json-00000000000000d4.idx", 1000, 100);
    put_file("notes.txt", 100000, 1000);
    put_file("e.idx", 100000, 1000);
    cr_assert_eq(trace_index_prune(dir, 4000, NULL), 0, "within the limit: nothing goes");
    cr_assert_eq(trace_index_prune(dir, 2500, NULL), 2);
    cr_assert(!there("a.json-00000000000000a1.idx"), "the oldest went");
    cr_assert(!there("b.json-00000000000000b2.idx"));
    cr_assert(there("c.json-00000000000000c3.idx"), "the two most recent stay");
    cr_assert(there("d.json-00000000000000d4.idx"));
    cr_assert(there("notes.txt"), "files not named as indexes are never touched");
    cr_assert(there("e.idx"));
}

Test(index_prune, the_index_just_written_stays_even_alone_over_the_limit, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    put_file("a.json-00000000000000a1.idx", 1000, 400);
    put_file("b.json-00000000000000b2.idx", 5000, 500);
    char keep[192];
    snprintf(keep, sizeof(keep), "%s/b.json-00000000000000b2.idx", dir);
    cr_assert_eq(trace_index_prune(dir, 0, keep), 1);
    cr_assert(there("b.json-00000000000000b2.idx"));
    cr_assert(!there("a.json-00000000000000a1.idx"));
}

Test(index_prune, a_dead_writers_temporary_index_goes_a_live_ones_stays, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    put_file("a.json-00000000000000a1.idx.tmp.Ab3dE9", 1000, TRACE_INDEX_TMP_AGE + 60);
    put_file("b.json-00000000000000b2.idx.tmp.Xy7zQ1", 1000, 5);
    cr_assert_eq(trace_index_prune(dir, UINT64_MAX, NULL), 1);
    cr_assert(!there("a.json-00000000000000a1.idx.tmp.Ab3dE9"));
    cr_assert(there("b.json-00000000000000b2.idx.tmp.Xy7zQ1"));
}

/* The verdict kept beside an index (trace/cache/vcache.h) counts with it, goes with it,
 * and goes at once without it; a dead writer's temporary verdict goes. */
Test(index_prune, a_kept_verdict_goes_with_its_index, .init = mkdir_tmp, .fini = rm_tmp)
{
    put_file("a.json-00000000000000a1.idx", 1000, 400);
    put_file("a.json-00000000000000a1.vrd", 500, 10);
    put_file("b.json-00000000000000b2.idx", 1000, 300);
    put_file("b.json-00000000000000b2.vrd", 500, 10);
    put_file("c.json-00000000000000c3.vrd", 500, 10); /* its index gone */
    put_file("d.json-00000000000000d4.idx", 1000, 100);
    put_file("e.json-00000000000000e5.vrd.tmp.Ab3dE9", 500, TRACE_INDEX_TMP_AGE + 60);
    put_file("f.json-00000000000000f6.vrd.tmp.Xy7zQ1", 500, 5);
    put_file("notes.vrd", 500, 1000);
    cr_assert_eq(trace_index_prune(dir, 4000, NULL), 2, "the lone verdict, the dead writer's");
    cr_assert(!there("c.json-00000000000000c3.vrd"));
    cr_assert(!there("e.json-00000000000000e5.vrd.tmp.Ab3dE9"));
    cr_assert(there("f.json-00000000000000f6.vrd.tmp.Xy7zQ1"), "a live writer's stays");
    cr_assert(there("a.json-00000000000000a1.vrd") && there("b.json-00000000000000b2.vrd"));
    cr_assert(there("notes.vrd"), "files not named as the cache's are never touched");
    /* 3000 of indexes and 1000 of their verdicts: a limit of 3500 takes the oldest pair */
    cr_assert_eq(trace_index_prune(dir, 3500, NULL), 2);
    cr_assert(!there("a.json-00000000000000a1.idx") && !there("a.json-00000000000000a1.vrd"));
    cr_assert(there("b.json-00000000000000b2.idx") && there("b.json-00000000000000b2.vrd"));
    /* the index just written keeps its verdict */
    char keep[192];
    snprintf(keep, sizeof(keep), "%s/b.json-00000000000000b2.idx", dir);
    cr_assert_eq(trace_index_prune(dir, 0, keep), 1);
    cr_assert(!there("d.json-00000000000000d4.idx"));
    cr_assert(there("b.json-00000000000000b2.idx") && there("b.json-00000000000000b2.vrd"));
}

Test(index_prune, an_index_whose_trace_is_gone_goes_at_once, .init = mkdir_tmp, .fini = rm_tmp)
{
    char t1[128], t2[128], cache[128];
    snprintf(t1, sizeof(t1), "%s/one.json", dir);
    snprintf(t2, sizeof(t2), "%s/two.json", dir);
    snprintf(cache, sizeof(cache), "%s/xdg", dir);
    write_trace(t1);
    write_trace(t2);
    setenv("XDG_CACHE_HOME", cache, 1);
    setenv("NPUSCOPE_CACHE_MAX", "1T", 1);
    struct trace_model *m;
    struct diag d;
    enum trace_index_use u;
    char *i1 = trace_index_path(t1), *i2 = trace_index_path(t2);
    cr_assert_eq(trace_index_load(t1, false, &m, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_WRITTEN);
    trace_model_free(m);
    struct stat st;
    cr_assert_eq(stat(i1, &st), 0);
    cr_assert_eq(unlink(t1), 0);
    cr_assert_eq(trace_index_load(t2, false, &m, NULL, &u, &d, NULL), 0, "%s", d.msg);
    trace_model_free(m);
    cr_assert_neq(stat(i1, &st), 0, "the index of the removed trace went with the next write");
    cr_assert_eq(stat(i2, &st), 0);
    free(i1);
    free(i2);
    unsetenv("NPUSCOPE_CACHE_MAX");
    unsetenv("XDG_CACHE_HOME");
}

/* Two traces, a cache room for one: opening the second removes the first's index, even
 * while a model loaded from it is still open (its mapping stays whole); an index used is
 * marked recent, so the one opened last stays. */
Test(index_prune, loading_prunes_the_cache_and_a_mapped_index_may_go, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char t1[128], t2[128], cache[128];
    snprintf(t1, sizeof(t1), "%s/one.json", dir);
    snprintf(t2, sizeof(t2), "%s/two.json", dir);
    snprintf(cache, sizeof(cache), "%s/xdg", dir);
    write_trace(t1);
    write_trace(t2);
    setenv("XDG_CACHE_HOME", cache, 1);
    char *i1 = trace_index_path(t1), *i2 = trace_index_path(t2);
    struct trace_model *m1, *m2, *plain;
    struct diag d;
    enum trace_index_use u;
    struct stat st;
    cr_assert_eq(trace_index_load(t1, false, &m1, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(stat(i1, &st), 0);
    char lim[32];
    snprintf(lim, sizeof(lim), "%lld", (long long)st.st_size + 1000);
    setenv("NPUSCOPE_CACHE_MAX", lim, 1);
    cr_assert_eq(trace_index_load(t2, false, &m2, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_WRITTEN);
    cr_assert_neq(stat(i1, &st), 0, "the older index went to make room");
    cr_assert_eq(stat(i2, &st), 0, "the one just written stays");
    /* m1 still reads its (unlinked) mapped index: the same model as loaded from the JSON */
    cr_assert_eq(trace_load_file(t1, NULL, &plain, &d), 0, "%s", d.msg);
    uint64_t n = trace_model_event_count(plain);
    cr_assert_eq(trace_model_event_count(m1), n);
    cr_assert_gt(n, 0);
    cr_assert_eq(memcmp(trace_model_event(m1, 0), trace_model_event(plain, 0),
                        n * sizeof(struct trace_event)),
                 0);
    trace_model_free(plain);
    trace_model_free(m1);
    trace_model_free(m2);
    /* t1 opened again (its index written anew, t2's goes), then t2's index rebuilt: the
     * limit fits one, and reopening marks an index as the most recent */
    cr_assert_eq(trace_index_load(t1, false, &m1, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_WRITTEN);
    trace_model_free(m1);
    cr_assert_neq(stat(i2, &st), 0);
    setenv("NPUSCOPE_CACHE_MAX", "100M", 1);
    cr_assert_eq(trace_index_load(t2, false, &m2, NULL, &u, &d, NULL), 0, "%s", d.msg);
    trace_model_free(m2);
    struct timespec old[2] = {{time(NULL) - 100, 0}, {time(NULL) - 100, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, i1, old, 0), 0);
    cr_assert_eq(utimensat(AT_FDCWD, i2, old, 0), 0);
    cr_assert_eq(trace_index_load(t1, false, &m1, NULL, &u, &d, NULL), 0, "%s", d.msg);
    cr_assert_eq(u, TRACE_INDEX_HIT);
    trace_model_free(m1);
    cr_assert_eq(stat(i1, &st), 0);
    cr_assert_geq(st.st_atime, time(NULL) - 10, "a hit marks the index as used now");
    cr_assert_lt(st.st_mtime, time(NULL) - 50, "and leaves when it was written as it was");
    char cdir[160];
    snprintf(cdir, sizeof(cdir), "%s/npuscope", cache);
    cr_assert_eq(stat(i2, &st), 0);
    cr_assert_eq(trace_index_prune(cdir, (uint64_t)st.st_size + 1, NULL), 1);
    cr_assert_eq(stat(i1, &st), 0, "the index opened last stays");
    cr_assert_neq(stat(i2, &st), 0, "the one unused since goes");
    free(i1);
    free(i2);
    unsetenv("NPUSCOPE_CACHE_MAX");
    unsetenv("XDG_CACHE_HOME");
}

Test(index_prune, the_limit_is_read_from_the_environment)
{
    unsetenv("NPUSCOPE_CACHE_MAX");
    cr_assert_eq(trace_index_cache_limit(), (uint64_t)4 << 30, "4 GiB by default");
    setenv("NPUSCOPE_CACHE_MAX", "123", 1);
    cr_assert_eq(trace_index_cache_limit(), 123);
    setenv("NPUSCOPE_CACHE_MAX", "512M", 1);
    cr_assert_eq(trace_index_cache_limit(), (uint64_t)512 << 20);
    setenv("NPUSCOPE_CACHE_MAX", "2g", 1);
    cr_assert_eq(trace_index_cache_limit(), (uint64_t)2 << 30);
    setenv("NPUSCOPE_CACHE_MAX", "0", 1);
    cr_assert_eq(trace_index_cache_limit(), 0);
    setenv("NPUSCOPE_CACHE_MAX", "lots", 1);
    cr_assert_eq(trace_index_cache_limit(), TRACE_INDEX_CACHE_MAX, "not a size: the default");
    setenv("NPUSCOPE_CACHE_MAX", "-5", 1);
    cr_assert_eq(trace_index_cache_limit(), TRACE_INDEX_CACHE_MAX);
    setenv("NPUSCOPE_CACHE_MAX", "5X", 1);
    cr_assert_eq(trace_index_cache_limit(), TRACE_INDEX_CACHE_MAX);
    unsetenv("NPUSCOPE_CACHE_MAX");
}
