/*
 * --dump DIR: a run's tensors as files anyone can check with numpy. Every input tensor of
 * a kernel launch as it was deployed and every output as the host reads it back (phase 2's
 * results) becomes DIR/NAME.npy (bf16 as its raw '<u2' bits, see sim/data/npy.h), scalars 0-d
 * arrays, and DIR/manifest.json lists them in the kernel's argument order:
 *
 *     [{"name": "x", "role": "input", "dtype": "f32", "shape": [4096], "file": "x.npy"}, ...]
 *
 * Every file is written atomically (a temporary file renamed into place).
 */
#ifndef SIM_DUMP_H
#define SIM_DUMP_H

#include "sim/util/diag.h"
#include "sim/data/tensor.h"

#include <stddef.h>

struct sim_verify_capture;

/* One tensor to dump. */
struct sim_dump_item {
    const char *name;           /* its name in the manifest (any text) */
    const char *role;           /* "input" or "output" */
    const struct sim_tensor *t; /* borrowed */
};

/*
 * Write items[0..n) into dir (created, with its parents, when missing) as .npy files named
 * after the items (characters other than letters, digits, '.', '-' and '_' become '_'; a
 * repeated name gets "_2", "_3"...) and dir/manifest.json listing them in order. Returns 0
 * or -SIM_EIO with d naming the path and the system error.
 */
int sim_dump_write(const char *dir, const struct sim_dump_item *items, size_t n, struct diag *d);

/*
 * Dump the launches cap saw, after sim_verify_phase2 read their outputs back: per launch,
 * its arguments in order (inputs as deployed, outputs as read back, scalars as 0-d arrays).
 * With several launches the names are prefixed "KERNEL#I." (I: the launch's place in the
 * host program). Returns as sim_dump_write.
 */
int sim_dump_launches(const char *dir, const struct sim_verify_capture *cap, struct diag *d);

#endif
