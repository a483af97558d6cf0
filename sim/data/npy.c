/*
 * .npy reading and writing (see npy.h). The header is a Python dict literal; it is parsed
 * here by a small strict parser for exactly the subset numpy writes (strings, True/False,
 * tuples of integers), so nothing from a file is evaluated and every byte is accounted for.
 * Format reference: numpy's NEP 1 ("A simple file format for NumPy arrays").
 */
#include "sim/data/npy.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c stores tensors' bytes as little-endian data: port the byte swapping first"
#endif

static const char MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

enum {
    NPY_ALIGN = 64,            /* numpy pads the whole header to a multiple of this */
    NPY_PREAMBLE_MAX = 12,     /* magic, version, and a 4-byte header length (2.0) */
    NPY_HEADER_TEXT_MAX = 512, /* our own headers: <= 8 dims of <= 19 digits fit easily */
};

/* The descr numpy writes for each dtype; bf16 goes out as its raw bits. */
static const char *const write_descr[SIM_DTYPE_COUNT] = {
    [SIM_F32] = "<f4", [SIM_F16] = "<f2", [SIM_BF16] = "<u2", [SIM_I8] = "|i1",
    [SIM_I16] = "<i2", [SIM_I32] = "<i4", [SIM_I64] = "<i8",  [SIM_U8] = "|u1",
    [SIM_U16] = "<u2", [SIM_U32] = "<u4", [SIM_BOOL] = "|b1",
};

/* What reading accepts: the kind letter and size after the byte-order character. */
static const struct {
    char kind;
    char size;
    enum sim_dtype t;
} read_descr[] = {
    {'f', '4', SIM_F32}, {'f', '2', SIM_F16},  {'i', '1', SIM_I8}, {'i', '2', SIM_I16},
    {'i', '4', SIM_I32}, {'i', '8', SIM_I64},  {'u', '1', SIM_U8}, {'u', '2', SIM_U16},
    {'u', '4', SIM_U32}, {'b', '1', SIM_BOOL},
};

/* --- reading: the header ---------------------------------------------------------------- */

struct npy_header {
    enum sim_dtype dtype;
    unsigned ndim;
    int64_t shape[SIM_MAX_DIMS];
    size_t nbytes;   /* of the data */
    size_t data_off; /* where the data starts in the file */
};

struct parser {
    const char *s; /* the header text (not NUL-terminated) */
    size_t len;
    size_t pos;
    size_t base; /* file offset of s[0], for messages */
    const char *name;
    struct diag *d;
};

__attribute__((format(printf, 6, 0))) static int vfail(const char *name, struct diag *d,
                                                       enum sim_err code, const char *what,
                                                       long long at, const char *fmt, va_list ap)
{
    char msg[SIM_DIAG_MSG_MAX];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (at >= 0)
        return diag_set(d, code, name, 0, 0, NULL, "bad .npy %s: byte %lld: %s", what, at, msg);
    return diag_set(d, code, name, 0, 0, NULL, "bad .npy %s: %s", what, msg);
}

/* "bad .npy header: byte N: ..." at the parser's position. */
__attribute__((format(printf, 3, 4))) static int perr(struct parser *p, enum sim_err code,
                                                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfail(p->name, p->d, code, "header", (long long)p->base + (long long)p->pos, fmt, ap);
    va_end(ap);
    return r;
}

/* A problem with no useful position (at < 0) or at a given file offset. */
__attribute__((format(printf, 5, 6))) static int
fail(const char *name, struct diag *d, enum sim_err code, long long at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfail(name, d, code, "header", at, fmt, ap);
    va_end(ap);
    return r;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static void skip_ws(struct parser *p)
{
    while (p->pos < p->len && is_ws(p->s[p->pos]))
        p->pos++;
}

static int peek(const struct parser *p)
{
    return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

/* How to name the character at the parser's position in a message. */
static const char *describe_here(const struct parser *p, char *buf, size_t size)
{
    int c = peek(p);
    if (c < 0)
        return "the end of the header";
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, size, "'%c'", c);
    else
        snprintf(buf, size, "byte 0x%02x", (unsigned)c);
    return buf;
}

static int expect(struct parser *p, char c, const char *what)
{
    if (peek(p) == (unsigned char)c) {
        p->pos++;
        return 0;
    }
    char b[16];
    return perr(p, SIM_EPARSE, "expected '%c' %s, found %s", c, what, describe_here(p, b, 16));
}

/* A Python string literal in ' or " without escapes; *s and *n get its contents. */
static int parse_string(struct parser *p, const char **s, size_t *n, const char *what)
{
    *s = NULL;
    *n = 0;
    int q = peek(p);
    if (q != '\'' && q != '"') {
        char b[16];
        return perr(p, SIM_EPARSE, "expected %s (a quoted string), found %s", what,
                    describe_here(p, b, 16));
    }
    size_t start = ++p->pos;
    while (p->pos < p->len && p->s[p->pos] != q) {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '\\' || c < 0x20 || c >= 0x7f)
            return perr(p, SIM_EPARSE, "unsupported character 0x%02x in a string", c);
        p->pos++;
    }
    if (p->pos >= p->len) {
        p->pos = start - 1;
        return perr(p, SIM_EPARSE, "unterminated string");
    }
    *s = p->s + start;
    *n = p->pos - start;
    p->pos++;
    return 0;
}

static int parse_bool(struct parser *p, bool *out)
{
    static const char *const words[] = {"False", "True"};
    for (int v = 0; v < 2; v++) {
        size_t n = strlen(words[v]);
        if (p->len - p->pos >= n && memcmp(p->s + p->pos, words[v], n) == 0 &&
            (p->pos + n == p->len || !is_ident(p->s[p->pos + n]))) {
            p->pos += n;
            *out = v;
            return 0;
        }
    }
    return perr(p, SIM_EPARSE, "fortran_order must be True or False");
}

/* A non-negative Python int (Python 2's L suffix allowed, as numpy allows it). */
static int parse_dim(struct parser *p, int64_t *out)
{
    if (peek(p) == '-')
        return perr(p, SIM_EINVAL, "negative dimension in shape");
    if (peek(p) < '0' || peek(p) > '9') {
        char b[16];
        return perr(p, SIM_EPARSE, "expected a dimension (an integer) in shape, found %s",
                    describe_here(p, b, 16));
    }
    size_t start = p->pos;
    uint64_t v = 0;
    while (peek(p) >= '0' && peek(p) <= '9') {
        unsigned digit = (unsigned)(p->s[p->pos] - '0');
        if (v > (uint64_t)(INT64_MAX - digit) / 10) {
            p->pos = start;
            return perr(p, SIM_EINVAL, "dimension too large");
        }
        v = v * 10 + digit;
        p->pos++;
    }
    if (p->s[start] == '0' && p->pos - start > 1) {
        p->pos = start;
        return perr(p, SIM_EPARSE, "an integer cannot start with 0");
    }
    if (peek(p) == 'L' || peek(p) == 'l')
        p->pos++;
    *out = (int64_t)v;
    return 0;
}

/* A tuple of dimensions: "()", "(5,)", "(2, 3)", "(2, 3,)". */
static int parse_shape(struct parser *p, struct npy_header *h)
{
    int r;
    size_t open = p->pos;
    if (peek(p) == '[')
        return perr(p, SIM_EPARSE, "shape must be a tuple, not a list");
    if ((r = expect(p, '(', "to open the shape tuple")) < 0)
        return r;
    h->ndim = 0;
    skip_ws(p);
    if (peek(p) == ')') {
        p->pos++;
        return 0;
    }
    for (;;) {
        int64_t dim = 0;
        if (h->ndim == SIM_MAX_DIMS)
            return perr(p, SIM_EINVAL, "shape has more than %d dimensions", SIM_MAX_DIMS);
        if ((r = parse_dim(p, &dim)) < 0)
            return r;
        h->shape[h->ndim++] = dim;
        skip_ws(p);
        if (peek(p) == ',') {
            p->pos++;
            skip_ws(p);
            if (peek(p) == ')') {
                p->pos++;
                return 0;
            }
            continue;
        }
        if (peek(p) == ')') {
            if (h->ndim == 1) {
                p->pos = open;
                return perr(p, SIM_EPARSE,
                            "shape (%lld) is a number, not a tuple: a 1-d shape is written "
                            "(%lld,)",
                            (long long)dim, (long long)dim);
            }
            p->pos++;
            return 0;
        }
        char b[16];
        return perr(p, SIM_EPARSE, "expected ',' or ')' in shape, found %s",
                    describe_here(p, b, 16));
    }
}

static int parse_descr(struct parser *p, struct npy_header *h)
{
    if (peek(p) == '[' || peek(p) == '{')
        return perr(p, SIM_EINVAL, "structured dtypes are not supported");
    size_t at = p->pos;
    const char *s;
    size_t n;
    int r = parse_string(p, &s, &n, "descr");
    if (r < 0)
        return r;
    if (n == 3) {
        bool one = s[2] == '1';
        for (size_t i = 0; i < sizeof(read_descr) / sizeof(read_descr[0]); i++) {
            if (s[1] != read_descr[i].kind || s[2] != read_descr[i].size)
                continue;
            if (s[0] == '<' || (one && s[0] == '|')) {
                h->dtype = read_descr[i].t;
                return 0;
            }
            if (s[0] == '>') {
                p->pos = at;
                return perr(p, SIM_EINVAL, "big-endian dtype '%.3s' is not supported", s);
            }
        }
    }
    p->pos = at;
    return perr(p, SIM_EINVAL,
                "unsupported dtype '%.*s' (npuscope reads <f4 <f2 |i1 <i2 <i4 <i8 |u1 <u2 <u4 "
                "|b1)",
                (int)(n > 32 ? 32 : n), s);
}

/* Parse the dict at p into h: exactly the keys descr, fortran_order and shape. */
static int parse_dict(struct parser *p, struct npy_header *h)
{
    enum { K_DESCR, K_FORTRAN, K_SHAPE, K_COUNT };
    static const char *const keys[K_COUNT] = {"descr", "fortran_order", "shape"};
    bool seen[K_COUNT] = {false, false, false};
    bool fortran = false;
    size_t fortran_at = 0;
    int r;

    skip_ws(p);
    if ((r = expect(p, '{', "at the start of the header dict")) < 0)
        return r;
    for (;;) {
        skip_ws(p);
        if (peek(p) == '}') {
            p->pos++;
            break;
        }
        size_t key_at = p->pos;
        const char *key;
        size_t n;
        if ((r = parse_string(p, &key, &n, "a key")) < 0)
            return r;
        int k = 0;
        while (k < K_COUNT && (strlen(keys[k]) != n || memcmp(keys[k], key, n) != 0))
            k++;
        if (k == K_COUNT) {
            p->pos = key_at;
            return perr(p, SIM_EPARSE,
                        "unexpected key '%.*s' (expected descr, fortran_order, "
                        "shape)",
                        (int)(n > 32 ? 32 : n), key);
        }
        if (seen[k]) {
            p->pos = key_at;
            return perr(p, SIM_EPARSE, "duplicate key '%s'", keys[k]);
        }
        seen[k] = true;
        skip_ws(p);
        if ((r = expect(p, ':', "after a key")) < 0)
            return r;
        skip_ws(p);
        switch (k) {
        case K_DESCR: r = parse_descr(p, h); break;
        case K_FORTRAN:
            fortran_at = p->pos;
            r = parse_bool(p, &fortran);
            break;
        default: r = parse_shape(p, h); break;
        }
        if (r < 0)
            return r;
        skip_ws(p);
        if (peek(p) == ',') {
            p->pos++;
            continue;
        }
        if (peek(p) == '}') {
            p->pos++;
            break;
        }
        char b[16];
        return perr(p, SIM_EPARSE, "expected ',' or '}' after a value, found %s",
                    describe_here(p, b, 16));
    }
    skip_ws(p);
    if (p->pos != p->len) {
        char b[16];
        return perr(p, SIM_EPARSE, "unexpected %s after the header dict", describe_here(p, b, 16));
    }
    for (int k = 0; k < K_COUNT; k++)
        if (!seen[k])
            return fail(p->name, p->d, SIM_EPARSE, -1, "missing key '%s'", keys[k]);
    if (fortran) {
        p->pos = fortran_at;
        return perr(p, SIM_EINVAL,
                    "fortran_order is True: only C-order arrays are supported (save a C-order "
                    "copy, e.g. np.save(f, np.ascontiguousarray(a)))");
    }
    if (sim_shape_nbytes(h->dtype, h->ndim, h->shape, &h->nbytes) != 0) {
        char sh[SIM_MAX_DIMS * 22 + 8];
        sim_shape_format(h->ndim, h->shape, sh, sizeof(sh));
        return fail(p->name, p->d, SIM_EINVAL, -1,
                    "shape %s of %s is too large (the byte count "
                    "overflows)",
                    sh, sim_dtype_name(h->dtype));
    }
    return 0;
}

/*
 * The preamble: magic, version, header length. buf holds the first n bytes of a file of
 * size total bytes. Sets *hdr_off and *hdr_len to where the header text lies.
 */
static int parse_preamble(const unsigned char *buf, size_t n, size_t total, const char *name,
                          struct diag *d, size_t *hdr_off, size_t *hdr_len)
{
    *hdr_off = *hdr_len = 0;
    if (n < sizeof(MAGIC) || memcmp(buf, MAGIC, sizeof(MAGIC)) != 0)
        return fail(name, d, SIM_EPARSE, -1,
                    "not a .npy file (no NUMPY magic string at the start)");
    if (n < 8)
        return fail(name, d, SIM_EPARSE, -1, "file ends inside the format version");
    unsigned major = buf[6], minor = buf[7];
    size_t lenbytes;
    if (major == 1 && minor == 0)
        lenbytes = 2;
    else if (major == 2 && minor == 0)
        lenbytes = 4;
    else
        return fail(name, d, SIM_EINVAL, 6,
                    "unsupported format version %u.%u (1.0 and 2.0 are "
                    "read)",
                    major, minor);
    if (n < 8 + lenbytes)
        return fail(name, d, SIM_EPARSE, -1, "file ends inside the header length");
    size_t len = 0;
    for (size_t i = 0; i < lenbytes; i++)
        len |= (size_t)buf[8 + i] << (8 * i);
    *hdr_off = 8 + lenbytes;
    *hdr_len = len;
    if (len > total - *hdr_off)
        return fail(name, d, SIM_EPARSE, 8,
                    "header length %zu runs past the end of the file (%zu bytes after the "
                    "preamble)",
                    len, total - *hdr_off);
    return 0;
}

static int parse_header_text(const char *text, size_t len, size_t off, const char *name,
                             struct diag *d, struct npy_header *h)
{
    memset(h, 0, sizeof(*h));
    struct parser p = {text, len, 0, off, name, d};
    int r = parse_dict(&p, h);
    h->data_off = off + len;
    return r;
}

static int check_data_len(const struct npy_header *h, size_t avail, const char *name,
                          struct diag *d)
{
    if (avail == h->nbytes)
        return 0;
    char sh[SIM_MAX_DIMS * 22 + 8];
    sim_shape_format(h->ndim, h->shape, sh, sizeof(sh));
    return diag_set(d, SIM_EINVAL, name, 0, 0, NULL,
                    "bad .npy data: %s %s needs %zu bytes after the header, the file has %zu%s",
                    sim_dtype_name(h->dtype), sh, h->nbytes, avail,
                    avail < h->nbytes ? " (truncated)" : " (trailing bytes)");
}

static const char *mem_name(const char *name)
{
    return name ? name : "<memory>";
}

int sim_npy_read_mem(const void *buf, size_t size, const char *name, struct sim_tensor **out,
                     struct diag *d)
{
    const unsigned char *b = buf;
    size_t off, len;
    struct npy_header h;
    name = mem_name(name);
    int r = parse_preamble(b, size < NPY_PREAMBLE_MAX ? size : NPY_PREAMBLE_MAX, size, name, d,
                           &off, &len);
    if (r < 0)
        return r;
    if ((r = parse_header_text((const char *)b + off, len, off, name, d, &h)) < 0)
        return r;
    if ((r = check_data_len(&h, size - h.data_off, name, d)) < 0)
        return r;
    struct sim_tensor *t = sim_tensor_new_uninit(h.dtype, h.ndim, h.shape);
    if (h.nbytes)
        memcpy(sim_tensor_data(t), b + h.data_off, h.nbytes);
    *out = t;
    return 0;
}

/* --- reading: files --------------------------------------------------------------------- */

/* Read up to n bytes (fewer only at end of file). Returns the count, or -1 with errno. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

static int io_fail(const char *path, struct diag *d, const char *what)
{
    return diag_set(d, SIM_EIO, path, 0, 0, NULL, "%s: %s", what, strerror(errno));
}

/* A pipe or other stream: read it all, then parse from memory. */
static int read_stream(int fd, const char *path, struct sim_tensor **out, struct diag *d)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = sim_xmalloc(cap);
    for (;;) {
        if (n == cap)
            buf = sim_xrealloc(buf, cap *= 2);
        ssize_t k = read_full(fd, buf + n, cap - n);
        if (k < 0) {
            free(buf);
            return io_fail(path, d, "cannot read");
        }
        n += (size_t)k;
        if (n < cap)
            break;
    }
    int r = sim_npy_read_mem(buf, n, path, out, d);
    free(buf);
    return r;
}

/* Open path for reading and find its size; *size is SIZE_MAX when it is not known. */
static int open_input(const char *path, int *fd, size_t *size, struct diag *d)
{
    *size = 0;
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return io_fail(path, d, "cannot open");
    struct stat st;
    if (fstat(*fd, &st) != 0) {
        int r = io_fail(path, d, "cannot stat");
        close(*fd);
        return r;
    }
    if (S_ISDIR(st.st_mode)) {
        close(*fd);
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "is a directory");
    }
    /* Some regular files (in /proc, for one) report a size of 0: read those as streams. */
    *size = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : SIZE_MAX;
    return 0;
}

int sim_npy_read(const char *path, struct sim_tensor **out, struct diag *d)
{
    int fd, r;
    size_t size;
    if ((r = open_input(path, &fd, &size, d)) < 0)
        return r;
    if (size == SIZE_MAX) {
        r = read_stream(fd, path, out, d);
        close(fd);
        return r;
    }
    /* A regular file: the size is known, so the header is checked against it before the
     * data is allocated, and the data is read straight into the tensor. */
    unsigned char pre[NPY_PREAMBLE_MAX];
    char *text = NULL;
    struct sim_tensor *t = NULL;
    struct npy_header h;
    size_t off, len;
    ssize_t k = read_full(fd, pre, size < sizeof(pre) ? size : sizeof(pre));
    if (k < 0) {
        r = io_fail(path, d, "cannot read");
        goto out_close;
    }
    if ((r = parse_preamble(pre, (size_t)k, size, path, d, &off, &len)) < 0)
        goto out_close;
    text = sim_xmalloc(len ? len : 1);
    if (lseek(fd, (off_t)off, SEEK_SET) < 0 || (k = read_full(fd, text, len)) < 0) {
        r = io_fail(path, d, "cannot read");
        goto out_free_text;
    }
    if ((size_t)k < len) {
        r = diag_set(d, SIM_EIO, path, 0, 0, NULL, "file shrank while being read");
        goto out_free_text;
    }
    if ((r = parse_header_text(text, len, off, path, d, &h)) < 0)
        goto out_free_text;
    if ((r = check_data_len(&h, size - h.data_off, path, d)) < 0)
        goto out_free_text;
    t = sim_tensor_new(h.dtype, h.ndim, h.shape);
    if ((k = read_full(fd, sim_tensor_data(t), h.nbytes)) < 0) {
        r = io_fail(path, d, "cannot read");
        goto out_unref;
    }
    if ((size_t)k < h.nbytes) {
        r = diag_set(d, SIM_EIO, path, 0, 0, NULL, "file shrank while being read");
        goto out_unref;
    }
    *out = t;
    t = NULL;
    r = 0;
out_unref:
    sim_tensor_unref(t);
out_free_text:
    free(text);
out_close:
    close(fd);
    return r;
}

int sim_npy_read_raw(const char *path, enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                     struct sim_tensor **out, struct diag *d)
{
    size_t nbytes, size;
    char sh[SIM_MAX_DIMS * 22 + 8];
    if (ndim > SIM_MAX_DIMS)
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL, "%u dimensions (%d at most)", ndim,
                        SIM_MAX_DIMS);
    sim_shape_format(ndim, shape, sh, sizeof(sh));
    if (sim_shape_nbytes(dtype, ndim, shape, &nbytes) != 0)
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                        "invalid shape %s (negative dimension or size overflow)", sh);
    int fd, r;
    if ((r = open_input(path, &fd, &size, d)) < 0)
        return r;
    if (size != SIZE_MAX && size != nbytes) {
        close(fd);
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL, "raw data has %zu bytes, %s %s needs %zu",
                        size, sim_dtype_name(dtype), sh, nbytes);
    }
    struct sim_tensor *t = sim_tensor_new(dtype, ndim, shape);
    unsigned char extra;
    ssize_t k = read_full(fd, sim_tensor_data(t), nbytes);
    ssize_t k2 = k < 0 ? 0 : read_full(fd, &extra, 1);
    if (k < 0 || k2 < 0) {
        r = io_fail(path, d, "cannot read");
    } else if ((size_t)k != nbytes || k2 != 0) {
        r = diag_set(d, SIM_EINVAL, path, 0, 0, NULL, "raw data has %s bytes, %s %s needs %zu",
                     k2 ? "more" : "fewer", sim_dtype_name(dtype), sh, nbytes);
    } else {
        *out = t;
        t = NULL;
        r = 0;
    }
    sim_tensor_unref(t);
    close(fd);
    return r;
}

/* --- writing ---------------------------------------------------------------------------- */

/* The complete header (preamble, dict, padding, newline) into buf; returns its length. */
static size_t build_header(const struct sim_tensor *t, char *buf, size_t size)
{
    char dict[NPY_HEADER_TEXT_MAX], sh[SIM_MAX_DIMS * 22 + 8];
    assert((unsigned)t->dtype < SIM_DTYPE_COUNT);
    sim_shape_format(t->ndim, t->shape, sh, sizeof(sh));
    /* numpy writes the keys sorted, each followed by ", ", as repr() gives the values */
    int n = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     write_descr[t->dtype], sh);
    assert(n > 0 && (size_t)n < sizeof(dict));
    size_t len = (size_t)n;
    /* numpy >= 1.24 also reserves spaces for shape[0] to grow in place; with at most 8
     * dimensions whose product fits, the padded header is 128 bytes with or without them,
     * so the files are the same. */
    /* The header length field counts the dict, the padding and the final newline. The
     * largest possible dict is a few hundred bytes, so version 1.0 always suffices. */
    size_t pad = NPY_ALIGN - (10 + len + 1) % NPY_ALIGN;
    size_t hlen = len + pad + 1;
    assert(hlen <= 0xffff && 10 + hlen <= size);
    memcpy(buf, MAGIC, sizeof(MAGIC));
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + len + pad] = '\n';
    return 10 + hlen;
}

void *sim_npy_write_mem(const struct sim_tensor *t, size_t *size)
{
    char hdr[NPY_HEADER_TEXT_MAX + 2 * NPY_ALIGN];
    size_t n = build_header(t, hdr, sizeof(hdr));
    char *buf = sim_xmalloc(n + t->nbytes);
    memcpy(buf, hdr, n);
    if (t->nbytes)
        sim_tensor_read_bytes(t, 0, t->nbytes, buf + n);
    *size = n + t->nbytes;
    return buf;
}

static int write_full(int fd, const void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(fd, (const char *)buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

/* t's bytes to fd; a pattern-backed tensor a chunk at a time, never materialised. */
static int write_tensor(int fd, const struct sim_tensor *t)
{
    if (!sim_tensor_is_lazy(t))
        return write_full(fd, sim_tensor_cdata(t), t->nbytes);
    enum { CHUNK = 1 << 20 };
    size_t k0 = t->nbytes < CHUNK ? t->nbytes : CHUNK;
    unsigned char *buf = sim_xmalloc(k0 ? k0 : 1);
    int r = 0;
    for (size_t off = 0; off < t->nbytes && r == 0; off += CHUNK) {
        size_t k = t->nbytes - off < CHUNK ? t->nbytes - off : CHUNK;
        sim_tensor_read_bytes(t, off, k, buf);
        r = write_full(fd, buf, k);
    }
    free(buf);
    return r;
}

/* fsync the directory holding path, so the rename itself is durable. Best effort: some
 * file systems refuse fsync on directories. */
static void sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir =
        !slash ? sim_xstrdup(".") : sim_xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int sim_npy_write(const char *path, const struct sim_tensor *t, struct diag *d)
{
    char hdr[NPY_HEADER_TEXT_MAX + 2 * NPY_ALIGN];
    size_t n = build_header(t, hdr, sizeof(hdr));

    /* The temporary file sits next to path (rename cannot cross file systems) and is
     * created exclusively with 0666 less the umask, like the file np.save would create. */
    char *tmp = NULL;
    int fd = -1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    for (unsigned attempt = 0; fd < 0 && attempt < 100; attempt++) {
        free(tmp);
        tmp = sim_xasprintf("%s.tmp-%ld-%lx", path, (long)getpid(),
                            (unsigned long)(ts.tv_nsec + attempt));
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int r = io_fail(path, d, "cannot create a temporary file next to it");
        free(tmp);
        return r;
    }
    int r = 0;
    if (write_full(fd, hdr, n) != 0 || (t->nbytes && write_tensor(fd, t) != 0))
        r = io_fail(path, d, "cannot write");
    else if (fsync(fd) != 0)
        r = io_fail(path, d, "cannot sync");
    if (close(fd) != 0 && r == 0)
        r = io_fail(path, d, "cannot write");
    if (r == 0 && rename(tmp, path) != 0)
        r = io_fail(path, d, "cannot rename the temporary file into place");
    if (r != 0)
        unlink(tmp);
    else
        sync_dir(path);
    free(tmp);
    return r;
}
