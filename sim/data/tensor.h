/*
 * Tensors: a dtype, a shape and contiguous bytes, reference-counted. The memory store holds
 * references (ADR-0052 D6.3: write stores a reference, read returns one), so a mutation
 * through one reference is visible through every other. A view (another dtype or shape of
 * the same bytes, possibly from an offset) shares the bytes of its base tensor.
 *
 * A tensor may be pattern-backed: its bytes repeat a short pattern (a MemoryWrite pattern of
 * ADR-0012, a kernel's `data=zero` inputs), or are uniform random values from a
 * counter-based generator (a kernel's random inputs), and are not produced until someone
 * asks for them as memory. Such a tensor costs its header whatever its size; element reads
 * (get), byte reads (read_bytes) and copies of it (which stay pattern-backed) never produce
 * the bytes (a random one computes the elements they touch).
 * The bytes are only ever reached through sim_tensor_data / sim_tensor_cdata, which produce
 * them on first use (materialising: allocating nbytes and filling them with the pattern).
 * Materialising is not thread-safe: code that hands tensors to threads materialises them
 * first.
 */
#ifndef SIM_TENSOR_H
#define SIM_TENSOR_H

#include "sim/util/diag.h"
#include "sim/data/dtype.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_DIMS 8

/* Longest repeating unit of a pattern, in bytes. */
#define SIM_FILL_MAX 8

/* A repeating byte pattern: byte i of a pattern-backed tensor is bytes[i % unit]. */
struct sim_fill {
    unsigned unit; /* 1, 2, 4 or 8; 0 in a tensor that is not pattern-backed */
    unsigned char bytes[SIM_FILL_MAX];
};

/*
 * A stream of uniform random values: element k is lo + (hi - lo) * u_k, rounded down for
 * an integer dtype, stored as dtype, where u_k in [0, 1) comes from the splitmix64
 * generator's state + (k + 1) steps: exactly the values drawn one by one from that state,
 * so the stream can be entered at any element.
 */
struct sim_random {
    enum sim_dtype dtype; /* of the generated elements */
    uint64_t state;       /* the generator's state before element 0 */
    double lo, hi;
    uint64_t skip; /* bytes of the stream before the tensor's first byte */
};

/* The generator state n draws after state (what drawing n values one by one leaves). */
uint64_t sim_random_advance(uint64_t state, uint64_t n);

struct sim_tensor {
    unsigned refs; /* references held; freed when it drops to 0 */
    enum sim_dtype dtype;
    unsigned ndim; /* 0 for a scalar */
    int64_t shape[SIM_MAX_DIMS];
    size_t nbytes;           /* product of shape x dtype size */
    struct sim_tensor *base; /* owned reference to the tensor holding the bytes (a view), or
                                NULL: the tensor holds its own */
    size_t offset;           /* a view: where its bytes start in base's; 0 otherwise */
    struct sim_fill fill;    /* not a view: the pattern it was made with (unit 0: none) */
    bool random;             /* not a view: made of rnd's values instead of a pattern */
    struct sim_random rnd;
    void *mem; /* private to tensor.c (not a view: its bytes, owned; NULL while
                  pattern-backed). Read bytes through the functions below. */
};

/* A new zero-filled tensor with one reference. Dims must be >= 0. */
struct sim_tensor *sim_tensor_new(enum sim_dtype dtype, unsigned ndim, const int64_t *shape);

/* A new tensor whose bytes are left uninitialised (the caller writes every one of them). */
struct sim_tensor *sim_tensor_new_uninit(enum sim_dtype dtype, unsigned ndim, const int64_t *shape);

/*
 * A new pattern-backed tensor repeating f (unit 1, 2, 4 or 8), with one reference. Costs its
 * header whatever its size; the bytes are produced only if sim_tensor_data asks for them.
 */
struct sim_tensor *sim_tensor_new_fill(enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                                       const struct sim_fill *f);

/*
 * A new pattern-backed tensor of uniform random values in [lo, hi) (rounded down for an
 * integer dtype) from the generator at state (see struct sim_random): the values drawing
 * them one by one would give, computed only where read. One reference.
 */
struct sim_tensor *sim_tensor_new_random(enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                                         uint64_t state, double lo, double hi);

/* A new tensor holding a copy of src's bytes (one reference, no base); pattern-backed when
 * src is (so copying a pattern costs nothing). */
struct sim_tensor *sim_tensor_copy(const struct sim_tensor *src);

/*
 * A new tensor of dtype and shape holding a copy of src's bytes [off, off + its nbytes),
 * which must lie inside src (assert); pattern-backed when src is. One reference, no base.
 */
struct sim_tensor *sim_tensor_copy_range(const struct sim_tensor *src, size_t off,
                                         enum sim_dtype dtype, unsigned ndim, const int64_t *shape);

/* Add a reference; returns t. */
struct sim_tensor *sim_tensor_ref(struct sim_tensor *t);

/* Drop a reference, freeing at zero. NULL is a no-op. */
void sim_tensor_unref(struct sim_tensor *t);

/*
 * A view of t's bytes as dtype and shape (one new reference; t's base, or t, gains one).
 * Fails with NULL and a diagnostic naming both layouts when the byte counts differ. Does
 * not materialise a pattern-backed t.
 */
struct sim_tensor *sim_tensor_view(struct sim_tensor *t, enum sim_dtype dtype, unsigned ndim,
                                   const int64_t *shape, struct diag *d);

/*
 * A view of the bytes of t from byte off as dtype and shape, which must lie inside t
 * (assert). One new reference; shares t's bytes (and its pattern, without materialising).
 */
struct sim_tensor *sim_tensor_view_at(struct sim_tensor *t, size_t off, enum sim_dtype dtype,
                                      unsigned ndim, const int64_t *shape);

/* Materialise t's bytes (its base's, for a view) and return them as sim_tensor_data does:
 * what sim_tensor_data calls the first time. */
void *sim_tensor_materialize(struct sim_tensor *t);

/*
 * t's bytes, for reading and writing: a pattern-backed tensor (or a view of one) is
 * materialised first (its base's nbytes allocated and filled; dies when memory runs out).
 * The pointer stays valid while t lives. Not thread-safe while t is pattern-backed.
 */
static inline void *sim_tensor_data(struct sim_tensor *t)
{
    struct sim_tensor *r = t->base ? t->base : t;
    return r->mem ? (unsigned char *)r->mem + t->offset : sim_tensor_materialize(t);
}

/* The same for reading only. Materialising does not change the values, so it is allowed
 * on a const tensor. */
static inline const void *sim_tensor_cdata(const struct sim_tensor *t)
{
    return sim_tensor_data((struct sim_tensor *)t);
}

/* True when t's bytes are a pattern not yet materialised (t or its base). */
static inline bool sim_tensor_is_lazy(const struct sim_tensor *t)
{
    return (t->base ? t->base : t)->mem == NULL;
}

/* When t is pattern-backed (lazy) by a repeating pattern, that pattern as seen from t's
 * first byte into *f and true; else (random values, or materialised) false. */
bool sim_tensor_pattern(const struct sim_tensor *t, struct sim_fill *f);

/* Bytes [off, off + n) of t into buf (which must lie inside t: assert), without
 * materialising a pattern. */
void sim_tensor_read_bytes(const struct sim_tensor *t, size_t off, size_t n, void *buf);

/* Number of elements. */
size_t sim_tensor_numel(const struct sim_tensor *t);

/*
 * Element i (row-major flat index) converted to / from double, whatever the dtype. set
 * rounds to nearest even for the floats; for the integers it truncates toward zero and
 * saturates at the type's limits (NaN gives 0), like a checked cast; bool stores v != 0.
 * get never materialises a pattern; set does (it writes).
 */
double sim_tensor_get(const struct sim_tensor *t, size_t i);
void sim_tensor_set(struct sim_tensor *t, size_t i, double v);

/*
 * Bytes of a tensor of dtype and shape into *out. Returns 0, or -1 when ndim exceeds
 * SIM_MAX_DIMS, a dimension is negative, or the size overflows size_t (checked over the
 * non-zero dimensions even when one is 0). Use it to validate untrusted shapes.
 */
int sim_shape_nbytes(enum sim_dtype dtype, unsigned ndim, const int64_t *shape, size_t *out);

/* Format a shape as a Python tuple, "(2, 3)", "(5,)" or "()", into buf; returns buf. */
char *sim_shape_format(unsigned ndim, const int64_t *shape, char *buf, size_t size);

/* ---- patterns ----------------------------------------------------------------------------- */

/*
 * The pattern of value v stored as dtype (one element: unit = the dtype's size) into *f.
 * Returns 0, or -1 when v does not fit the dtype: an integer type needs an integer in its
 * range, bool 0 or 1, a float type a finite value that stays finite in it (f16: |v| <=
 * 65504).
 */
int sim_fill_from_value(enum sim_dtype dtype, double v, struct sim_fill *f);

/* The pattern of unit bytes (1, 2, 4 or 8) into *f, shortened to one byte when they are
 * all the same. */
void sim_fill_set(struct sim_fill *f, const void *bytes, unsigned unit);

/* True when every byte of the pattern is 0. */
bool sim_fill_is_zero(const struct sim_fill *f);

/*
 * The pattern for the memory inspector: "pattern zero", or "fill 0x3c00" (the unit as a
 * little-endian integer in hex). Returns buf.
 */
char *sim_fill_format(const struct sim_fill *f, char *buf, size_t size);

#endif
