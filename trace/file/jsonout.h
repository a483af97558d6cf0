/*
 * Fast JSON output into a file that appears atomically: text is formatted straight into a
 * large buffer (our own integer, float and string formatting; no tree is built), the
 * buffer goes to a temporary file in the destination's directory, and commit does fsync
 * then rename. Until then the destination keeps its old contents; on any failure the
 * temporary file is removed. The trace writer and the Chrome export write through this.
 * A destination named *.zst or *.gz is written compressed (trace/file/compress.h).
 */
#ifndef TRACE_JSONOUT_H
#define TRACE_JSONOUT_H

#include "sim/util/diag.h"
#include "sim/data/value.h"
#include "trace/file/compress.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace_out {
    char *buf; /* owned */
    size_t len, cap;
    int fd;               /* the temporary file, or -1 */
    char *path;           /* owned: the destination */
    char *tmp;            /* owned: the temporary file's path */
    int err;              /* first errno of a failed write, 0 while all is well */
    uint64_t written;     /* bytes handed to the file so far (compressed bytes, if so) */
    struct trace_zout *z; /* owned: the compressor of a .zst or .gz destination, or NULL */
    bool mem;             /* text kept in buf, which grows (trace_out_open_mem) */
};

/*
 * Create the temporary file next to path and a buffer. Returns 0, or a negative SIM_E*
 * code with d filled ("FILE: cannot create ...: REASON").
 */
int trace_out_open(struct trace_out *o, const char *path, struct diag *d);

/* Output to an open descriptor instead (standard output): no temporary file; commit only
 * flushes, and reports a write error. The descriptor stays open. */
void trace_out_open_fd(struct trace_out *o, int fd);

/* Output kept in memory: buf holds the text (len bytes), growing as it comes; no file.
 * Emptied by setting len to 0; freed by trace_out_abort. */
void trace_out_open_mem(struct trace_out *o);

/* Flush, fsync, close and rename onto the destination; frees o's resources either way.
 * Returns 0, or a negative code with d filled; on failure the temporary file is gone and
 * the destination untouched. */
int trace_out_commit(struct trace_out *o, struct diag *d);

/* Give up: close and remove the temporary file, free o's resources. Safe after a failed
 * open and after commit (then a no-op). */
void trace_out_abort(struct trace_out *o);

/* This process is a copy of the one that opened o, resumed from an earlier state (a
 * checkpoint): cut the file back to the bytes this copy had written, and write on from
 * there (the copies share the file and its offset). */
void trace_out_rewind(struct trace_out *o);

/* Write the buffer to the file (on error, o->err is set and further output is dropped); in
 * memory, make the buffer twice as large. */
void trace_out_flush(struct trace_out *o);

/* Room for n more bytes in the buffer (flushing first when needed); n <= cap / 2. */
static inline char *trace_out_room(struct trace_out *o, size_t n)
{
    if (o->cap - o->len < n)
        trace_out_flush(o);
    return o->buf + o->len;
}

/* Raw bytes. */
void trace_out_raw(struct trace_out *o, const char *s, size_t n);

static inline void trace_out_lit(struct trace_out *o, const char *s)
{
    size_t n = __builtin_strlen(s);
    if (n <= 256) {
        char *p = trace_out_room(o, n);
        __builtin_memcpy(p, s, n);
        o->len += n;
    } else {
        trace_out_raw(o, s, n);
    }
}

static inline void trace_out_char(struct trace_out *o, char c)
{
    *trace_out_room(o, 1) = c;
    o->len++;
}

/* Decimal formatting into p (at least 21 bytes); return the length. */
size_t trace_fmt_u64(char *p, uint64_t v);
size_t trace_fmt_i64(char *p, int64_t v);
/*
 * The shortest decimal that reads back as exactly v, in JSON syntax (always with a '.' or
 * an exponent, so it reads back as a float: 1.0, 0.25, 1e+300); "null" for NaN and the
 * infinities, which JSON cannot hold. p holds at least 32 bytes.
 */
size_t trace_fmt_double(char *p, double v);

void trace_out_u64(struct trace_out *o, uint64_t v);
void trace_out_i64(struct trace_out *o, int64_t v);
void trace_out_double(struct trace_out *o, double v);

/*
 * A JSON string literal for the n bytes of s: '"' and '\' and control characters escaped
 * (\n, \t, ..., \u00XX, \u0000 for NUL), valid UTF-8 copied as is, each invalid byte
 * replaced by U+FFFD. Any byte string can be written; what is read back is its valid
 * UTF-8 form.
 */
void trace_out_str(struct trace_out *o, const char *s, size_t n);

/*
 * A value tree as JSON: null, true/false, integers, floats (trace_fmt_double), strings,
 * lists as arrays, maps as objects (keys in order). A tensor is written as a stub
 * {"tensor": {"dtype": "f32", "shape": [2, 3]}}: its values are not written.
 */
void trace_out_value(struct trace_out *o, const struct sim_value *v);

#endif
