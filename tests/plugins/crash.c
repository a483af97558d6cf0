/* A plug-in whose kernel loads its input, then writes through a pointer to nowhere (or, built with
 * -DCRASH_ABORT, calls abort(); with -DMISUSE, misuses the API first; with -DCRASH_SETUP,
 * its setup crashes before the run): npuscope must report the
 * crash (kernel, PE, simulated time, last tl call) and write the partial trace. */
#include <npuscope/npuscope.h>

#include <stdlib.h>

static void crash(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_load(tl, tl_arg(tl, a, 0));
#ifdef MISUSE
    tl_dot(tl, tl_arg(tl, a, 0), tl_arg(tl, a, 0)); /* HBM operands: an API error */
#endif
#ifdef CRASH_ABORT
    if (tl_get(tl, x, 1) == 1)
        abort();
#endif
    /* a member of a NULL struct: an address never mapped (and not NULL itself, which the
     * undefined-behaviour sanitizer would catch first under make asan) */
    volatile int *nowhere = (volatile int *)(uintptr_t)(tl_get(tl, x, 0) * 0 + 64);
    *nowhere = 1;
}

static const struct sim_kparam params[] = {{NULL, SIM_KP_INT, NULL, NULL}};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    (void)p;
#ifdef CRASH_SETUP
    *(volatile int *)(uintptr_t)(64 + (uintptr_t)b * 0) = 1;
#endif
    int64_t shape[1] = {64};
    struct sim_ktensor x = {.label = "x",
                            .dtype = SIM_F32,
                            .ndim = 1,
                            .shape = shape,
                            .fill = SIM_KFILL_ARANGE,
                            .split = true};
    return sim_kbuild_tensor(b, &x, d);
}

static const struct sim_karg_desc args[] = {
    {"x", SIM_KARG_TENSOR, "f32", "64", NULL},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

static const struct sim_kernel kernel = {.name = "crash",
                                         .summary = "loads, then crashes",
                                         .args = args,
                                         .fn = crash,
                                         .params = params,
                                         .setup = setup};
static const struct sim_kernel *const kernels[] = {&kernel, NULL};
NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {
    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION,
    .name = "crash",
    .version = "1",
    .kernels = kernels};
