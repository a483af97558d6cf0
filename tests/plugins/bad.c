/* Plug-ins that npuscope must refuse, one line naming the file and the problem, exit 2,
 * before the run: built with one of -DBAD_ABI, -DNO_KERNELS, -DNULL_KERNELS, -DNO_FN,
 * -DNO_NAME, -DNO_DESCRIPTOR, -DBAD_DEFAULT, -DKERNEL_NAME=name (a name clash),
 * -DMODEL_KIND=kind (a component model for a kind no config picks a model for),
 * -DMODEL_ABI1 (a model in a plug-in of ABI 1). -DABI1 alone: a plug-in of ABI version 1,
 * which loads. */
#include <npuscope/npuscope.h>

#ifndef KERNEL_NAME
#define KERNEL_NAME bad_kernel
#endif
#define STR2(x) #x
#define STR(x)  STR2(x)

__attribute__((unused)) static void run(struct tl *tl, const struct kargs *a)
{
    (void)a;
    tl_marker(tl, "bad.ran");
}

static const struct sim_kparam params[] = {
#ifdef BAD_DEFAULT
    {"n", SIM_KP_INT, "many", "a default that is not an integer"},
#endif
    {NULL, SIM_KP_INT, NULL, NULL},
};

__attribute__((unused)) static const struct sim_kernel kernel = {
#ifndef NO_NAME
    .name = STR(KERNEL_NAME),
#endif
    .summary = "a kernel of a plug-in npuscope refuses",
#ifndef NO_FN
    .fn = run,
#endif
    .params = params,
};

#if defined(MODEL_KIND) || defined(MODEL_ABI1)
#ifndef MODEL_KIND
#define MODEL_KIND pe_dma
#endif
static void model_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    sim_component_builtin(p, c, msg);
}
static const struct sim_component_ops model = {
    .name = "badmodel", .kind = STR(MODEL_KIND), .service = model_service};
static const struct sim_component_ops *const models[] = {&model, NULL};
#endif

#ifndef NO_DESCRIPTOR
__attribute__((unused)) static const struct sim_kernel *const kernels[] = {
#ifndef NO_KERNELS
    &kernel,
#endif
    NULL};
NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {
#ifdef BAD_ABI
    .abi_version = 99,
#elif defined(ABI1) || defined(MODEL_ABI1)
    .abi_version = 1,
#else
    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION,
#endif
    .name = "bad",
    .version = "1",
#ifndef NULL_KERNELS
    .kernels = kernels,
#endif
#if defined(MODEL_KIND) || defined(MODEL_ABI1)
    .components = models,
#endif
};
#else
/* something else exported instead */
NPUSCOPE_PLUGIN_EXPORT const struct sim_kernel *not_a_descriptor = &kernel;
#endif
