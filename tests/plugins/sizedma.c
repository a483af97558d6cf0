/* An example component timing model from a plug-in: a PE DMA engine whose per-transfer setup
 * cost grows with the transfer's size (descriptor chains of one entry per KiB), the data
 * phase being the built-in one. Chosen by a chip config with `pe: {dma: {model: sizedma}}`:
 *
 *   pe.dma.setup_ns + SIZEDMA_NS_PER_KIB * ceil(nbytes / 1024) on one channel, then the
 *   built-in data phase (sim_component_dma_move)
 *
 * Build: cc -shared -fPIC $(pkg-config --cflags npuscope) sizedma.c -o sizedma.so
 * (-DSIZEDMA_NS_PER_KIB=N changes the cost per KiB, 8 ns by default). */
#include <npuscope/npuscope.h>

#ifndef SIZEDMA_NS_PER_KIB
#define SIZEDMA_NS_PER_KIB 8
#endif
#define STR2(x) #x
#define STR(x)  STR2(x)

static void sizedma_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    const struct sim_config *cfg = sim_component_config(c);
    uint64_t nbytes = sim_component_msg_bytes(msg, NULL);
    uint64_t kib = (nbytes + 1023) / 1024;
    sim_component_acquire(p, c);
    sim_component_wait_ns(p, cfg->pe_dma.setup_ns + (double)SIZEDMA_NS_PER_KIB * (double)kib);
    sim_component_dma_move(p, c, msg);
    sim_component_release(p, c);
}

static const struct sim_component_ops sizedma = {
    .name = "sizedma",
    .kind = "pe_dma",
    .doc =
        "setup_ns + " STR(SIZEDMA_NS_PER_KIB) " ns per KiB started, then the built-in data phase",
    .service = sizedma_service,
};

static const struct sim_component_ops *const models[] = {&sizedma, NULL};

NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {
    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION,
    .name = "sizedma",
    .version = "1.0",
    .components = models,
};
