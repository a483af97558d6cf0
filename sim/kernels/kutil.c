/*
 * Helpers shared by the built-in kernels (see kernels.h): parameter checks for their
 * setups, the PEs of a launch, and rows of a tensor argument from whichever shard holds
 * them, so a kernel works the same on generated launches (inputs split by rows) and on
 * hand-written workloads (an input whole on one PE).
 */
#include "sim/kernels/kernels.h"

#include "sim/chip/config.h"
#include "sim/util/xalloc.h"

#include <stdio.h>
#include <string.h>

int sim_kutil_pes(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int64_t pes = sim_kparams_int(p, "pes");
    unsigned total = sim_config_total_pes(sim_kbuild_config(b));
    if (pes < 0 || pes > (int64_t)total)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k %s: key 'pes': %lld, must be 0 (every PE) to %u (the chip's PEs)",
                        p->kernel->name, (long long)pes, total);
    unsigned n = pes == 0 ? total : (unsigned)pes;
    int rc = sim_kbuild_pes(b, n, d);
    return rc < 0 ? rc : (int)n;
}

int sim_kutil_at_least(const struct sim_kparams *p, const char *key, int64_t min, struct diag *d)
{
    int64_t v = sim_kparams_int(p, key);
    if (v < min)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "-k %s: key '%s': %lld, must be >= %lld",
                        p->kernel->name, key, (long long)v, (long long)min);
    return 0;
}

int sim_kutil_divides(const struct sim_kparams *p, const char *key, int64_t by, const char *what,
                      struct diag *d)
{
    int64_t v = sim_kparams_int(p, key);
    if (by <= 0 || v % by != 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k %s: key '%s': %lld does not divide by %s (%lld)", p->kernel->name, key,
                        (long long)v, what, (long long)by);
    return 0;
}

int sim_kutil_dtype(const struct sim_kparams *p, const enum sim_dtype *allowed, size_t n,
                    struct diag *d)
{
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    char list[128] = "";
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (allowed[i] == dt)
            return 0;
        len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0, "%s%s",
                                i ? ", " : "", sim_dtype_name(allowed[i]));
    }
    return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "-k %s: key 'dtype': %s is not supported (%s)",
                    p->kernel->name, sim_dtype_name(dt), list);
}

double sim_kutil_round(enum sim_dtype dt, double v)
{
    int64_t one = 1;
    struct sim_tensor *t = sim_tensor_new(dt, 1, &one);
    sim_tensor_set(t, 0, v);
    double r = sim_tensor_get(t, 0);
    sim_tensor_unref(t);
    return r;
}

enum sim_dtype sim_kutil_gemm_out(enum sim_dtype dt)
{
    return sim_dtype_is_float(dt) ? dt : SIM_I32;
}

int sim_kutil_tensor(struct sim_kbuild *b, const char *label, enum sim_dtype dt, unsigned ndim,
                     const int64_t *shape, enum sim_kfill fill, double lo, double hi, bool split,
                     bool read_back, struct diag *d)
{
    struct sim_ktensor t = {label, dt, ndim, shape, fill, lo, hi, split, read_back, 0, NULL};
    return sim_kbuild_tensor(b, &t, d);
}

/* ---- in kernels ------------------------------------------------------------------------- */

static const struct karg *tensor_arg(struct tl *tl, const struct kargs *a, size_t i)
{
    if (i >= a->n || !a->v[i].is_tensor)
        tl_fail(tl, "argument %zu: expected a tensor", i);
    if (!a->v[i].has_dtype || a->v[i].ndim < 1)
        tl_fail(tl, "argument %zu: the launch gives no dtype and shape for it", i);
    return &a->v[i];
}

int64_t sim_kutil_row_elems(struct tl *tl, const struct kargs *a, size_t i)
{
    const struct karg *k = tensor_arg(tl, a, i);
    int64_t n = 1;
    for (unsigned d = 1; d < k->ndim; d++)
        n *= k->shape[d];
    return n;
}

static uint64_t row_bytes(struct tl *tl, const struct kargs *a, size_t i)
{
    const struct karg *k = tensor_arg(tl, a, i);
    return (uint64_t)sim_kutil_row_elems(tl, a, i) * sim_dtype_size(k->dtype);
}

int64_t sim_kutil_my_rows(struct tl *tl, const struct kargs *a, size_t i, int64_t *rows)
{
    const struct karg *k = tensor_arg(tl, a, i);
    if (k->mine < 0) {
        *rows = 0; /* a PE past the last row */
        return 0;
    }
    const struct kshard *s = &k->shards[k->mine];
    uint64_t rb = row_bytes(tl, a, i);
    if (rb == 0 || s->offset_bytes % rb || s->nbytes % rb)
        tl_fail(tl, "argument %zu: this PE's shard is not a whole number of rows", i);
    *rows = (int64_t)(s->nbytes / rb);
    return (int64_t)(s->offset_bytes / rb);
}

struct tl_tensor *sim_kutil_rows(struct tl *tl, const struct kargs *a, size_t i, int64_t row0,
                                 int64_t nrows)
{
    const struct karg *k = tensor_arg(tl, a, i);
    uint64_t rb = row_bytes(tl, a, i);
    uint64_t lo = (uint64_t)row0 * rb, hi = lo + (uint64_t)nrows * rb;
    long long end = row0 + nrows;
    if (row0 < 0 || nrows < 0 || end > k->shape[0])
        tl_fail(tl, "argument %zu: rows %lld to %lld of %lld", i, (long long)row0, end,
                (long long)k->shape[0]);
    for (size_t j = 0; j < k->n_shards; j++) {
        const struct kshard *s = &k->shards[j];
        if (lo < s->offset_bytes || hi > s->offset_bytes + s->nbytes)
            continue;
        struct tl_tensor *t = tl_arg_shard(tl, a, i, j);
        int64_t shape[SIM_MAX_DIMS];
        shape[0] = nrows;
        for (unsigned d = 1; d < k->ndim; d++)
            shape[d] = k->shape[d];
        size_t ds = sim_dtype_size(k->dtype);
        return tl_view(tl, t, (lo - s->offset_bytes) / ds, k->ndim, shape);
    }
    tl_fail(tl, "argument %zu: no shard holds rows %lld to %lld", i, (long long)row0, end);
}

struct tl_tensor *sim_kutil_slab(struct tl *tl, const struct kargs *a, size_t i, uint64_t offset,
                                 unsigned ndim, const int64_t *shape)
{
    const struct karg *k = tensor_arg(tl, a, i);
    size_t ds = sim_dtype_size(k->dtype);
    uint64_t n = 1;
    for (unsigned d = 0; d < ndim; d++)
        n *= (uint64_t)shape[d];
    uint64_t lo = offset * ds, hi = lo + n * ds;
    /* this PE's shards first: a replicated part is read where it is closest */
    for (int pass = 0; pass < 2; pass++)
        for (size_t j = 0; j < k->n_shards; j++) {
            const struct kshard *s = &k->shards[j];
            bool here = s->sip == a->sip && s->cube == a->cube && s->pe == a->pe;
            if (here != (pass == 0) || lo < s->offset_bytes || hi > s->offset_bytes + s->nbytes)
                continue;
            struct tl_tensor *t = tl_arg_shard(tl, a, i, j);
            int64_t flat = (int64_t)(s->nbytes / ds);
            t = tl_reshape(tl, t, 1, &flat);
            return tl_view(tl, t, (lo - s->offset_bytes) / ds, ndim, shape);
        }
    unsigned long long first = offset, end = offset + n;
    tl_fail(tl, "argument %zu: no shard holds elements %llu to %llu", i, first, end);
}

void sim_kutil_split(int64_t n, int64_t parts, int64_t p, int64_t *lo, int64_t *hi)
{
    int64_t q = n / parts, extra = n % parts;
    *lo = p * q + (p < extra ? p : extra);
    *hi = *lo + q + (p < extra ? 1 : 0);
}

int64_t sim_kutil_tile_rows(uint64_t avail, const uint64_t *row_bytes, size_t n, int64_t max)
{
    for (int64_t r = max; r > 0; r--) {
        uint64_t total = 0;
        for (size_t i = 0; i < n; i++)
            total += ((uint64_t)r * row_bytes[i] + 63) / 64 * 64;
        if (total <= avail)
            return r;
    }
    return 0;
}

/* ---- references ---------------------------------------------------------------------------- */

double *sim_kutil_doubles(const struct sim_tensor *t)
{
    size_t n = sim_tensor_numel(t);
    double *v = sim_xmalloc((n ? n : 1) * sizeof(double));
    const void *p = n ? sim_tensor_cdata(t) : NULL; /* a reference reads every element */
    switch (t->dtype) {
    case SIM_F32:
        for (size_t i = 0; i < n; i++)
            v[i] = ((const float *)p)[i];
        break;
    case SIM_F16:
        for (size_t i = 0; i < n; i++)
            v[i] = sim_f16_to_f32(((const uint16_t *)p)[i]);
        break;
    case SIM_BF16:
        for (size_t i = 0; i < n; i++)
            v[i] = sim_bf16_to_f32(((const uint16_t *)p)[i]);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            v[i] = sim_tensor_get(t, i);
        break;
    }
    return v;
}

int sim_kutil_ref_args(const struct sim_kref *r, const char *kernel, size_t n_tensors,
                       size_t n_scalars, struct diag *d)
{
    bool ok = r->n >= n_tensors + n_scalars;
    for (size_t i = 0; ok && i < n_tensors + n_scalars; i++)
        ok = r->args[i].is_tensor == (i < n_tensors) && (i >= n_tensors || r->args[i].t);
    if (!ok)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "%s reference: expected %zu tensors then %zu scalars (npuscope kernels "
                        "lists the arguments)",
                        kernel, n_tensors, n_scalars);
    return 0;
}
