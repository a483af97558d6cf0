/*
 * The kernel registry's side for plug-ins (sim/kernel/registry.h): a plug-in's kernel is
 * found, listed and run by -k like a built-in one, says where it came from, and is refused
 * with one clear message when its name is taken or not an identifier, it has no fn, or a
 * parameter's default does not parse; a plug-in that fails half-way leaves nothing behind.
 */
#include "sim/chip/config.h"
#include "sim/program/host_buffers.h"
#include "sim/kernel/kernel.h"
#include "sim/kernel/registry.h"
#include "sim/program/workload.h"

#include <criterion/criterion.h>
#include <string.h>

static void nothing(struct tl *tl, const struct kargs *a)
{
    (void)tl;
    (void)a;
}

static int one_tensor(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int64_t shape[1] = {sim_kparams_int(p, "n")};
    struct sim_ktensor x = {.label = "x",
                            .dtype = SIM_F32,
                            .ndim = 1,
                            .shape = shape,
                            .fill = SIM_KFILL_ZERO,
                            .split = true};
    return sim_kbuild_tensor(b, &x, d);
}

static const struct sim_kparam params[] = {
    {"n", SIM_KP_INT, "16", "elements"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static const struct sim_kernel good = {
    .name = "plugged", .summary = "s", .fn = nothing, .params = params, .setup = one_tensor};

TestSuite(registry);

Test(registry, a_registered_kernel_is_found_listed_and_launched)
{
    size_t n = sim_kernel_count();
    struct diag d;
    cr_assert_eq(sim_kernel_register(&good, "p/plugged.so", &d), 0, "%s", d.msg);
    cr_assert_eq(sim_kernel_find("plugged"), &good);
    cr_assert_eq(sim_kernel_count(), n + 1);
    cr_assert_eq(sim_kernel_at(n), &good);
    cr_assert_str_eq(sim_kernel_origin(&good), "p/plugged.so");
    cr_assert_null(sim_kernel_origin(sim_kernel_find("vector_add")));

    struct sim_config *cfg;
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0, "%s", d.msg);
    struct sim_workload *wl;
    struct sim_host_buffers *bufs;
    cr_assert_eq(sim_kernel_workload("plugged:n=5", cfg, NULL, &wl, &bufs, NULL, &d), 0, "%s",
                 d.msg);
    sim_workload_free(wl);
    sim_host_buffers_free(bufs);
    sim_config_free(cfg);

    sim_kernel_unregister_from(n);
    cr_assert_eq(sim_kernel_count(), n);
    cr_assert_null(sim_kernel_find("plugged"));
}

Test(registry, a_taken_name_is_refused)
{
    struct sim_kernel k = good;
    k.name = "vector_add";
    struct diag d;
    cr_assert_eq(sim_kernel_register(&k, "a.so", &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "kernel 'vector_add' is already defined (built in)");
    cr_assert_eq(sim_kernel_register(&good, "a.so", &d), 0);
    cr_assert_eq(sim_kernel_register(&good, "b.so", &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "kernel 'plugged' is already defined by a.so");
}

Test(registry, malformed_kernels_are_refused)
{
    struct diag d;
    struct sim_kernel k = good;
    k.name = "has:colon";
    cr_assert_eq(sim_kernel_register(&k, "a.so", &d), -SIM_EINVAL);
    cr_assert(strstr(d.msg, "not a C identifier"), "%s", d.msg);
    k = good;
    k.fn = NULL;
    cr_assert_eq(sim_kernel_register(&k, "a.so", &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "kernel 'plugged' has no fn");
    static const struct sim_kparam bad[] = {
        {"n", SIM_KP_FLOAT, "lots", "elements"},
        {NULL, SIM_KP_INT, NULL, NULL},
    };
    k = good;
    k.params = bad;
    cr_assert_eq(sim_kernel_register(&k, "a.so", &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "kernel 'plugged': parameter 'n': the default 'lots' is not a number");
    static const struct sim_kparam seed[] = {
        {"seed", SIM_KP_INT, "1", "mine"},
        {NULL, SIM_KP_INT, NULL, NULL},
    };
    k.params = seed;
    cr_assert_eq(sim_kernel_register(&k, "a.so", &d), -SIM_EINVAL);
    cr_assert(strstr(d.msg, "one every kernel has already"), "%s", d.msg);
    cr_assert_null(sim_kernel_find("plugged"));
}

Test(registry, a_kernel_without_setup_runs_from_workloads_only)
{
    struct sim_kernel k = good;
    k.setup = NULL;
    struct diag d;
    cr_assert_eq(sim_kernel_register(&k, "a.so", &d), 0, "%s", d.msg);
    struct sim_config *cfg;
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0, "%s", d.msg);
    struct sim_workload *wl;
    struct sim_host_buffers *bufs;
    cr_assert_eq(sim_kernel_workload("plugged", cfg, NULL, &wl, &bufs, NULL, &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg,
                     "-k plugged: the kernel has no setup: it runs from a workload's KernelLaunch");
    sim_config_free(cfg);
}
