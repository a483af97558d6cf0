/*
 * The phase-2 data executor (see exec.h). A run decodes the records of one t_start group at
 * a time into ops with read and write ranges, levels them into waves by their conflicts and
 * dependency_ids, and runs each wave in four steps: prepare on the caller's thread (read
 * the inputs, allocate the outputs), compute on the worker pool (GEMM batches split over
 * the workers, other ops one task each; workers touch raw buffers only, never a reference
 * count or the store), the op hook, then commit on the caller's thread (write the results
 * to the store). Deferring every commit to the end of its wave keeps the inputs of a wave
 * intact while the hook looks at them.
 */
#include "sim/phase2/exec.h"

#include "sim/data/memstore.h"
#include "sim/data/value.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Ops of one t_start group are levelled in chunks of at most this many (levelling is
 * quadratic in the chunk; a bigger group is rare and runs chunk after chunk). */
enum { CHUNK_MAX = 512 };

/* A wave whose work is below this many element operations (a multiply-add of a GEMM, an
 * element of a math op's input) runs on the caller's thread: waking a worker costs more. */
enum { PARALLEL_MIN_WORK = 1 << 15, TASK_MIN_WORK = 1 << 18 };

/* A dtype standing for "as stored" in copies that give no layout. */
#define AS_STORED ((enum sim_dtype)SIM_DTYPE_COUNT)

/* ---- spaces and their address index ----------------------------------------------------- */

/*
 * The store is keyed by exact address; reads and writes of a range inside a larger tensor
 * need the tensor whose bytes hold it. Each space keeps its keys sorted with their sizes,
 * maintained on every write the executor makes (nobody else writes its store).
 */
struct sentry {
    uint64_t addr;
    uint64_t nbytes;
};

/* A byte range [lo, hi). */
struct ival {
    uint64_t lo, hi;
};

struct space {
    char *name; /* owned */
    struct sentry *e;
    size_t n, cap;
    uint64_t max_nbytes; /* an upper bound of the sizes ever indexed */
    /* the bytes whose data phase 2 computed (a GEMM or math result, or a copy of one):
     * disjoint, sorted ranges */
    struct ival *dv;
    size_t dn, dcap;
};

/* ---- decoded ops ------------------------------------------------------------------------- */

struct range {
    uint32_t sid; /* space index */
    uint64_t lo, hi;
};

/* A tensor an op reads or writes: where and as what. */
struct operand {
    uint32_t sid;
    uint64_t addr;
    enum sim_dtype dtype; /* AS_STORED: the stored tensor's own layout (copies) */
    unsigned ndim;
    int64_t shape[SIM_MAX_DIMS];
    size_t nbytes;
    struct sim_tensor *snapshot; /* borrowed from the record's params, or NULL */
};

struct math_impl;

struct xop {
    size_t index; /* record index */
    const struct sim_op_record *rec;
    enum sim_exec_kind kind;
    bool memory_class; /* ordered before the others of its t_start (ADR-0052 A4) */

    unsigned n_in;
    struct operand in[SIM_EXEC_MAX_INPUTS];
    struct operand out;
    bool from_snapshot; /* copy: in[0] is the record's snapshot (decided at prepare) */
    bool move;          /* copy: the bytes are copied by a task (else shared) */
    bool derived;       /* the result is data phase 2 computed (decided at prepare) */

    struct sim_exec_gemm g;
    const struct math_impl *m;
    bool has_axis;
    int axis;

    unsigned n_reads;
    struct range reads[SIM_EXEC_MAX_INPUTS];
    struct range write;

    /* scheduling */
    size_t pos; /* position in its chunk */
    unsigned level;
    int64_t batch;

    /* a wave's data: references owned between prepare and commit */
    struct sim_tensor *tin[SIM_EXEC_MAX_INPUTS];
    struct sim_tensor *tout;
};

/* Per-record info kept for the whole run (the decoded ops live one group at a time). */
struct rinfo {
    struct sim_exec_op_info pub;
    size_t chunk; /* global chunk number, for dependency checks; SIZE_MAX: not scheduled */
};

/* ---- the worker pool --------------------------------------------------------------------- */

struct task {
    struct xop **ops; /* run one after the other */
    size_t n;
};

struct pool {
    pthread_t threads[SIM_EXEC_MAX_THREADS];
    unsigned n_threads; /* started, the caller not included */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    struct task *tasks; /* the current wave's, borrowed */
    size_t n_tasks, next, finished;
    bool quit;
};

struct sim_exec {
    struct sim_exec_opts opts;
    struct sim_memstore *store; /* owned snapshot */
    struct space *spaces;
    size_t n_spaces;

    sim_exec_op_fn hook;
    void *hook_ctx;

    struct rinfo *info; /* n_records */
    size_t n_records;
    struct sim_exec_stats stats;
    bool ran;

    struct pool pool;
    bool pool_started;

    /* where a param key was found last (records of one kind list their keys in the same
     * order), by the address of the key's string constant */
    struct {
        const char *key;
        size_t pos;
    } kcache[128];
};

/* ---- small helpers ----------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t shape_numel(unsigned ndim, const int64_t *shape)
{
    size_t n = 1;
    for (unsigned i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    return n;
}

static bool dtype_is_int(enum sim_dtype t)
{
    return !sim_dtype_is_float(t) && t != SIM_BOOL;
}

/* Fill d with an error about record r: "op #12 gemm_f16 on sip0.cube0.pe0.pe_gemm at
 * 120.5 ns: ...". */
static void op_error(struct diag *d, size_t index, const struct sim_op_record *r, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));
static void op_error(struct diag *d, size_t index, const struct sim_op_record *r, const char *fmt,
                     ...)
{
    char msg[SIM_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "op #%zu %s on %s at %g ns: %s", index, r->op_name,
             r->component_id, r->t_start, msg);
}

/* op_error as the value of a failing function (a constant the static analyzer sees). */
#define OP_FAIL(...) (op_error(__VA_ARGS__), -SIM_EINVAL)

/* ---- spaces ------------------------------------------------------------------------------ */

static uint32_t space_id(struct sim_exec *x, const char *name)
{
    for (size_t i = 0; i < x->n_spaces; i++)
        if (strcmp(x->spaces[i].name, name) == 0)
            return (uint32_t)i;
    x->spaces = sim_xreallocarray(x->spaces, x->n_spaces + 1, sizeof(*x->spaces));
    x->spaces[x->n_spaces] = (struct space){.name = sim_xstrdup(name)};
    return (uint32_t)x->n_spaces++;
}

/* First position whose addr >= addr. */
static size_t index_lower(const struct space *sp, uint64_t addr)
{
    size_t lo = 0, hi = sp->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp->e[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void index_set(struct space *sp, uint64_t addr, uint64_t nbytes)
{
    size_t i = index_lower(sp, addr);
    if (i < sp->n && sp->e[i].addr == addr) {
        sp->e[i].nbytes = nbytes;
    } else {
        if (sp->n == sp->cap) {
            sp->cap = sp->cap ? 2 * sp->cap : 64;
            sp->e = sim_xreallocarray(sp->e, sp->cap, sizeof(*sp->e));
        }
        memmove(&sp->e[i + 1], &sp->e[i], (sp->n - i) * sizeof(*sp->e));
        sp->e[i] = (struct sentry){addr, nbytes};
        sp->n++;
    }
    if (nbytes > sp->max_nbytes)
        sp->max_nbytes = nbytes;
}

/*
 * Provenance: phase 1 never holds computed data (compute results are pending, ADR-0020
 * D3), so a snapshot phase 1 took of bytes that phase 2 computes is stale. A copy whose
 * source phase 2 computed reads it live even when the record carries a snapshot; the
 * snapshot serves for data phase 1 had (ADR-0052 D4's race avoidance).
 */

/* Mark [lo, hi) as computed by phase 2 (derived) or not. */
static void derived_set(struct space *sp, uint64_t lo, uint64_t hi, bool derived)
{
    if (lo >= hi || (!derived && sp->dn == 0))
        return;
    /* keep the parts of existing ranges outside [lo, hi), then add [lo, hi) if derived */
    struct ival keep[2];
    size_t nk = 0, first = 0;
    while (first < sp->dn && sp->dv[first].hi <= lo)
        first++;
    size_t last = first;
    while (last < sp->dn && sp->dv[last].lo < hi) {
        if (sp->dv[last].lo < lo)
            keep[nk++] = (struct ival){sp->dv[last].lo, lo};
        if (sp->dv[last].hi > hi)
            keep[nk++] = (struct ival){hi, sp->dv[last].hi};
        last++;
    }
    struct ival add[3];
    size_t na = 0;
    if (derived) {
        /* merged with the kept parts and the touching neighbours below */
        uint64_t a = lo, b = hi;
        for (size_t k = 0; k < nk; k++) {
            a = keep[k].lo < a ? keep[k].lo : a;
            b = keep[k].hi > b ? keep[k].hi : b;
        }
        add[na++] = (struct ival){a, b};
    } else {
        for (size_t k = 0; k < nk; k++)
            add[na++] = keep[k];
    }
    size_t removed = last - first, need = sp->dn - removed + na;
    if (need > sp->dcap) {
        sp->dcap = need * 2 + 8;
        sp->dv = sim_xreallocarray(sp->dv, sp->dcap, sizeof(*sp->dv));
    }
    memmove(&sp->dv[first + na], &sp->dv[last], (sp->dn - last) * sizeof(*sp->dv));
    memcpy(&sp->dv[first], add, na * sizeof(*add));
    sp->dn = need;
}

/* True when some byte of [lo, hi) was computed by phase 2. */
static bool derived_any(const struct space *sp, uint64_t lo, uint64_t hi)
{
    size_t a = 0, b = sp->dn;
    while (a < b) { /* the first range ending after lo */
        size_t mid = a + (b - a) / 2;
        if (sp->dv[mid].hi <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    return a < sp->dn && sp->dv[a].lo < hi;
}

/*
 * The stored tensor whose bytes hold [addr, addr + n), other than one stored at addr with
 * exactly n bytes, or NULL; *key receives its address. Among several, the nearest below.
 */
static struct sim_tensor *find_container(struct sim_exec *x, uint32_t sid, uint64_t addr,
                                         uint64_t n, uint64_t *key)
{
    const struct space *sp = &x->spaces[sid];
    uint64_t end = addr + n;
    /* a holder starts at or below addr and no lower than end - max_nbytes */
    uint64_t floor = end > sp->max_nbytes ? end - sp->max_nbytes : 0;
    for (size_t i = index_lower(sp, addr + 1); i-- > 0;) {
        const struct sentry *e = &sp->e[i];
        if (e->addr < floor)
            break;
        if (e->addr + e->nbytes < end || (e->addr == addr && e->nbytes == n))
            continue;
        struct sim_tensor *t = sim_memstore_get(x->store, sp->name, e->addr);
        if (t && t->nbytes == e->nbytes) {
            *key = e->addr;
            return t;
        }
    }
    return NULL;
}

/* A tensor viewing n bytes of t's data at byte offset off, as dtype and shape (sharing
 * them: a copy of part of a tensor costs nothing, as a copy of a whole one). */
static struct sim_tensor *offset_view(struct sim_tensor *t, size_t off, enum sim_dtype dtype,
                                      unsigned ndim, const int64_t *shape, size_t nbytes)
{
    struct sim_tensor *root = t->base ? t->base : t;
    struct sim_tensor *v = sim_xcalloc(1, sizeof(*v));
    v->refs = 1;
    v->dtype = dtype;
    v->ndim = ndim;
    if (ndim)
        memcpy(v->shape, shape, ndim * sizeof(*shape));
    v->nbytes = nbytes;
    v->data = (unsigned char *)t->data + off;
    v->base = sim_tensor_ref(root);
    return v;
}

/* A new tensor whose data is not zeroed: for results every element of which is computed
 * (zeroing a large output costs as much as an elementwise op on it). */
static struct sim_tensor *tensor_uninit(enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    size_t nbytes;
    int rc = sim_shape_nbytes(dtype, ndim, shape, &nbytes);
    assert(rc == 0 && "shapes are checked at decode");
    (void)rc;
    struct sim_tensor *t = sim_xcalloc(1, sizeof(*t));
    t->refs = 1;
    t->dtype = dtype;
    t->ndim = ndim;
    if (ndim)
        memcpy(t->shape, shape, ndim * sizeof(*shape));
    t->nbytes = nbytes;
    t->data = sim_xmalloc(nbytes ? nbytes : 1);
    return t;
}

/*
 * Read operand o from the store into *out (a new reference): the tensor at its address,
 * reinterpreted, or the part of a larger tensor that holds its range.
 */
static int mem_read(struct sim_exec *x, const struct operand *o, struct sim_tensor **out,
                    struct diag *d)
{
    const char *space = x->spaces[o->sid].name;
    struct sim_tensor *t = sim_memstore_get(x->store, space, o->addr);
    if (t && t->nbytes == o->nbytes) {
        if (o->dtype == AS_STORED ||
            (t->dtype == o->dtype && t->ndim == o->ndim &&
             memcmp(t->shape, o->shape, o->ndim * sizeof(*o->shape)) == 0)) {
            *out = sim_tensor_ref(t);
            return 0;
        }
        *out = sim_tensor_view(t, o->dtype, o->ndim, o->shape, d);
        return *out ? 0 : -SIM_EINVAL;
    }
    uint64_t key;
    struct sim_tensor *c = find_container(x, o->sid, o->addr, o->nbytes, &key);
    if (c) {
        if (o->dtype == AS_STORED) {
            int64_t n = (int64_t)o->nbytes;
            *out = offset_view(c, o->addr - key, SIM_U8, 1, &n, o->nbytes);
        } else {
            *out = offset_view(c, o->addr - key, o->dtype, o->ndim, o->shape, o->nbytes);
        }
        return 0;
    }
    if (t)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "%s 0x%" PRIx64 ": holds %zu bytes, the op reads %zu", space, o->addr,
                        t->nbytes, o->nbytes);
    return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                    "%s 0x%" PRIx64 ": no tensor holds these %zu bytes", space, o->addr, o->nbytes);
}

/* Write t (not an offset view) to (sid, addr): replace the tensor at addr when it has
 * t's size, else write into a larger tensor holding the range (the one at addr included),
 * else store t at addr. */
static void mem_write(struct sim_exec *x, uint32_t sid, uint64_t addr, struct sim_tensor *t,
                      const struct sim_op_record *r)
{
    struct space *sp = &x->spaces[sid];
    struct sim_memstore_writer w = {r->op_name, r->t_start};
    struct sim_tensor *e = sim_memstore_get(x->store, sp->name, addr);
    if (!e || e->nbytes != t->nbytes) {
        uint64_t key;
        struct sim_tensor *c = find_container(x, sid, addr, t->nbytes, &key);
        if (c) {
            if (c->base || c->refs != 1) {
                /* shared with phase 1, a record or a view: never mutate, copy */
                struct sim_tensor *own = sim_tensor_copy(c);
                sim_memstore_write(x->store, sp->name, key, own, &w);
                sim_tensor_unref(own);
                c = own;
            }
            if (t->nbytes)
                memcpy((unsigned char *)c->data + (addr - key), t->data, t->nbytes);
            return;
        }
    }
    sim_memstore_write(x->store, sp->name, addr, t, &w);
    index_set(sp, addr, t->nbytes);
}

/* ---- conversions ------------------------------------------------------------------------- */

/* Element i of t as float. */
static float elem_f32(const struct sim_tensor *t, size_t i)
{
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case SIM_F32: return ((const float *)(const void *)p)[i];
    case SIM_F16: return sim_f16_to_f32(((const uint16_t *)(const void *)p)[i]);
    case SIM_BF16: return sim_bf16_to_f32(((const uint16_t *)(const void *)p)[i]);
    case SIM_I8: return (float)((const int8_t *)(const void *)p)[i];
    case SIM_I16: return (float)((const int16_t *)(const void *)p)[i];
    case SIM_I32: return (float)((const int32_t *)(const void *)p)[i];
    case SIM_I64: return (float)((const int64_t *)(const void *)p)[i];
    case SIM_U8: return (float)p[i];
    case SIM_U16: return (float)((const uint16_t *)(const void *)p)[i];
    case SIM_U32: return (float)((const uint32_t *)(const void *)p)[i];
    case SIM_BOOL: return p[i] ? 1.0f : 0.0f;
    case SIM_DTYPE_COUNT: break;
    }
    assert(!"bad dtype");
    return 0;
}

static int64_t elem_i64(const struct sim_tensor *t, size_t i)
{
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case SIM_I8: return ((const int8_t *)(const void *)p)[i];
    case SIM_I16: return ((const int16_t *)(const void *)p)[i];
    case SIM_I32: return ((const int32_t *)(const void *)p)[i];
    case SIM_I64: return ((const int64_t *)(const void *)p)[i];
    case SIM_U8: return p[i];
    case SIM_U16: return ((const uint16_t *)(const void *)p)[i];
    case SIM_U32: return ((const uint32_t *)(const void *)p)[i];
    case SIM_BOOL: return p[i] != 0;
    default: break;
    }
    assert(!"not an integer dtype");
    return 0;
}

/* t's elements as f32: t's own data when it is f32, else a new buffer in *owned. */
static const float *as_f32(const struct sim_tensor *t, float **owned)
{
    *owned = NULL;
    if (t->dtype == SIM_F32)
        return t->data;
    size_t n = sim_tensor_numel(t);
    float *b = sim_xmalloc((n ? n : 1) * sizeof(*b));
    if (t->dtype == SIM_F16 || t->dtype == SIM_BF16) {
        const uint16_t *h = t->data;
        if (t->dtype == SIM_F16)
            for (size_t i = 0; i < n; i++)
                b[i] = sim_f16_to_f32(h[i]);
        else
            for (size_t i = 0; i < n; i++)
                b[i] = sim_bf16_to_f32(h[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            b[i] = elem_f32(t, i);
    }
    *owned = b;
    return b;
}

static int64_t *as_i64(const struct sim_tensor *t)
{
    size_t n = sim_tensor_numel(t);
    int64_t *b = sim_xmalloc((n ? n : 1) * sizeof(*b));
    for (size_t i = 0; i < n; i++)
        b[i] = elem_i64(t, i);
    return b;
}

/* float -> integer: truncation toward zero, saturating, NaN -> 0 (a checked cast). */
static int64_t f2i(float v, double lo, double hi)
{
    if (v != v)
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

/* Store src[0..n) as t's dtype. */
static void from_f32(const float *src, struct sim_tensor *t)
{
    size_t n = sim_tensor_numel(t);
    void *p = t->data;
    switch (t->dtype) {
    case SIM_F32: memcpy(p, src, n * sizeof(*src)); return;
    case SIM_F16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)p)[i] = sim_f32_to_f16(src[i]);
        return;
    case SIM_BF16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)p)[i] = sim_f32_to_bf16(src[i]);
        return;
    case SIM_I8:
        for (size_t i = 0; i < n; i++)
            ((int8_t *)p)[i] = (int8_t)f2i(src[i], INT8_MIN, INT8_MAX);
        return;
    case SIM_I16:
        for (size_t i = 0; i < n; i++)
            ((int16_t *)p)[i] = (int16_t)f2i(src[i], INT16_MIN, INT16_MAX);
        return;
    case SIM_I32:
        for (size_t i = 0; i < n; i++)
            ((int32_t *)p)[i] = (int32_t)f2i(src[i], INT32_MIN, INT32_MAX);
        return;
    case SIM_I64:
        for (size_t i = 0; i < n; i++)
            ((int64_t *)p)[i] = f2i(src[i], -9223372036854775808.0, 9223372036854774784.0);
        return;
    case SIM_U8:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = (uint8_t)f2i(src[i], 0, UINT8_MAX);
        return;
    case SIM_U16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)p)[i] = (uint16_t)f2i(src[i], 0, UINT16_MAX);
        return;
    case SIM_U32:
        for (size_t i = 0; i < n; i++)
            ((uint32_t *)p)[i] = (uint32_t)f2i(src[i], 0, UINT32_MAX);
        return;
    case SIM_BOOL:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = src[i] != 0;
        return;
    case SIM_DTYPE_COUNT: break;
    }
    assert(!"bad dtype");
}

/* Store src[0..n) as t's dtype; narrower integers wrap (numpy's astype), floats round. */
static void from_i64(const int64_t *src, struct sim_tensor *t)
{
    size_t n = sim_tensor_numel(t);
    void *p = t->data;
    switch (t->dtype) {
    case SIM_I8:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = (uint8_t)(uint64_t)src[i];
        return;
    case SIM_U8:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = (uint8_t)(uint64_t)src[i];
        return;
    case SIM_I16:
    case SIM_U16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)p)[i] = (uint16_t)(uint64_t)src[i];
        return;
    case SIM_I32:
    case SIM_U32:
        for (size_t i = 0; i < n; i++)
            ((uint32_t *)p)[i] = (uint32_t)(uint64_t)src[i];
        return;
    case SIM_I64: memcpy(p, src, n * sizeof(*src)); return;
    case SIM_BOOL:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = src[i] != 0;
        return;
    case SIM_F32:
    case SIM_F16:
    case SIM_BF16: {
        float *f = sim_xmalloc((n ? n : 1) * sizeof(*f));
        for (size_t i = 0; i < n; i++)
            f[i] = (float)src[i];
        from_f32(f, t);
        free(f);
        return;
    }
    case SIM_DTYPE_COUNT: break;
    }
    assert(!"bad dtype");
}

/* ---- the math table ---------------------------------------------------------------------- */

/*
 * Elementwise kernels take an input stride per input that is 1 (a full input) or 0 (one
 * value broadcast); the all-1 case is a plain loop the compiler vectorizes. Their output
 * may be a full input's own buffer (each element is read before it is written), so it is
 * not restrict. Reductions see their input as [outer][len][inner] and write
 * [outer][inner] to a separate buffer.
 */
typedef void (*ew_f32_fn)(float *o, const float *const *in, const size_t *s, size_t n);
typedef void (*ew_i64_fn)(int64_t *o, const int64_t *const *in, const size_t *s, size_t n);
typedef void (*red_f32_fn)(float *restrict o, const float *in, size_t outer, size_t len,
                           size_t inner);
typedef void (*red_i64_fn)(int64_t *restrict o, const int64_t *in, size_t outer, size_t len,
                           size_t inner);

struct math_impl {
    struct sim_exec_math_op pub;
    ew_f32_fn ew_f32;   /* elementwise */
    ew_i64_fn ew_i64;   /* elementwise on integers, or NULL (computed in f32) */
    red_f32_fn red_f32; /* reduction */
    red_i64_fn red_i64; /* reduction on integers, or NULL */
};

/* T is a type: it cannot be parenthesized */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define EW_UNARY(NAME, T, EXPR)                                                                    \
    static void NAME(T *o, const T *const *in, const size_t *s, size_t n)                          \
    {                                                                                              \
        const T *a = in[0];                                                                        \
        if (s[0]) {                                                                                \
            for (size_t i = 0; i < n; i++) {                                                       \
                T x = a[i];                                                                        \
                o[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            T x = a[0];                                                                            \
            T v = (EXPR);                                                                          \
            for (size_t i = 0; i < n; i++)                                                         \
                o[i] = v;                                                                          \
        }                                                                                          \
    }

#define EW_BINARY(NAME, T, EXPR)                                                                   \
    static void NAME(T *o, const T *const *in, const size_t *s, size_t n)                          \
    {                                                                                              \
        const T *a = in[0], *b = in[1];                                                            \
        if (s[0] && s[1]) {                                                                        \
            for (size_t i = 0; i < n; i++) {                                                       \
                T x = a[i], y = b[i];                                                              \
                o[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else if (s[0]) {                                                                         \
            T y = b[0];                                                                            \
            for (size_t i = 0; i < n; i++) {                                                       \
                T x = a[i];                                                                        \
                o[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else if (s[1]) {                                                                         \
            T x = a[0];                                                                            \
            for (size_t i = 0; i < n; i++) {                                                       \
                T y = b[i];                                                                        \
                o[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            T x = a[0], y = b[0];                                                                  \
            T v = (EXPR);                                                                          \
            for (size_t i = 0; i < n; i++)                                                         \
                o[i] = v;                                                                          \
        }                                                                                          \
    }

/* NOLINTEND(bugprone-macro-parentheses) */

/* wrapping integer arithmetic (no signed overflow) */
#define WADD(x, y) ((int64_t)((uint64_t)(x) + (uint64_t)(y)))
#define WSUB(x, y) ((int64_t)((uint64_t)(x) - (uint64_t)(y)))
#define WMUL(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))
#define WNEG(x)    ((int64_t)(0 - (uint64_t)(x)))

static float sigmoidf(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

static float geluf(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

EW_UNARY(f_exp, float, expf(x))
EW_UNARY(f_log, float, logf(x))
EW_UNARY(f_sqrt, float, sqrtf(x))
EW_UNARY(f_rsqrt, float, 1.0f / sqrtf(x))
EW_UNARY(f_neg, float, -x)
EW_UNARY(f_abs, float, fabsf(x))
EW_UNARY(f_recip, float, 1.0f / x)
EW_UNARY(f_square, float, (x) * (x))
EW_UNARY(f_tanh, float, tanhf(x))
EW_UNARY(f_sigmoid, float, sigmoidf(x))
EW_UNARY(f_relu, float, x > 0.0f ? x : 0.0f)
EW_UNARY(f_silu, float, sigmoidf(x) * (x))
EW_UNARY(f_gelu, float, geluf(x))
EW_UNARY(f_copy, float, x)
EW_BINARY(f_add, float, x + y)
EW_BINARY(f_sub, float, x - y)
EW_BINARY(f_mul, float, (x) * (y))
EW_BINARY(f_div, float, x / y)
EW_BINARY(f_max, float, (x > y || x != x) ? x : y)
EW_BINARY(f_min, float, (x < y || x != x) ? x : y)
EW_BINARY(f_pow, float, powf(x, y))
EW_BINARY(f_gt, float, x > y ? 1.0f : 0.0f)
EW_BINARY(f_ge, float, x >= y ? 1.0f : 0.0f)
EW_BINARY(f_lt, float, x < y ? 1.0f : 0.0f)
EW_BINARY(f_le, float, x <= y ? 1.0f : 0.0f)
EW_BINARY(f_eq, float, x == y ? 1.0f : 0.0f)
EW_BINARY(f_ne, float, x != y ? 1.0f : 0.0f)

EW_UNARY(i_neg, int64_t, WNEG(x))
EW_UNARY(i_abs, int64_t, x < 0 ? WNEG(x) : x)
EW_UNARY(i_square, int64_t, WMUL(x, x))
EW_UNARY(i_relu, int64_t, x > 0 ? x : 0)
EW_UNARY(i_copy, int64_t, x)
EW_BINARY(i_add, int64_t, WADD(x, y))
EW_BINARY(i_sub, int64_t, WSUB(x, y))
EW_BINARY(i_mul, int64_t, WMUL(x, y))
EW_BINARY(i_max, int64_t, x > y ? x : y)
EW_BINARY(i_min, int64_t, x < y ? x : y)
EW_BINARY(i_gt, int64_t, x > y)
EW_BINARY(i_ge, int64_t, x >= y)
EW_BINARY(i_lt, int64_t, x < y)
EW_BINARY(i_le, int64_t, x <= y)
EW_BINARY(i_eq, int64_t, x == y)
EW_BINARY(i_ne, int64_t, x != y)

static void f_where(float *o, const float *const *in, const size_t *s, size_t n)
{
    const float *c = in[0], *a = in[1], *b = in[2];
    if (s[0] && s[1] && s[2]) {
        for (size_t i = 0; i < n; i++)
            o[i] = c[i] != 0.0f ? a[i] : b[i];
    } else {
        for (size_t i = 0; i < n; i++)
            o[i] = c[i * s[0]] != 0.0f ? a[i * s[1]] : b[i * s[2]];
    }
}

static void i_where(int64_t *o, const int64_t *const *in, const size_t *s, size_t n)
{
    const int64_t *c = in[0], *a = in[1], *b = in[2];
    for (size_t i = 0; i < n; i++)
        o[i] = c[i * s[0]] ? a[i * s[1]] : b[i * s[2]];
}

/* Reductions: sums accumulate in double, so long rows keep f32 accuracy. */
static void red_sum_f32(float *restrict o, const float *in, size_t outer, size_t len, size_t inner,
                        bool mean)
{
    double *acc = sim_xmalloc((inner ? inner : 1) * sizeof(*acc));
    for (size_t a = 0; a < outer; a++) {
        const float *p = in + a * len * inner;
        if (inner == 1) {
            double s = 0;
            for (size_t r = 0; r < len; r++)
                s += p[r];
            acc[0] = s;
        } else {
            for (size_t j = 0; j < inner; j++)
                acc[j] = 0;
            for (size_t r = 0; r < len; r++)
                for (size_t j = 0; j < inner; j++)
                    acc[j] += p[r * inner + j];
        }
        for (size_t j = 0; j < inner; j++)
            o[a * inner + j] = (float)(mean ? acc[j] / (double)len : acc[j]);
    }
    free(acc);
}

static void r_sum(float *restrict o, const float *in, size_t outer, size_t len, size_t inner)
{
    red_sum_f32(o, in, outer, len, inner, false);
}

static void r_mean(float *restrict o, const float *in, size_t outer, size_t len, size_t inner)
{
    red_sum_f32(o, in, outer, len, inner, true);
}

/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define RED_EXT(NAME, T, BETTER, EMPTY)                                                            \
    static void NAME(T *restrict o, const T *in, size_t outer, size_t len, size_t inner)           \
    {                                                                                              \
        for (size_t a = 0; a < outer; a++) {                                                       \
            const T *p = in + a * len * inner;                                                     \
            T *q = o + a * inner;                                                                  \
            if (len == 0) {                                                                        \
                for (size_t j = 0; j < inner; j++)                                                 \
                    q[j] = (EMPTY);                                                                \
                continue;                                                                          \
            }                                                                                      \
            for (size_t j = 0; j < inner; j++)                                                     \
                q[j] = p[j];                                                                       \
            for (size_t r = 1; r < len; r++)                                                       \
                for (size_t j = 0; j < inner; j++) {                                               \
                    T x = p[r * inner + j], m = q[j];                                              \
                    q[j] = (BETTER) ? x : m;                                                       \
                }                                                                                  \
        }                                                                                          \
    }

/* NOLINTEND(bugprone-macro-parentheses) */

/* NaN propagates (numpy's max and min): a NaN, once met, is kept */
RED_EXT(r_max, float, (x > m || x != x) && m == m, NAN)
RED_EXT(r_min, float, (x < m || x != x) && m == m, NAN)
RED_EXT(ri_max, int64_t, x > m, 0)
RED_EXT(ri_min, int64_t, x < m, 0)

static void ri_sum(int64_t *restrict o, const int64_t *in, size_t outer, size_t len, size_t inner)
{
    for (size_t a = 0; a < outer; a++) {
        const int64_t *p = in + a * len * inner;
        int64_t *q = o + a * inner;
        for (size_t j = 0; j < inner; j++)
            q[j] = 0;
        for (size_t r = 0; r < len; r++)
            for (size_t j = 0; j < inner; j++)
                q[j] = WADD(q[j], p[r * inner + j]);
    }
}

/* The scalar definitions (the reference verification uses). */
static double s_exp(const double *a)
{
    return exp(a[0]);
}
static double s_log(const double *a)
{
    return log(a[0]);
}
static double s_sqrt(const double *a)
{
    return sqrt(a[0]);
}
static double s_rsqrt(const double *a)
{
    return 1.0 / sqrt(a[0]);
}
static double s_neg(const double *a)
{
    return -a[0];
}
static double s_abs(const double *a)
{
    return fabs(a[0]);
}
static double s_recip(const double *a)
{
    return 1.0 / a[0];
}
static double s_square(const double *a)
{
    return a[0] * a[0];
}
static double s_tanh(const double *a)
{
    return tanh(a[0]);
}
static double s_sigmoid(const double *a)
{
    return 1.0 / (1.0 + exp(-a[0]));
}
static double s_relu(const double *a)
{
    return a[0] > 0 ? a[0] : 0;
}
static double s_silu(const double *a)
{
    return a[0] / (1.0 + exp(-a[0]));
}
static double s_gelu(const double *a)
{
    return 0.5 * a[0] * (1.0 + erf(a[0] / sqrt(2.0)));
}
static double s_copy(const double *a)
{
    return a[0];
}
static double s_add(const double *a)
{
    return a[0] + a[1];
}
static double s_sub(const double *a)
{
    return a[0] - a[1];
}
static double s_mul(const double *a)
{
    return a[0] * a[1];
}
static double s_div(const double *a)
{
    return a[0] / a[1];
}
static double s_max(const double *a)
{
    return isnan(a[0]) || isnan(a[1]) ? NAN : a[0] > a[1] ? a[0] : a[1];
}
static double s_min(const double *a)
{
    return isnan(a[0]) || isnan(a[1]) ? NAN : a[0] < a[1] ? a[0] : a[1];
}
static double s_pow(const double *a)
{
    return pow(a[0], a[1]);
}
static double s_gt(const double *a)
{
    return a[0] > a[1];
}
static double s_ge(const double *a)
{
    return a[0] >= a[1];
}
static double s_lt(const double *a)
{
    return a[0] < a[1];
}
static double s_le(const double *a)
{
    return a[0] <= a[1];
}
static double s_eq(const double *a)
{
    return a[0] == a[1];
}
static double s_ne(const double *a)
{
    return a[0] != a[1];
}
static double s_where(const double *a)
{
    return a[0] != 0 ? a[1] : a[2];
}
static double c_sum(double acc, double x)
{
    return acc + x;
}
static double c_max(double acc, double x)
{
    return isnan(acc) || isnan(x) ? NAN : x > acc ? x : acc;
}
static double c_min(double acc, double x)
{
    return isnan(acc) || isnan(x) ? NAN : x < acc ? x : acc;
}
static double fin_mean(double acc, double count)
{
    return acc / count;
}

#define EW(NAME, AR, F, I)                                                                         \
    {                                                                                              \
        {#NAME, AR, SIM_EXEC_MATH_ELEMENTWISE, s_##NAME, 0, 0, 0}, F, I, 0, 0                      \
    }
#define EWS(NAME, AR, S, F, I)                                                                     \
    {                                                                                              \
        {NAME, AR, SIM_EXEC_MATH_ELEMENTWISE, S, 0, 0, 0}, F, I, 0, 0                              \
    }
#define RED(NAME, INIT, C, FIN, F, I)                                                              \
    {                                                                                              \
        {NAME, 1, SIM_EXEC_MATH_REDUCE, 0, INIT, C, FIN}, 0, 0, F, I                               \
    }

/* The math ops: a new op is one line here (and its scalar definition above). */
static const struct math_impl math_table[] = {
    EW(exp, 1, f_exp, NULL),
    EW(log, 1, f_log, NULL),
    EW(sqrt, 1, f_sqrt, NULL),
    EW(rsqrt, 1, f_rsqrt, NULL),
    EW(neg, 1, f_neg, i_neg),
    EW(abs, 1, f_abs, i_abs),
    EW(recip, 1, f_recip, NULL),
    EWS("reciprocal", 1, s_recip, f_recip, NULL),
    EW(square, 1, f_square, i_square),
    EW(tanh, 1, f_tanh, NULL),
    EW(sigmoid, 1, f_sigmoid, NULL),
    EW(relu, 1, f_relu, i_relu),
    EW(silu, 1, f_silu, NULL),
    EW(gelu, 1, f_gelu, NULL),
    EW(copy, 1, f_copy, i_copy),
    EWS("cast", 1, s_copy, f_copy, i_copy),
    EW(add, 2, f_add, i_add),
    EW(sub, 2, f_sub, i_sub),
    EW(mul, 2, f_mul, i_mul),
    EW(div, 2, f_div, NULL),
    EW(max, 2, f_max, i_max),
    EWS("maximum", 2, s_max, f_max, i_max),
    EW(min, 2, f_min, i_min),
    EWS("minimum", 2, s_min, f_min, i_min),
    EW(pow, 2, f_pow, NULL),
    EW(gt, 2, f_gt, i_gt),
    EW(ge, 2, f_ge, i_ge),
    EW(lt, 2, f_lt, i_lt),
    EW(le, 2, f_le, i_le),
    EW(eq, 2, f_eq, i_eq),
    EW(ne, 2, f_ne, i_ne),
    EW(where, 3, f_where, i_where),
    RED("sum", 0.0, c_sum, NULL, r_sum, ri_sum),
    RED("mean", 0.0, c_sum, fin_mean, r_mean, NULL),
    RED("max", -INFINITY, c_max, NULL, r_max, ri_max),
    RED("min", INFINITY, c_min, NULL, r_min, ri_min),
};

enum { N_MATH = sizeof(math_table) / sizeof(math_table[0]) };

static const struct math_impl *math_lookup(const char *name, unsigned arity)
{
    for (size_t i = 0; i < N_MATH; i++)
        if (math_table[i].pub.arity == arity && math_table[i].pub.name[0] == name[0] &&
            strcmp(math_table[i].pub.name, name) == 0)
            return &math_table[i];
    return NULL;
}

const struct sim_exec_math_op *sim_exec_math_find(const char *name, unsigned arity)
{
    const struct math_impl *m = math_lookup(name, arity);
    return m ? &m->pub : NULL;
}

static struct sim_exec_math_op math_pub[N_MATH];
static pthread_once_t math_pub_once = PTHREAD_ONCE_INIT;

static void math_pub_init(void)
{
    for (size_t i = 0; i < N_MATH; i++)
        math_pub[i] = math_table[i].pub;
}

const struct sim_exec_math_op *sim_exec_math_ops(size_t *n)
{
    pthread_once(&math_pub_once, math_pub_init);
    *n = N_MATH;
    return math_pub;
}

/* ---- math execution ---------------------------------------------------------------------- */

/*
 * Strides of an input of shape (ndim, shape) broadcast to the output (ondim, oshape):
 * element strides aligned to the output's dimensions, 0 where the input is broadcast.
 * Returns false when the shapes are not broadcast-compatible.
 */
static bool bcast_strides(unsigned ndim, const int64_t *shape, unsigned ondim,
                          const int64_t *oshape, size_t *stride)
{
    if (ndim > ondim)
        return false;
    size_t s = 1;
    for (unsigned k = ondim; k-- > 0;) {
        unsigned off = ondim - ndim;
        if (k < off) {
            stride[k] = 0;
            continue;
        }
        int64_t d = shape[k - off];
        if (d == oshape[k])
            stride[k] = d == 1 ? 0 : s;
        else if (d == 1)
            stride[k] = 0;
        else
            return false;
        s *= (size_t)d;
    }
    return true;
}

/* True when the input fills the output element for element (same numel, compatible). */
static bool full_input(unsigned ndim, const int64_t *shape, size_t onumel)
{
    return shape_numel(ndim, shape) == onumel;
}

/* Run an elementwise op over buffers of element size esz with broadcasting. */
static void ew_apply(const struct xop *o, void *out, const void *const *in, size_t esz, bool i64)
{
    const struct operand *od = &o->out;
    size_t onumel = shape_numel(od->ndim, od->shape);
    unsigned n = o->n_in;
    size_t s1[SIM_EXEC_MAX_INPUTS];
    bool flat = true;
    for (unsigned i = 0; i < n; i++) {
        size_t ni = shape_numel(o->in[i].ndim, o->in[i].shape);
        if (full_input(o->in[i].ndim, o->in[i].shape, onumel) && onumel != 1)
            s1[i] = 1;
        else if (ni == 1)
            s1[i] = 0;
        else
            flat = false;
    }
    if (flat || od->ndim == 0) {
        if (od->ndim == 0)
            for (unsigned i = 0; i < n; i++)
                s1[i] = 0;
        if (i64)
            o->m->ew_i64(out, (const int64_t *const *)in, s1, onumel);
        else
            o->m->ew_f32(out, (const float *const *)in, s1, onumel);
        return;
    }
    /* general broadcasting: iterate over all dimensions but the last, run the last one */
    unsigned nd = od->ndim;
    size_t st[SIM_EXEC_MAX_INPUTS][SIM_MAX_DIMS];
    for (unsigned i = 0; i < n; i++) {
        bool ok = bcast_strides(o->in[i].ndim, o->in[i].shape, nd, od->shape, st[i]);
        assert(ok && "broadcasting checked at decode");
        (void)ok;
    }
    size_t inner = (size_t)od->shape[nd - 1];
    size_t outer = inner ? onumel / inner : 0;
    size_t idx[SIM_MAX_DIMS] = {0};
    size_t sl[SIM_EXEC_MAX_INPUTS];
    for (unsigned i = 0; i < n; i++)
        sl[i] = st[i][nd - 1] ? 1 : 0; /* the last dimension's stride is 1 or 0 */
    for (size_t r = 0; r < outer; r++) {
        const void *p[SIM_EXEC_MAX_INPUTS];
        for (unsigned i = 0; i < n; i++) {
            size_t off = 0;
            for (unsigned k = 0; k + 1 < nd; k++)
                off += idx[k] * st[i][k];
            p[i] = (const unsigned char *)in[i] + off * esz;
        }
        void *q = (unsigned char *)out + r * inner * esz;
        if (i64)
            o->m->ew_i64(q, (const int64_t *const *)p, sl, inner);
        else
            o->m->ew_f32(q, (const float *const *)p, sl, inner);
        for (unsigned k = nd - 1; k-- > 0;) {
            if (++idx[k] < (size_t)od->shape[k])
                break;
            idx[k] = 0;
        }
    }
}

/* Reduction geometry of input 0: [outer][len][inner]. */
static void red_dims(const struct xop *o, size_t *outer, size_t *len, size_t *inner)
{
    const struct operand *a = &o->in[0];
    size_t n = shape_numel(a->ndim, a->shape);
    if (!o->has_axis || a->ndim == 0) {
        *outer = 1, *len = n, *inner = 1;
        return;
    }
    size_t ou = 1, in = 1;
    for (int k = 0; k < o->axis; k++)
        ou *= (size_t)a->shape[k];
    for (unsigned k = (unsigned)o->axis + 1; k < a->ndim; k++)
        in *= (size_t)a->shape[k];
    *outer = ou, *len = (size_t)a->shape[o->axis], *inner = in;
}

/* Integer path: every input an integer or bool, and the op has integer kernels. */
static bool math_on_ints(const struct xop *o)
{
    if (o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE ? !o->m->ew_i64 : !o->m->red_i64)
        return false;
    if (!dtype_is_int(o->out.dtype) && o->out.dtype != SIM_BOOL)
        return false;
    for (unsigned i = 0; i < o->n_in; i++)
        if (sim_dtype_is_float(o->tin[i]->dtype))
            return false;
    return true;
}

static void math_run(struct xop *o)
{
    size_t onumel = sim_tensor_numel(o->tout);
    if (math_on_ints(o)) {
        int64_t *in[SIM_EXEC_MAX_INPUTS] = {0};
        for (unsigned i = 0; i < o->n_in; i++)
            in[i] = as_i64(o->tin[i]);
        int64_t *out = sim_xmalloc((onumel ? onumel : 1) * sizeof(*out));
        if (o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE) {
            ew_apply(o, out, (const void *const *)in, sizeof(int64_t), true);
        } else {
            size_t outer, len, inner;
            red_dims(o, &outer, &len, &inner);
            o->m->red_i64(out, in[0], outer, len, inner);
        }
        from_i64(out, o->tout);
        free(out);
        for (unsigned i = 0; i < o->n_in; i++)
            free(in[i]);
        return;
    }
    const float *in[SIM_EXEC_MAX_INPUTS] = {0};
    float *owned[SIM_EXEC_MAX_INPUTS] = {0};
    for (unsigned i = 0; i < o->n_in; i++)
        in[i] = as_f32(o->tin[i], &owned[i]);
    float *out = o->tout->dtype == SIM_F32 ? o->tout->data
                                           : sim_xmalloc((onumel ? onumel : 1) * sizeof(*out));
    if (o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE) {
        ew_apply(o, out, (const void *const *)in, sizeof(float), false);
    } else {
        size_t outer, len, inner;
        red_dims(o, &outer, &len, &inner);
        o->m->red_f32(out, in[0], outer, len, inner);
    }
    if (out != o->tout->data) {
        from_f32(out, o->tout);
        free(out);
    }
    for (unsigned i = 0; i < o->n_in; i++)
        free(owned[i]);
}

/* ---- GEMM -------------------------------------------------------------------------------- */

/* Element (r, c) of op(X) for a matrix stored with layout col and transpose flag t, whose
 * stored logical shape is rows x cols: its flat index. */
static size_t mat_index(size_t r, size_t c, bool t, bool col, size_t rows, size_t cols)
{
    size_t i = t ? c : r, j = t ? r : c; /* (i, j) in the stored logical matrix */
    return col ? j * rows + i : i * cols + j;
}

/* op(A) (m x k) of batch b as a row-major f32 or i64 buffer. */
static void canon_f32(const float *src, bool t, bool col, size_t rows, size_t cols, size_t m,
                      size_t k, float *dst)
{
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            dst[i * k + p] = src[mat_index(i, p, t, col, rows, cols)];
}

static void canon_i64(const int64_t *src, bool t, bool col, size_t rows, size_t cols, size_t m,
                      size_t k, int64_t *dst)
{
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            dst[i * k + p] = src[mat_index(i, p, t, col, rows, cols)];
}

/* Stored logical shape (rows, cols) of an operand: its last two dimensions. */
static void mat_rc(const struct operand *o, size_t *rows, size_t *cols)
{
    *rows = (size_t)o->shape[o->ndim - 2];
    *cols = (size_t)o->shape[o->ndim - 1];
}

static float round_acc(float v, enum sim_dtype acc)
{
    if (acc == SIM_F16)
        return sim_f16_to_f32(sim_f32_to_f16(v));
    if (acc == SIM_BF16)
        return sim_bf16_to_f32(sim_f32_to_bf16(v));
    return v;
}

static void gemm_float(struct xop *o)
{
    const struct sim_exec_gemm *g = &o->g;
    size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k, nb = (size_t)g->batch;
    float *oa, *ob, *oc = NULL;
    const float *A = as_f32(o->tin[0], &oa), *B = as_f32(o->tin[1], &ob);
    size_t csz = nb * m * n;
    /* C starts at zero (a new tensor, or calloc) or at the accumulated value */
    float *C = o->tout->dtype == SIM_F32 ? o->tout->data
                                         : (oc = sim_xcalloc(csz ? csz : 1, sizeof(float)));
    if (g->accumulate) {
        float *o0;
        const float *C0 = as_f32(o->tin[2], &o0);
        if (C0 != C) /* C is the accumulator itself when the output was reused */
            memcpy(C, C0, csz * sizeof(float));
        free(o0);
    }
    float beta = g->accumulate ? 1.0f : 0.0f;
    size_t ar, ac, br, bc;
    mat_rc(&o->in[0], &ar, &ac);
    mat_rc(&o->in[1], &br, &bc);
    size_t astep = g->a_batched ? ar * ac : 0, bstep = g->b_batched ? br * bc : 0;

    if (g->dtype_acc == SIM_F32) {
        /* One order for the call: the output's. An operand in the other layout is its
         * transpose in this one. */
        bool colo = g->out_col_major;
        enum CBLAS_ORDER order = colo ? CblasColMajor : CblasRowMajor;
        bool ta = g->transpose_a ^ (g->a_col_major != colo);
        bool tb = g->transpose_b ^ (g->b_col_major != colo);
        size_t lda = g->a_col_major ? ar : ac, ldb = g->b_col_major ? br : bc;
        size_t ldc = colo ? m : n;
        if (lda == 0)
            lda = 1;
        if (ldb == 0)
            ldb = 1;
        if (ldc == 0)
            ldc = 1;
        if (m && n && k)
            for (size_t b = 0; b < nb; b++)
                cblas_sgemm(order, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                            (blasint)m, (blasint)n, (blasint)k, 1.0f, A + b * astep, (blasint)lda,
                            B + b * bstep, (blasint)ldb, beta, C + b * m * n, (blasint)ldc);
    } else {
        /* a 16-bit accumulator: every partial sum rounded to it, in k order */
        float *ca = sim_xmalloc((m * k + 1) * sizeof(float));
        float *cbt = sim_xmalloc((n * k + 1) * sizeof(float));
        for (size_t b = 0; b < nb; b++) {
            canon_f32(A + b * astep, g->transpose_a, g->a_col_major, ar, ac, m, k, ca);
            /* op(B)^T as n x k: row j is column j of op(B) */
            canon_f32(B + b * bstep, !g->transpose_b, g->b_col_major, br, bc, n, k, cbt);
            float *Cb = C + b * m * n;
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    size_t ci = g->out_col_major ? j * m + i : i * n + j;
                    float acc = round_acc(Cb[ci], g->dtype_acc);
                    for (size_t p = 0; p < k; p++)
                        acc = round_acc(acc + ca[i * k + p] * cbt[j * k + p], g->dtype_acc);
                    Cb[ci] = acc;
                }
        }
        free(ca);
        free(cbt);
    }
    if (oc) {
        from_f32(oc, o->tout);
        free(oc);
    }
    free(oa);
    free(ob);
}

static void gemm_int(struct xop *o)
{
    const struct sim_exec_gemm *g = &o->g;
    size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k, nb = (size_t)g->batch;
    int64_t *A = as_i64(o->tin[0]), *B = as_i64(o->tin[1]);
    size_t ar, ac, br, bc;
    mat_rc(&o->in[0], &ar, &ac);
    mat_rc(&o->in[1], &br, &bc);
    size_t astep = g->a_batched ? ar * ac : 0, bstep = g->b_batched ? br * bc : 0;
    size_t csz = nb * m * n;
    int64_t *C = g->accumulate ? as_i64(o->tin[2]) : sim_xcalloc(csz ? csz : 1, sizeof(*C));
    int64_t *ca = sim_xmalloc((m * k + 1) * sizeof(*ca));
    int64_t *cb = sim_xmalloc((k * n + 1) * sizeof(*cb));
    int64_t *row = sim_xmalloc((n ? n : 1) * sizeof(*row));
    bool i32 = g->dtype_acc != SIM_I64;
    for (size_t b = 0; b < nb; b++) {
        canon_i64(A + b * astep, g->transpose_a, g->a_col_major, ar, ac, m, k, ca);
        canon_i64(B + b * bstep, g->transpose_b, g->b_col_major, br, bc, k, n, cb);
        int64_t *Cb = C + b * m * n;
        for (size_t i = 0; i < m; i++) {
            for (size_t j = 0; j < n; j++)
                row[j] = Cb[g->out_col_major ? j * m + i : i * n + j];
            for (size_t p = 0; p < k; p++) {
                int64_t a = ca[i * k + p];
                const int64_t *bp = cb + p * n;
                for (size_t j = 0; j < n; j++)
                    row[j] = WADD(row[j], WMUL(a, bp[j]));
            }
            for (size_t j = 0; j < n; j++) {
                /* an i32 accumulator wraps at 32 bits */
                int64_t v = i32 ? (int64_t)(int32_t)(uint32_t)(uint64_t)row[j] : row[j];
                Cb[g->out_col_major ? j * m + i : i * n + j] = v;
            }
        }
    }
    from_i64(C, o->tout);
    free(row);
    free(ca);
    free(cb);
    free(C);
    free(A);
    free(B);
}

static void gemm_run(struct xop *o)
{
    if (sim_dtype_is_float(o->g.dtype_in_a))
        gemm_float(o);
    else
        gemm_int(o);
}

static void op_compute(struct xop *o)
{
    switch (o->kind) {
    case SIM_EXEC_KIND_COPY:
        if (o->move && o->tout->nbytes)
            memcpy(o->tout->data, o->tin[0]->data, o->tout->nbytes);
        break;
    case SIM_EXEC_KIND_GEMM: gemm_run(o); break;
    case SIM_EXEC_KIND_MATH: math_run(o); break;
    default: break;
    }
}

/* ---- decoding records -------------------------------------------------------------------- */

struct dec {
    struct sim_exec *x;
    size_t index;
    const struct sim_op_record *r;
    const struct sim_value *p;
    struct diag *d;
};

static const char *vtype_article(enum sim_vtype t)
{
    return t == SIM_V_INT ? "an" : "a";
}

/* v (the value of key, NULL when missing) has type t. */
/* The value of key in the record's replay annotations (ADR-0020 D5's extra keys), or NULL. */
static const struct sim_value *replay_get(const struct sim_op_record *r, const char *key)
{
    return sim_value_map_get(r->note.replay, key);
}

/* The value of key in the record's params, or else in its replay annotations, or NULL:
 * sim_value_map_get, trying first the position the key had in the previous record. */
static const struct sim_value *pget(struct dec *c, const char *key)
{
    const struct sim_value *p = c->p;
    size_t slot = ((uintptr_t)key >> 3) & 127;
    struct sim_exec *x = c->x;
    if (x->kcache[slot].key == key) {
        size_t pos = x->kcache[slot].pos;
        if (pos < p->u.map.len && strcmp(p->u.map.keys[pos], key) == 0)
            return p->u.map.vals[pos];
    }
    for (size_t i = 0; i < p->u.map.len; i++)
        if (strcmp(p->u.map.keys[i], key) == 0) {
            x->kcache[slot].key = key;
            x->kcache[slot].pos = i;
            return p->u.map.vals[i];
        }
    return replay_get(c->r, key);
}

static int check_type(struct dec *c, const char *key, const struct sim_value *v, enum sim_vtype t)
{
    if (!v)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' is missing", key);
    if (v->type != t)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' is %s %s, expected %s %s", key,
                       vtype_article(v->type), sim_vtype_name(v->type), vtype_article(t),
                       sim_vtype_name(t));
    return 0;
}

static int want(struct dec *c, const char *key, enum sim_vtype t, const struct sim_value **out)
{
    *out = pget(c, key);
    return check_type(c, key, *out, t);
}

static int get_u64(struct dec *c, const char *key, uint64_t *out)
{
    const struct sim_value *v;
    int rc = want(c, key, SIM_V_INT, &v);
    if (rc)
        return rc;
    if (v->u.i < 0)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' is negative (%" PRId64 ")", key, v->u.i);
    *out = (uint64_t)v->u.i;
    return 0;
}

static int get_str(struct dec *c, const char *key, const char *dflt, const char **out)
{
    const struct sim_value *v = pget(c, key);
    if (!v && dflt) {
        *out = dflt;
        return 0;
    }
    int rc = check_type(c, key, v, SIM_V_STR);
    if (rc)
        return rc;
    assert(v && "check_type fails on a missing value");
    *out = v->u.str.s;
    return 0;
}

static int get_bool(struct dec *c, const char *key, bool dflt, bool *out)
{
    const struct sim_value *v = pget(c, key);
    if (!v || v->type == SIM_V_NULL) {
        *out = dflt;
        return 0;
    }
    int rc = check_type(c, key, v, SIM_V_BOOL);
    if (rc)
        return rc;
    *out = v->u.b;
    return 0;
}

static int parse_dtype(struct dec *c, const char *key, const char *name, enum sim_dtype *out)
{
    if (sim_dtype_parse(name, out) != 0)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s': unknown dtype '%s'", key, name);
    return 0;
}

static int get_dtype(struct dec *c, const char *key, const char *dflt, enum sim_dtype *out)
{
    const char *s;
    int rc = get_str(c, key, dflt, &s);
    return rc ? rc : parse_dtype(c, key, s, out);
}

/* "'key'" or "key[idx]" (idx >= 0), naming a param in messages. */
static const char *param_name(const char *key, long idx, char *buf, size_t size)
{
    if (idx < 0)
        snprintf(buf, size, "'%s'", key);
    else
        snprintf(buf, size, "%s[%ld]", key, idx);
    return buf;
}

/* A shape value (a list of non-negative ints, SIM_MAX_DIMS at most): param key, or item
 * idx of it when idx >= 0. */
static int shape_of(struct dec *c, const char *key, long idx, const struct sim_value *v,
                    unsigned *ndim, int64_t *shape)
{
    char w[64];
    if (v->type != SIM_V_LIST)
        return OP_FAIL(c->d, c->index, c->r, "params: %s is %s %s, expected a list of ints",
                       param_name(key, idx, w, sizeof(w)), vtype_article(v->type),
                       sim_vtype_name(v->type));
    if (v->u.list.len > SIM_MAX_DIMS)
        return OP_FAIL(c->d, c->index, c->r, "params: %s has %zu dimensions (%d at most)",
                       param_name(key, idx, w, sizeof(w)), v->u.list.len, SIM_MAX_DIMS);
    for (size_t i = 0; i < v->u.list.len; i++) {
        const struct sim_value *e = v->u.list.items[i];
        if (e->type != SIM_V_INT || e->u.i < 0)
            return OP_FAIL(c->d, c->index, c->r, "params: %s[%zu] is not a non-negative int",
                           param_name(key, idx, w, sizeof(w)), i);
        shape[i] = e->u.i;
    }
    *ndim = (unsigned)v->u.list.len;
    return 0;
}

static int get_shape(struct dec *c, const char *key, unsigned *ndim, int64_t *shape)
{
    const struct sim_value *v = pget(c, key);
    if (!v)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' is missing", key);
    return shape_of(c, key, -1, v, ndim, shape);
}

/* Fill an operand's layout and size (what, idx: the operand's name in messages). */
static int operand_layout(struct dec *c, const char *what, long idx, struct operand *o,
                          enum sim_dtype dt, unsigned ndim, const int64_t *shape)
{
    o->dtype = dt;
    o->ndim = ndim;
    if (ndim)
        memcpy(o->shape, shape, ndim * sizeof(*shape));
    if (sim_shape_nbytes(dt, ndim, shape, &o->nbytes) != 0 || o->nbytes > UINT64_MAX - o->addr) {
        char w[64];
        return OP_FAIL(c->d, c->index, c->r, "params: %s: the size overflows",
                       idx < 0 ? what : param_name(what, idx, w, sizeof(w)));
    }
    return 0;
}

static struct range range_of(const struct operand *o)
{
    return (struct range){o->sid, o->addr, o->addr + o->nbytes};
}

/* A tensor value that is not null, or NULL. */
static struct sim_tensor *tensor_value(const struct sim_value *v)
{
    return v && v->type == SIM_V_TENSOR ? v->u.tensor : NULL;
}

/* A copy: dma_read with a destination, dma_write, ipcq_copy, TileToken DMA stages. */
static int decode_copy(struct dec *c, struct xop *o, const char *src_dflt, const char *dst_dflt)
{
    struct sim_exec *x = c->x;
    const char *ss, *ds;
    int rc;
    struct operand *in = &o->in[0], *out = &o->out;
    if ((rc = get_str(c, "src_space", src_dflt, &ss)) || (rc = get_u64(c, "src_addr", &in->addr)) ||
        (rc = get_str(c, "dst_space", dst_dflt, &ds)) || (rc = get_u64(c, "dst_addr", &out->addr)))
        return rc;
    in->sid = space_id(x, ss);
    out->sid = space_id(x, ds);
    uint64_t nbytes = 0;
    bool has_nbytes = pget(c, "nbytes") != NULL;
    if (has_nbytes && (rc = get_u64(c, "nbytes", &nbytes)))
        return rc;
    const struct sim_value *sv = pget(c, "shape");
    const struct sim_value *dv = pget(c, "dtype");
    if (sv && dv) {
        unsigned ndim;
        int64_t shape[SIM_MAX_DIMS];
        enum sim_dtype dt;
        if ((rc = get_shape(c, "shape", &ndim, shape)) || (rc = get_dtype(c, "dtype", NULL, &dt)) ||
            (rc = operand_layout(c, "the source", -1, in, dt, ndim, shape)))
            return rc;
        if (has_nbytes && nbytes != in->nbytes)
            return OP_FAIL(c->d, c->index, c->r,
                           "params: nbytes is %" PRIu64 " but shape and dtype make %zu", nbytes,
                           in->nbytes);
    } else {
        if (!has_nbytes)
            return OP_FAIL(c->d, c->index, c->r,
                           "params: 'nbytes' is missing (and no shape and dtype)");
        in->dtype = AS_STORED;
        in->nbytes = (size_t)nbytes;
    }
    if (in->nbytes > UINT64_MAX - in->addr || in->nbytes > UINT64_MAX - out->addr)
        return OP_FAIL(c->d, c->index, c->r, "params: the range overflows");
    struct sim_tensor *snap = tensor_value(pget(c, "snapshot"));
    if (snap) {
        if (snap->nbytes != in->nbytes)
            return OP_FAIL(c->d, c->index, c->r, "params: the snapshot has %zu bytes, not %zu",
                           snap->nbytes, in->nbytes);
        in->snapshot = snap;
    }
    /* the source is a read even with a snapshot: phase 2 may read it live (see derived) */
    o->reads[o->n_reads++] = range_of(in);
    out->dtype = in->dtype;
    out->ndim = in->ndim;
    memcpy(out->shape, in->shape, sizeof(in->shape));
    out->nbytes = snap && in->dtype == AS_STORED ? snap->nbytes : in->nbytes;
    o->write = range_of(out);
    o->n_in = 1;
    o->kind = SIM_EXEC_KIND_COPY;
    o->memory_class = true;
    return 0;
}

/* An operand of a GEMM from keys <pfx>addr, <pfx>space. */
static int gemm_operand(struct dec *c, struct operand *o, const char *addr_key,
                        const char *space_key, const char *space_dflt)
{
    const char *s;
    int rc;
    if ((rc = get_u64(c, addr_key, &o->addr)) || (rc = get_str(c, space_key, space_dflt, &s)))
        return rc;
    o->sid = space_id(c->x, s);
    return 0;
}

static int get_layout(struct dec *c, const char *key, bool *col)
{
    const char *s;
    int rc = get_str(c, key, "row_major", &s);
    if (rc)
        return rc;
    if (strcmp(s, "row_major") == 0)
        *col = false;
    else if (strcmp(s, "col_major") == 0)
        *col = true;
    else
        return OP_FAIL(c->d, c->index, c->r,
                       "params: '%s' is '%s', expected 'row_major' or 'col_major'", key, s);
    return 0;
}

/*
 * Whether op(X) transposes X, from the key when present, else from the expected shape of
 * op(X) (rows x cols): X is transposed when its last two dims are (cols, rows) only.
 */
static int transpose_flag(struct dec *c, const char *key, const struct operand *o, int64_t rows,
                          int64_t cols, bool *t)
{
    const struct sim_value *v = pget(c, key);
    if (v && v->type != SIM_V_NULL)
        return get_bool(c, key, false, t);
    int64_t r = o->shape[o->ndim - 2], q = o->shape[o->ndim - 1];
    *t = rows >= 0 && !(r == rows && q == cols) && r == cols && q == rows;
    return 0;
}

/* Leading (batch) elements of an operand: the product of all dims but the last two. */
static int64_t lead_of(unsigned ndim, const int64_t *shape)
{
    int64_t b = 1;
    for (unsigned i = 0; i + 2 < ndim; i++)
        b *= shape[i];
    return b;
}

static int decode_gemm(struct dec *c, struct xop *o, bool composite)
{
    int rc;
    struct operand *a = &o->in[0], *b = &o->in[1], *out = &o->out;
    struct sim_exec_gemm *g = &o->g;
    enum sim_dtype din;
    unsigned an, bn, on = 0;
    int64_t as[SIM_MAX_DIMS], bs[SIM_MAX_DIMS], os[SIM_MAX_DIMS];
    const char *tcm = "tcm";
    if ((rc = gemm_operand(c, a, "src_a_addr", "src_a_space", tcm)) ||
        (rc = gemm_operand(c, b, "src_b_addr", "src_b_space", tcm)) ||
        (rc = gemm_operand(c, out, composite && !pget(c, "dst_addr") ? "out_addr" : "dst_addr",
                           "dst_space", composite ? "hbm" : tcm)) ||
        (rc = get_shape(c, "shape_a", &an, as)) || (rc = get_shape(c, "shape_b", &bn, bs)) ||
        (rc = get_dtype(c, "dtype_in", NULL, &din)) ||
        (rc = get_dtype(c, "dtype_out", NULL, &g->dtype_out)))
        return rc;
    if (an < 2 || bn < 2)
        return OP_FAIL(c->d, c->index, c->r, "params: shape_a and shape_b need 2 dimensions");
    g->dtype_in_a = g->dtype_in_b = din;
    if ((rc = get_layout(c, "layout_a", &g->a_col_major)) ||
        (rc = get_layout(c, "layout_b", &g->b_col_major)) ||
        (rc = get_layout(c, "layout_out", &g->out_col_major)) ||
        (rc = get_bool(c, "accumulate", false, &g->accumulate)))
        return rc;
    a->ndim = an;
    memcpy(a->shape, as, sizeof(as));
    b->ndim = bn;
    memcpy(b->shape, bs, sizeof(bs));

    /* m, k, n when the record gives them (D3.3) decide ambiguous transposes */
    int64_t km = -1, kk = -1, kn = -1;
    const struct sim_value *v;
    if ((v = pget(c, "m")) && v->type == SIM_V_INT)
        km = v->u.i;
    if ((v = pget(c, "k")) && v->type == SIM_V_INT)
        kk = v->u.i;
    if ((v = pget(c, "n")) && v->type == SIM_V_INT)
        kn = v->u.i;
    if ((rc = transpose_flag(c, "transpose_a", a, km, kk, &g->transpose_a)) ||
        (rc = transpose_flag(c, "transpose_b", b, kk, kn, &g->transpose_b)))
        return rc;
    int64_t a0 = as[an - 2], a1 = as[an - 1], b0 = bs[bn - 2], b1 = bs[bn - 1];
    g->m = g->transpose_a ? a1 : a0;
    g->k = g->transpose_a ? a0 : a1;
    int64_t kb = g->transpose_b ? b1 : b0;
    g->n = g->transpose_b ? b0 : b1;
    if (kb != g->k)
        return OP_FAIL(c->d, c->index, c->r,
                       "params: inner dimensions differ: op(A) is %" PRId64 "x%" PRId64
                       ", op(B) is %" PRId64 "x%" PRId64,
                       g->m, g->k, kb, g->n);
    if ((km >= 0 && km != g->m) || (kk >= 0 && kk != g->k) || (kn >= 0 && kn != g->n))
        return OP_FAIL(c->d, c->index, c->r,
                       "params: m, k, n are %" PRId64 ", %" PRId64 ", %" PRId64
                       " but the shapes make %" PRId64 ", %" PRId64 ", %" PRId64,
                       km, kk, kn, g->m, g->k, g->n);
    int64_t la = lead_of(an, as), lb = lead_of(bn, bs);
    g->batch = la > lb ? la : lb;
    if ((la != 1 && la != g->batch) || (lb != 1 && lb != g->batch))
        return OP_FAIL(c->d, c->index, c->r, "params: batch dimensions of A and B differ");
    g->a_batched = la == g->batch && la > 1;
    g->b_batched = lb == g->batch && lb > 1;
    if (composite && !pget(c, "shape_out")) {
        /* D3.5 has no shape_out: the batch dims of the larger operand, then m x n */
        const int64_t *ls = la >= lb ? as : bs;
        unsigned ln = la >= lb ? an : bn;
        for (unsigned i = 0; i + 2 < ln; i++)
            os[on++] = ls[i];
        os[on++] = g->m;
        os[on++] = g->n;
    } else if ((rc = get_shape(c, "shape_out", &on, os))) {
        return rc;
    }
    if (on < 2 || os[on - 2] != g->m || os[on - 1] != g->n || lead_of(on, os) != g->batch)
        return OP_FAIL(c->d, c->index, c->r,
                       "params: shape_out does not match the product (%" PRId64 " x %" PRId64
                       "x%" PRId64 ")",
                       g->batch, g->m, g->n);

    bool fin = sim_dtype_is_float(din);
    if (!fin && !dtype_is_int(din))
        return OP_FAIL(c->d, c->index, c->r, "params: GEMM on %s is not supported",
                       sim_dtype_name(din));
    if ((rc = get_dtype(c, "dtype_acc", fin ? "f32" : "i32", &g->dtype_acc)))
        return rc;
    if (fin && (!sim_dtype_is_float(g->dtype_acc) || !sim_dtype_is_float(g->dtype_out)))
        return OP_FAIL(c->d, c->index, c->r,
                       "params: a %s GEMM needs float dtype_acc and dtype_out, not %s and %s",
                       sim_dtype_name(din), sim_dtype_name(g->dtype_acc),
                       sim_dtype_name(g->dtype_out));
    if (!fin && g->dtype_acc != SIM_I32 && g->dtype_acc != SIM_I64)
        return OP_FAIL(c->d, c->index, c->r,
                       "params: an integer GEMM accumulates in i32 or i64, not %s",
                       sim_dtype_name(g->dtype_acc));
    if (g->dtype_out == SIM_BOOL)
        return OP_FAIL(c->d, c->index, c->r, "params: dtype_out bool is not supported");

    if ((rc = operand_layout(c, "A", -1, a, din, an, as)) ||
        (rc = operand_layout(c, "B", -1, b, din, bn, bs)) ||
        (rc = operand_layout(c, "the output", -1, out, g->dtype_out, on, os)))
        return rc;
    if (composite) {
        const struct sim_value *ob = pget(c, "out_nbytes");
        if (ob && ob->type == SIM_V_INT && (uint64_t)ob->u.i != out->nbytes)
            return OP_FAIL(c->d, c->index, c->r,
                           "params: out_nbytes is %" PRId64 " but the output has %zu bytes",
                           ob->u.i, out->nbytes);
    }
    o->n_in = 2;
    o->reads[o->n_reads++] = range_of(a);
    o->reads[o->n_reads++] = range_of(b);
    if (g->accumulate) {
        o->in[2] = *out;
        o->n_in = 3;
        o->reads[o->n_reads++] = range_of(out);
    }
    o->write = range_of(out);
    o->kind = SIM_EXEC_KIND_GEMM;
    return 0;
}

/* A list param of n items; optional ones may be missing (*out NULL then). */
static int get_list(struct dec *c, const char *key, bool optional, const struct sim_value **out,
                    size_t n)
{
    *out = pget(c, key);
    if (!*out && optional)
        return 0;
    int rc = check_type(c, key, *out, SIM_V_LIST);
    if (rc)
        return rc;
    assert(*out && "check_type fails on a missing value");
    if ((*out)->u.list.len != n)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' has %zu items, input_addrs %zu", key,
                       (*out)->u.list.len, n);
    return 0;
}

static int decode_math(struct dec *c, struct xop *o, const char *name)
{
    int rc;
    const struct sim_value *addrs, *shapes, *spaces = NULL, *dtypes = NULL, *snaps;
    if ((rc = want(c, "input_addrs", SIM_V_LIST, &addrs)))
        return rc;
    size_t n = addrs->u.list.len;
    if (n == 0 || n > SIM_EXEC_MAX_INPUTS)
        return OP_FAIL(c->d, c->index, c->r, "params: %zu inputs (1 to %d)", n,
                       SIM_EXEC_MAX_INPUTS);
    o->m = math_lookup(name, (unsigned)n);
    if (!o->m)
        return OP_FAIL(c->d, c->index, c->r, "unknown math op '%s' with %zu input%s", name, n,
                       n == 1 ? "" : "s");
    if ((rc = get_list(c, "input_shapes", false, &shapes, n)) ||
        (rc = get_list(c, "input_spaces", true, &spaces, n)) ||
        (rc = get_list(c, "input_dtypes", true, &dtypes, n)))
        return rc;
    snaps = pget(c, "input_snapshots");
    if (snaps && (snaps->type != SIM_V_LIST || snaps->u.list.len != n))
        snaps = NULL;

    struct operand *out = &o->out;
    const char *dst_space, *dts;
    enum sim_dtype odt;
    unsigned on;
    int64_t os[SIM_MAX_DIMS];
    if ((rc = get_u64(c, "dst_addr", &out->addr)) ||
        (rc = get_str(c, "dst_space", "tcm", &dst_space)) ||
        (rc = get_shape(c, "shape_out", &on, os)) || (rc = get_str(c, "dtype", NULL, &dts)) ||
        (rc = parse_dtype(c, "dtype", dts, &odt)))
        return rc;
    out->sid = space_id(c->x, dst_space);
    if ((rc = operand_layout(c, "the output", -1, out, odt, on, os)))
        return rc;

    for (size_t i = 0; i < n; i++) {
        struct operand *in = &o->in[i];
        const struct sim_value *av = addrs->u.list.items[i];
        if (av->type != SIM_V_INT || av->u.i < 0)
            return OP_FAIL(c->d, c->index, c->r, "params: input_addrs[%zu] is not an address", i);
        in->addr = (uint64_t)av->u.i;
        const char *sp = "tcm";
        if (spaces) {
            const struct sim_value *sv = spaces->u.list.items[i];
            if (sv->type != SIM_V_STR)
                return OP_FAIL(c->d, c->index, c->r, "params: input_spaces[%zu] is not a str", i);
            sp = sv->u.str.s;
        }
        in->sid = space_id(c->x, sp);
        enum sim_dtype dt = odt;
        if (dtypes) {
            const struct sim_value *dv = dtypes->u.list.items[i];
            if (dv->type != SIM_V_STR)
                return OP_FAIL(c->d, c->index, c->r, "params: input_dtypes[%zu] is not a str", i);
            if ((rc = parse_dtype(c, "input_dtypes", dv->u.str.s, &dt)))
                return rc;
        }
        unsigned nd;
        int64_t sh[SIM_MAX_DIMS];
        if ((rc = shape_of(c, "input_shapes", (long)i, shapes->u.list.items[i], &nd, sh)) ||
            (rc = operand_layout(c, "input_shapes", (long)i, in, dt, nd, sh)))
            return rc;
        in->snapshot = snaps ? tensor_value(snaps->u.list.items[i]) : NULL;
        if (in->snapshot && in->snapshot->nbytes != in->nbytes)
            in->snapshot = NULL; /* not usable as this input */
        o->reads[o->n_reads++] = range_of(in);
    }
    o->n_in = (unsigned)n;

    if (o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE) {
        for (size_t i = 0; i < n; i++) {
            size_t st[SIM_MAX_DIMS];
            if (!bcast_strides(o->in[i].ndim, o->in[i].shape, on, os, st))
                return OP_FAIL(c->d, c->index, c->r, "input %zu does not broadcast to shape_out",
                               i);
        }
    } else {
        const struct sim_value *ax = pget(c, "axis");
        o->has_axis = ax && ax->type != SIM_V_NULL;
        if (o->has_axis) {
            if (ax->type != SIM_V_INT)
                return OP_FAIL(c->d, c->index, c->r, "params: 'axis' is %s %s, expected an int",
                               vtype_article(ax->type), sim_vtype_name(ax->type));
            int64_t nd = o->in[0].ndim, a = ax->u.i < 0 ? ax->u.i + nd : ax->u.i;
            if (a < 0 || a >= nd)
                return OP_FAIL(c->d, c->index, c->r,
                               "params: axis %" PRId64 " is out of range for %" PRId64
                               " dimensions",
                               ax->u.i, nd);
            o->axis = (int)a;
        }
        size_t outer, len, inner;
        red_dims(o, &outer, &len, &inner);
        if (shape_numel(on, os) != outer * inner)
            return OP_FAIL(c->d, c->index, c->r,
                           "shape_out has %zu elements, the reduction makes %zu",
                           shape_numel(on, os), outer * inner);
    }
    o->write = range_of(out);
    o->kind = SIM_EXEC_KIND_MATH;
    return 0;
}

/* Decode record index into o. A record with nothing to replay gets kind NONE and *skip. */
static int decode(struct sim_exec *x, size_t index, const struct sim_op_record *r, struct xop *o,
                  enum sim_exec_status *skip, struct diag *d)
{
    memset(o, 0, sizeof(*o));
    o->index = index;
    o->rec = r;
    o->batch = -1;
    *skip = SIM_EXEC_SKIP_NO_DATA;
    struct dec c = {x, index, r, r->params, d};
    if (!r->params || r->params->type != SIM_V_MAP) {
        if (strcmp(r->op_kind, "unknown") != 0)
            return OP_FAIL(d, index, r, "params is not a map");
        *skip = SIM_EXEC_SKIP_UNKNOWN;
        return 0;
    }
    const char *name = r->op_name;
    if (strcmp(r->op_kind, "memory") == 0) {
        if (strcmp(name, "dma_read") == 0) {
            if (!sim_value_map_get(r->params, "dst_addr") && !replay_get(r, "dst_addr"))
                return 0; /* materialised by phase 1 */
            return decode_copy(&c, o, "hbm", NULL);
        }
        if (strcmp(name, "dma_write") == 0)
            return decode_copy(&c, o, "tcm", "hbm");
        if (strcmp(name, "ipcq_copy") == 0)
            return decode_copy(&c, o, NULL, NULL);
        return OP_FAIL(d, index, r, "unknown memory op");
    }
    if (strcmp(r->op_kind, "gemm") == 0)
        return decode_gemm(&c, o, strncmp(name, "composite_", 10) == 0);
    if (strcmp(r->op_kind, "math") == 0) {
        if (strncmp(name, "composite_", 10) == 0) {
            /* D3.5 has no input: replayable when the replay annotations name it */
            const char *op = sim_value_get_str(r->note.replay, "math_op", NULL);
            return op ? decode_math(&c, o, op) : 0;
        }
        return decode_math(&c, o, name);
    }
    if (strcmp(r->op_kind, "unknown") == 0 && strncmp(name, "TileToken/", 10) == 0) {
        const char *st = sim_value_get_str(r->params, "stage_type", name + 10);
        if (strcmp(st, "DMA_READ") == 0 || strcmp(st, "DMA_WRITE") == 0) {
            if (!sim_value_map_get(r->params, "src_addr") ||
                !sim_value_map_get(r->params, "dst_addr"))
                return 0;
            return decode_copy(&c, o, NULL, NULL);
        }
        if (strcmp(st, "GEMM") == 0) {
            if (!sim_value_map_get(r->params, "src_a_addr"))
                return 0;
            return decode_gemm(&c, o, false);
        }
        if (strcmp(st, "MATH") == 0) {
            const char *op = sim_value_get_str(r->params, "op", NULL);
            if (!op || !sim_value_map_get(r->params, "input_addrs"))
                return 0;
            return decode_math(&c, o, op);
        }
        return 0;
    }
    if (strcmp(r->op_kind, "unknown") == 0) {
        *skip = SIM_EXEC_SKIP_UNKNOWN;
        return 0;
    }
    return OP_FAIL(d, index, r, "unknown op_kind '%s'", r->op_kind);
}

/* ---- the worker pool --------------------------------------------------------------------- */

static void task_run(const struct task *t)
{
    for (size_t i = 0; i < t->n; i++)
        op_compute(t->ops[i]);
}

static void *worker_main(void *arg)
{
    struct pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->next >= p->n_tasks)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->quit)
            break;
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        task_run(&p->tasks[i]);
        pthread_mutex_lock(&p->mu);
        if (++p->finished == p->n_tasks)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void pool_start(struct sim_exec *x)
{
    struct pool *p = &x->pool;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (unsigned i = 0; i + 1 < x->opts.threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0)
            break; /* fewer workers: the caller runs what they do not */
        p->n_threads++;
    }
    x->pool_started = true;
}

static void pool_stop(struct sim_exec *x)
{
    struct pool *p = &x->pool;
    if (!x->pool_started)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    x->pool_started = false;
}

/* Run tasks[0..n) on the pool (or on the caller's thread alone unless parallel), the
 * caller taking its share; returns when all are done. */
static void pool_run(struct sim_exec *x, struct task *tasks, size_t n, bool parallel)
{
    if (n == 0)
        return;
    if (n == 1 || x->opts.threads <= 1 || !parallel) {
        for (size_t i = 0; i < n; i++)
            task_run(&tasks[i]);
        return;
    }
    if (!x->pool_started)
        pool_start(x);
    struct pool *p = &x->pool;
    pthread_mutex_lock(&p->mu);
    p->tasks = tasks;
    p->n_tasks = n;
    p->next = 0;
    p->finished = 0;
    pthread_cond_broadcast(&p->work);
    while (p->next < p->n_tasks) {
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        task_run(&tasks[i]);
        pthread_mutex_lock(&p->mu);
        p->finished++;
    }
    while (p->finished < p->n_tasks)
        pthread_cond_wait(&p->done, &p->mu);
    p->tasks = NULL;
    pthread_mutex_unlock(&p->mu);
}

/* ---- scheduling -------------------------------------------------------------------------- */

static bool overlaps(const struct range *a, const struct range *b)
{
    return a->sid == b->sid && a->lo < b->hi && b->lo < a->hi;
}

/* RAW, WAR or WAW between two ops. */
static bool conflict(const struct xop *a, const struct xop *b)
{
    if (overlaps(&a->write, &b->write))
        return true;
    for (unsigned i = 0; i < b->n_reads; i++)
        if (overlaps(&a->write, &b->reads[i]))
            return true;
    for (unsigned i = 0; i < a->n_reads; i++)
        if (overlaps(&b->write, &a->reads[i]))
            return true;
    return false;
}

/* Same batch key: GEMMs whose shapes, dtypes, layouts and flags are all equal. */
static bool same_gemm(const struct xop *a, const struct xop *b)
{
    const struct sim_exec_gemm *x = &a->g, *y = &b->g;
    return x->m == y->m && x->n == y->n && x->k == y->k && x->batch == y->batch &&
           x->a_batched == y->a_batched && x->b_batched == y->b_batched &&
           x->transpose_a == y->transpose_a && x->transpose_b == y->transpose_b &&
           x->a_col_major == y->a_col_major && x->b_col_major == y->b_col_major &&
           x->out_col_major == y->out_col_major && x->accumulate == y->accumulate &&
           x->dtype_in_a == y->dtype_in_a && x->dtype_in_b == y->dtype_in_b &&
           x->dtype_acc == y->dtype_acc && x->dtype_out == y->dtype_out &&
           a->in[0].ndim == b->in[0].ndim && a->in[1].ndim == b->in[1].ndim &&
           memcmp(a->in[0].shape, b->in[0].shape, a->in[0].ndim * sizeof(int64_t)) == 0 &&
           memcmp(a->in[1].shape, b->in[1].shape, a->in[1].ndim * sizeof(int64_t)) == 0;
}

/* Scratch for one run. */
struct run {
    struct sim_exec *x;
    struct sim_op_record *const *recs;
    size_t n;
    struct diag *d;
    struct xop *ops; /* decoded ops of the current group */
    size_t cap_ops;
    size_t chunk; /* global chunk counter */
    size_t wave;  /* global wave counter */
    int64_t batch;
    /* per chunk */
    struct xop **order; /* chunk ops in position order */
    size_t **preds;     /* per position: predecessor positions */
    size_t *n_preds, *cap_preds;
    struct xop **wave_ops;
    struct task *tasks;
    struct xop **task_ops;
    bool *taken;
};

/* Levels by longest path over the predecessor lists; -1 on a cycle. */
static int level_chunk(struct run *R, size_t g)
{
    for (size_t j = 0; j < g; j++)
        R->order[j]->level = 0;
    for (size_t pass = 0; pass <= g; pass++) {
        bool changed = false;
        for (size_t j = 0; j < g; j++) {
            unsigned lv = R->order[j]->level;
            for (size_t q = 0; q < R->n_preds[j]; q++) {
                unsigned pl = R->order[R->preds[j][q]]->level + 1;
                if (pl > lv)
                    lv = pl;
            }
            if (lv != R->order[j]->level) {
                R->order[j]->level = lv;
                changed = true;
            }
        }
        if (!changed)
            return 0;
    }
    return -1;
}

static void add_pred(struct run *R, size_t j, size_t i)
{
    if (R->n_preds[j] == R->cap_preds[j]) {
        R->cap_preds[j] = R->cap_preds[j] ? 2 * R->cap_preds[j] : 8;
        R->preds[j] = sim_xreallocarray(R->preds[j], R->cap_preds[j], sizeof(size_t));
    }
    R->preds[j][R->n_preds[j]++] = i;
}

/* The element operations of an op, to decide whether its wave is worth the workers. */
static double op_work(const struct xop *o)
{
    switch (o->kind) {
    case SIM_EXEC_KIND_GEMM:
        return (double)o->g.batch * (double)o->g.m * (double)o->g.n * (double)o->g.k;
    case SIM_EXEC_KIND_MATH: {
        double w = 0;
        for (unsigned i = 0; i < o->n_in; i++)
            w += (double)shape_numel(o->in[i].ndim, o->in[i].shape);
        return w;
    }
    case SIM_EXEC_KIND_COPY: return o->move ? (double)o->tout->nbytes / 4 : 0;
    default: return 0;
    }
}

/* Perturb t's first element (the corrupt test hook). */
static void corrupt_tensor(struct sim_tensor *t)
{
    if (sim_tensor_numel(t) == 0)
        return;
    double v = sim_tensor_get(t, 0);
    double nv = isfinite(v) ? (fabs(v) < 1 ? v + 1 : v * 1.5) : 0;
    sim_tensor_set(t, 0, nv);
    if (sim_tensor_get(t, 0) == v)
        sim_tensor_set(t, 0, v - 1);
}

static void release_wave(struct xop **w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (unsigned k = 0; k < SIM_EXEC_MAX_INPUTS; k++) {
            sim_tensor_unref(w[i]->tin[k]);
            w[i]->tin[k] = NULL;
        }
        sim_tensor_unref(w[i]->tout);
        w[i]->tout = NULL;
    }
}

/*
 * The tensor at o's destination when o may write its result straight into it: held by the
 * store alone (so nobody sees the write but the store), laid out as the result, and read
 * by o only where that is safe: as an elementwise input covering exactly the destination,
 * or as the accumulated C of a GEMM (C is in and out for BLAS). NULL otherwise. Saves an
 * allocation per op in the steady state of a kernel that reuses its buffers. Never with an
 * op hook: the hook must see the inputs as the op read them.
 */
static struct sim_tensor *reusable_output(struct sim_exec *x, const struct xop *o,
                                          enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    if (x->hook)
        return NULL;
    struct sim_tensor *e = sim_memstore_get(x->store, x->spaces[o->out.sid].name, o->out.addr);
    if (!e || e->base || e->refs != 1 || e->nbytes != o->out.nbytes || e->dtype != dtype ||
        e->ndim != ndim || memcmp(e->shape, shape, ndim * sizeof(*shape)) != 0)
        return NULL;
    size_t onumel = shape_numel(o->out.ndim, o->out.shape);
    for (unsigned i = 0; i < o->n_reads; i++) {
        const struct range *r = &o->reads[i];
        if (!overlaps(r, &o->write))
            continue;
        bool same = r->lo == o->write.lo && r->hi == o->write.hi;
        bool ok = same &&
                  ((o->kind == SIM_EXEC_KIND_GEMM && o->g.accumulate && i == 2) ||
                   (o->kind == SIM_EXEC_KIND_MATH && o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE &&
                    shape_numel(o->in[i].ndim, o->in[i].shape) == onumel));
        if (!ok)
            return NULL;
    }
    return e;
}

/* Prepare one op: read its inputs, make its output. */
static int prepare_op(struct run *R, struct xop *o)
{
    struct sim_exec *x = R->x;
    /* decided before the inputs take their references */
    struct sim_tensor *reuse = NULL;
    if (o->kind != SIM_EXEC_KIND_COPY)
        reuse = reusable_output(x, o, o->out.dtype, o->out.ndim, o->out.shape);
    o->derived = o->kind != SIM_EXEC_KIND_COPY;
    if (o->kind == SIM_EXEC_KIND_COPY) {
        const struct operand *src = &o->in[0];
        bool computed = derived_any(&x->spaces[src->sid], src->addr, src->addr + src->nbytes);
        o->from_snapshot = src->snapshot && !computed;
        o->derived = computed;
    }
    for (unsigned i = 0; i < o->n_in; i++) {
        struct operand *in = &o->in[i];
        if (o->kind == SIM_EXEC_KIND_COPY && o->from_snapshot) {
            struct sim_tensor *s = in->snapshot;
            if (in->dtype == AS_STORED ||
                (s->dtype == in->dtype && s->ndim == in->ndim &&
                 memcmp(s->shape, in->shape, in->ndim * sizeof(int64_t)) == 0))
                o->tin[i] = sim_tensor_ref(s);
            else
                o->tin[i] = sim_tensor_view(s, in->dtype, in->ndim, in->shape, NULL);
            assert(o->tin[i] && "snapshot size checked at decode");
            continue;
        }
        struct diag rd; /* filled by mem_read on failure */
        rd.msg[0] = '\0';
        int rc = mem_read(x, in, &o->tin[i], &rd);
        if (rc < 0 && o->kind == SIM_EXEC_KIND_MATH && in->snapshot) {
            /* not in phase 2's store: the value phase 1 saw is the best there is */
            o->tin[i] = sim_tensor_view(in->snapshot, in->dtype, in->ndim, in->shape, NULL);
            rc = o->tin[i] ? 0 : rc;
        }
        if (rc < 0)
            return OP_FAIL(R->d, o->index, o->rec, "input %u: %s", i, rd.msg);
    }
    if (o->kind == SIM_EXEC_KIND_COPY) {
        /* the source is shared by reference (copy on write keeps it a copy); only a copy
         * to be corrupted is moved by a task */
        struct sim_tensor *src = o->tin[0];
        o->move = x->opts.corrupt && x->opts.corrupt_index == o->index;
        if (!o->move) {
            o->tout = sim_tensor_ref(src);
        } else {
            reuse = reusable_output(x, o, src->dtype, src->ndim, src->shape);
            o->tout =
                reuse ? sim_tensor_ref(reuse) : tensor_uninit(src->dtype, src->ndim, src->shape);
        }
    } else {
        o->tout =
            reuse ? sim_tensor_ref(reuse) : tensor_uninit(o->out.dtype, o->out.ndim, o->out.shape);
    }
    return 0;
}

static void fill_op_data(const struct sim_exec *x, const struct xop *o, struct sim_exec_op_data *v)
{
    memset(v, 0, sizeof(*v));
    v->index = o->index;
    v->rec = o->rec;
    v->kind = o->kind;
    v->n_inputs = o->n_in;
    for (unsigned i = 0; i < o->n_in; i++) {
        v->inputs[i] = o->tin[i];
        bool snap = o->kind == SIM_EXEC_KIND_COPY && o->from_snapshot;
        v->input_spaces[i] = snap ? NULL : x->spaces[o->in[i].sid].name;
        v->input_addrs[i] = o->in[i].addr;
    }
    v->from_snapshot = o->from_snapshot;
    v->output = o->tout;
    v->dst_space = x->spaces[o->out.sid].name;
    v->dst_addr = o->out.addr;
    v->gemm = o->g;
    if (o->m) {
        v->math.op = o->m->pub.name;
        v->math.has_axis = o->has_axis;
        v->math.axis = o->axis;
    }
}

/* Write o's result to the store and record where phase 2's computed data now is. */
static void commit_op(struct sim_exec *x, const struct xop *o)
{
    mem_write(x, o->out.sid, o->out.addr, o->tout, o->rec);
    derived_set(&x->spaces[o->out.sid], o->out.addr, o->out.addr + o->tout->nbytes, o->derived);
}

/* Run one wave: prepare, compute, corrupt hook, op hook, commit. Returns 0, 1 (stopped by
 * the hook) or a negative error. */
static int run_wave(struct run *R, struct xop **w, size_t n)
{
    struct sim_exec *x = R->x;
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if ((rc = prepare_op(R, w[i])) < 0)
            goto out_release;

    /* tasks: GEMM batches split over the workers, every other compute op alone */
    size_t nt = 0, nto = 0;
    bool *taken = R->taken;
    memset(taken, 0, n * sizeof(*taken));
    for (size_t i = 0; i < n; i++) {
        struct xop *o = w[i];
        if (taken[i] || (o->kind == SIM_EXEC_KIND_COPY && !o->move))
            continue;
        size_t start = nto;
        R->task_ops[nto++] = o;
        taken[i] = true;
        if (o->kind == SIM_EXEC_KIND_GEMM && !x->opts.no_batch)
            for (size_t j = i + 1; j < n; j++)
                if (!taken[j] && w[j]->kind == SIM_EXEC_KIND_GEMM && same_gemm(o, w[j])) {
                    R->task_ops[nto++] = w[j];
                    taken[j] = true;
                }
        size_t bn = nto - start;
        if (bn >= 2) {
            int64_t id = R->batch++;
            for (size_t j = start; j < nto; j++) {
                R->task_ops[j]->batch = id;
                x->info[R->task_ops[j]->index].pub.batch = id;
            }
            x->stats.gemm_batches++;
            x->stats.gemms_batched += bn;
        }
        /* tasks of at least TASK_MIN_WORK each (a big GEMM is a task of its own, small
         * ones go together), so the workers share the batch and stay balanced */
        double each = op_work(o);
        size_t per = each >= TASK_MIN_WORK ? 1 : (size_t)(TASK_MIN_WORK / (each + 1)) + 1;
        for (size_t s = start; s < nto; s += per)
            R->tasks[nt++] = (struct task){&R->task_ops[s], nto - s < per ? nto - s : per};
    }
    double work = 0;
    for (size_t i = 0; i < n; i++)
        work += op_work(w[i]);
    pool_run(x, R->tasks, nt, work >= PARALLEL_MIN_WORK);

    if (x->opts.corrupt)
        for (size_t i = 0; i < n; i++)
            if (w[i]->index == x->opts.corrupt_index)
                corrupt_tensor(w[i]->tout);

    if (x->hook) {
        for (size_t i = 0; i < n; i++) {
            struct sim_exec_op_data v;
            fill_op_data(x, w[i], &v);
            if (x->hook(x->hook_ctx, &v) != 0) {
                /* the ops of the wave up to this one are done; the rest stay pending */
                for (size_t j = 0; j <= i; j++)
                    commit_op(x, w[j]);
                for (size_t j = 0; j <= i; j++)
                    x->info[w[j]->index].pub.status = SIM_EXEC_DONE;
                x->stats.executed += i + 1;
                rc = 1;
                goto out_release;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        commit_op(x, w[i]);
        x->info[w[i]->index].pub.status = SIM_EXEC_DONE;
    }
    x->stats.executed += n;
    x->stats.waves++;
    if (n >= 2)
        x->stats.parallel_ops += n;
out_release:
    release_wave(w, n);
    return rc;
}

/* Schedule and run one chunk of ops (R->order[0..g)). */
static int run_chunk(struct run *R, size_t g)
{
    struct sim_exec *x = R->x;
    size_t chunk = R->chunk++;
    for (size_t j = 0; j < g; j++) {
        R->order[j]->pos = j;
        R->n_preds[j] = 0;
        x->info[R->order[j]->index].chunk = chunk;
    }
    for (size_t j = 0; j < g; j++) {
        struct xop *o = R->order[j];
        for (size_t i = 0; i < j; i++)
            if (conflict(R->order[i], o))
                add_pred(R, j, i);
        const struct sim_op_record *r = o->rec;
        for (size_t q = 0; q < r->n_dependency_ids; q++) {
            int64_t dep = r->dependency_ids[q];
            if (dep < 0 || (uint64_t)dep >= R->n)
                return OP_FAIL(R->d, o->index, r,
                               "dependency_ids names op #%" PRId64
                               ", which does not exist (%zu records)",
                               dep, R->n);
            if ((size_t)dep == o->index)
                return OP_FAIL(R->d, o->index, r, "dependency_ids names the op itself");
            const struct rinfo *di = &x->info[dep];
            if (di->pub.status == SIM_EXEC_SKIP_UNKNOWN || di->pub.status == SIM_EXEC_SKIP_NO_DATA)
                continue;
            if (di->chunk == chunk) {
                for (size_t i = 0; i < g; i++)
                    if (R->order[i]->index == (size_t)dep)
                        add_pred(R, j, i);
            } else if (di->chunk == SIZE_MAX || di->chunk > chunk) {
                return OP_FAIL(R->d, o->index, r,
                               "dependency_ids names op #%" PRId64 " (%s at %g ns), which"
                               " runs later",
                               dep, R->recs[dep]->op_name, R->recs[dep]->t_start);
            }
        }
    }
    if (level_chunk(R, g) < 0)
        return OP_FAIL(R->d, R->order[0]->index, R->order[0]->rec,
                       "dependency_ids form a cycle among the ops at this t_start");
    unsigned max_level = 0;
    for (size_t j = 0; j < g; j++)
        if (R->order[j]->level > max_level)
            max_level = R->order[j]->level;
    for (unsigned lv = 0; lv <= max_level; lv++) {
        size_t n = 0;
        for (size_t j = 0; j < g; j++)
            if (R->order[j]->level == lv)
                R->wave_ops[n++] = R->order[j];
        if (n == 0)
            continue;
        for (size_t i = 0; i < n; i++)
            x->info[R->wave_ops[i]->index].pub.wave = R->wave;
        R->wave++;
        int rc = run_wave(R, R->wave_ops, n);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Decode and run the group recs[gs..ge) (equal t_start). */
static int run_group(struct run *R, size_t gs, size_t ge, size_t group)
{
    struct sim_exec *x = R->x;
    size_t n = ge - gs;
    if (n > R->cap_ops) {
        R->cap_ops = n;
        R->ops = sim_xreallocarray(R->ops, n, sizeof(*R->ops));
    }
    size_t active = 0;
    for (size_t i = gs; i < ge; i++) {
        struct xop *o = &R->ops[active];
        enum sim_exec_status skip;
        x->info[i].pub.group = group;
        int rc = decode(x, i, R->recs[i], o, &skip, R->d);
        if (rc < 0)
            return rc;
        x->info[i].pub.kind = o->kind;
        if (o->kind == SIM_EXEC_KIND_NONE) {
            x->info[i].pub.status = skip;
            x->stats.skipped++;
            continue;
        }
        active++;
    }
    /* memory ops first, the others after, each in record order (ADR-0052 A4) */
    size_t g = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < active; i++)
            if (R->ops[i].memory_class == (pass == 0)) {
                R->order[g++] = &R->ops[i];
                if (g == CHUNK_MAX) {
                    int rc = run_chunk(R, g);
                    if (rc)
                        return rc;
                    g = 0;
                }
            }
    return g ? run_chunk(R, g) : 0;
}

/* ---- public API -------------------------------------------------------------------------- */

struct sim_exec *sim_exec_new(const struct sim_memstore *phase1, const struct sim_exec_opts *opts)
{
    struct sim_exec *x = sim_xcalloc(1, sizeof(*x));
    if (opts)
        x->opts = *opts;
    if (x->opts.threads == 0)
        x->opts.threads = SIM_EXEC_DEFAULT_THREADS;
    if (x->opts.threads > SIM_EXEC_MAX_THREADS)
        x->opts.threads = SIM_EXEC_MAX_THREADS;
    x->store = sim_memstore_snapshot(phase1);
    size_t ns = sim_memstore_space_count(x->store);
    for (size_t i = 0; i < ns; i++) {
        const char *name = sim_memstore_space_name(x->store, i);
        uint32_t sid = space_id(x, name); /* may move x->spaces */
        struct space *sp = &x->spaces[sid];
        size_t ne;
        struct sim_memstore_entry *e = sim_memstore_entries(x->store, name, &ne);
        for (size_t j = 0; j < ne; j++)
            index_set(sp, e[j].addr, e[j].tensor->nbytes);
        free(e);
    }
    return x;
}

void sim_exec_free(struct sim_exec *x)
{
    if (!x)
        return;
    pool_stop(x);
    for (size_t i = 0; i < x->n_spaces; i++) {
        free(x->spaces[i].name);
        free(x->spaces[i].e);
        free(x->spaces[i].dv);
    }
    free(x->spaces);
    free(x->info);
    sim_memstore_free(x->store);
    free(x);
}

void sim_exec_set_op_hook(struct sim_exec *x, sim_exec_op_fn fn, void *ctx)
{
    x->hook = fn;
    x->hook_ctx = ctx;
}

int sim_exec_run(struct sim_exec *x, struct sim_op_record *const *recs, size_t n, struct diag *d)
{
    assert(!x->ran && "sim_exec_run runs once per executor");
    x->ran = true;
    double t0 = now_s();
    x->info = sim_xcalloc(n ? n : 1, sizeof(*x->info));
    for (size_t i = 0; i < n; i++) {
        x->info[i].pub.batch = -1;
        x->info[i].chunk = SIZE_MAX;
    }
    x->n_records = n;
    memset(&x->stats, 0, sizeof(x->stats));
    x->stats.records = n;

    struct run R = {.x = x, .recs = recs, .n = n, .d = d};
    R.order = sim_xcalloc(CHUNK_MAX, sizeof(struct xop *));
    R.preds = sim_xcalloc(CHUNK_MAX, sizeof(*R.preds));
    R.n_preds = sim_xcalloc(CHUNK_MAX, sizeof(*R.n_preds));
    R.cap_preds = sim_xcalloc(CHUNK_MAX, sizeof(*R.cap_preds));
    R.wave_ops = sim_xcalloc(CHUNK_MAX, sizeof(struct xop *));
    R.tasks = sim_xcalloc(CHUNK_MAX, sizeof(*R.tasks));
    R.task_ops = sim_xcalloc(CHUNK_MAX, sizeof(struct xop *));
    R.taken = sim_xcalloc(CHUNK_MAX, sizeof(*R.taken));

    int rc = 0;
    size_t group = 0;
    for (size_t gs = 0; gs < n && rc == 0;) {
        size_t ge = gs + 1;
        while (ge < n && recs[ge]->t_start == recs[gs]->t_start)
            ge++;
        rc = run_group(&R, gs, ge, group++);
        gs = ge;
    }
    x->stats.groups = group;

    for (size_t i = 0; i < CHUNK_MAX; i++)
        free(R.preds[i]);
    free(R.preds);
    free(R.n_preds);
    free(R.cap_preds);
    free(R.order);
    free(R.wave_ops);
    free(R.tasks);
    free(R.task_ops);
    free(R.taken);
    free(R.ops);
    x->stats.seconds = now_s() - t0;
    return rc;
}

struct sim_memstore *sim_exec_store(struct sim_exec *x)
{
    return x->store;
}

uint64_t sim_exec_read_bytes(struct sim_exec *x, const char *space, uint64_t addr, uint64_t n,
                             void *buf)
{
    memset(buf, 0, n);
    const struct space *sp = NULL;
    for (size_t i = 0; i < x->n_spaces && !sp; i++)
        if (strcmp(x->spaces[i].name, space) == 0)
            sp = &x->spaces[i];
    if (!sp || n == 0)
        return 0;
    uint64_t end = addr + n, held = 0, covered = addr;
    uint64_t floor = addr > sp->max_nbytes ? addr - sp->max_nbytes : 0;
    for (size_t i = index_lower(sp, floor); i < sp->n && sp->e[i].addr < end; i++) {
        const struct sentry *e = &sp->e[i];
        uint64_t lo = e->addr > addr ? e->addr : addr;
        uint64_t hi = e->addr + e->nbytes < end ? e->addr + e->nbytes : end;
        const struct sim_tensor *t = sim_memstore_get(x->store, sp->name, e->addr);
        if (lo >= hi || !t || t->nbytes != e->nbytes)
            continue;
        memcpy((unsigned char *)buf + (lo - addr), (const unsigned char *)t->data + (lo - e->addr),
               hi - lo);
        uint64_t from = lo > covered ? lo : covered; /* count each byte once */
        if (hi > from) {
            held += hi - from;
            covered = hi;
        }
    }
    return held;
}

const struct sim_exec_op_info *sim_exec_op_info(const struct sim_exec *x, size_t i)
{
    assert(i < x->n_records);
    return &x->info[i].pub;
}

const struct sim_exec_stats *sim_exec_stats(const struct sim_exec *x)
{
    return &x->stats;
}
