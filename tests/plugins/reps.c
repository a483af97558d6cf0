/* A plug-in whose kernel loads its input REPS times (a compile-time constant, 2 by default:
 * -DREPS=N): rebuilt with another REPS, the run reloaded in the TUI (Ctrl-R) must show the
 * new number of loads. */
#include <npuscope/npuscope.h>

#ifndef REPS
#define REPS 2
#endif

static void reps(struct tl *tl, const struct kargs *a)
{
    for (int i = 0; i < REPS; i++)
        tl_load(tl, tl_arg(tl, a, 0));
}

static const struct sim_kparam params[] = {{NULL, SIM_KP_INT, NULL, NULL}};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    (void)p;
    int64_t shape[1] = {256};
    struct sim_ktensor x = {.label = "x",
                            .dtype = SIM_F32,
                            .ndim = 1,
                            .shape = shape,
                            .fill = SIM_KFILL_ARANGE,
                            .split = true};
    return sim_kbuild_tensor(b, &x, d);
}

static const struct sim_karg_desc args[] = {
    {"x", SIM_KARG_TENSOR, "f32", "256", NULL},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

static const struct sim_kernel kernel = {.name = "reps",
                                         .summary = "loads its input REPS times",
                                         .args = args,
                                         .fn = reps,
                                         .params = params,
                                         .setup = setup};
static const struct sim_kernel *const kernels[] = {&kernel, NULL};
NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {
    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION, .name = "reps", .version = "1", .kernels = kernels};
