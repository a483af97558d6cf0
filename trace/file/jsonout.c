/* Atomic, buffered JSON output (see jsonout.h). */
#include "trace/file/jsonout.h"

#include "sim/data/dtype.h"
#include "sim/util/escape.h"
#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    OUT_BUF = 1 << 20, /* bytes buffered between writes */
    STR_CHUNK = 4096,  /* input bytes escaped per reservation (6 output bytes each at most) */
};

int trace_out_open(struct trace_out *o, const char *path, struct diag *d)
{
    memset(o, 0, sizeof(*o));
    o->fd = -1;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    if (!*base)
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "not a file name");
    o->tmp = sim_xasprintf("%.*s.%s.tmp.XXXXXX", dirlen, path, base);
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot create: %s", strerror(e));
    }
    /* the mode a plain open(O_CREAT, 0666) would give, or the old file's */
    struct stat st;
    mode_t mode;
    if (stat(path, &st) == 0) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(022);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(o->fd, mode) != 0) {
        int e = errno;
        trace_out_abort(o);
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot set the mode: %s", strerror(e));
    }
    o->path = sim_xstrdup(path);
    enum trace_zkind z = trace_z_kind_of_path(path);
    if (z != TRACE_Z_NONE)
        o->z = trace_zout_new(z);
    o->cap = OUT_BUF;
    o->buf = sim_xmalloc(o->cap);
    return 0;
}

void trace_out_open_fd(struct trace_out *o, int fd)
{
    memset(o, 0, sizeof(*o));
    o->fd = fd;
    o->cap = OUT_BUF;
    o->buf = sim_xmalloc(o->cap);
}

void trace_out_open_mem(struct trace_out *o)
{
    trace_out_open_fd(o, -1);
    o->mem = true;
}

void trace_out_rewind(struct trace_out *o)
{
    if (o->fd < 0 || o->err)
        return;
    if (ftruncate(o->fd, (off_t)o->written) != 0 || lseek(o->fd, (off_t)o->written, SEEK_SET) < 0)
        o->err = errno;
}

/* Write n bytes to the file: 0 or errno (a trace_zout sink). */
static int out_write(void *ctx, const void *p, size_t n)
{
    struct trace_out *o = ctx;
    size_t off = 0;
    while (off < n) {
        ssize_t k = write(o->fd, (const char *)p + off, n - off);
        if (k < 0) {
            if (errno != EINTR)
                return errno;
            continue;
        }
        if (k == 0)
            return EIO;
        off += (size_t)k;
        o->written += (uint64_t)k;
    }
    return 0;
}

/* Write the buffer (end: and close a compressed stream). */
static void out_flush(struct trace_out *o, bool end)
{
    if (!o->err) {
        if (o->z)
            o->err = trace_zout_write(o->z, o->buf, o->len, end, out_write, o);
        else
            o->err = out_write(o, o->buf, o->len);
    }
    o->len = 0;
}

void trace_out_flush(struct trace_out *o)
{
    if (o->mem) {
        o->cap *= 2;
        o->buf = sim_xrealloc(o->buf, o->cap);
        return;
    }
    out_flush(o, false);
}

static void out_free(struct trace_out *o)
{
    trace_zout_free(o->z);
    o->z = NULL;
    free(o->buf);
    free(o->path);
    free(o->tmp);
    o->buf = o->path = o->tmp = NULL;
    o->len = o->cap = 0;
}

void trace_out_abort(struct trace_out *o)
{
    if (o->fd >= 0 && o->path)
        close(o->fd);
    o->fd = -1;
    if (o->tmp)
        unlink(o->tmp);
    out_free(o);
}

/* fsync the directory holding path, so the rename itself is durable. */
static void sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir =
        slash ? sim_xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : sim_xstrdup(".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd); /* best effort: some file systems refuse it on directories */
        close(fd);
    }
    free(dir);
}

int trace_out_commit(struct trace_out *o, struct diag *d)
{
    if (o->fd < 0)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "output is not open");
    out_flush(o, true);
    if (!o->path) { /* a descriptor */
        int e = o->err;
        out_free(o);
        o->fd = -1;
        return e ? diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "cannot write: %s", strerror(e)) : 0;
    }
    int e = o->err;
    if (!e && fsync(o->fd) != 0)
        e = errno;
    if (close(o->fd) != 0 && !e)
        e = errno;
    o->fd = -1;
    if (!e && rename(o->tmp, o->path) != 0)
        e = errno;
    if (e) {
        char *path = sim_xstrdup(o->path);
        trace_out_abort(o);
        int r = diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot write: %s", strerror(e));
        free(path);
        return r;
    }
    sync_dir(o->path);
    out_free(o);
    return 0;
}

void trace_out_raw(struct trace_out *o, const char *s, size_t n)
{
    while (n) {
        if (o->len == o->cap)
            trace_out_flush(o);
        size_t k = o->cap - o->len < n ? o->cap - o->len : n;
        memcpy(o->buf + o->len, s, k);
        o->len += k, s += k, n -= k;
    }
}

/* ---- numbers ------------------------------------------------------------------------- */

static const char digits2[201] = "00010203040506070809101112131415161718192021222324252627282930"
                                 "31323334353637383940414243444546474849505152535455565758596061"
                                 "62636465666768697071727374757677787980818283848586878889909192"
                                 "93949596979899";

size_t trace_fmt_u64(char *p, uint64_t v)
{
    char tmp[20];
    char *e = tmp + sizeof(tmp), *q = e;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, digits2 + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, digits2 + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    size_t n = (size_t)(e - q);
    memcpy(p, q, n);
    return n;
}

size_t trace_fmt_i64(char *p, int64_t v)
{
    if (v >= 0)
        return trace_fmt_u64(p, (uint64_t)v);
    *p = '-';
    return 1 + trace_fmt_u64(p + 1, (uint64_t)0 - (uint64_t)v);
}

size_t trace_fmt_double(char *p, double v)
{
    if (!isfinite(v)) {
        p[0] = 'n', p[1] = 'u', p[2] = 'l', p[3] = 'l';
        return 4;
    }
    /* Fast path: values with at most 3 decimals (times in ns from integer ticks). Below
     * 1e12 a double's spacing is under 0.0005, so k / 10^d is the only candidate with d
     * decimals, and k / 10^d == v (a correctly rounded division) proves it reads back. */
    static const double scale[4] = {1, 10, 100, 1000};
    if (fabs(v) < 1e12) {
        for (int d = 0; d < 4; d++) {
            double k = nearbyint(v * scale[d]);
            if (k / scale[d] != v)
                continue;
            size_t n = 0;
            if (signbit(v))
                p[n++] = '-';
            uint64_t a = (uint64_t)fabs(k);
            uint64_t ip = a / (uint64_t)scale[d], fp = a % (uint64_t)scale[d];
            n += trace_fmt_u64(p + n, ip);
            p[n++] = '.';
            if (d == 0) {
                p[n++] = '0';
            } else {
                for (int i = d - 1; i >= 0; i--, fp /= 10)
                    p[n + (size_t)i] = (char)('0' + fp % 10);
                n += (size_t)d;
            }
            return n;
        }
    }
    /* the fewest significant digits that read back (more digits never read back worse,
     * so the smallest precision can be searched for) */
    char tmp[400]; /* %g with at most 17 digits needs 24 bytes; the compiler cannot tell */
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(tmp, sizeof(tmp), "%.*g", mid, v);
        if (strtod(tmp, NULL) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    int n = snprintf(tmp, sizeof(tmp), "%.*g", lo, v);
    memcpy(p, tmp, (size_t)n + 1);
    if (!strpbrk(p, ".e"))
        p[n++] = '.', p[n++] = '0';
    return (size_t)n;
}

void trace_out_u64(struct trace_out *o, uint64_t v)
{
    o->len += trace_fmt_u64(trace_out_room(o, 24), v);
}

void trace_out_i64(struct trace_out *o, int64_t v)
{
    o->len += trace_fmt_i64(trace_out_room(o, 24), v);
}

void trace_out_double(struct trace_out *o, double v)
{
    o->len += trace_fmt_double(trace_out_room(o, 40), v);
}

/* ---- strings ------------------------------------------------------------------------- */

/* 1 for bytes that cannot be copied as they are: controls, '"', '\', non-ASCII. */
static const unsigned char special[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* Escape up to STR_CHUNK bytes of s into q (room for 6 bytes each); returns the bytes of s
 * consumed (a UTF-8 sequence is never split unless invalid) and advances *qp. */
static size_t escape_chunk(const unsigned char *s, size_t n, char **qp)
{
    char *q = *qp;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && !special[s[j]])
            j++;
        memcpy(q, s + i, j - i);
        q += j - i;
        i = j;
        if (i == n)
            break;
        unsigned char c = s[i];
        if (c >= 0x80) {
            uint32_t cp;
            size_t k = sim_utf8_decode((const char *)s + i, n - i, &cp);
            if (cp == 0xFFFD && !(k == 3 && memcmp(s + i, "\xEF\xBF\xBD", 3) == 0)) {
                *q++ = '\xEF'; /* U+FFFD for an invalid byte */
                *q++ = '\xBF';
                *q++ = '\xBD';
                i += 1;
            } else {
                memcpy(q, s + i, k);
                q += k;
                i += k;
            }
            continue;
        }
        *q++ = '\\';
        switch (c) {
        case '"': *q++ = '"'; break;
        case '\\': *q++ = '\\'; break;
        case '\n': *q++ = 'n'; break;
        case '\r': *q++ = 'r'; break;
        case '\t': *q++ = 't'; break;
        case '\b': *q++ = 'b'; break;
        case '\f': *q++ = 'f'; break;
        default:
            q[0] = 'u', q[1] = '0', q[2] = '0';
            q[3] = "0123456789abcdef"[c >> 4];
            q[4] = "0123456789abcdef"[c & 15];
            q += 5;
            break;
        }
        i++;
    }
    *qp = q;
    return i;
}

void trace_out_str(struct trace_out *o, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    trace_out_char(o, '"');
    while (n) {
        /* stop a chunk at a character boundary: a sequence split in two would read as
         * invalid bytes */
        size_t take = n;
        if (take > STR_CHUNK) {
            take = STR_CHUNK;
            while (take > STR_CHUNK - 4 && (u[take] & 0xC0) == 0x80)
                take--;
        }
        char *q = trace_out_room(o, 6 * take);
        char *q0 = q;
        size_t used = escape_chunk(u, take, &q);
        o->len += (size_t)(q - q0);
        u += used, n -= used;
    }
    trace_out_char(o, '"');
}

/* ---- values ---------------------------------------------------------------------------- */

void trace_out_value(struct trace_out *o, const struct sim_value *v)
{
    if (!v) {
        trace_out_lit(o, "null");
        return;
    }
    switch (v->type) {
    case SIM_V_NULL: trace_out_lit(o, "null"); break;
    case SIM_V_BOOL: trace_out_lit(o, v->u.b ? "true" : "false"); break;
    case SIM_V_INT: trace_out_i64(o, v->u.i); break;
    case SIM_V_FLOAT: trace_out_double(o, v->u.f); break;
    case SIM_V_STR: trace_out_str(o, v->u.str.s, v->u.str.len); break;
    case SIM_V_LIST:
        trace_out_char(o, '[');
        for (size_t i = 0; i < v->u.list.len; i++) {
            if (i)
                trace_out_char(o, ',');
            trace_out_value(o, v->u.list.items[i]);
        }
        trace_out_char(o, ']');
        break;
    case SIM_V_MAP:
        trace_out_char(o, '{');
        for (size_t i = 0; i < v->u.map.len; i++) {
            if (i)
                trace_out_char(o, ',');
            trace_out_str(o, v->u.map.keys[i], strlen(v->u.map.keys[i]));
            trace_out_char(o, ':');
            trace_out_value(o, v->u.map.vals[i]);
        }
        trace_out_char(o, '}');
        break;
    case SIM_V_TENSOR: {
        const struct sim_tensor *t = v->u.tensor;
        trace_out_lit(o, "{\"tensor\":{\"dtype\":");
        const char *dt = sim_dtype_name(t->dtype);
        trace_out_str(o, dt, strlen(dt));
        trace_out_lit(o, ",\"shape\":[");
        for (unsigned i = 0; i < t->ndim && i < SIM_MAX_DIMS; i++) {
            if (i)
                trace_out_char(o, ',');
            trace_out_i64(o, t->shape[i]);
        }
        trace_out_lit(o, "]}}");
        break;
    }
    }
}
