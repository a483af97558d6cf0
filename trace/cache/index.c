/* The binary index of a loaded trace (see index.h). */
#include "trace/cache/index.h"

#include "sim/util/xalloc.h"
#include "trace/cache/ichk.h"
#include "trace/file/compress.h"
#include "trace/file/report.h"
#include "trace/model/mapped.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BLK TRACE_ICHK_BLOCK /* the checksum's block: payload bytes per block */

enum {
    RELEASE = 32 << 20,     /* mapped index pages read are given back every RELEASE bytes */
    HEADTAIL = 64 << 10,    /* bytes of the trace's head and of its tail in its key */
    VALUE_DEPTH = 4096,     /* deepest value tree read back */
    SITE_COUNT_MAX = 65536, /* site ids are 16 bits */
    ALIGN = 64              /* the mapped arrays start at multiples of it in the file */
};

static const char MAGIC[8] = {'N', 'P', 'S', 'I', 'D', 'X', '1', '\n'};

/* The layout of what the index holds raw: a change of a struct makes older indexes stale. */
#define INDEX_VERSION                                                                              \
    (4u | (uint64_t)sizeof(struct trace_event) << 8 |                                              \
     (uint64_t)sizeof(struct trace_transfer) << 16 | (uint64_t)trace_model_block_size() << 24 |    \
     (uint64_t)sizeof(struct trace_power_sample) << 32)

/* The fixed header at the start of an index (native byte order: the cache is this
 * machine's). */
struct ihdr {
    char magic[8];
    uint64_t version;
    uint64_t trace_size;
    int64_t mtime_s, mtime_ns;
    uint64_t headtail; /* hash of the trace's first and last HEADTAIL bytes */
    uint64_t payload_len, payload_hash;
    uint64_t errors, warnings;
    uint64_t ignored_events, ignored_fields;
    uint64_t now, has_now, tmin, tmax; /* the model's clock, checked after the rebuild */
    uint64_t header_hash;              /* of the bytes above */
};

/* Give back the pages of the mapping at map that lie wholly before byte upto (they are
 * read again from the page cache if needed): the index costs no resident memory beyond
 * the model built from it. */
static void release(const void *map, size_t upto)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    upto = upto / page * page;
    if (upto)
        madvise((void *)map, upto, MADV_DONTNEED);
}

uint64_t trace_index_hash(const void *p, size_t n, uint64_t seed)
{
    return trace_ichk_wide(p, n, seed);
}

/* The trace's key: size, mtime, and the hash of its head and tail. */
static int trace_key(const char *path, struct ihdr *h, struct diag *d)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL, "not a regular file");
    }
    h->trace_size = (uint64_t)st.st_size;
    h->mtime_s = (int64_t)st.st_mtim.tv_sec;
    h->mtime_ns = (int64_t)st.st_mtim.tv_nsec;
    unsigned char *buf = sim_xmalloc(2 * HEADTAIL);
    size_t n = 0;
    ssize_t k = pread(fd, buf, HEADTAIL, 0);
    n += k > 0 ? (size_t)k : 0;
    off_t tail = st.st_size > HEADTAIL ? st.st_size - HEADTAIL : 0;
    k = pread(fd, buf + n, HEADTAIL, tail);
    n += k > 0 ? (size_t)k : 0;
    close(fd);
    h->headtail = trace_ichk_block(buf, n, 0x68656164u);
    free(buf);
    return 0;
}

int trace_index_key(const char *path, struct trace_index_key *k, struct diag *d)
{
    struct ihdr h;
    int rc = trace_key(path, &h, d);
    if (rc == 0)
        *k = (struct trace_index_key){h.trace_size, h.mtime_s, h.mtime_ns, h.headtail};
    return rc;
}

/* ---- writing ---------------------------------------------------------------------------- */

struct iw {
    int fd;
    unsigned char *buf; /* owned: BLK bytes */
    size_t len;
    uint64_t total, hash[2]; /* the two chains of trace_ichk_payload */
    int err;
    const atomic_bool *stop; /* set: the write is given up (may be NULL) */
    const atomic_uint *busy; /* not zero: the write waits (may be NULL) */
};

/* Write n bytes at p to the file. */
static void iw_write(struct iw *w, const unsigned char *p, size_t n)
{
    /* between blocks, paused while busy says a person waits for something else */
    while (w->busy && atomic_load_explicit(w->busy, memory_order_relaxed) &&
           !(w->stop && atomic_load_explicit(w->stop, memory_order_relaxed))) {
        struct timespec ts = {0, 10 * 1000 * 1000L};
        nanosleep(&ts, NULL);
    }
    if (w->stop && atomic_load_explicit(w->stop, memory_order_relaxed))
        w->err = ECANCELED;
    for (size_t off = 0; off < n && !w->err;) {
        ssize_t k = write(w->fd, p + off, n - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            w->err = k < 0 ? errno : EIO;
        else
            off += (size_t)k;
    }
}

static void iw_block(struct iw *w)
{
    if (!w->len)
        return;
    w->hash[w->total / BLK % 2] = trace_ichk_wide(w->buf, w->len, w->hash[w->total / BLK % 2]);
    iw_write(w, w->buf, w->len);
    w->total += w->len;
    w->len = 0;
}

static void put(struct iw *w, const void *p, size_t n)
{
    const unsigned char *q = p;
    while (n) {
        if (!w->len && n >= BLK) { /* the buffer empty: total is a multiple of BLK */
            /* a whole block of a big array: hashed and written where it is (while in the
             * cache), not copied through the buffer first */
            w->hash[w->total / BLK % 2] = trace_ichk_wide(q, BLK, w->hash[w->total / BLK % 2]);
            iw_write(w, q, BLK);
            w->total += BLK, q += BLK, n -= BLK;
            continue;
        }
        size_t k = BLK - w->len < n ? BLK - w->len : n;
        memcpy(w->buf + w->len, q, k);
        w->len += k, q += k, n -= k;
        if (w->len == BLK)
            iw_block(w);
    }
}

static void put_u64(struct iw *w, uint64_t v)
{
    put(w, &v, 8);
}

/* Zeros up to the next ALIGN boundary of the file, then n items of size bytes. */
static void put_array(struct iw *w, const void *p, uint64_t n, size_t size)
{
    static const unsigned char zeros[ALIGN];
    put(w, zeros, (ALIGN - (sizeof(struct ihdr) + w->total + w->len) % ALIGN) % ALIGN);
    if (n)
        put(w, p, n * size);
}

static void put_u32(struct iw *w, uint32_t v)
{
    put(w, &v, 4);
}

static void put_u8(struct iw *w, uint8_t v)
{
    put(w, &v, 1);
}

enum { V_ABSENT, V_NULL, V_FALSE, V_TRUE, V_INT, V_FLOAT, V_STR, V_LIST, V_MAP };

static void put_value(struct iw *w, const struct sim_value *v)
{
    if (!v) {
        put_u8(w, V_ABSENT);
        return;
    }
    switch (v->type) {
    case SIM_V_BOOL: put_u8(w, v->u.b ? V_TRUE : V_FALSE); break;
    case SIM_V_INT:
        put_u8(w, V_INT);
        put_u64(w, (uint64_t)v->u.i);
        break;
    case SIM_V_FLOAT:
        put_u8(w, V_FLOAT);
        put(w, &v->u.f, 8);
        break;
    case SIM_V_STR:
        put_u8(w, V_STR);
        put_u64(w, v->u.str.len);
        put(w, v->u.str.s, v->u.str.len);
        break;
    case SIM_V_LIST:
        put_u8(w, V_LIST);
        put_u64(w, v->u.list.len);
        for (size_t i = 0; i < v->u.list.len; i++)
            put_value(w, v->u.list.items[i]);
        break;
    case SIM_V_MAP:
        put_u8(w, V_MAP);
        put_u64(w, v->u.map.len);
        for (size_t i = 0; i < v->u.map.len; i++) {
            size_t k = strlen(v->u.map.keys[i]);
            put_u64(w, k);
            put(w, v->u.map.keys[i], k);
            put_value(w, v->u.map.vals[i]);
        }
        break;
    default: put_u8(w, V_NULL); break; /* null, and a tensor (a loaded trace has none) */
    }
}

static void put_model(struct iw *w, const struct trace_model *m, const char *real)
{
    put_u64(w, strlen(real));
    put(w, real, strlen(real));
    uint32_t ns = trace_model_str_count(m);
    put_u32(w, ns);
    for (uint32_t i = 1; i < ns; i++) {
        size_t n = trace_model_str_len(m, i);
        put_u32(w, (uint32_t)n);
        put(w, trace_model_str(m, i), n);
    }
    uint32_t nsite = trace_model_site_count(m);
    put_u32(w, nsite);
    for (uint32_t i = 1; i < nsite; i++) {
        const struct trace_site *s = trace_model_site_get(m, (uint16_t)i);
        put_u32(w, s->file), put_u32(w, s->func), put_u32(w, s->line);
    }
    size_t nt = trace_model_track_count(m);
    put_u32(w, (uint32_t)nt);
    for (uint32_t t = 0; t < nt; t++) {
        const struct trace_track *k = trace_model_track_get(m, t);
        put_u32(w, k->name), put_u32(w, (uint32_t)k->engine), put_u32(w, (uint32_t)k->engine_id);
    }
    /* the per-event arrays, each at an ALIGN boundary of the file in the model's own
     * layout: the next open maps them in place (trace/model/mapped.h) */
    uint64_t ne = trace_model_event_count(m);
    put_u64(w, ne);
    put_array(w, ne ? trace_model_event(m, 0) : NULL, ne, sizeof(struct trace_event));
    const uint8_t *col;
    uint64_t ncol;
    const uint64_t *col_off = trace_model_opcol_table(m, &col, &ncol);
    put_u64(w, col_off ? ncol : UINT64_MAX);
    if (col_off) {
        put_array(w, col_off, ne, sizeof(uint64_t));
        put_array(w, col, ncol, 1);
    }
    size_t nx = trace_model_transfer_count(m);
    put_u64(w, nx);
    put_array(w, nx ? trace_model_transfer(m, 0) : NULL, nx, sizeof(struct trace_transfer));
    const uint64_t *dep_on, *dep_ev = trace_model_dep_table(m, &dep_on);
    size_t nd = trace_model_dep_count(m);
    put_u64(w, nd);
    put_array(w, dep_ev, nd, sizeof(uint64_t));
    put_array(w, dep_on, nd, sizeof(uint64_t));
    for (uint32_t t = 0; t < nt; t++) {
        const uint32_t *idx;
        size_t n = trace_model_track_events(m, t, &idx), nblock;
        const void *block = trace_model_track_blocks(m, t, &nblock);
        put_u64(w, n), put_u64(w, nblock);
        put_array(w, idx, n, sizeof(*idx));
        put_array(w, block, nblock, trace_model_block_size());
    }
    size_t nm = trace_model_mem_access_count(m);
    put_u64(w, nm);
    for (size_t i = 0; i < nm; i++) {
        const struct trace_mem_access *a = trace_model_mem_access(m, i);
        put_u64(w, a->cycle), put_u64(w, a->addr), put_u64(w, a->bytes);
        put_u32(w, a->mem_type), put_u32(w, a->track), put_u32(w, (uint32_t)a->cmdq_id);
        put_u8(w, a->write);
    }
    size_t nk = trace_model_token_count(m);
    put_u64(w, nk);
    for (size_t i = 0; i < nk; i++) {
        const struct trace_token *t = trace_model_token(m, i);
        put_u64(w, t->start), put_u64(w, t->end), put_u64(w, (uint64_t)t->token_index);
        put_u8(w, t->decode);
        put_value(w, t->details);
    }
    size_t nmk = trace_model_marker_count(m);
    put_u64(w, nmk);
    for (size_t i = 0; i < nmk; i++) {
        const struct trace_marker *k = trace_model_marker(m, i);
        put_u64(w, k->cycle), put_u32(w, k->name), put_u32(w, k->track);
        put_value(w, k->details);
    }
    size_t nb = trace_model_bw_sample_count(m);
    put_u64(w, nb);
    for (size_t i = 0; i < nb; i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
        put_u64(w, s->cycle), put_u64(w, s->window), put_u64(w, s->read_bytes);
        put_u64(w, s->write_bytes), put_u32(w, s->resource);
    }
    put_value(w, trace_model_metadata(m));
    put_value(w, trace_model_config(m));
    put_value(w, trace_model_file_summary(m));
    put_value(w, trace_model_energy(m));
    size_t np = trace_model_power_count(m);
    put_u64(w, np);
    for (size_t i = 0; i < np; i++)
        put(w, trace_model_power(m, i), sizeof(struct trace_power_sample));
}

/* mkdir -p of the directory holding file. */
void trace_index_make_dirs(const char *file)
{
    char *p = sim_xstrdup(file);
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(p, 0700);
        *s = '/';
    }
    free(p);
}

/* Create the temporary file an index is written to before it is renamed onto index
 * (directories created): its name in *tmp (owned), its descriptor in *fd. */
static int index_create(const char *index, char **tmp, int *fd, struct diag *d)
{
    trace_index_make_dirs(index);
    *tmp = sim_xasprintf("%s.tmp.XXXXXX", index);
    *fd = mkostemp(*tmp, O_CLOEXEC);
    if (*fd >= 0)
        return 0;
    int rc = diag_set(d, SIM_EIO, index, 0, 0, NULL, "cannot create: %s", strerror(errno));
    free(*tmp);
    *tmp = NULL;
    return rc;
}

/* Write m, loaded from path, to the temporary file fd (named tmp, closed here) and rename it
 * onto index, or remove it; *hash (may be NULL) the payload's checksum written. A stop set
 * (may be NULL) ends the write early, as a failure. */
static int index_fill(const struct trace_model *m, const char *path,
                      const struct trace_index_counts *c, int fd, const char *tmp,
                      const char *index, struct diag *d, uint64_t *hash, const atomic_bool *stop,
                      const atomic_uint *busy)
{
    struct ihdr h;
    memset(&h, 0, sizeof(h));
    int rc = trace_key(path, &h, d);
    char *real = rc < 0 ? NULL : realpath(path, NULL);
    if (!real) {
        if (rc == 0)
            rc = diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot resolve: %s", strerror(errno));
        close(fd);
        unlink(tmp);
        return rc;
    }
    struct iw w = {
        .fd = fd, .hash = {TRACE_ICHK_SEED, TRACE_ICHK_SEED}, .stop = stop, .busy = busy};
    w.buf = sim_xmalloc(BLK);
    if (lseek(w.fd, (off_t)sizeof(h), SEEK_SET) < 0)
        w.err = errno;
    put_model(&w, m, real);
    iw_block(&w);
    memcpy(h.magic, MAGIC, sizeof(MAGIC));
    h.version = INDEX_VERSION;
    h.payload_len = w.total;
    h.payload_hash = trace_ichk_fold(w.hash);
    h.errors = c ? c->errors : 0;
    h.warnings = c ? c->warnings : 0;
    h.ignored_events = trace_model_ignored_events(m);
    h.ignored_fields = trace_model_ignored_fields(m);
    h.now = trace_model_now(m);
    h.has_now = 1;
    h.tmin = trace_model_t_min(m);
    h.tmax = trace_model_t_max(m);
    h.header_hash =
        trace_ichk_block((const unsigned char *)&h, offsetof(struct ihdr, header_hash), 0);
    if (!w.err && pwrite(w.fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
        w.err = errno ? errno : EIO;
    if (close(w.fd) != 0 && !w.err)
        w.err = errno;
    if (!w.err && stop && atomic_load(stop))
        w.err = ECANCELED; /* given up: its temporary file may be gone already */
    if (!w.err && rename(tmp, index) != 0)
        w.err = errno;
    if (w.err) {
        unlink(tmp);
        rc = diag_set(d, SIM_EIO, index, 0, 0, NULL, "cannot write: %s", strerror(w.err));
    }
    if (hash)
        *hash = trace_ichk_fold(w.hash);
    free(w.buf);
    free(real);
    return rc;
}

/* trace_index_write, with *hash (may be NULL) the payload's checksum written. */
static int index_write(const struct trace_model *m, const char *path,
                       const struct trace_index_counts *c, const char *index, struct diag *d,
                       uint64_t *hash)
{
    char *tmp;
    int fd;
    int rc = index_create(index, &tmp, &fd, d);
    if (rc == 0 && tmp)
        rc = index_fill(m, path, c, fd, tmp, index, d, hash, NULL, NULL);
    free(tmp);
    return rc;
}

int trace_index_write(const struct trace_model *m, const char *path,
                      const struct trace_index_counts *c, const char *index, struct diag *d)
{
    return index_write(m, path, c, index, d, NULL);
}

/* ---- reading ---------------------------------------------------------------------------- */

struct ir {
    const unsigned char *p;
    size_t n, off;
    bool bad;
    const void *map; /* the mapping the payload p lies in, at byte skip */
    size_t skip, released;
    struct mapping *mapping; /* map and its length, lent to the model (then lent is set) */
    bool lent;
    int fd; /* the index's file, for the checks' reads (struct trace_ichk_rd) */
};

static const void *get(struct ir *r, size_t n)
{
    if (r->bad || n > r->n - r->off) {
        r->bad = true;
        return NULL;
    }
    const void *q = r->p + r->off;
    r->off += n;
    if (r->off - r->released >= RELEASE) {
        release(r->map, r->skip + r->released);
        r->released = r->off;
    }
    return q;
}

static uint64_t get_u64(struct ir *r)
{
    const void *q = get(r, 8);
    uint64_t v = 0;
    if (q)
        memcpy(&v, q, 8);
    return v;
}

static uint32_t get_u32(struct ir *r)
{
    const void *q = get(r, 4);
    uint32_t v = 0;
    if (q)
        memcpy(&v, q, 4);
    return v;
}

static uint8_t get_u8(struct ir *r)
{
    const uint8_t *q = get(r, 1);
    return q ? *q : 0;
}

/* A count of items of at least size bytes each that the rest of the index can hold. */
static uint64_t get_count(struct ir *r, size_t size)
{
    uint64_t n = get_u64(r);
    if (n > (r->n - r->off) / (size ? size : 1))
        r->bad = true;
    return r->bad ? 0 : n;
}

/* n items of size bytes at the next ALIGN boundary of the file (n was checked by get_count
 * or is checked here), in place; NULL when n is 0 or they do not fit. */
static const void *get_array(struct ir *r, uint64_t n, size_t size)
{
    size_t pad = (ALIGN - (r->skip + r->off) % ALIGN) % ALIGN;
    if (r->bad || !get(r, pad))
        return NULL;
    if (n > (r->n - r->off) / size) {
        r->bad = true;
        return NULL;
    }
    return n ? get(r, n * size) : NULL;
}

static struct sim_value *get_value(struct ir *r, int depth, bool *absent)
{
    *absent = false;
    if (depth > VALUE_DEPTH) {
        r->bad = true;
        return NULL;
    }
    uint8_t tag = get_u8(r);
    if (r->bad)
        return NULL;
    switch (tag) {
    case V_ABSENT: *absent = true; return NULL;
    case V_NULL: return sim_value_null();
    case V_FALSE: return sim_value_bool(false);
    case V_TRUE: return sim_value_bool(true);
    case V_INT: return sim_value_int((int64_t)get_u64(r));
    case V_FLOAT: {
        uint64_t b = get_u64(r);
        double f;
        memcpy(&f, &b, 8);
        return sim_value_float(f);
    }
    case V_STR: {
        uint64_t n = get_count(r, 1);
        const char *s = get(r, n);
        return s ? sim_value_strn(s, n) : NULL;
    }
    case V_LIST: {
        uint64_t n = get_count(r, 1);
        struct sim_value *l = sim_value_list();
        for (uint64_t i = 0; i < n && !r->bad; i++) {
            bool a;
            struct sim_value *x = get_value(r, depth + 1, &a);
            if (x)
                sim_value_list_push_take(l, x);
            else
                r->bad = true;
        }
        return l;
    }
    case V_MAP: {
        uint64_t n = get_count(r, 9);
        struct sim_value *mp = sim_value_map();
        for (uint64_t i = 0; i < n && !r->bad; i++) {
            uint64_t k = get_count(r, 1);
            const char *key = get(r, k);
            if (!key || memchr(key, '\0', k)) {
                r->bad = true;
                break;
            }
            char *ks = sim_xstrndup(key, k);
            bool a;
            struct sim_value *x = get_value(r, depth + 1, &a);
            if (x)
                sim_value_map_set_take(mp, ks, x);
            else
                r->bad = true;
            free(ks);
        }
        return mp;
    }
    default: r->bad = true; return NULL;
    }
}

/* A value tree that may be absent (NULL) but not bad. */
static struct sim_value *get_opt_value(struct ir *r)
{
    bool absent;
    struct sim_value *v = get_value(r, 0, &absent);
    if (!v && !absent)
        r->bad = true;
    if (r->bad) {
        sim_value_free(v);
        return NULL;
    }
    return v;
}

/* The per-track arrays handed to trace_model_lend while they are read. */
struct lent_tracks {
    const uint32_t **idx;
    size_t *nidx;
    const void **block;
    size_t *nblock;
};

/* The mapping an index's arrays are lent from: unmapped when the model lets them go. */
struct mapping {
    void *p;
    size_t len;
};

static void release_map(void *ctx)
{
    struct mapping *mp = ctx;
    munmap(mp->p, mp->len);
    free(mp);
}

/* Rebuild the model from the payload; false when anything is out of place. */
static bool get_model(struct ir *r, struct trace_model *m, const char *real, uint64_t trace_size)
{
    uint64_t plen = get_count(r, 1);
    const char *p = get(r, plen);
    if (!p || plen != strlen(real) || memcmp(p, real, plen) != 0)
        return false;
    uint32_t ns = get_u32(r);
    for (uint32_t i = 1; i < ns && !r->bad; i++) {
        uint32_t n = get_u32(r);
        const char *s = get(r, n);
        if (!s || trace_model_intern(m, s, n) != i)
            return false;
    }
    uint32_t nsite = get_u32(r);
    if (nsite == 0 || nsite > SITE_COUNT_MAX)
        return false;
    for (uint32_t i = 1; i < nsite && !r->bad; i++) {
        uint32_t file = get_u32(r), func = get_u32(r), line = get_u32(r);
        if (file >= ns || func >= ns || trace_model_site(m, file, func, line) != i)
            return false;
    }
    uint32_t nt = get_u32(r);
    for (uint32_t t = 0; t < nt && !r->bad; t++) {
        uint32_t name = get_u32(r), engine = get_u32(r), id = get_u32(r);
        if (name == TRACE_NO_STR || name >= ns || engine >= TRACE_ENGINE_COUNT ||
            trace_model_track(m, trace_model_str(m, name), (enum trace_engine)engine,
                              (int32_t)id) != t)
            return false;
    }
    uint64_t ne = get_count(r, sizeof(struct trace_event));
    const struct trace_event *ev = get_array(r, ne, sizeof(struct trace_event));
    uint64_t ncol = get_u64(r);
    const uint64_t *col_off = NULL;
    const uint8_t *col = NULL;
    if (ncol != UINT64_MAX) {
        col_off = get_array(r, ne, sizeof(uint64_t));
        col = get_array(r, ncol, 1);
    }
    uint64_t nx = get_count(r, sizeof(struct trace_transfer));
    const struct trace_transfer *xf = get_array(r, nx, sizeof(struct trace_transfer));
    uint64_t nd = get_count(r, 16);
    const uint64_t *dep_ev = get_array(r, nd, sizeof(uint64_t));
    const uint64_t *dep_on = get_array(r, nd, sizeof(uint64_t));
    if (r->bad)
        return false;
    struct lent_tracks lt = {
        .idx = sim_xcalloc(nt ? nt : 1, sizeof(*lt.idx)),
        .nidx = sim_xcalloc(nt ? nt : 1, sizeof(*lt.nidx)),
        .block = sim_xcalloc(nt ? nt : 1, sizeof(*lt.block)),
        .nblock = sim_xcalloc(nt ? nt : 1, sizeof(*lt.nblock)),
    };
    uint64_t total = 0;
    for (uint32_t t = 0; t < nt && !r->bad; t++) {
        uint64_t n = get_count(r, sizeof(uint32_t)), nblock = get_u64(r);
        lt.idx[t] = get_array(r, n, sizeof(uint32_t));
        lt.nidx[t] = n;
        lt.block[t] = get_array(r, nblock, trace_model_block_size());
        lt.nblock[t] = nblock;
        total += n;
        if (nblock != (n ? n / TRACE_MODEL_TRACK_BLOCK + 1 : 0))
            r->bad = true;
    }
    struct trace_model_lent lend = {.ev = ev,
                                    .nev = ne,
                                    .col_off = col_off,
                                    .col = col,
                                    .ncol = ncol,
                                    .xf = xf,
                                    .nxf = nx,
                                    .dep_ev = dep_ev,
                                    .dep_on = dep_on,
                                    .ndep = nd,
                                    .idx = lt.idx,
                                    .nidx = lt.nidx,
                                    .block = lt.block,
                                    .nblock = lt.nblock};
    uint64_t *count = sim_xcalloc(nt ? nt : 1, sizeof(*count));
    uint8_t *kinds = sim_xcalloc(nt ? nt : 1, sizeof(*kinds));
    struct trace_ichk_rd rd = {r->fd, r->map, NULL, 0}, rc = rd;
    lend.kinds = kinds;
    bool ok = !r->bad && total == ne &&
              trace_ichk_events(&rd, ev, ne, nt, ns, nsite, trace_size, &lend.tmin, &lend.tmax,
                                count, kinds) &&
              trace_ichk_lent(&rd, &rc, &lend, nt, count);
    free(rd.buf);
    free(rc.buf);
    free(count);
    if (ok) {
        /* what was read is in the page cache: the model reads it again where it needs it */
        release(r->map, r->skip + r->off);
        trace_model_lend(m, &lend, release_map, r->mapping);
        trace_model_lent_from_file(m); /* pages a pass is done with can be given back */
        r->lent = true;
    }
    free(lt.idx);
    free(lt.nidx);
    free(lt.block);
    free(lt.nblock);
    free(kinds);
    if (!ok)
        return false;
    uint64_t nm = get_count(r, 37);
    for (uint64_t k = 0; k < nm && !r->bad; k++) {
        struct trace_mem_access a = {.cycle = get_u64(r), .addr = get_u64(r), .bytes = get_u64(r)};
        a.mem_type = get_u32(r), a.track = get_u32(r), a.cmdq_id = (int32_t)get_u32(r);
        a.write = get_u8(r) != 0;
        if (a.mem_type >= ns || (a.track >= nt && a.track != UINT32_MAX))
            return false;
        trace_model_add_mem_access(m, &a);
    }
    uint64_t nk = get_count(r, 26);
    for (uint64_t k = 0; k < nk && !r->bad; k++) {
        struct trace_token t = {.start = get_u64(r), .end = get_u64(r)};
        t.token_index = (int64_t)get_u64(r);
        t.decode = get_u8(r) != 0;
        t.details = get_opt_value(r);
        if (r->bad || t.end < t.start) {
            sim_value_free(t.details);
            return false;
        }
        trace_model_add_token(m, &t);
    }
    uint64_t nmk = get_count(r, 17);
    for (uint64_t k = 0; k < nmk && !r->bad; k++) {
        struct trace_marker mk = {.cycle = get_u64(r)};
        mk.name = get_u32(r), mk.track = get_u32(r);
        mk.details = get_opt_value(r);
        if (r->bad || mk.name >= ns || (mk.track >= nt && mk.track != UINT32_MAX)) {
            sim_value_free(mk.details);
            return false;
        }
        trace_model_add_marker(m, &mk);
    }
    uint64_t nb = get_count(r, 36);
    for (uint64_t k = 0; k < nb && !r->bad; k++) {
        struct trace_bw_sample s = {.cycle = get_u64(r), .window = get_u64(r)};
        s.read_bytes = get_u64(r), s.write_bytes = get_u64(r), s.resource = get_u32(r);
        if (s.resource >= ns)
            return false;
        trace_model_add_bw_sample(m, &s);
    }
    struct sim_value *v = get_opt_value(r);
    if (v)
        trace_model_set_metadata_take(m, v);
    if ((v = get_opt_value(r)))
        trace_model_set_config_take(m, v);
    if ((v = get_opt_value(r)))
        trace_model_set_file_summary_take(m, v);
    struct sim_value *energy = get_opt_value(r);
    uint64_t np = get_count(r, sizeof(struct trace_power_sample));
    struct trace_power_sample *power = np ? sim_xmalloc(np * sizeof(*power)) : NULL;
    for (uint64_t k = 0; k < np && !r->bad; k++) {
        const void *q = get(r, sizeof(*power));
        if (q)
            memcpy(&power[k], q, sizeof(*power));
    }
    if (energy && !r->bad) {
        trace_model_set_energy_take(m, energy, power, np);
    } else {
        sim_value_free(energy);
        free(power);
    }
    return !r->bad && r->off == r->n;
}

/* The trace's text, released with the model. */
static void release_zfile(void *ctx)
{
    struct trace_zfile *f = ctx;
    trace_z_close(f);
    free(f);
}

static int stale(const char *index, struct diag *d, const char *why)
{
    return diag_set(d, SIM_EINVAL, index, 0, 0, NULL, "%s", why);
}

/* trace_index_read; with written (may be NULL), the checksum of the payload this process
 * has just written to index: a payload of that checksum is not read through once more to
 * check it (the index is checked as ever when it is another's, say a process's that wrote
 * the same index meanwhile). */
static int index_read(const char *path, const char *index, struct trace_model **out,
                      struct trace_index_counts *c, struct diag *d, const uint64_t *written)
{
    *out = NULL;
    struct ihdr key;
    memset(&key, 0, sizeof(key));
    int rc = trace_key(path, &key, d);
    if (rc < 0)
        return rc;
    int fd = open(index, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return diag_set(d, errno == ENOENT ? SIM_ENOENT : SIM_EIO, index, 0, 0, NULL,
                        "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(struct ihdr)) {
        close(fd);
        return stale(index, d, "corrupt: shorter than its header");
    }
    size_t len = (size_t)st.st_size;
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        close(fd);
        return diag_set(d, SIM_EIO, index, 0, 0, NULL, "cannot map: %s", strerror(errno));
    }
    struct ihdr h;
    memcpy(&h, map, sizeof(h));
    const unsigned char *payload = (const unsigned char *)map + sizeof(h);
    char *real = NULL;
    struct trace_model *m = NULL;
    struct mapping *mp = sim_xmalloc(sizeof(*mp));
    *mp = (struct mapping){map, len};
    struct ir r = {.p = payload, .map = map, .skip = sizeof(h), .mapping = mp, .fd = fd};
    if (memcmp(h.magic, MAGIC, sizeof(MAGIC)) != 0 || h.version != INDEX_VERSION ||
        h.header_hash !=
            trace_ichk_block((const unsigned char *)&h, offsetof(struct ihdr, header_hash), 0)) {
        rc = stale(index, d, "corrupt or of another version: its header does not check");
        goto out;
    }
    if (h.trace_size != key.trace_size || h.mtime_s != key.mtime_s || h.mtime_ns != key.mtime_ns ||
        h.headtail != key.headtail) {
        rc = stale(index, d, "stale: the trace changed since it was written");
        goto out;
    }
    if (h.payload_len != len - sizeof(h)) {
        rc = stale(index, d, "corrupt: its checksum does not match");
        goto out;
    }
    bool check = !written || *written != h.payload_hash;
    struct trace_ichk_beside pc;
    if (check)
        trace_ichk_start(&pc, fd, sizeof(h), h.payload_len);
    real = realpath(path, NULL);
    int real_errno = errno;
    bool held = false;
    if (real) {
        m = trace_model_new();
        r.n = h.payload_len;
        held = get_model(&r, m, real, h.trace_size);
    }
    if (check && !trace_ichk_end(&pc, h.payload_hash)) {
        rc = stale(index, d, "corrupt: its checksum does not match");
        goto out;
    }
    if (!real) {
        rc = diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot resolve: %s", strerror(real_errno));
        goto out;
    }
    if (!held) {
        rc = stale(index, d, "corrupt: its content does not hold together");
        goto out;
    }
    for (uint64_t i = 0; i < h.ignored_events; i++)
        trace_model_count_ignored(m, true);
    for (uint64_t i = 0; i < h.ignored_fields; i++)
        trace_model_count_ignored(m, false);
    if (h.has_now && h.now)
        trace_model_set_now(m, h.now);
    trace_model_finish(m);
    if (trace_model_t_min(m) != h.tmin || trace_model_t_max(m) != h.tmax ||
        trace_model_now(m) != h.now) {
        rc = stale(index, d, "corrupt: the rebuilt model's times differ");
        goto out;
    }
    struct trace_zfile f;
    rc = trace_z_open(path, false, NULL, NULL, &f, d);
    if (rc < 0)
        goto out;
    if (f.kind != TRACE_Z_NONE || f.n != h.trace_size) {
        trace_z_close(&f);
        rc = stale(index, d, "stale: the trace changed since it was written");
        goto out;
    }
    madvise((void *)f.p, f.n, MADV_RANDOM);
    struct trace_zfile *keep = sim_xmalloc(sizeof(*keep));
    *keep = f;
    trace_model_attach_source(m, keep->p, keep->n, release_zfile, keep);
    if (c)
        *c = (struct trace_index_counts){h.errors, h.warnings};
    *out = m;
    m = NULL;
    rc = 0;
out:
    close(fd);
    trace_model_free(m); /* unmaps the index when its arrays were lent to m */
    free(real);
    if (!r.lent) {
        munmap(map, len);
        free(mp);
    }
    return rc;
}

int trace_index_read(const char *path, const char *index, struct trace_model **out,
                     struct trace_index_counts *c, struct diag *d)
{
    return index_read(path, index, out, c, d, NULL);
}

int trace_index_reseal(const char *index, struct diag *d)
{
    int fd = open(index, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return diag_set(d, SIM_EIO, index, 0, 0, NULL, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(struct ihdr)) {
        close(fd);
        return diag_set(d, SIM_EINVAL, index, 0, 0, NULL, "shorter than its header");
    }
    size_t len = (size_t)st.st_size;
    struct ihdr h;
    if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
        close(fd);
        return diag_set(d, SIM_EIO, index, 0, 0, NULL, "cannot read: %s", strerror(errno));
    }
    h.payload_len = len - sizeof(h);
    bool read = trace_ichk_payload(fd, sizeof(h), h.payload_len, &h.payload_hash);
    h.header_hash =
        trace_ichk_block((const unsigned char *)&h, offsetof(struct ihdr, header_hash), 0);
    int rc = 0;
    if (!read)
        rc = diag_set(d, SIM_EIO, index, 0, 0, NULL, "cannot read its payload whole");
    else if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
        rc = diag_set(d, SIM_EIO, index, 0, 0, NULL, "cannot write: %s", strerror(errno));
    close(fd);
    return rc;
}

/* ---- the cache -------------------------------------------------------------------------- */

char *trace_index_path(const char *path)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *dir;
    if (xdg && xdg[0] == '/')
        dir = sim_xasprintf("%s/npuscope", xdg);
    else if (home && home[0] == '/')
        dir = sim_xasprintf("%s/.cache/npuscope", home);
    else
        return NULL;
    char *real = realpath(path, NULL);
    if (!real) {
        free(dir);
        return NULL;
    }
    uint64_t h = trace_ichk_block((const unsigned char *)real, strlen(real), 0x70617468u);
    const char *base = strrchr(real, '/');
    char *idx =
        sim_xasprintf("%s/%.40s-%016llx.idx", dir, base ? base + 1 : real, (unsigned long long)h);
    free(real);
    free(dir);
    return idx;
}

/* ---- keeping the cache small ------------------------------------------------------------ */

uint64_t trace_index_cache_limit(void)
{
    const char *env = getenv("NPUSCOPE_CACHE_MAX");
    if (!env || !*env)
        return TRACE_INDEX_CACHE_MAX;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (errno || end == env || *env == '-')
        return TRACE_INDEX_CACHE_MAX;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K': shift = 10, end++; break;
    case 'm':
    case 'M': shift = 20, end++; break;
    case 'g':
    case 'G': shift = 30, end++; break;
    case 't':
    case 'T': shift = 40, end++; break;
    default: break;
    }
    if (*end || (shift && v > UINT64_MAX >> shift))
        return TRACE_INDEX_CACHE_MAX;
    return (uint64_t)v << shift;
}

/* An index of the cache directory, as pruning sees it. */
struct centry {
    char *name;
    uint64_t size;
    struct timespec used; /* the later of its mtime (written) and atime (last opened) */
};

static int by_use(const void *a, const void *b)
{
    const struct centry *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec)
        return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    if (x->used.tv_nsec != y->used.tv_nsec)
        return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Whether the index at fd (of this version) names a trace that no longer exists. An index of
 * another version, or one that does not read, is not judged here (only by its last use). */
static bool orphan(int fd)
{
    struct ihdr h;
    uint64_t n;
    if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
        memcmp(h.magic, MAGIC, sizeof(MAGIC)) != 0 || h.version != INDEX_VERSION ||
        h.header_hash !=
            trace_ichk_block((const unsigned char *)&h, offsetof(struct ihdr, header_hash), 0) ||
        pread(fd, &n, sizeof(n), sizeof(h)) != (ssize_t)sizeof(n) || n == 0 || n >= PATH_MAX)
        return false;
    char real[PATH_MAX];
    if (pread(fd, real, n, sizeof(h) + sizeof(n)) != (ssize_t)n)
        return false;
    real[n] = '\0';
    struct stat st;
    return real[0] == '/' && stat(real, &st) != 0 && errno == ENOENT;
}

/* Whether name is a cache file's of extension ext (NAME-HASH.idx for an index, .vrd for
 * the verdict kept beside it; HASH of 16 hex digits: *tmp false) or that of one being
 * written (NAME-HASH.idx.tmp.XXXXXX: *tmp true); nothing else in the directory is ever
 * touched. */
static bool cache_name(const char *name, const char *ext, bool *tmp)
{
    const char *x = strstr(name, ext);
    while (x && strstr(x + 1, ext))
        x = strstr(x + 1, ext);
    if (!x || x - name < 18 || x[-17] != '-')
        return false;
    for (int i = 16; i > 0; i--)
        if (!strchr("0123456789abcdef", x[-i]))
            return false;
    *tmp = x[4] != '\0';
    return !*tmp || (strncmp(x + 4, ".tmp.", 5) == 0 && strlen(x + 9) == 6);
}

/* The name of the file of extension ext kept beside index name (NAME-HASH.idx). */
static void companion(const char *name, const char *ext, char *out, size_t size)
{
    snprintf(out, size, "%.*s%s", (int)(strlen(name) - 4), name, ext);
}

int trace_index_prune(const char *dir, uint64_t limit, const char *keep)
{
    DIR *dh = opendir(dir);
    if (!dh)
        return 0;
    const char *keep_base = keep ? strrchr(keep, '/') : NULL;
    keep_base = keep_base ? keep_base + 1 : keep;
    struct centry *e = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    int removed = 0;
    time_t now = time(NULL);
    struct centry *vrd = NULL; /* the verdicts kept beside indexes (trace/cache/vcache.h) */
    size_t nv = 0, capv = 0;
    struct dirent *de;
    while ((de = readdir(dh))) {
        bool tmp, verdict = false;
        if (!cache_name(de->d_name, ".idx", &tmp) &&
            !(verdict = cache_name(de->d_name, ".vrd", &tmp)))
            continue;
        /* not marking it as read: its access time says when it was last used */
        int fd = openat(dirfd(dh), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOATIME);
        if (fd < 0 && errno == EPERM) /* O_NOATIME is for the file's owner */
            fd = openat(dirfd(dh), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        bool kept = keep_base && strcmp(de->d_name, keep_base) == 0;
        /* a writer that died left its temporary file: one untouched for a day goes (a live
         * writer touches its own every second or so) */
        bool dead = tmp ? now - st.st_mtime > TRACE_INDEX_TMP_AGE : !kept && !verdict && orphan(fd);
        close(fd);
        if (dead) {
            removed += unlinkat(dirfd(dh), de->d_name, 0) == 0;
            continue;
        }
        if (tmp)
            continue;
        if (verdict) { /* (judged with its index, below) */
            if (nv == capv) {
                capv = capv ? 2 * capv : 16;
                vrd = sim_xreallocarray(vrd, capv, sizeof(*vrd));
            }
            vrd[nv++] =
                (struct centry){sim_xasprintf("%s", de->d_name), (uint64_t)st.st_size, st.st_mtim};
            continue;
        }
        total += (uint64_t)st.st_size;
        if (kept)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            e = sim_xreallocarray(e, cap, sizeof(*e));
        }
        bool read_later =
            st.st_atim.tv_sec > st.st_mtim.tv_sec ||
            (st.st_atim.tv_sec == st.st_mtim.tv_sec && st.st_atim.tv_nsec > st.st_mtim.tv_nsec);
        e[n++] = (struct centry){sim_xasprintf("%s", de->d_name), (uint64_t)st.st_size,
                                 read_later ? st.st_atim : st.st_mtim};
    }
    /* a verdict goes with its index: counted in its size, removed with it, and removed when
     * its index is gone */
    for (size_t v = 0; v < nv; v++) {
        char idx[NAME_MAX + 1];
        companion(vrd[v].name, ".idx", idx, sizeof(idx));
        size_t i = 0;
        while (i < n && strcmp(e[i].name, idx) != 0)
            i++;
        struct stat st;
        if (i < n)
            e[i].size += vrd[v].size;
        if (i < n || (keep_base && strcmp(idx, keep_base) == 0 &&
                      fstatat(dirfd(dh), idx, &st, AT_SYMLINK_NOFOLLOW) == 0))
            total += vrd[v].size;
        else
            removed += unlinkat(dirfd(dh), vrd[v].name, 0) == 0;
        free(vrd[v].name);
    }
    free(vrd);
    if (n)
        qsort(e, n, sizeof(*e), by_use);
    /* least recently used first; unlinking an index another process has mapped is safe: the
     * name goes, the file stays whole until its last mapping is gone */
    for (size_t i = 0; i < n && total > limit; i++)
        if (unlinkat(dirfd(dh), e[i].name, 0) == 0) {
            char v[NAME_MAX + 1];
            companion(e[i].name, ".vrd", v, sizeof(v));
            removed += unlinkat(dirfd(dh), v, 0) == 0;
            total -= e[i].size;
            removed++;
        }
    for (size_t i = 0; i < n; i++)
        free(e[i].name);
    free(e);
    closedir(dh);
    return removed;
}

/* A plain regular file, the only kind an index serves. */
static bool cacheable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char head[4];
    ssize_t n = pread(fd, head, sizeof(head), 0);
    close(fd);
    return n > 0 && trace_z_kind_of_bytes(head, (size_t)n) == TRACE_Z_NONE;
}

/* The write of an index left to a thread (trace_index_load_later). */
struct trace_index_job {
    char *path, *index, *tmp; /* owned */
    struct trace_index_counts counts;
    const struct trace_model *m;
    int fd, rc;
    struct diag d;
    atomic_bool stop, done;
    const atomic_uint *busy; /* trace_index_job_pause_while's, or NULL */
    bool tried, started;
    pthread_t th;
};

/* Write the index of m from the trace at path (counts c) and prune the cache; *hash (may be
 * NULL) the checksum written. 0, or a negative code with d filled. */
static int write_pruned(const struct trace_model *m, const char *path,
                        const struct trace_index_counts *c, const char *index, int fd,
                        const char *tmp, struct diag *d, uint64_t *hash, const atomic_bool *stop,
                        const atomic_uint *busy)
{
    int rc = index_fill(m, path, c, fd, tmp, index, d, hash, stop, busy);
    if (rc < 0)
        return rc;
    char *dir = sim_xasprintf("%s", index);
    *strrchr(dir, '/') = '\0';
    trace_index_prune(dir, trace_index_cache_limit(), index);
    free(dir);
    return 0;
}

/* trace_index_load, or with job (not NULL) trace_index_load_later. */
static int load(const char *path, bool no_cache, struct trace_model **out,
                struct trace_index_counts *c, enum trace_index_use *use, struct diag *d,
                const struct trace_load_progress *p, struct trace_index_job **job)
{
    enum trace_index_use u = TRACE_INDEX_UNUSED;
    char *index = no_cache || !cacheable(path) ? NULL : trace_index_path(path);
    struct trace_index_counts counts = {0, 0};
    int rc;
    if (job)
        *job = NULL;
    if (index) {
        struct diag why;
        rc = trace_index_read(path, index, out, &counts, &why);
        if (rc == 0) {
            u = TRACE_INDEX_HIT;
            /* its last use, for pruning: its access time (its mtime says when it was written) */
            struct timespec t[2] = {{.tv_nsec = UTIME_NOW}, {.tv_nsec = UTIME_OMIT}};
            utimensat(AT_FDCWD, index, t, 0);
            goto out;
        }
        u = rc == -SIM_ENOENT ? TRACE_INDEX_WRITTEN : TRACE_INDEX_REBUILT;
    }
    struct trace_report *r = trace_report_new(0);
    rc = trace_load_file_progress(path, r, out, d, p);
    counts = (struct trace_index_counts){trace_report_errors(r), trace_report_warnings(r)};
    trace_report_free(r);
    if (rc == 0 && index && job) {
        struct trace_index_job *j = sim_xcalloc(1, sizeof(*j));
        j->path = sim_xstrdup(path);
        j->index = index;
        j->counts = counts;
        j->fd = -1;
        j->rc = diag_set(&j->d, SIM_EINVAL, j->index, 0, 0, NULL, "not written");
        atomic_init(&j->stop, false);
        atomic_init(&j->done, false);
        *job = j;
        index = NULL;
    } else if (rc == 0 && index) {
        struct diag wd;
        struct trace_model *mapped;
        uint64_t hash;
        char *tmp;
        int fd;
        if (index_create(index, &tmp, &fd, &wd) < 0 || !tmp) {
            u = TRACE_INDEX_FAILED;
        } else if (write_pruned(*out, path, &counts, index, fd, tmp, &wd, &hash, NULL, NULL) < 0) {
            free(tmp);
            u = TRACE_INDEX_FAILED;
        } else {
            free(tmp);
            /* the same model, its arrays in the page cache rather than the process's heap:
             * what the next open gets, and the memory of a big trace given back now (first,
             * so that the two never add up; should the index just written not read back,
             * the trace is loaded again) */
            trace_model_free(*out);
            *out = NULL;
#ifdef __GLIBC__
            malloc_trim(0); /* the parse's heap back to the system (some 40 MB at 10 M events
                               are left free in the heap otherwise), before more is mapped */
#endif
            if (index_read(path, index, &mapped, NULL, &wd, &hash) == 0) {
                *out = mapped;
            } else {
                u = TRACE_INDEX_FAILED;
                r = trace_report_new(0);
                rc = trace_load_file_progress(path, r, out, d, p);
                trace_report_free(r);
            }
        }
    }
out:
    free(index);
    if (c)
        *c = counts;
    if (use)
        *use = u;
    return rc;
}

int trace_index_load(const char *path, bool no_cache, struct trace_model **out,
                     struct trace_index_counts *c, enum trace_index_use *use, struct diag *d,
                     const struct trace_load_progress *p)
{
    return load(path, no_cache, out, c, use, d, p, NULL);
}

int trace_index_load_later(const char *path, bool no_cache, struct trace_model **out,
                           struct trace_index_counts *c, enum trace_index_use *use, struct diag *d,
                           const struct trace_load_progress *p, struct trace_index_job **job)
{
    return load(path, no_cache, out, c, use, d, p, job);
}

static void *job_run(void *arg)
{
    struct trace_index_job *j = arg;
    /* behind what a person waits for: keys, frames and analyses come first */
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), TRACE_INDEX_JOB_NICE) != 0)
        errno = 0;
    /* NPUSCOPE_TEST_INDEX_DELAY_MS: tests make a small index take a while to write */
    const char *delay = getenv("NPUSCOPE_TEST_INDEX_DELAY_MS");
    for (long ms = delay ? strtol(delay, NULL, 10) : 0; ms > 0 && !atomic_load(&j->stop); ms -= 10)
        usleep(10000);
    j->rc = write_pruned(j->m, j->path, &j->counts, j->index, j->fd, j->tmp, &j->d, NULL, &j->stop,
                         j->busy);
    atomic_store(&j->done, true);
    return NULL;
}

void trace_index_job_pause_while(struct trace_index_job *j, const atomic_uint *busy)
{
    if (j && !j->tried)
        j->busy = busy;
}

int trace_index_job_start(struct trace_index_job *j, const struct trace_model *m)
{
    if (j->tried || atomic_load(&j->stop))
        return 0; /* started once already (or failed to), or given up */
    j->tried = true;
    j->m = m;
    j->rc = index_create(j->index, &j->tmp, &j->fd, &j->d);
    if (j->rc < 0 || !j->tmp)
        return j->rc;
    j->started = true;
    if (pthread_create(&j->th, NULL, job_run, j) != 0) { /* written here, then */
        j->started = false;
        job_run(j);
        return j->rc;
    }
    return 0;
}

void trace_index_job_abandon(struct trace_index_job *j)
{
    if (!j)
        return;
    atomic_store(&j->stop, true);
    if (j->tmp && !atomic_load(&j->done))
        unlink(j->tmp); /* a rename after this fails: the index never appears */
}

int trace_index_job_finish(struct trace_index_job *j, struct diag *d)
{
    if (!j)
        return 0;
    if (j->started)
        pthread_join(j->th, NULL);
    int rc = j->rc;
    if (rc < 0 && d)
        *d = j->d;
    free(j->path);
    free(j->index);
    free(j->tmp);
    free(j);
    return rc;
}
