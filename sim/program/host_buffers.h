/*
 * Host buffers: the data a host program's MemoryWrites may name (ADR-0012 host_buffer_ref)
 * held in memory instead of in files. `run -k` fills them with a kernel's generated inputs
 * (sim/kernel/kernel.h); the host reads them (sim/host/host.h).
 */
#ifndef SIM_HOST_BUFFERS_H
#define SIM_HOST_BUFFERS_H

#include "sim/data/tensor.h"

/* Named tensors the host holds in memory: a MemoryWrite's host_buffer_ref is looked up
 * here first, then read as a file (.npy, or raw bytes of the message's dtype and shape). */
struct sim_host_buffers;

struct sim_host_buffers *sim_host_buffers_new(void);
void sim_host_buffers_free(struct sim_host_buffers *b);
/* Add t under name (copied); the buffers take a reference. */
void sim_host_buffers_add(struct sim_host_buffers *b, const char *name, struct sim_tensor *t);
/* The tensor named name (borrowed), or NULL. */
struct sim_tensor *sim_host_buffers_find(const struct sim_host_buffers *b, const char *name);

#endif
