/*
 * The verdict kept beside a trace's index (see vcache.h): a fixed header (the format, the
 * build's ID, the trace's key, the budget of details, the model's counts, the payload's
 * length and checksum), then the payload: each item, the run's first, then the launches' in
 * their order, field by field in native byte order (the cache is this machine's), with the
 * identity of its region (checked against the launches split again), each interned name
 * with its text (checked against the model's), and its critical path's steps.
 */
#include "trace/cache/vcache.h"

#include "sim/util/fileio.h"
#include "sim/util/xalloc.h"
#include "trace/cache/index.h"
#include "trace/model/progress.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char MAGIC[8] = {'N', 'P', 'S', 'V', 'R', 'D', '1', '\n'};

enum {
    FORMAT = 1,
    STEP_BYTES = 3 * 8 + 2 + 2 * 8, /* a path step as written */
};

/* ---- the build ---------------------------------------------------------------------------- */

/* dl_iterate_phdr's callback: the first object is the executable, its GNU build ID note
 * hashed into *arg (left 0 when it has none). */
static int build_note(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        /* NOLINTNEXTLINE(performance-no-int-to-ptr): dl_iterate_phdr gives an integer base */
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        size_t align = ph->p_align == 8 ? 8 : 4, off = 0;
        while (off + sizeof(ElfW(Nhdr)) <= ph->p_memsz) {
            ElfW(Nhdr) nh;
            memcpy(&nh, p + off, sizeof(nh));
            size_t name = off + sizeof(nh);
            size_t desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
            size_t next = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
            if (next > ph->p_memsz)
                break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp(p + name, "GNU", 4) == 0 && nh.n_descsz) {
                *(uint64_t *)arg = trace_index_hash(p + desc, nh.n_descsz, 0x6275696c64u) | 1;
                return 1;
            }
            off = next;
        }
    }
    return 1;
}

/* The build of npuscope running: a hash of its build ID, 0 when it has none. */
static uint64_t build_id(void)
{
    uint64_t h = 0;
    dl_iterate_phdr(build_note, &h);
    return h;
}

/* ---- writing ------------------------------------------------------------------------------ */

struct vw {
    unsigned char *p; /* owned */
    size_t n, cap;
};

static void put(struct vw *w, const void *x, size_t n)
{
    if (w->cap - w->n < n) {
        w->cap = w->cap + n > 2 * w->cap ? w->cap + n : 2 * w->cap;
        w->p = sim_xrealloc(w->p, w->cap);
    }
    memcpy(w->p + w->n, x, n);
    w->n += n;
}

static void put_u64(struct vw *w, uint64_t v)
{
    put(w, &v, sizeof(v));
}

static void put_u32(struct vw *w, uint32_t v)
{
    put(w, &v, sizeof(v));
}

static void put_u8(struct vw *w, uint8_t v)
{
    put(w, &v, sizeof(v));
}

static void put_f64(struct vw *w, double v)
{
    put(w, &v, sizeof(v));
}

/* An interned name: its id, then (unless none) its text. */
static void put_name(struct vw *w, const struct trace_model *m, uint32_t id)
{
    put_u32(w, id);
    if (id == TRACE_NO_STR)
        return;
    const char *s = trace_model_str(m, id);
    size_t n = strlen(s);
    put_u32(w, (uint32_t)n);
    put(w, s, n);
}

static void put_item(struct vw *w, const struct trace_model *m, const struct trace_verdict_item *it)
{
    const struct trace_region *g = it->region;
    put_u32(w, (uint32_t)g->cmdq_id);
    put_u64(w, g->start);
    put_u64(w, g->end);
    put_u64(w, g->all.ops);
    put_u8(w, it->running);
    put_u8(w, (uint8_t)it->bound);
    put_u8(w, (uint8_t)it->heuristic);
    put_name(w, m, it->link);
    put_name(w, m, it->hbm);
    put_name(w, m, it->busiest_link);
    put_name(w, m, it->host_link);
    put_f64(w, it->share);
    put_u64(w, it->length);
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
        put_f64(w, it->busy[e]);
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        put_f64(w, it->time[k]);
    put_f64(w, it->flops);
    put_f64(w, it->peak_flops);
    put_u64(w, it->dram_bytes);
    put_f64(w, it->peak_bw);
    put_f64(w, it->hbm_util);
    put_f64(w, it->link_util);
    put_f64(w, it->host_util);
    put_u64(w, it->waits);
    for (int d = 0; d < TRACE_DEP_COUNT; d++)
        put_u64(w, it->wait_by[d]);
    put_u64(w, it->longest_wait_ev);
    put_u64(w, it->longest_wait);
    put_u32(w, it->missing);
    put_u64(w, it->dma_ops);
    put_u64(w, it->dma_bytes);
    const struct trace_critpath *p = &it->path;
    put_u64(w, p->n);
    put_u64(w, p->start);
    put_u64(w, p->end);
    put_u64(w, p->ops);
    put_u64(w, p->decoded);
    put_u8(w, (uint8_t)(p->with_addresses | p->with_tiles << 1 | p->with_explicit << 2 |
                        p->truncated << 3));
    put_u32(w, p->spaces.n);
    for (unsigned s = 0; s < p->spaces.n && s < TRACE_OPINFO_MAX_SPACES; s++)
        put(w, p->spaces.names[s], sizeof(p->spaces.names[s]));
    for (size_t s = 0; s < p->n; s++) {
        const struct trace_path_step *st = &p->steps[s];
        unsigned char b[STEP_BYTES];
        memcpy(b, &st->ev, 8);
        memcpy(b + 8, &st->pred, 8);
        memcpy(b + 16, &st->wait, 8);
        b[24] = (unsigned char)st->why;
        b[25] = st->range.space;
        memcpy(b + 26, &st->range.lo, 8);
        memcpy(b + 34, &st->range.hi, 8);
        put(w, b, sizeof(b));
    }
}

char *trace_vcache_path(const char *path)
{
    char *idx = trace_index_path(path);
    size_t n = idx ? strlen(idx) : 0;
    if (n < 4 || strcmp(idx + n - 4, ".idx") != 0) {
        free(idx);
        return NULL;
    }
    memcpy(idx + n - 4, ".vrd", 4);
    return idx;
}

/* The budget of details o says (0: the default). */
static uint64_t budget(const struct trace_verdict_opts *o)
{
    return o ? o->max_decode : 0;
}

/* Write the n bytes at p to fd; false when it fails. */
static bool write_all(int fd, const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        c += k, n -= (size_t)k;
    }
    return true;
}

/* A verdict packed to be kept: the file it goes to, the temporary file it is written to
 * first, its header and payload. */
struct trace_vcache_pack {
    char *file, *tmp; /* owned */
    int fd;           /* the temporary file, once made (trace_vcache_pack_create); else -1 */
    struct trace_vcache_header h;
    struct vw w;
};

struct trace_vcache_pack *trace_vcache_pack_begin(const struct trace_verdict *v, const char *path,
                                                  const struct trace_verdict_opts *o,
                                                  struct diag *d)
{
    struct trace_vcache_header h = {.format = FORMAT, .build = build_id(), .max_decode = budget(o)};
    memcpy(h.magic, MAGIC, sizeof(MAGIC));
    if (!h.build) {
        diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                 "verdict not kept: this build of npuscope has no build ID");
        return NULL;
    }
    bool checked = v->run.checked;
    size_t steps = v->run.path.n;
    for (size_t i = 0; i < v->nlaunches; i++)
        checked |= v->launches[i].checked, steps += v->launches[i].path.n;
    if (checked || !v->rs_launch || v->nlaunches != trace_regions_count(v->rs_launch)) {
        diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                 "verdict not kept: checked by an experiment, or incomplete");
        return NULL;
    }
    if (trace_index_key(path, &h.key, d) < 0)
        return NULL;
    char *file = trace_vcache_path(path);
    if (!file) {
        diag_set(d, SIM_ENOENT, path, 0, 0, NULL, "verdict not kept: no cache directory");
        return NULL;
    }
    struct trace_vcache_pack *k = sim_xcalloc(1, sizeof(*k));
    k->file = file;
    k->fd = -1;
    /* a name of its own (NAME.tmp. and six letters or digits, as the cache's temporary files
     * are named), made here: whoever holds the pack may remove it while it is written */
    static _Atomic uint64_t packs;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)getpid() << 40 ^ (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^
                 atomic_fetch_add(&packs, 1) * 0x9E3779B97F4A7C15ull;
    x = trace_index_hash(&x, sizeof(x), 0);
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    char six[7];
    for (int i = 0; i < 6; i++, x /= 62)
        six[i] = abc[x % 62];
    six[6] = '\0';
    k->tmp = sim_xasprintf("%s.tmp.%s", file, six);
    /* room for all of it at once (an item's fields and names take a few hundred bytes): a
     * path of a million steps is not copied as it grows */
    k->w.cap = (v->nlaunches + 1) * 1024 + steps * STEP_BYTES;
    h.events = trace_model_event_count(v->m);
    h.strings = trace_model_str_count(v->m);
    h.launches = v->nlaunches;
    k->h = h;
    return k;
}

void trace_vcache_pack_fill(struct trace_vcache_pack *k, const struct trace_verdict *v)
{
    if (k->w.p)
        return;
    k->w.p = sim_xmalloc(k->w.cap);
    put_item(&k->w, v->m, &v->run);
    for (size_t i = 0; i < v->nlaunches; i++)
        put_item(&k->w, v->m, &v->launches[i]);
    k->h.payload_len = k->w.n;
}

struct trace_vcache_pack *trace_vcache_pack(const struct trace_verdict *v, const char *path,
                                            const struct trace_verdict_opts *o, struct diag *d)
{
    struct trace_vcache_pack *k = trace_vcache_pack_begin(v, path, o, d);
    if (k)
        trace_vcache_pack_fill(k, v);
    return k;
}

int trace_vcache_pack_create(struct trace_vcache_pack *k, struct diag *d)
{
    if (k->fd >= 0)
        return 0;
    trace_index_make_dirs(k->tmp);
    k->fd = open(k->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (k->fd < 0)
        return diag_set(d, SIM_EIO, k->tmp, 0, 0, NULL, "cannot create: %s", strerror(errno));
    return 0;
}

/* h made to hold the n bytes of payload p: their length and checksum, then its own. */
static void seal(struct trace_vcache_header *h, const void *p, size_t n)
{
    h->payload_len = n;
    h->payload_hash = trace_index_hash(p, n, TRACE_VCACHE_PAYLOAD_SEED);
    h->header_hash = trace_index_hash(h, offsetof(struct trace_vcache_header, header_hash),
                                      TRACE_VCACHE_HEADER_SEED);
}

int trace_vcache_write(struct trace_vcache_pack *k, struct diag *d)
{
    if (!k)
        return 0;
    if (!k->w.p)
        return diag_set(d, SIM_EINVAL, k->file, 0, 0, NULL, "cannot write: nothing packed");
    struct trace_vcache_header *h = &k->h;
    seal(h, k->w.p, k->w.n);
    int rc = trace_vcache_pack_create(k, d);
    if (rc < 0)
        return rc;
    /* (a write given up meanwhile removed the temporary file: the rename fails) */
    bool ok = write_all(k->fd, h, sizeof(*h)) && write_all(k->fd, k->w.p, k->w.n);
    if (close(k->fd) != 0)
        ok = false;
    k->fd = -1;
    if (ok && rename(k->tmp, k->file) != 0)
        ok = false;
    if (!ok) {
        rc = diag_set(d, SIM_EIO, k->file, 0, 0, NULL, "cannot write: %s", strerror(errno));
        unlink(k->tmp);
    }
    return rc;
}

const char *trace_vcache_pack_tmp(const struct trace_vcache_pack *k)
{
    return k->tmp;
}

void trace_vcache_pack_free(struct trace_vcache_pack *k)
{
    if (!k)
        return;
    if (k->fd >= 0) { /* made, never written: nothing of it left */
        close(k->fd);
        unlink(k->tmp);
    }
    free(k->file);
    free(k->tmp);
    free(k->w.p);
    free(k);
}

int trace_vcache_save(const struct trace_verdict *v, const char *path,
                      const struct trace_verdict_opts *o, struct diag *d)
{
    struct trace_vcache_pack *k = trace_vcache_pack(v, path, o, d);
    int rc = k ? trace_vcache_write(k, d) : -SIM_EINVAL;
    trace_vcache_pack_free(k);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* A cursor over the payload; bad once it ran past the end or met something out of range
 * (every read after gives zeros). */
struct vr {
    const unsigned char *p;
    size_t n, at;
    bool bad;
    const struct trace_model *m;
};

static void get(struct vr *r, void *x, size_t n)
{
    if (r->bad || r->n - r->at < n) {
        r->bad = true;
        memset(x, 0, n);
        return;
    }
    memcpy(x, r->p + r->at, n);
    r->at += n;
}

static uint64_t get_u64(struct vr *r)
{
    uint64_t v;
    get(r, &v, sizeof(v));
    return v;
}

static uint32_t get_u32(struct vr *r)
{
    uint32_t v;
    get(r, &v, sizeof(v));
    return v;
}

static uint8_t get_u8(struct vr *r)
{
    uint8_t v;
    get(r, &v, sizeof(v));
    return v;
}

static double get_f64(struct vr *r)
{
    double v;
    get(r, &v, sizeof(v));
    return v;
}

/* A value of an enumeration of count values. */
static unsigned get_enum(struct vr *r, unsigned count)
{
    unsigned v = get_u8(r);
    r->bad |= v >= count;
    return v < count ? v : 0;
}

/* An interned name: one of the model's, with the same text. */
static uint32_t get_name(struct vr *r)
{
    uint32_t id = get_u32(r);
    if (id == TRACE_NO_STR || r->bad)
        return TRACE_NO_STR;
    uint32_t n = get_u32(r);
    if (r->bad || id >= trace_model_str_count(r->m) || n > r->n - r->at) {
        r->bad = true;
        return TRACE_NO_STR;
    }
    const char *s = trace_model_str(r->m, id);
    r->bad |= strlen(s) != n || memcmp(s, r->p + r->at, n) != 0;
    r->at += n;
    return id;
}

/* An event of the model (or, with none allowed, UINT64_MAX). */
static uint64_t get_event(struct vr *r, bool none)
{
    uint64_t e = get_u64(r);
    r->bad |= e >= trace_model_event_count(r->m) && !(none && e == UINT64_MAX);
    return e;
}

/* Item it of region g (the region it was judged over must be g). */
static void get_item(struct vr *r, struct trace_verdict_item *it, const struct trace_region *g)
{
    r->bad |= (int32_t)get_u32(r) != g->cmdq_id;
    r->bad |= get_u64(r) != g->start;
    r->bad |= get_u64(r) != g->end;
    r->bad |= get_u64(r) != g->all.ops;
    it->region = g;
    it->running = get_u8(r) != 0;
    it->bound = (enum trace_bound)get_enum(r, TRACE_BOUND_COUNT);
    it->heuristic = (enum trace_bound)get_enum(r, TRACE_BOUND_COUNT);
    it->link = get_name(r);
    it->hbm = get_name(r);
    it->busiest_link = get_name(r);
    it->host_link = get_name(r);
    it->share = get_f64(r);
    it->length = get_u64(r);
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
        it->busy[e] = get_f64(r);
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        it->time[k] = get_f64(r);
    it->flops = get_f64(r);
    it->peak_flops = get_f64(r);
    it->dram_bytes = get_u64(r);
    it->peak_bw = get_f64(r);
    it->hbm_util = get_f64(r);
    it->link_util = get_f64(r);
    it->host_util = get_f64(r);
    it->waits = get_u64(r);
    for (int d = 0; d < TRACE_DEP_COUNT; d++)
        it->wait_by[d] = get_u64(r);
    it->longest_wait_ev = get_event(r, true);
    it->longest_wait = get_u64(r);
    it->missing = get_u32(r);
    it->dma_ops = get_u64(r);
    it->dma_bytes = get_u64(r);
    struct trace_critpath *p = &it->path;
    trace_spaces_init(&p->spaces);
    uint64_t n = get_u64(r);
    p->start = get_u64(r);
    p->end = get_u64(r);
    p->ops = get_u64(r);
    p->decoded = get_u64(r);
    unsigned flags = get_u8(r);
    p->with_addresses = flags & 1, p->with_tiles = flags >> 1 & 1;
    p->with_explicit = flags >> 2 & 1, p->truncated = flags >> 3 & 1;
    r->bad |= flags > 15;
    p->spaces.n = get_u32(r);
    r->bad |= p->spaces.n > TRACE_OPINFO_MAX_SPACES;
    for (unsigned s = 0; s < p->spaces.n && !r->bad; s++) {
        get(r, p->spaces.names[s], sizeof(p->spaces.names[s]));
        r->bad |= memchr(p->spaces.names[s], '\0', sizeof(p->spaces.names[s])) == NULL;
    }
    if (r->bad || n > (r->n - r->at) / STEP_BYTES) { /* (not more steps than bytes left) */
        r->bad = true;
        return;
    }
    p->n = (size_t)n;
    p->steps = sim_xcalloc(n ? n : 1, sizeof(*p->steps));
    for (size_t s = 0; s < p->n; s++) {
        struct trace_path_step *st = &p->steps[s];
        st->ev = get_event(r, false);
        st->pred = get_event(r, true);
        st->wait = get_u64(r);
        st->why = (enum trace_dep)get_enum(r, TRACE_DEP_COUNT);
        st->range.space = (uint8_t)get_enum(r, TRACE_OPINFO_MAX_SPACES);
        st->range.lo = get_u64(r);
        st->range.hi = get_u64(r);
    }
}

/* The n bytes of the file at fd from byte from into a new buffer; NULL when they cannot be
 * read. */
static unsigned char *read_all(int fd, off_t from, size_t n)
{
    unsigned char *p = sim_xmalloc(n ? n : 1);
    if (!sim_pread_all(fd, p, n, (uint64_t)from)) {
        free(p);
        return NULL;
    }
    return p;
}

int trace_vcache_reseal(const char *file, struct diag *d)
{
    int fd = open(file, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return diag_set(d, SIM_EIO, file, 0, 0, NULL, "cannot open: %s", strerror(errno));
    struct stat st;
    struct trace_vcache_header h;
    unsigned char *p = NULL;
    int rc = 0;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < sizeof(h) ||
        pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
        rc = diag_set(d, SIM_EINVAL, file, 0, 0, NULL, "shorter than its header");
    else if (!(p = read_all(fd, sizeof(h), (size_t)st.st_size - sizeof(h))))
        rc = diag_set(d, SIM_EIO, file, 0, 0, NULL, "cannot read: %s", strerror(errno));
    if (rc == 0) {
        seal(&h, p, (size_t)st.st_size - sizeof(h));
        if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
            rc = diag_set(d, SIM_EIO, file, 0, 0, NULL, "cannot write: %s", strerror(errno));
    }
    free(p);
    close(fd);
    return rc;
}

/* Not served: d says why. */
static struct trace_verdict *not_served(struct diag *d, enum sim_err code, const char *file,
                                        const char *why)
{
    diag_set(d, code, file, 0, 0, NULL, "kept verdict not used: %s", why);
    return NULL;
}

struct trace_verdict *trace_vcache_load(const struct trace_model *m, const char *path,
                                        const struct trace_verdict_opts *o, struct diag *d)
{
    char *file = trace_vcache_path(path);
    if (!file)
        return not_served(d, SIM_ENOENT, path, "no cache directory");
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    struct trace_vcache_header h;
    const char *why = NULL;
    enum sim_err code = SIM_EINVAL;
    unsigned char *payload = NULL;
    struct trace_index_key key;
    if (fd < 0)
        why = "none kept", code = SIM_ENOENT;
    else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(h) ||
             pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
             memcmp(h.magic, MAGIC, sizeof(MAGIC)) != 0 ||
             h.header_hash != trace_index_hash(&h,
                                               offsetof(struct trace_vcache_header, header_hash),
                                               TRACE_VCACHE_HEADER_SEED))
        why = "not a verdict npuscope kept, or damaged";
    else if (h.format != FORMAT || h.build != build_id() || !h.build)
        why = "kept by another build of npuscope";
    else if (trace_index_key(path, &key, NULL) < 0 || memcmp(&key, &h.key, sizeof(key)) != 0)
        why = "the trace changed since";
    else if (h.max_decode != budget(o) || h.events != trace_model_event_count(m) ||
             h.strings != trace_model_str_count(m))
        why = "kept for another model or budget";
    else if (h.payload_len != (uint64_t)st.st_size - sizeof(h) ||
             !(payload = read_all(fd, sizeof(h), (size_t)h.payload_len)) ||
             trace_index_hash(payload, (size_t)h.payload_len, TRACE_VCACHE_PAYLOAD_SEED) !=
                 h.payload_hash)
        why = "damaged (its checksum does not hold)";
    if (fd >= 0)
        close(fd);
    if (why) {
        free(payload);
        struct trace_verdict *none = not_served(d, code, file, why);
        free(file);
        return none;
    }
    struct trace_verdict *v = trace_verdict_split(m, o ? o->progress : NULL);
    if (!v) {
        free(payload);
        not_served(d, SIM_ESTATE, file, "cancelled");
        free(file);
        return NULL;
    }
    size_t nl = trace_regions_count(v->rs_launch);
    struct vr r = {.p = payload, .n = (size_t)h.payload_len, .m = m, .bad = h.launches != nl};
    v->launches = sim_xcalloc(nl ? nl : 1, sizeof(*v->launches));
    v->nlaunches = nl;
    get_item(&r, &v->run, &v->run_region);
    for (size_t i = 0; i < nl && !r.bad; i++)
        get_item(&r, &v->launches[i], trace_regions_get(v->rs_launch, i));
    free(payload);
    if (r.bad || r.at != r.n) {
        trace_verdict_free(v);
        not_served(d, SIM_EINVAL, file, "it does not fit the trace's model");
        free(file);
        return NULL;
    }
    free(file);
    trace_progress_step(o ? o->progress : NULL, "verdict: kept from an earlier view", 0);
    return v;
}
