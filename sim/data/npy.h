/*
 * NumPy .npy files: how npuscope exchanges tensors with the outside (--dump writes inputs
 * and outputs, a workload's host_buffer_ref reads them). Reading accepts format versions 1.0
 * and 2.0, little-endian, C order, with the dtypes '<f4' '<f2' '|i1' '<i2' '<i4' '<i8' '|u1'
 * '<u2' '<u4' '|b1' (one-byte types also with '<'). Files are untrusted: every part of the
 * header is validated and a problem is reported as "FILE: bad .npy header: ..." (or
 * "bad .npy data") with the byte offset where it helps, never a crash.
 *
 * Writing produces version 1.0 (2.0 only if the header does not fit), laid out exactly as
 * numpy's np.save does, so the files compare equal byte for byte. bf16 has no numpy dtype:
 * it is written as '<u2' (its raw bits), and reads back as u16; view it as bf16 with
 * sim_tensor_view (numpy users: arr.view(ml_dtypes.bfloat16) or shift into float32).
 */
#ifndef SIM_NPY_H
#define SIM_NPY_H

#include "sim/util/diag.h"
#include "sim/data/tensor.h"

#include <stddef.h>

/*
 * Read the .npy file at path into a new tensor (*out, one reference, the caller unrefs).
 * Returns 0, -SIM_EIO when the file cannot be read, -SIM_EPARSE for a malformed header,
 * -SIM_EINVAL for a valid header npuscope cannot use (dtype, byte order, fortran order,
 * more than SIM_MAX_DIMS dimensions) or a data length that does not match. d names path.
 */
int sim_npy_read(const char *path, struct sim_tensor **out, struct diag *d);

/*
 * The same, from the size bytes at buf (which need not be NUL-terminated or aligned). name
 * is what diagnostics call the buffer (NULL: "<memory>").
 */
int sim_npy_read_mem(const void *buf, size_t size, const char *name, struct sim_tensor **out,
                     struct diag *d);

/*
 * Write t to path as .npy, atomically: a temporary file in the same directory, written,
 * fsync'd and renamed over path, so readers see the old file or the whole new one. Returns 0
 * or -SIM_EIO (d names path and the system error); on failure path is left as it was.
 */
int sim_npy_write(const char *path, const struct sim_tensor *t, struct diag *d);

/* The .npy bytes of t in a new allocation of *size bytes (the caller frees it). */
void *sim_npy_write_mem(const struct sim_tensor *t, size_t *size);

/*
 * Read a raw binary file (no header: the bytes of a C-order little-endian array) as a tensor
 * of dtype and shape. The file must hold exactly the tensor's bytes. Returns 0, -SIM_EIO, or
 * -SIM_EINVAL for an invalid shape or a size that does not match (the message gives both).
 */
int sim_npy_read_raw(const char *path, enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                     struct sim_tensor **out, struct diag *d);

#endif
