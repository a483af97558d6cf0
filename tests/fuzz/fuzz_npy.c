/*
 * libFuzzer harness for the .npy reader: any bytes must either parse or fail with a
 * diagnostic, never crash. A file that parses must survive a write and a second read
 * unchanged (dtype, shape and data), which checks the writer against the reader too.
 */
#include "sim/data/npy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sim_tensor *t = NULL;
    struct diag d;
    if (sim_npy_read_mem(data, size, "fuzz.npy", &t, &d) != 0) {
        char line[2048];
        diag_format(&d, line, sizeof(line));
        if (strchr(line, '\n') || strchr(line, '\x1b'))
            abort(); /* a diagnostic is one escaped line */
        return 0;
    }
    size_t n;
    void *out = sim_npy_write_mem(t, &n);
    struct sim_tensor *back = NULL;
    if (sim_npy_read_mem(out, n, "fuzz.npy", &back, &d) != 0)
        abort();
    if (back->dtype != t->dtype || back->ndim != t->ndim || back->nbytes != t->nbytes ||
        memcmp(back->shape, t->shape, t->ndim * sizeof(t->shape[0])) != 0 ||
        (t->nbytes && memcmp(sim_tensor_cdata(back), sim_tensor_cdata(t), t->nbytes) != 0))
        abort();
    free(out);
    sim_tensor_unref(back);
    sim_tensor_unref(t);
    return 0;
}
