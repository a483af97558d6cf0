/*
 * The spill (see spill.h): a write buffer in front of an unlinked temporary file, or, when
 * no file can be made, a growing memory buffer.
 */
#include "trace/model/spill.h"

#include "sim/util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The write buffer: small, because a checkpoint (fork) of the TUI shares it and every page
 * written after one is copied; 256 KiB still makes each write a large one. */
enum { SPILL_BUF = 256 * 1024 };

struct trace_spill {
    int fd;           /* the unlinked file, or -1 (not yet made, or in memory) */
    bool in_memory;   /* no file could be made: everything stays in buf */
    uint64_t flushed; /* bytes on disk: buf holds [flushed, flushed + len) */
    char *buf;        /* owned */
    size_t len, cap;
};

struct trace_spill *trace_spill_new(void)
{
    struct trace_spill *s = sim_xcalloc(1, sizeof(*s));
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

int trace_spill_read(const struct trace_spill *s, uint64_t off, void *buf, size_t n)
{
    if (off + n > s->flushed + s->len)
        return -1;
    char *out = buf;
    if (off < s->flushed) {
        size_t from_file = off + n <= s->flushed ? n : (size_t)(s->flushed - off);
        size_t done = 0;
        while (done < from_file) {
            ssize_t r = pread(s->fd, out + done, from_file - done, (off_t)(off + done));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return -1;
            done += (size_t)r;
        }
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
