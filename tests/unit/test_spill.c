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

/* What blobs of spill k in round round are made of. */
static size_t salt(int k, int round)
{
    return (size_t)k * 7 + (size_t)round * 13;
}

/* Reads go through a window of the file per thread: blobs read in any order, from two
 * spills in turn, from a spill freed and another made (maybe at the same address), and
 * while the file grows past what a window held, all come back as written. */
Test(spill, reads_through_the_window_come_back_as_written)
{
    enum { N = 30000 };
    static uint64_t off[2][N];
    unsigned char b[512], r[512];
    for (int round = 0; round < 2; round++) {
        struct trace_spill *s[2] = {trace_spill_new(), trace_spill_new()};
        for (size_t i = 0; i < N; i++)
            for (int k = 0; k < 2; k++) {
                size_t n = blob(i + salt(k, round), b);
                off[k][i] = trace_spill_append(s[k], b, n);
                if (i % 1000 == 999) { /* a few, while the file grows */
                    size_t j = (i * 7) % (i + 1), m = blob(j + salt(k, round), b);
                    cr_assert_eq(trace_spill_read(s[k], off[k][j], r, m), 0);
                    cr_assert_eq(memcmp(b, r, m), 0, "blob %zu of spill %d, growing", j, k);
                }
            }
        for (size_t step = 0; step < 3 * N; step++) {
            size_t i = (step * 104729) % N; /* scattered, both ways */
            int k = (int)(step & 1);
            if (step % 3 == 0)
                i = N - 1 - step / 3 % N; /* backwards */
            size_t n = blob(i + salt(k, round), b);
            cr_assert_eq(trace_spill_read(s[k], off[k][i], r, n), 0);
            cr_assert_eq(memcmp(b, r, n), 0, "blob %zu of spill %d", i, k);
        }
        trace_spill_free(s[0]);
        trace_spill_free(s[1]);
    }
}
