/*
 * The unit tests keep their caches to themselves: before the first test, XDG_CACHE_HOME
 * names a directory of the run's own (removed after the last test), so that the indexes and
 * verdicts the tests' loads write (trace/cache/index.h) never land in the cache of the
 * person running them. A test that names a directory of its own still uses that one.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_PREFIX "/tmp/npuscope-unit-cache."

static char cache_dir[64];

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    (void)set;
    snprintf(cache_dir, sizeof(cache_dir), "%sXXXXXX", CACHE_PREFIX);
    if (mkdtemp(cache_dir))
        setenv("XDG_CACHE_HOME", cache_dir, 1);
    else
        cache_dir[0] = '\0';
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    (void)stats;
    if (!cache_dir[0])
        return;
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "unit tests: could not remove %s\n", cache_dir);
}

Test(cachedir, every_test_runs_with_the_runs_own_cache_directory)
{
    const char *x = getenv("XDG_CACHE_HOME");
    cr_assert_not_null(x);
    cr_assert(strncmp(x, CACHE_PREFIX, strlen(CACHE_PREFIX)) == 0, "XDG_CACHE_HOME is %s", x);
}
