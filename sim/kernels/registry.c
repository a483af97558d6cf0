/*
 * The table of built-in kernels (sim/kernel/kernel.h explains how to add one): each kernel file
 * defines its `const struct sim_kernel`, listed here in name order.
 */
#include "sim/kernel/kernel.h"

#include <stddef.h>

extern const struct sim_kernel sim_kernel_allreduce_ring, sim_kernel_gemm, sim_kernel_gemm_explicit,
    sim_kernel_layernorm, sim_kernel_llm_decode, sim_kernel_rmsnorm, sim_kernel_softmax,
    sim_kernel_sparse_scale, sim_kernel_stream, sim_kernel_vector_add;

const struct sim_kernel *const sim_kernel_table[] = {
    &sim_kernel_allreduce_ring, &sim_kernel_gemm,         &sim_kernel_gemm_explicit,
    &sim_kernel_layernorm,      &sim_kernel_llm_decode,   &sim_kernel_rmsnorm,
    &sim_kernel_softmax,        &sim_kernel_sparse_scale, &sim_kernel_stream,
    &sim_kernel_vector_add,
};

const size_t sim_kernel_table_len = sizeof(sim_kernel_table) / sizeof(sim_kernel_table[0]);
