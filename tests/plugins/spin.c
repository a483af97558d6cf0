/* A plug-in whose kernel loads its input, then loops forever without calling the tl API:
 * the watchdog must stop the run, naming the kernel and its PE. */
#include <npuscope/npuscope.h>

static void spin(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_load(tl, tl_arg(tl, a, 0));
    volatile double v = tl_get(tl, x, 0);
    for (;;)
        v = v + 1;
}

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    (void)p;
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

static const struct sim_kernel kernel = {.name = "spin",
                                         .summary = "loads, then loops forever",
                                         .args = args,
                                         .fn = spin,
                                         .setup = setup};
static const struct sim_kernel *const kernels[] = {&kernel, NULL};
NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {
    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION, .name = "spin", .version = "1", .kernels = kernels};
