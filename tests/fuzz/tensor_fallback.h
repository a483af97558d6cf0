/*
 * Weak definitions of the two tensor functions the value tree (sim/value.c) calls, for
 * test binaries linked on a tree where sim/tensor.c is not present yet. They are
 * unreachable: a tensor value can only exist when sim/tensor.c is linked, and its strong
 * definitions then replace these. Include in exactly one file per test binary.
 */
#ifndef TESTS_TENSOR_FALLBACK_H
#define TESTS_TENSOR_FALLBACK_H

#include "sim/tensor.h"
#include "sim/xalloc.h"

__attribute__((weak)) struct sim_tensor *sim_tensor_ref(struct sim_tensor *t)
{
    (void)t;
    sim_die("sim_tensor_ref: tensor support is not linked");
}

__attribute__((weak)) void sim_tensor_unref(struct sim_tensor *t)
{
    if (t)
        sim_die("sim_tensor_unref: tensor support is not linked");
}

#endif
