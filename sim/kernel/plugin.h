/*
 * Plug-ins: a shared object that brings its own kernels, and timing models of components,
 * to npuscope. It is built
 * against the installed public headers (`cc -shared -fPIC $(pkg-config --cflags npuscope)
 * mykern.c -o mykern.so`) and exports one descriptor, `npuscope_plugin`, which npuscope reads
 * after dlopen: first its ABI version, checked against the range this npuscope loads, then
 * the rest. The kernels it lists go into the same registry as the built-in ones (kernel.h):
 * -k, a workload's kernel_ref.name, --verify, --dump and `npuscope kernels` find them alike.
 * The models it lists (struct sim_component_ops, <npuscope/timing.h>) are chosen per node
 * kind by a chip config's `model` keys (sim/configs/README.md). The binary exports the
 * public API only (the functions of these headers); a plug-in that calls anything else fails
 * to load, naming the symbol.
 *
 *     static const struct sim_kernel *const kernels[] = {&my_kernel, NULL};
 *     NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {
 *         .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION,
 *         .name = "mykern",
 *         .version = "0.1",
 *         .kernels = kernels,
 *     };
 */
#ifndef SIM_PLUGIN_H
#define SIM_PLUGIN_H

#include "sim/chip/timing.h"
#include "sim/kernel/kernel.h"

#include <stdint.h>

/*
 * The ABI version of the plug-in interface: the layout of the descriptor and of every
 * struct a plug-in shares with npuscope (struct sim_kernel, kargs, sim_ktensor, sim_kref...)
 * and the signatures of the API. It grows by one whenever any of them changes; npuscope
 * loads plug-ins built for NPUSCOPE_PLUGIN_ABI_MIN to NPUSCOPE_PLUGIN_ABI_VERSION.
 *
 *     1   kernels
 *     2   component timing models (components, <npuscope/timing.h>); a plug-in of version 1
 *         has none (its components is NULL) and loads unchanged
 */
#define NPUSCOPE_PLUGIN_ABI_VERSION 2
#define NPUSCOPE_PLUGIN_ABI_MIN     1

/* The name of the descriptor symbol. */
#define NPUSCOPE_PLUGIN_SYMBOL "npuscope_plugin"

/* Marks the descriptor as exported even when the plug-in builds with -fvisibility=hidden. */
#define NPUSCOPE_PLUGIN_EXPORT __attribute__((visibility("default")))

/* What a plug-in exports as `npuscope_plugin`. abi_version stays the first member in every
 * version: it is all npuscope reads before it knows the layout. */
struct npuscope_plugin {
    uint32_t abi_version; /* NPUSCOPE_PLUGIN_ABI_VERSION of the headers it was built with */
    const char *name;     /* the plug-in's name, for messages and listings */
    const char *version;  /* its own version, free text ("0.1") */
    const struct sim_kernel *const *kernels; /* its kernels, ended by NULL, each with a name
                                                (a C identifier) and a fn; may be NULL */
    /* ABI 2: its component timing models, ended by NULL, each with a name (a C identifier),
     * a kind and a service (<npuscope/timing.h>); may be NULL. NULL in ABI 1. A plug-in
     * lists at least one kernel or model. */
    const struct sim_component_ops *const *components;
};

#endif
