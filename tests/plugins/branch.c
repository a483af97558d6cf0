/* A plug-in kernel that branches on the data it loads (phase 1 gives loads real data): when
 * most elements of its shard of x are positive it stores exp(x), else -x, and says which with
 * a marker; its reference makes the same choice, so --verify checks both paths. */
#include <npuscope/npuscope.h>

#include <math.h>

static void branch(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_arg(tl, a, 0), *y = tl_arg(tl, a, 1);
    struct tl_tensor *t = tl_load(tl, x);
    uint64_t n = tl_numel(t), positive = 0;
    for (uint64_t i = 0; i < n; i++)
        positive += tl_get(tl, t, i) > 0;
    bool exp_path = 2 * positive > n;
    tl_marker(tl, exp_path ? "branch.exp" : "branch.neg");
    tl_store(tl, y, exp_path ? tl_exp(tl, t) : tl_neg(tl, t));
}

static const struct sim_kparam params[] = {
    {"n", SIM_KP_INT, "256", "elements"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int64_t shape[1] = {sim_kparams_int(p, "n")};
    struct sim_ktensor x = {.label = "x",
                            .dtype = SIM_F32,
                            .ndim = 1,
                            .shape = shape,
                            .fill = SIM_KFILL_RANDOM,
                            .lo = -1,
                            .hi = 1,
                            .split = true};
    struct sim_ktensor y = x;
    y.label = "y";
    y.fill = SIM_KFILL_ZERO;
    y.read_back = true;
    int rc = sim_kbuild_tensor(b, &x, d);
    return rc < 0 ? rc : sim_kbuild_tensor(b, &y, d);
}

static int reference(const struct sim_kref *r, struct diag *d)
{
    if (r->n != 2)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "branch reference: expected x, y");
    const struct sim_tensor *x = r->args[0].t;
    struct sim_tensor *y = r->args[1].t;
    size_t n = sim_tensor_numel(x), positive = 0;
    for (size_t i = 0; i < n; i++)
        positive += sim_tensor_get(x, i) > 0;
    for (size_t i = 0; i < n; i++) {
        double v = sim_tensor_get(x, i);
        sim_tensor_set(y, i, 2 * positive > n ? exp(v) : -v);
    }
    return 0;
}

static const struct sim_karg_desc args[] = {
    {"x", SIM_KARG_TENSOR, "f32", "n", NULL},
    {"y", SIM_KARG_TENSOR, "f32", "n", NULL},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

static const struct sim_kernel kernel = {.name = "branch",
                                         .summary = "exp(x) or -x, chosen from the loaded data",
                                         .args = args,
                                         .fn = branch,
                                         .params = params,
                                         .setup = setup,
                                         .reference = reference};
static const struct sim_kernel *const kernels[] = {&kernel, NULL};
NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {
    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION,
    .name = "branch",
    .version = "1",
    .kernels = kernels};
