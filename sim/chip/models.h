/*
 * The timing models of the chip's components, by node kind: the const ops of sim/chip/comp_*.c
 * (sim/chip/component.h says what each one charges). A table of its own, so that the component
 * base the models are built on does not depend on them.
 */
#ifndef SIM_MODELS_H
#define SIM_MODELS_H

#include "sim/chip/component.h"
#include "sim/chip/topology.h"

/* The model of a node kind (static). */
const struct sim_component_ops *sim_models_for(enum sim_node_kind kind);

#endif
