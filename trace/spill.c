/*
 * The spill (see spill.h): a write buffer in front of an unlinked temporary file, or, when
 * no file can be made, a growing memory buffer.
 *
 * A full buffer is handed to a writer thread, which writes it while the run fills the
 * other one: putting details in the page cache costs a run at full speed a few percent,
 * and a second core does it instead. There is one write in flight at most; the next hand-
 * off waits for it. Only the thread that appends touches the buffers: the writer reads
 * the one it was handed, which stays as it is (and readable) until the next hand-off.
 *
 * A process forked from one with a writer (a TUI checkpoint) has no writer thread: the
 * first call in it makes its lock anew, writes what was in flight itself, and starts a
 * writer of its own when it needs one.
 */
#include "trace/spill.h"

#include "sim/util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The write buffers: small, because a checkpoint (fork) of the TUI shares them and every
 * page written after one is copied; 256 KiB still makes each write a large one. */
enum { SPILL_BUF = 256 * 1024 };

struct trace_spill {
    int fd;           /* the unlinked file, or -1 (not yet made, or in memory) */
    bool in_memory;   /* no file could be made: everything stays in buf */
    uint64_t flushed; /* bytes handed to the file: buf holds [flushed, flushed + len) */
    char *buf;        /* owned */
    size_t len, cap;

    /* the writer: wbuf holds [woff, woff + wlen), written or being written */
    pid_t owner; /* the process whose writer thread runs, 0: none */
    pthread_t thread;
    pthread_mutex_t mu; /* guards busy, failed, stop */
    pthread_cond_t cv;
    char *wbuf; /* owned */
    size_t wlen, wcap;
    uint64_t woff;
    bool busy;   /* wbuf is being written */
    bool failed; /* its write failed: [woff, woff + wlen) is only in wbuf */
    bool stop;
};

struct trace_spill *trace_spill_new(void)
{
    struct trace_spill *s = sim_xcalloc(1, sizeof(*s));
    s->fd = -1;
    s->cap = SPILL_BUF;
    s->buf = sim_xmalloc(s->cap);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    return s;
}

/* Write n bytes at off; false on any failure. */
static bool write_at(int fd, const char *p, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(fd, p + done, n - done, (off_t)(off + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        done += (size_t)w;
    }
    return true;
}

/* In a process forked from the writer's: the lock and condition as new (the writer thread
 * is not here, and may have held them), and what it was writing written here. */
static void adopt(struct trace_spill *s)
{
    if (!s->owner || s->owner == getpid())
        return;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->owner = 0;
    s->stop = false;
    if (s->busy) {
        s->busy = false;
        s->failed = !write_at(s->fd, s->wbuf, s->wlen, s->woff);
    }
}

void trace_spill_free(struct trace_spill *s)
{
    if (!s)
        return;
    adopt(s);
    if (s->owner) {
        pthread_mutex_lock(&s->mu);
        s->stop = true;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s->wbuf);
    free(s);
}

/* An unlinked file in $TMPDIR or /tmp, or -1. */
static int make_file(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    char path[4096];
    if (snprintf(path, sizeof(path), "%s/npuscope-spill-XXXXXX", dir) >= (int)sizeof(path))
        return -1;
    int f = mkstemp(path);
    if (f < 0)
        return -1;
    unlink(path);
    return f;
}

static void *writer(void *arg)
{
    struct trace_spill *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->busy && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->busy)
            break;
        int fd = s->fd;
        const char *p = s->wbuf;
        size_t n = s->wlen;
        uint64_t off = s->woff;
        pthread_mutex_unlock(&s->mu);
        bool ok = write_at(fd, p, n, off);
        pthread_mutex_lock(&s->mu);
        s->failed = !ok;
        s->busy = false;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* A writer thread of this process, started when there is none. False: none could be. */
static bool have_writer(struct trace_spill *s)
{
    adopt(s);
    if (s->owner)
        return true;
    /* signals are for the thread that reads input, never this one */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool ok = pthread_create(&s->thread, NULL, writer, s) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ok)
        s->owner = getpid();
    return ok;
}

/* Wait for the write in flight; when it failed, its bytes go back in front of the buffer
 * and everything from there on stays in memory. */
static void settle(struct trace_spill *s)
{
    adopt(s);
    if (s->owner) {
        pthread_mutex_lock(&s->mu);
        while (s->busy)
            pthread_cond_wait(&s->cv, &s->mu);
        pthread_mutex_unlock(&s->mu);
    }
    if (!s->failed)
        return;
    s->failed = false;
    s->in_memory = true;
    if (s->cap < s->wlen + s->len) {
        s->cap = s->wlen + s->len;
        s->buf = sim_xrealloc(s->buf, s->cap);
    }
    memmove(s->buf + s->wlen, s->buf, s->len);
    memcpy(s->buf, s->wbuf, s->wlen);
    s->len += s->wlen;
    s->flushed = s->woff;
    s->wlen = 0;
}

void trace_spill_settle(struct trace_spill *s)
{
    settle(s);
}

/* Write the buffer out, by the writer thread when there can be one; on any failure
 * switch to memory for good. */
static void flush(struct trace_spill *s)
{
    if (s->in_memory || !s->len)
        return;
    if (s->fd < 0 && (s->fd = make_file()) < 0) {
        s->in_memory = true;
        return;
    }
    settle(s);
    if (s->in_memory)
        return;
    if (!have_writer(s)) {
        s->woff = s->flushed, s->wlen = 0;
        if (!write_at(s->fd, s->buf, s->len, s->flushed)) {
            s->in_memory = true; /* what reached the file stays readable there */
            return;
        }
        s->flushed += s->len;
        s->len = 0;
        return;
    }
    char *p = s->wbuf;
    size_t c = s->wcap;
    pthread_mutex_lock(&s->mu);
    s->wbuf = s->buf, s->wcap = s->cap;
    s->woff = s->flushed, s->wlen = s->len;
    s->busy = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    s->flushed += s->len;
    s->len = 0;
    if (!p || c < SPILL_BUF) {
        free(p);
        p = sim_xmalloc(SPILL_BUF), c = SPILL_BUF;
    }
    s->buf = p, s->cap = c;
}

uint64_t trace_spill_append(struct trace_spill *s, const void *p, size_t n)
{
    uint64_t off = s->flushed + s->len;
    if (s->len + n > s->cap && !s->in_memory)
        flush(s);
    if (s->len + n > s->cap) {
        size_t cap = s->cap;
        while (cap < s->len + n)
            cap *= 2;
        s->buf = sim_xrealloc(s->buf, cap);
        s->cap = cap;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    return off;
}

/* Copy [off, off + n) of the file to out. */
static int read_file(const struct trace_spill *s, uint64_t off, char *out, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(s->fd, out + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}

int trace_spill_read(struct trace_spill *s, uint64_t off, void *buf, size_t n)
{
    if (off + n > s->flushed + s->len || off + n < off)
        return -1;
    adopt(s);
    /* [0, woff) is in the file; [woff, woff + wlen) in wbuf (written or not); then buf */
    uint64_t file_end = s->wlen ? s->woff : s->flushed;
    char *out = buf;
    if (off < file_end) {
        size_t k = off + n <= file_end ? n : (size_t)(file_end - off);
        if (read_file(s, off, out, k) < 0)
            return -1;
        out += k, off += k, n -= k;
    }
    if (n && s->wlen && off < s->woff + s->wlen) {
        size_t k = off + n <= s->woff + s->wlen ? n : (size_t)(s->woff + s->wlen - off);
        memcpy(out, s->wbuf + (off - s->woff), k);
        out += k, off += k, n -= k;
    }
    if (n)
        memcpy(out, s->buf + (off - s->flushed), n);
    return 0;
}

uint64_t trace_spill_size(const struct trace_spill *s)
{
    return s->flushed + s->len;
}
