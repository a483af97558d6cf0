/*
 * Tensors: a dtype, a shape and contiguous data, reference-counted. The memory store holds
 * references (ADR-0052 D6.3: write stores a reference, read returns one), so a mutation
 * through one reference is visible through every other. A view (another dtype or shape of
 * the same bytes) shares the data of its base tensor.
 */
#ifndef SIM_TENSOR_H
#define SIM_TENSOR_H

#include "sim/util/diag.h"
#include "sim/data/dtype.h"

#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_DIMS 8

struct sim_tensor {
    unsigned refs; /* references held; freed when it drops to 0 */
    enum sim_dtype dtype;
    unsigned ndim; /* 0 for a scalar */
    int64_t shape[SIM_MAX_DIMS];
    size_t nbytes;           /* product of shape x dtype size */
    void *data;              /* owned, or borrowed from base for a view (which may start at
                                an offset into base's bytes) */
    struct sim_tensor *base; /* owned reference to the tensor holding data, or NULL */
};

/* A new zero-filled tensor with one reference. Dims must be >= 0. */
struct sim_tensor *sim_tensor_new(enum sim_dtype dtype, unsigned ndim, const int64_t *shape);

/* A new tensor holding a copy of src's data (one reference, no base). */
struct sim_tensor *sim_tensor_copy(const struct sim_tensor *src);

/* Add a reference; returns t. */
struct sim_tensor *sim_tensor_ref(struct sim_tensor *t);

/* Drop a reference, freeing at zero. NULL is a no-op. */
void sim_tensor_unref(struct sim_tensor *t);

/*
 * A view of t's bytes as dtype and shape (one new reference; t gains one as its base).
 * Fails with NULL and a diagnostic naming both layouts when the byte counts differ.
 */
struct sim_tensor *sim_tensor_view(struct sim_tensor *t, enum sim_dtype dtype, unsigned ndim,
                                   const int64_t *shape, struct diag *d);

/* Number of elements. */
size_t sim_tensor_numel(const struct sim_tensor *t);

/*
 * Element i (row-major flat index) converted to / from double, whatever the dtype. set
 * rounds to nearest even for the floats; for the integers it truncates toward zero and
 * saturates at the type's limits (NaN gives 0), like a checked cast; bool stores v != 0.
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

#endif
