/*
 * The spill (trace/spill.h): blobs read back by offset whether they are still buffered,
 * being written by the spill's writer thread, or already in the temporary file; kept in
 * memory when no file can be made or a write fails; and whole in a forked copy.
 */
#include "trace/spill.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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
    enum { N = 20000 }; /* about 3 MB: several flushes of the 256 KiB buffer */
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

/* Appends from blob `from` on, each read back at once (often while the buffer it was in is
 * being written) together with one from long before; false at the first wrong byte. */
static bool append_and_check(struct trace_spill *s, uint64_t *off, size_t from, size_t to)
{
    unsigned char b[512], r[512];
    for (size_t i = from; i < to; i++) {
        off[i] = trace_spill_append(s, b, blob(i, b));
        size_t pick[2] = {i, i / 2};
        for (int k = 0; k < 2; k++) {
            size_t m = blob(pick[k], b);
            if (trace_spill_read(s, off[pick[k]], r, m) != 0 || memcmp(b, r, m) != 0)
                return false;
        }
    }
    for (size_t i = 0; i < to; i++) {
        size_t n = blob(i, b);
        if (trace_spill_read(s, off[i], r, n) != 0 || memcmp(b, r, n) != 0)
            return false;
    }
    return true;
}

Test(spill, blobs_read_back_while_the_writer_writes_them)
{
    enum { N = 40000 };
    static uint64_t off[N];
    struct trace_spill *s = trace_spill_new();
    cr_assert(append_and_check(s, off, 0, N));
    trace_spill_free(s);
}

Test(spill, a_forked_copy_reads_and_appends_on_its_own)
{
    /* as a TUI checkpoint is: forked with a buffer likely in flight; the live process goes
     * on writing, then hands over (settles, writes no more) and the copy goes on */
    enum { N = 30000, M = 10000 };
    static uint64_t off[N + M];
    struct trace_spill *s = trace_spill_new();
    cr_assert(append_and_check(s, off, 0, N));
    int go[2];
    cr_assert_eq(pipe(go), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        char c;
        close(go[1]);
        bool ok = read(go[0], &c, 1) == 1 && append_and_check(s, off, N, N + M);
        trace_spill_free(s);
        _exit(ok ? 0 : 1);
    }
    close(go[0]);
    /* the live process's own future: other blobs at the offsets the copy will use */
    unsigned char b[512];
    memset(b, 0xEE, sizeof(b));
    for (size_t i = 0; i < M; i++)
        trace_spill_append(s, b, 1 + i % 300);
    trace_spill_settle(s);
    cr_assert_eq(write(go[1], "g", 1), 1);
    close(go[1]);
    int st = 0;
    pid_t w = 0;
    for (int i = 0; i < 3000 && (w = waitpid(pid, &st, WNOHANG)) == 0; i++)
        usleep(10 * 1000);
    if (w == 0) { /* a copy that waits for a writer thread it does not have */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        cr_assert_fail("the forked copy hung");
    }
    cr_assert_eq(w, pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the copy read back what it wrote");
    trace_spill_free(s);
}

Test(spill, a_write_that_fails_keeps_the_blobs_in_memory)
{
    /* the file may grow to 600 KB only: the writer's third write fails (EFBIG) */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {600 * 1024, 600 * 1024};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    enum { N = 20000 };
    static uint64_t off[N];
    struct trace_spill *s = trace_spill_new();
    cr_assert(append_and_check(s, off, 0, N));
    trace_spill_free(s);
}
