/*
 * The timing models of the chip's components, by node kind: the built-in ones of
 * sim/chip/comp_*.c (sim/chip/component.h says what each one charges) and those plug-ins
 * register (sim/chip/timing.h). A chip config picks one per kind (its `model` keys,
 * sim_config.model); the chip looks its components' models up here. A table of its own, so
 * that the component base the models are built on does not depend on them.
 */
#ifndef SIM_MODELS_H
#define SIM_MODELS_H

#include "sim/chip/component.h"
#include "sim/chip/topology.h"
#include "sim/util/diag.h"

#include <stddef.h>

/* The name a config gives the built-in model of any kind. */
#define SIM_MODELS_BUILTIN "builtin"

/* The built-in model of a node kind (static). */
const struct sim_component_ops *sim_models_builtin(enum sim_node_kind kind);

/*
 * The model called name for kind: the built-in one for NULL or SIM_MODELS_BUILTIN, else
 * the registered model of that name and kind; NULL when there is none. When there is none,
 * *other_kind (may be NULL) is set to the kind of a model of that name for another kind, or
 * -1.
 */
const struct sim_component_ops *sim_models_find(enum sim_node_kind kind, const char *name,
                                                int *other_kind);

/* The known model name for kind closest to name (for "did you mean"), or NULL. */
const char *sim_models_closest(enum sim_node_kind kind, const char *name);

/* The name a plug-in's model gives kind (struct sim_component_ops.kind: "pe_dma"). */
const char *sim_models_kind_name(enum sim_node_kind kind);

/* The config section that picks kind's model ("pe.dma", "memory.hbm", "io_cpu"), or NULL
 * for a kind without one (noc). */
const char *sim_models_section(enum sim_node_kind kind);

/*
 * Register a plug-in's model; origin (copied) is the file it came from. Returns 0, or a
 * negative sim_err with d saying what is wrong: no name or not a C identifier, the
 * reserved name SIM_MODELS_BUILTIN, no service, a kind that is not one of the config's
 * sections (pe_cpu, pe_dma, pe_gemm, pe_math, hbm, sram, tcm, io_cpu, m_cpu), a name
 * another model has ("already defined by FILE").
 */
int sim_models_register(const struct sim_component_ops *ops, const char *origin, struct diag *d);

/* Registered models: how many, model i, and the file model i came from (borrowed). */
size_t sim_models_count(void);
const struct sim_component_ops *sim_models_at(size_t i);
const char *sim_models_origin(size_t i);

/* The file a registered model came from, or NULL for a built-in one (borrowed). */
const char *sim_models_origin_of(const struct sim_component_ops *ops);

/* Forget the models registered from the n-th on (a plug-in refused half-way). */
void sim_models_unregister_from(size_t n);

#endif
