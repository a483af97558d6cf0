/* A plug-in that calls a function of npuscope's internals (the engine's), which the binary
 * does not export: loading it must fail, naming the symbol. */
#include <npuscope/npuscope.h>

struct sim_engine;
unsigned long long sim_engine_events(const struct sim_engine *e);

static void peek(struct tl *tl, const struct kargs *a)
{
    (void)a;
    if (sim_engine_events(NULL) == 42)
        tl_marker(tl, "internal");
}

static const struct sim_kernel kernel = {
    .name = "internal", .summary = "calls internals", .fn = peek};
static const struct sim_kernel *const kernels[] = {&kernel, NULL};
NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {
    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION,
    .name = "internal",
    .version = "1",
    .kernels = kernels};
