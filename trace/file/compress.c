/* Compressed trace files through libzstd and zlib (see compress.h). */
#include "trace/file/compress.h"

#include "sim/util/mapguard.h"
#include "sim/util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

enum {
    Z_CHUNK = 1 << 20, /* bytes read or produced per step */
    GZ_LEVEL = 1,      /* gzip is for tools that know no zstd: fast rather than small */
    ZSTD_LEVEL = 1,    /* on a trace as small as level 3 (about 15x), 1.6 times as fast */
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

enum trace_zkind trace_z_kind_of_path(const char *path)
{
    if (ends_with(path, ".zst") || ends_with(path, ".zstd"))
        return TRACE_Z_ZSTD;
    if (ends_with(path, ".gz"))
        return TRACE_Z_GZIP;
    return TRACE_Z_NONE;
}

enum trace_zkind trace_z_kind_of_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    if (n >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
        return TRACE_Z_ZSTD;
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return TRACE_Z_GZIP;
    return TRACE_Z_NONE;
}

const char *trace_z_name(enum trace_zkind k)
{
    return k == TRACE_Z_ZSTD ? "zstd" : k == TRACE_Z_GZIP ? "gzip" : "plain";
}

/* ---- writing ---------------------------------------------------------------------------- */

struct trace_zout {
    enum trace_zkind kind;
    ZSTD_CCtx *zc;       /* owned, zstd */
    z_stream gz;         /* gzip */
    bool gz_init;        /* gz is initialised */
    bool done;           /* the stream was ended */
    unsigned char *obuf; /* owned: Z_CHUNK bytes of output */
};

struct trace_zout *trace_zout_new(enum trace_zkind k)
{
    struct trace_zout *z = sim_xcalloc(1, sizeof(*z));
    z->kind = k;
    z->obuf = sim_xmalloc(Z_CHUNK);
    if (k == TRACE_Z_ZSTD) {
        z->zc = ZSTD_createCCtx();
        if (!z->zc)
            sim_die("out of memory (a zstd compressor)");
        ZSTD_CCtx_setParameter(z->zc, ZSTD_c_compressionLevel, ZSTD_LEVEL);
        /* one thread: a checkpoint's forked copy of the process writes on with the
         * compressor's state as it was, which a worker thread would not survive */
        ZSTD_CCtx_setParameter(z->zc, ZSTD_c_checksumFlag, 1);
    } else {
        /* windowBits 15 + 16: a gzip header and trailer */
        if (deflateInit2(&z->gz, GZ_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            sim_die("out of memory (a gzip compressor)");
        z->gz_init = true;
    }
    return z;
}

int trace_zout_write(struct trace_zout *z, const void *in, size_t n, bool end,
                     int (*sink)(void *ctx, const void *p, size_t n), void *ctx)
{
    if (z->done)
        return n ? EIO : 0;
    if (z->kind == TRACE_Z_ZSTD) {
        ZSTD_inBuffer ib = {in, n, 0};
        ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_continue;
        for (;;) {
            ZSTD_outBuffer ob = {z->obuf, Z_CHUNK, 0};
            size_t left = ZSTD_compressStream2(z->zc, &ob, &ib, mode);
            if (ZSTD_isError(left))
                return EIO;
            if (ob.pos) {
                int e = sink(ctx, z->obuf, ob.pos);
                if (e)
                    return e;
            }
            if (end ? left == 0 : ib.pos == ib.size)
                break;
        }
    } else {
        z->gz.next_in = (Bytef *)in;
        z->gz.avail_in = (uInt)n; /* the callers' buffers are far below 4 GiB */
        for (;;) {
            z->gz.next_out = z->obuf;
            z->gz.avail_out = Z_CHUNK;
            int rc = deflate(&z->gz, end ? Z_FINISH : Z_NO_FLUSH);
            if (rc == Z_STREAM_ERROR)
                return EIO;
            size_t got = Z_CHUNK - z->gz.avail_out;
            if (got) {
                int e = sink(ctx, z->obuf, got);
                if (e)
                    return e;
            }
            if (end ? rc == Z_STREAM_END : z->gz.avail_in == 0 && z->gz.avail_out != 0)
                break;
        }
    }
    z->done = end;
    return 0;
}

void trace_zout_free(struct trace_zout *z)
{
    if (!z)
        return;
    ZSTD_freeCCtx(z->zc);
    if (z->gz_init)
        deflateEnd(&z->gz);
    free(z->obuf);
    free(z);
}

/* ---- reading ---------------------------------------------------------------------------- */

/* Where compressed bytes come from: the head already read, then fd or memory. */
struct zsrc {
    const unsigned char *head;
    size_t nhead;
    int fd; /* or -1: mem */
    const unsigned char *mem;
    size_t nmem, pos;
};

/* Up to cap bytes into buf: the count, 0 at the end, or -errno. */
static ssize_t zsrc_read(struct zsrc *s, unsigned char *buf, size_t cap)
{
    if (s->nhead) {
        size_t k = s->nhead < cap ? s->nhead : cap;
        memcpy(buf, s->head, k);
        s->head += k, s->nhead -= k;
        return (ssize_t)k;
    }
    if (s->fd < 0) {
        size_t k = s->nmem - s->pos < cap ? s->nmem - s->pos : cap;
        memcpy(buf, s->mem + s->pos, k);
        s->pos += k;
        return (ssize_t)k;
    }
    for (;;) {
        ssize_t k = read(s->fd, buf, cap);
        if (k >= 0)
            return k;
        if (errno != EINTR)
            return -errno;
    }
}

/* Where the decompressed bytes go: a file or a growing buffer. */
struct zdst {
    int fd; /* or -1: buf */
    char *buf;
    size_t len, cap, limit;
};

static int zdst_put(struct zdst *o, const void *p, size_t n)
{
    if (o->fd >= 0) {
        const char *q = p;
        while (n) {
            ssize_t k = write(o->fd, q, n);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return k < 0 ? errno : EIO;
            q += k, n -= (size_t)k;
        }
        return 0;
    }
    if (n > o->limit - o->len)
        return EFBIG;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->len + n + 1)
            cap *= 2;
        o->buf = sim_xrealloc(o->buf, cap);
        o->cap = cap;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    o->buf[o->len] = '\0';
    return 0;
}

struct zjob {
    enum trace_zkind kind;
    const char *name;
    bool recover;
    struct zsrc *src;
    struct zdst *dst;
    int (*progress)(void *ctx, uint64_t in);
    void *pctx;
    struct trace_zstat *st;
    struct diag *d;
};

static int put_failed(struct zjob *j, int e)
{
    if (e == EFBIG)
        return diag_set(j->d, SIM_ENOMEM, j->name, 0, 0, NULL,
                        "the %s stream expands beyond %zu bytes", trace_z_name(j->kind),
                        j->dst->limit);
    return diag_set(j->d, SIM_EIO, j->name, 0, 0, NULL,
                    "cannot write the decompressed trace to a temporary file: %s", strerror(e));
}

static int corrupt(struct zjob *j, uint64_t at, const char *why)
{
    return diag_set(j->d, SIM_EPARSE, j->name, 0, 0, NULL,
                    "corrupt %s stream at compressed byte %llu: %s", trace_z_name(j->kind),
                    (unsigned long long)at, why);
}

/* The stream ended before its end: an error, or (recover) what came before the cut. */
static int cut(struct zjob *j)
{
    if (j->recover) {
        j->st->cut = true;
        return 0;
    }
    return diag_set(j->d, SIM_EPARSE, j->name, 0, 0, NULL,
                    "truncated %s stream: the file ends at compressed byte %llu, inside a "
                    "frame (%llu bytes decompressed before the cut)",
                    trace_z_name(j->kind), (unsigned long long)j->st->in,
                    (unsigned long long)j->st->out);
}

static int inflate_zstd(struct zjob *j, unsigned char *ib, unsigned char *ob)
{
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    if (!dc)
        sim_die("out of memory (a zstd decompressor)");
    int rc = 0;
    size_t pending = 1; /* ZSTD_decompressStream's last hint: 0 at the end of a frame */
    for (;;) {
        ssize_t n = zsrc_read(j->src, ib, Z_CHUNK);
        if (n < 0) {
            rc = diag_set(j->d, SIM_EIO, j->name, 0, 0, NULL, "cannot read: %s", strerror((int)-n));
            break;
        }
        if (n == 0) {
            rc = pending ? cut(j) : 0;
            break;
        }
        ZSTD_inBuffer in = {ib, (size_t)n, 0};
        ZSTD_outBuffer out;
        do {
            out = (ZSTD_outBuffer){ob, Z_CHUNK, 0};
            size_t r = ZSTD_decompressStream(dc, &out, &in);
            if (ZSTD_isError(r)) {
                rc = corrupt(j, j->st->in + in.pos, ZSTD_getErrorName(r));
                goto out;
            }
            pending = r;
            j->st->out += out.pos;
            int e = out.pos ? zdst_put(j->dst, ob, out.pos) : 0;
            if (e) {
                rc = put_failed(j, e);
                goto out;
            }
        } while (in.pos < in.size || out.pos == out.size);
        j->st->in += (uint64_t)n;
        if (j->progress && j->progress(j->pctx, j->st->in)) {
            rc = diag_set(j->d, SIM_ESTATE, j->name, 0, 0, NULL, "the load was stopped");
            break;
        }
    }
out:
    ZSTD_freeDCtx(dc);
    return rc;
}

static int inflate_gzip(struct zjob *j, unsigned char *ib, unsigned char *ob)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
        sim_die("out of memory (a gzip decompressor)");
    int rc = 0;
    bool ended = false; /* the last member is complete */
    for (;;) {
        ssize_t n = zsrc_read(j->src, ib, Z_CHUNK);
        if (n < 0) {
            rc = diag_set(j->d, SIM_EIO, j->name, 0, 0, NULL, "cannot read: %s", strerror((int)-n));
            break;
        }
        if (n == 0) {
            rc = ended ? 0 : cut(j);
            break;
        }
        zs.next_in = ib;
        zs.avail_in = (uInt)n;
        while (zs.avail_in > 0) {
            if (ended) { /* another member follows */
                inflateReset(&zs);
                ended = false;
            }
            zs.next_out = ob;
            zs.avail_out = Z_CHUNK;
            int r = inflate(&zs, Z_NO_FLUSH);
            size_t got = Z_CHUNK - zs.avail_out;
            j->st->out += got;
            int e = got ? zdst_put(j->dst, ob, got) : 0;
            if (e) {
                rc = put_failed(j, e);
                goto out;
            }
            if (r == Z_STREAM_END) {
                ended = true;
            } else if (r == Z_BUF_ERROR && !got) {
                break; /* needs more input */
            } else if (r != Z_OK) {
                rc = corrupt(j, j->st->in + (uint64_t)n - zs.avail_in,
                             zs.msg ? zs.msg : "not a gzip stream");
                goto out;
            }
        }
        j->st->in += (uint64_t)n;
        if (j->progress && j->progress(j->pctx, j->st->in)) {
            rc = diag_set(j->d, SIM_ESTATE, j->name, 0, 0, NULL, "the load was stopped");
            break;
        }
    }
out:
    inflateEnd(&zs);
    return rc;
}

static int run(struct zjob *j)
{
    memset(j->st, 0, sizeof(*j->st));
    unsigned char *ib = sim_xmalloc(Z_CHUNK), *ob = sim_xmalloc(Z_CHUNK);
    int rc = j->kind == TRACE_Z_ZSTD ? inflate_zstd(j, ib, ob) : inflate_gzip(j, ib, ob);
    free(ib);
    free(ob);
    return rc;
}

/* A new file nobody else sees, removed when closed. */
static int temp_file(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    char *tmpl = sim_xasprintf("%s/npuscope-trace.XXXXXX", dir);
    fd = mkostemp(tmpl, O_CLOEXEC);
    if (fd >= 0)
        unlink(tmpl);
    free(tmpl);
    return fd;
}

int trace_z_inflate_fd(int fd, const void *head, size_t nhead, enum trace_zkind k, const char *name,
                       bool recover, int (*progress)(void *ctx, uint64_t in), void *pctx,
                       int *out_fd, uint64_t *out_len, struct trace_zstat *st, struct diag *d)
{
    *out_fd = -1;
    *out_len = 0;
    int tfd = temp_file();
    if (tfd < 0)
        return diag_set(d, SIM_EIO, name, 0, 0, NULL,
                        "cannot create a temporary file to decompress into: %s", strerror(errno));
    struct zsrc src = {.head = head, .nhead = nhead, .fd = fd};
    struct zdst dst = {.fd = tfd};
    struct zjob j = {k, name, recover, &src, &dst, progress, pctx, st, d};
    int rc = run(&j);
    if (rc < 0) {
        close(tfd);
        return rc;
    }
    *out_fd = tfd;
    *out_len = st->out;
    return 0;
}

int trace_z_inflate_buffer(const void *p, size_t n, enum trace_zkind k, const char *name,
                           bool recover, size_t limit, char **out, size_t *out_len,
                           struct trace_zstat *st, struct diag *d)
{
    *out = NULL;
    *out_len = 0;
    struct zsrc src = {.fd = -1, .mem = p, .nmem = n};
    struct zdst dst = {.fd = -1, .limit = limit};
    struct zjob j = {k, name, recover, &src, &dst, NULL, NULL, st, d};
    int rc = run(&j);
    if (rc < 0) {
        free(dst.buf);
        return rc;
    }
    if (!dst.buf)
        dst.buf = sim_xcalloc(1, 1);
    *out = dst.buf;
    *out_len = dst.len;
    return 0;
}

/* ---- a trace file's plain bytes --------------------------------------------------------- */

/* Map the regular file open on fd (closed here), len bytes. */
static int map_fd(int fd, size_t len, const char *path, struct trace_zfile *f, struct diag *d)
{
    if (len == 0) {
        close(fd);
        return diag_set(d, SIM_EPARSE, path, 0, 0, NULL, "not a trace: the file is empty");
    }
    void *pm = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (pm == MAP_FAILED)
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot map: %s", strerror(e));
    madvise(pm, len, MADV_SEQUENTIAL);
    sim_mapguard_add(pm, len); /* the file may be cut short while it is read */
    f->p = pm, f->n = len, f->mapped = true, f->cuts = sim_mapguard_cuts();
    return 0;
}

/* Read a pipe or device whole onto the heap (fd closed here). */
static int read_all(int fd, const char *path, char **out, size_t *out_len, struct diag *d)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = sim_xmalloc(cap);
    for (;;) {
        if (len == cap)
            buf = sim_xrealloc(buf, cap *= 2);
        ssize_t k = read(fd, buf + len, cap - len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot read: %s", strerror(e));
        }
        if (k == 0)
            break;
        len += (size_t)k;
    }
    close(fd);
    *out = buf, *out_len = len;
    return 0;
}

/* Decompression's progress as the caller's: compressed bytes of the file's size. */
struct zprogress {
    int (*fn)(void *ctx, uint64_t done, uint64_t total);
    void *ctx;
    uint64_t total;
};

static int zprogress_fn(void *ctx, uint64_t in)
{
    struct zprogress *z = ctx;
    return z->fn(z->ctx, in, z->total);
}

int trace_z_open(const char *path, bool recover,
                 int (*progress)(void *ctx, uint64_t done, uint64_t total), void *pctx,
                 struct trace_zfile *f, struct diag *d)
{
    memset(f, 0, sizeof(*f));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return diag_set(d, errno == ENOENT ? SIM_ENOENT : SIM_EIO, path, 0, 0, NULL,
                        "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
        close(fd);
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot read: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) { /* a pipe or a device: read it all */
        char *buf = NULL;
        size_t len = 0;
        int rc = read_all(fd, path, &buf, &len, d);
        if (rc < 0)
            return rc;
        f->kind = trace_z_kind_of_bytes(buf, len);
        if (f->kind != TRACE_Z_NONE) {
            char *plain;
            rc = trace_z_inflate_buffer(buf, len, f->kind, path, recover, SIZE_MAX / 2, &plain,
                                        &len, &f->st, d);
            free(buf);
            if (rc < 0)
                return rc;
            buf = plain;
        }
        f->p = buf, f->n = len;
        return 0;
    }
    /* a compressed file, whatever its name, is told by its first bytes */
    unsigned char head[4];
    ssize_t nhead = pread(fd, head, sizeof(head), 0);
    f->kind = nhead > 0 ? trace_z_kind_of_bytes(head, (size_t)nhead) : TRACE_Z_NONE;
    if (f->kind == TRACE_Z_NONE)
        return map_fd(fd, (size_t)st.st_size, path, f, d);
    struct zprogress zp = {progress, pctx, (uint64_t)st.st_size};
    int tfd;
    uint64_t tlen;
    int rc = trace_z_inflate_fd(fd, NULL, 0, f->kind, path, recover, progress ? zprogress_fn : NULL,
                                &zp, &tfd, &tlen, &f->st, d);
    close(fd);
    if (rc < 0)
        return rc;
    return map_fd(tfd, (size_t)tlen, path, f, d);
}

void trace_z_note_cut(const struct trace_zfile *f, struct diag *d)
{
    if (d && f->mapped && sim_mapguard_cuts() != f->cuts)
        diag_prefix(d, "the file was cut short on disk while it was read");
}

void trace_z_close(struct trace_zfile *f)
{
    if (f->mapped) {
        sim_mapguard_remove(f->p);
        munmap((void *)f->p, f->n);
    } else
        free((void *)f->p);
    f->p = NULL;
    f->n = 0;
}
