/*
 * A temporary directory for each test that writes files (.init = mkdir_tmp, .fini =
 * rm_tmp; its path in dir), and a file read whole. Shared by the tests of the trace's
 * JSON output and of the trace writer.
 */
#ifndef TEST_TMPDIR_H
#define TEST_TMPDIR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

static char dir[64]; /* the current test's directory */

static inline void mkdir_tmp(void)
{
    snprintf(dir, sizeof(dir), "/tmp/npuscope-writer.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static inline void rm_tmp(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static inline char *slurp(const char *path, size_t *len)
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

#endif
