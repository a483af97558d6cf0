/*
 * The spill (see spill.h): a write buffer in front of an unlinked temporary file, or, when
 * no file can be made, a growing memory buffer. Reads from the file go through a window of
 * it per thread: an analysis reads the details of millions of ops one after the other,
 * mostly in the order they were appended, and two system calls an op cost it seconds.
 */
#include "trace/model/spill.h"

#include "sim/util/fileio.h"
#include "sim/util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The write buffer: small, because a checkpoint (fork) of the TUI shares it and every page
 * written after one is copied; 256 KiB still makes each write a large one. */
enum { SPILL_BUF = 256 * 1024 };

/* The read window: what a read of fewer than WINDOW_SMALL bytes brings in from the file,
 * starting WINDOW_BACK bytes before it (the details of ops read in start order were
 * appended in end order: close by, a little either side). */
enum { WINDOW = 256 * 1024, WINDOW_SMALL = 16 * 1024, WINDOW_BACK = 16 * 1024 };

struct trace_spill {
    uint64_t id;      /* this spill's among all of the process's: a window's key */
    int fd;           /* the unlinked file, or -1 (not yet made, or in memory) */
    bool in_memory;   /* no file could be made: everything stays in buf */
    uint64_t flushed; /* bytes on disk: buf holds [flushed, flushed + len) */
    char *buf;        /* owned */
    size_t len, cap;
};

struct trace_spill *trace_spill_new(void)
{
    static atomic_uint_fast64_t ids;
    struct trace_spill *s = sim_xcalloc(1, sizeof(*s));
    s->id = atomic_fetch_add(&ids, 1) + 1;
    s->fd = -1;
    s->cap = SPILL_BUF;
    s->buf = sim_xmalloc(s->cap);
    return s;
}

void trace_spill_free(struct trace_spill *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s);
}

int trace_spill_tmpfile(void)
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

/* Write the buffer to the file; on any failure switch to memory for good. */
static void flush(struct trace_spill *s)
{
    if (s->in_memory || !s->len)
        return;
    if (s->fd < 0)
        s->fd = trace_spill_tmpfile();
    size_t done = 0;
    while (s->fd >= 0 && done < s->len) {
        ssize_t w = pwrite(s->fd, s->buf + done, s->len - done, (off_t)(s->flushed + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (s->fd < 0 || done < s->len) {
        /* keep what is buffered; what reached the file stays readable there */
        s->in_memory = true;
        if (s->fd >= 0 && done) {
            memmove(s->buf, s->buf + done, s->len - done);
            s->flushed += done;
            s->len -= done;
        }
        return;
    }
    s->flushed += s->len;
    s->len = 0;
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

/* A thread's window on a spill's file: bytes [off, off + len) of spill id. The file's bytes
 * never change once written, so a window stays true as long as its spill lives (a new
 * spill, even at the same address, has another id). */
struct window {
    uint64_t id, off;
    size_t len;
    char buf[WINDOW];
};

static pthread_key_t window_key;
static pthread_once_t window_once = PTHREAD_ONCE_INIT;
static bool window_ok;

static void window_init(void)
{
    window_ok = pthread_key_create(&window_key, free) == 0;
}

/* The calling thread's window (made on its first read; freed as the thread ends), or NULL. */
static struct window *my_window(void)
{
    pthread_once(&window_once, window_init);
    if (!window_ok)
        return NULL;
    struct window *w = pthread_getspecific(window_key);
    if (!w) {
        w = malloc(sizeof(*w));
        if (!w || pthread_setspecific(window_key, w) != 0) {
            free(w);
            return NULL;
        }
        w->id = 0, w->len = 0;
    }
    return w;
}

/* n bytes at off of s's file (all of them flushed) into out, through the thread's window
 * when they are few. */
static bool read_file(const struct trace_spill *s, uint64_t off, char *out, size_t n)
{
    struct window *w = n < WINDOW_SMALL ? my_window() : NULL;
    if (!w)
        return sim_pread_all(s->fd, out, n, off);
    if (w->id != s->id || off < w->off || off + n > w->off + w->len) {
        uint64_t from = off > WINDOW_BACK ? off - WINDOW_BACK : 0;
        size_t len = s->flushed - from < WINDOW ? (size_t)(s->flushed - from) : WINDOW;
        w->id = 0; /* (until it holds them) */
        if (!sim_pread_all(s->fd, w->buf, len, from))
            return false;
        w->id = s->id, w->off = from, w->len = len;
    }
    memcpy(out, w->buf + (off - w->off), n);
    return true;
}

int trace_spill_read(const struct trace_spill *s, uint64_t off, void *buf, size_t n)
{
    if (off + n > s->flushed + s->len)
        return -1;
    char *out = buf;
    if (off < s->flushed) {
        size_t from_file = off + n <= s->flushed ? n : (size_t)(s->flushed - off);
        if (!read_file(s, off, out, from_file))
            return -1;
        out += from_file;
        off += from_file;
        n -= from_file;
    }
    if (n)
        memcpy(out, s->buf + (off - s->flushed), n);
    return 0;
}

uint64_t trace_spill_size(const struct trace_spill *s)
{
    return s->flushed + s->len;
}
