/*
 * The spill (trace/model/spill.h): blobs read back by offset whether they are still buffered or
 * already in the temporary file, and kept in memory when no file can be made.
 */
#include "trace/model/spill.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Blob i: its length and bytes are a function of i. */
static size_t blob(size_t i, unsigned char *buf)
{
    size_t n = 1 + (i * 7919) % 300;
    for (size_t k = 0; k < n; k++)
        buf[k] = (unsigned char)(i * 31 + k);
    return n;
}

static void round_trip(void)
{
    struct trace_spill *s = trace_spill_new();
    enum { N = 20000 }; /* about 3 MB: several flushes of the 1 MB buffer */
    static uint64_t off[N];
    unsigned char b[512], r[512];
    uint64_t total = 0;
    for (size_t i = 0; i < N; i++) {
        size_t n = blob(i, b);
        off[i] = trace_spill_append(s, b, n);
        cr_assert_eq(off[i], total, "offsets follow each other");
        total += n;
    }
    cr_assert_eq(trace_spill_size(s), total);
    for (size_t i = 0; i < N; i += 97) { /* old (on disk) and new (buffered) alike */
        size_t n = blob(i, b);
        cr_assert_eq(trace_spill_read(s, off[i], r, n), 0);
        cr_assert_eq(memcmp(b, r, n), 0, "blob %zu", i);
    }
    size_t n = blob(N - 1, b);
    cr_assert_eq(trace_spill_read(s, off[N - 1], r, n), 0);
    cr_assert_eq(memcmp(b, r, n), 0);
    cr_assert_eq(trace_spill_read(s, total - 1, r, 2), -1, "past the end");
    trace_spill_free(s);
}

Test(spill, blobs_come_back_from_the_file_and_the_buffer)
{
    round_trip();
}

Test(spill, without_a_usable_temporary_directory_blobs_stay_in_memory)
{
    const char *old = getenv("TMPDIR");
    char *keep = old ? strdup(old) : NULL;
    setenv("TMPDIR", "/nonexistent/npuscope-test", 1);
    round_trip();
    if (keep) {
        setenv("TMPDIR", keep, 1);
        free(keep);
    } else {
        unsetenv("TMPDIR");
    }
}
